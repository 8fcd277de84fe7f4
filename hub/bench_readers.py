"""``cauldron readers --bench``: measure real readers before building 36 (hardware/bench-test.md).

Per reader, through the firmware's own register driver:

- the chip version (VersionReg);
- the tag wake-up time, measured: the field is switched on, WUPA is armed (``prepare``,
  counted) and sent after a delay; the delay grows until every one of ``tries`` polls is
  answered, and the report gives the clock's own field-on -> WUPA and field-on -> answer
  times of those polls, not the delay asked for;
- the same and the read rate over ``polls`` full reads (WUPA + anticollision + SELECT, the
  UID must not change) with the card centred, off-centre and at the top of the read range
  (the operator moves it when asked);
- the poll time: field on, WUPA armed and sent before the tag can wake (no answer, the
  timeout path), the shortest of ``tries``.
- ``hold_field``: another reader's field stays on through the whole run (a deselected
  MFRC522 keeps its field), as it does when the sweep overlaps wake-ups.

The report (JSON) gives the settle time the firmware should use: the slowest wake-up
measured at any position x 1.5, rounded up to 100 us, never above the ISO worst case of
5.1 ms; the measured poll time; and the field lead they give (ceil(settle / poll), the
firmware's own rule, firmware/scan.py). Copy it to the Pico as ``bench.json``
(firmware/main.py reads ``settle_us`` and ``poll_us`` from it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from firmware import mfrc522
from firmware.scan import FIELD_RESET_US, SETTLE_US, WUPA_FRAME, Demux, uid_hex
from hub.backends.spi import Rig, pi_rig
from hub.config import HubConfig
from hub.errors import BackendError, ConfigError

DELAYS_US = (100, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 4000, 5100)
SETTLE_FACTOR = 1.5


POSITIONS = (
    ("centred", "Lay a tagged card CENTRED on reader {r}, then press Enter."),
    ("off-centre", "Move the card OFF-CENTRE on reader {r} (half-way to the cell's edge), "
                   "then press Enter."),
    ("top of range", "Hold the card at the TOP OF THE READ RANGE of reader {r} (lift it "
                     "until reads start to fail, then back 2 mm; on the table: a 3 mm top "
                     "plus a card), then press Enter."),
)


@dataclass
class PositionReport:
    position: str
    wakeup_us: int | None = None  # measured field-on -> WUPA of the first delay all answer
    answer_us: int | None = None  # measured field-on -> answer in hand, same polls
    asked_us: int | None = None  # the delay asked for (for comparison only)
    read_rate: float | None = None


@dataclass
class ReaderReport:
    reader: int
    version: str | None = None
    wakeup_us: int | None = None  # slowest measured wake-up over the positions
    read_rate_centred: float | None = None
    read_rate_off_centre: float | None = None
    read_rate_top: float | None = None
    poll_us: int | None = None  # measured unanswered poll (field on, WUPA, timeout)
    positions: list[PositionReport] = field(default_factory=list)
    uid: str | None = None
    problem: str | None = None


@dataclass
class BenchReport:
    readers: list[ReaderReport] = field(default_factory=list)
    tries: int = 0
    polls: int = 0
    hold_field: int | None = None

    @property
    def settle_us(self) -> int:
        """Settle time for the firmware: slowest measured wake-up x 1.5, up to 100 us."""
        measured = [r.wakeup_us for r in self.readers if r.wakeup_us is not None]
        if not measured:
            return SETTLE_US
        return min(SETTLE_US, int(math.ceil(max(measured) * SETTLE_FACTOR / 100) * 100))

    @property
    def poll_us(self) -> int | None:
        """The shortest measured poll: the fewer us a poll takes, the earlier a field must
        go on, so the shortest is the safe one for the lead."""
        measured = [r.poll_us for r in self.readers if r.poll_us]
        return min(measured) if measured else None

    @property
    def lead(self) -> int | None:
        poll = self.poll_us
        return None if not poll else (self.settle_us + poll - 1) // poll

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "settle_us": self.settle_us,
            "basis": f"slowest measured wake-up (field-on -> WUPA, any position) x "
                     f"{SETTLE_FACTOR}, rounded up to 100 us, at most {SETTLE_US} us",
            "tries": self.tries, "polls": self.polls, "hold_field": self.hold_field,
            "readers": [asdict(r) for r in self.readers],
        }
        if self.poll_us:
            data.update(poll_us=self.poll_us, lead=self.lead,
                        lead_basis="ceil(settle_us / poll_us), as firmware/scan.py")
        return data


class ReaderBench:
    def __init__(self, rig: Rig, n_readers: int, hold_field: int | None = None) -> None:
        self.rig = rig
        self.clock = rig.clock
        self.demux = Demux(rig.address_pins, rig.bank_pins, rig.strobe_pin)
        self.drivers = [mfrc522.MFRC522(rig.spi, self.demux.nss, rig.clock)
                        for _ in range(n_readers)]
        self.hold_field = hold_field

    def _fresh_field(self, reader: int) -> tuple[mfrc522.MFRC522, int]:
        """The reader's field off long enough to reset the tag, then on; with the clock's
        time the field went on."""
        driver = self.drivers[reader]
        self.demux.select(reader)
        driver.antenna_off()
        self.clock.sleep_us(FIELD_RESET_US)  # the tag resets: every try starts from IDLE
        driver.antenna_on()
        return driver, self.clock.ticks_us()

    def timed_poll(self, reader: int, delay_us: int) -> tuple[int, int, bool]:
        """One WUPA ``delay_us`` after field-on, arming included: (measured field-on ->
        WUPA start, field-on -> answer or timeout, answered)."""
        driver, on = self._fresh_field(reader)
        driver.prepare(WUPA_FRAME, 7, mfrc522.PROBE_TIMEOUT_US)
        wait = delay_us - (self.clock.ticks_us() - on)
        if wait > 0:
            self.clock.sleep_us(wait)
        sent = self.clock.ticks_us() - on
        try:
            answered = driver.send() is not None
            return sent, self.clock.ticks_us() - on, answered
        finally:
            driver.antenna_off()

    def answers_after(self, reader: int, delay_us: int) -> bool:
        return self.timed_poll(reader, delay_us)[2]

    def wakeup(self, reader: int, tries: int,
               delays: Sequence[int] = DELAYS_US) -> tuple[int, int, int] | None:
        """(measured wake-up, measured answer time, delay asked) of the first delay at
        which every try answers: the slowest try's measured times."""
        for delay in delays:
            polls = [self.timed_poll(reader, delay) for _ in range(tries)]
            if all(answered for _s, _a, answered in polls):
                return (max(s for s, _a, _x in polls), max(a for _s, a, _x in polls), delay)
        return None

    def wakeup_us(self, reader: int, tries: int,
                  delays: Sequence[int] = DELAYS_US) -> int | None:
        found = self.wakeup(reader, tries, delays)
        return None if found is None else found[0]

    def poll_time(self, reader: int, tries: int) -> int:
        """The shortest measured poll with no answer yet (the sweep's commonest poll):
        field on, WUPA armed and sent at once, timeout."""
        times = []
        for _ in range(tries):
            _sent, done, _answered = self.timed_poll(reader, 0)
            times.append(done)
        return min(times)

    def read_rate(self, reader: int, polls: int, settle_us: int) -> tuple[float, str | None]:
        """Share of full reads that gave the UID seen most; and that UID."""
        seen: dict[str, int] = {}
        for _ in range(polls):
            driver, on = self._fresh_field(reader)
            wait = settle_us - (self.clock.ticks_us() - on)
            if wait > 0:
                self.clock.sleep_us(wait)
            try:
                if driver.wupa() is not None:
                    uid = uid_hex(driver.read_uid())
                    seen[uid] = seen.get(uid, 0) + 1
            except mfrc522.TagError:
                pass
            finally:
                driver.antenna_off()
        if not seen:
            return 0.0, None
        uid, count = max(seen.items(), key=lambda kv: kv[1])
        return count / polls, uid

    def _hold(self, on: bool) -> None:
        if self.hold_field is None:
            return
        self.demux.select(self.hold_field)
        driver = self.drivers[self.hold_field]
        if on:
            driver.init()
            driver.antenna_on()
        else:
            driver.antenna_off()

    def measure(self, readers: Sequence[int], tries: int, polls: int,
                ask: Callable[[str], None], say: Callable[[str], None]) -> BenchReport:
        report = BenchReport(tries=tries, polls=polls, hold_field=self.hold_field)
        if self.hold_field is not None:
            self._hold(True)
            say(f"reader {self.hold_field}'s field stays on through the run")
        try:
            for reader in readers:
                report.readers.append(self._measure_one(reader, tries, polls, ask, say))
        finally:
            self._hold(False)
        return report

    def _measure_one(self, reader: int, tries: int, polls: int,
                     ask: Callable[[str], None], say: Callable[[str], None]) -> ReaderReport:
        entry = ReaderReport(reader)
        self.demux.select(reader)
        try:
            entry.version = f"0x{self.drivers[reader].init():02X}"
        except mfrc522.ReaderError as exc:
            entry.problem = str(exc)
            say(f"reader {reader}: {exc}; check its cable and chip select")
            return entry
        rates: dict[str, float] = {}
        slowest: list[int] = []
        for name, prompt in POSITIONS:
            ask(prompt.format(r=reader))
            if name == "centred":
                entry.poll_us = self.poll_time(reader, tries)
            found = self.wakeup(reader, tries)
            where = PositionReport(name)
            entry.positions.append(where)
            if found is None:
                entry.problem = (f"{name}: the tag did not answer every poll even 5.1 ms "
                                 "after field-on")
                settle = SETTLE_US
            else:
                where.wakeup_us, where.answer_us, where.asked_us = found
                slowest.append(where.wakeup_us)
                settle = where.wakeup_us
            where.read_rate, uid = self.read_rate(reader, polls, settle)
            rates[name] = where.read_rate
            if name == "centred":
                entry.uid = uid
            say(f"reader {reader} {name}: tag answers "
                f"{'never within 5.1 ms' if found is None else f'{found[1]} us'} after "
                f"field-on (WUPA at {where.wakeup_us} us), read rate {where.read_rate:.0%}")
        entry.wakeup_us = None if entry.problem else max(slowest)
        entry.read_rate_centred = rates["centred"]
        entry.read_rate_off_centre = rates["off-centre"]
        entry.read_rate_top = rates["top of range"]
        return entry


def measure_sweep(rig: Rig, n_readers: int, settle_us: int, poll_us: int, sweeps: int = 10,
                  force_overlap: bool = True) -> dict[str, Any]:
    """The firmware's own sweep (firmware.scan.Scanner) over readers 0..n_readers-1 of a
    small rig, timed on its clock. A rig of 2-4 readers has no checked SCAN_ORDER, so the
    firmware would not overlap wake-ups and the settle would hide the per-poll cost;
    ``force_overlap`` sets the lead the firmware would use (ceil(settle / poll)), capped
    at n_readers - 1. Place the rig's antennas >= 125 mm apart (FIELD_SEPARATION_MM)."""
    from firmware.scan import Scanner

    demux = Demux(rig.address_pins, rig.bank_pins, rig.strobe_pin)
    drivers = [mfrc522.MFRC522(rig.spi, demux.nss, rig.clock) for _ in range(n_readers)]
    lead = -(-settle_us // max(1, poll_us)) if force_overlap else 0
    scanner = Scanner(drivers, demux, rig.clock, lambda _line: None, settle_us=settle_us,
                      order=range(n_readers), lead=lead, poll_us=poll_us)
    scanner.sweep(emit=False)  # the first sweep initialises the readers
    times = []
    for _ in range(sweeps):
        start = rig.clock.ticks_us()
        scanner.sweep(emit=False)
        times.append(rig.clock.ticks_us() - start)
    return {"readers": n_readers, "lead": scanner.lead, "settle_us": settle_us,
            "sweep_mean_us": round(sum(times) / len(times)), "sweep_max_us": max(times),
            "per_reader_us": round(sum(times) / len(times) / n_readers)}


def write_report(report: BenchReport, path: Path,
                 sweep: dict[str, Any] | None = None) -> None:
    data = report.to_json()
    if sweep:
        data["sweep"] = sweep
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def simulated_rig(n_readers: int, wakeup_us: float) -> Rig:
    """A register-level simulated rig with a tag on every reader (demonstration and tests)."""
    from firmware.mfrc522_sim import SimTable, Timings

    table = SimTable(n_readers, Timings(tag_power_up_us=wakeup_us))
    for reader in range(n_readers):
        table.place(reader, f"04A1B2C3D4{reader:04X}")
    demux = table.demux
    return Rig(table.spi, demux.address, demux.bank_enable, demux.strobe, table.clock)


def parse_readers(text: str, n_readers: int) -> list[int]:
    try:
        readers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--bench-readers {text!r} is not a list like 0,5,33") from None
    bad = [r for r in readers if not 0 <= r < n_readers]
    if bad or not readers:
        raise ConfigError(f"--bench-readers: readers must be 0..{n_readers - 1}, got {text!r}")
    return readers


def run_bench(config: HubConfig, readers_text: str, tries: int, polls: int, report: Path,
              interactive: bool, sim_wakeup_us: float = 1200.0,
              hold_field: int | None = None, sweep_readers: int = 0) -> int:
    """The ``cauldron readers --bench`` command: measure, print, write the report."""
    from hub.layout import Layout

    n_readers = Layout(pads=config.pads).n_readers
    readers = parse_readers(readers_text, n_readers)
    if tries < 1 or polls < 1:
        raise ConfigError("--tries and --polls must be at least 1")
    if not 0 <= sweep_readers <= min(4, n_readers) or sweep_readers == 1:
        raise ConfigError(f"--bench-sweep must be 2..4 (readers 0..N-1 of the rig), got "
                          f"{sweep_readers}")
    if hold_field is not None and (not 0 <= hold_field < n_readers or hold_field in readers):
        raise ConfigError(f"--hold-field must be a reader 0..{n_readers - 1} that is not "
                          f"measured, got {hold_field}")
    if config.backend == "spi":
        rig = pi_rig(config.spi)
    elif config.backend == "sim":
        rig = simulated_rig(n_readers, sim_wakeup_us)
        print(f"simulated readers (tags wake after {sim_wakeup_us:g} us): a demonstration; "
              "on the bench wire a bank board to the Pi's SPI and use backend = \"spi\"")
    else:
        raise BackendError("the reader bench drives the readers from the Pi: set backend = "
                           "\"spi\" with an [spi] section (hardware/bench-test.md), or sim to "
                           "try it")

    def ask(text: str) -> None:
        if interactive:
            input(text + " ")
        else:
            print(text)

    try:
        result = ReaderBench(rig, n_readers, hold_field).measure(readers, tries, polls, ask,
                                                                 print)
        sweep = None
        if sweep_readers:
            sweep = measure_sweep(rig, sweep_readers, result.settle_us,
                                  result.poll_us or 600)
            print(f"sweep of readers 0..{sweep_readers - 1}, overlap forced (lead "
                  f"{sweep['lead']}): mean {sweep['sweep_mean_us']} us, max "
                  f"{sweep['sweep_max_us']} us, {sweep['per_reader_us']} us per reader")
    finally:
        rig.close()
    write_report(result, report, sweep)
    print(f"settle time for the firmware: {result.settle_us} us ({result.to_json()['basis']})")
    if result.poll_us:
        print(f"measured poll: {result.poll_us} us; field lead {result.lead} readers")
    print(f"report written to {report}; copy it to the Pico: "
          f"mpremote connect /dev/ttyACM0 cp {report} :bench.json")
    return 1 if any(r.problem for r in result.readers) else 0

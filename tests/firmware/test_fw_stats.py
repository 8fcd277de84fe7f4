"""The firmware reports its own timing (STATS), and `cauldron readers` shows it."""

from __future__ import annotations

import os
import re
import time
import tty

import serial

from firmware.mfrc522_sim import Timings
from firmware.protocol import FROM_FIRMWARE, decode_frame, encode_frame
from firmware.scan import SETTLE_US
from firmware.sweep import build
from hub.backends.serial import SerialBackend
from hub.cli import render_grid
from hub.layout import Layout
from hub.tagmap import TagMap


def stats_of(lines: list[str]) -> list[dict[str, int]]:
    out = []
    for line in lines:
        frame = decode_frame(line, FROM_FIRMWARE)
        if frame.kind == "STATS":
            out.append({k: int(v) for k, v in (f.split("=") for f in frame.fields)})
    return out


def test_stats_reports_the_sweep_mean_max_and_each_poll_kind() -> None:
    table, scanner, lines = build(8, Timings(), "fast", SETTLE_US, 1)
    scanner.health_every = 10
    scanner.stats_sample_every = 1
    scanner.boot()
    for reader in (1, 2, 3):
        table.place(reader, f"04A1B2C3D4E5{reader:02X}")
    lines.clear()
    durations = []
    while not stats_of(lines):
        start = table.clock.now_us
        scanner.sweep()
        durations.append(table.clock.now_us - start)
    (stats,) = stats_of(lines)
    assert stats["sweeps"] == len(durations)
    assert abs(stats["mean_us"] - sum(durations) / len(durations)) <= 2
    assert stats["max_us"] == int(max(durations)) or abs(stats["max_us"] - max(durations)) <= 1
    assert {"empty", "probe", "verify", "acquire"} <= set(stats)
    assert stats["empty"] < stats["verify"] < stats["acquire"]
    lines.clear()
    scanner.handle_line(encode_frame(4, "SYNC", []).strip())
    assert [f["sweeps"] for f in stats_of(lines)] == [0]  # a fresh window after each report


def test_cauldron_readers_shows_the_firmwares_stats_line() -> None:
    """The real firmware's lines over a pty into the hub's serial back-end."""
    master, slave = os.openpty()
    tty.setraw(slave)
    _table, scanner, lines = build(36, Timings(), "fast", SETTLE_US, 1)
    scanner.health_every = 5
    backend = SerialBackend(Layout(), lambda: serial.serial_for_url(
        os.ttyname(slave), baudrate=115200, timeout=0), port_name="pty")
    try:
        backend.open()
        scanner.boot()
        for _ in range(5):
            scanner.sweep()
        os.write(master, "".join(lines).encode())
        deadline = time.monotonic() + 10
        while backend.stats is None and time.monotonic() < deadline:
            backend.poll()
            time.sleep(0.01)
        assert backend.stats is not None
        assert re.fullmatch(r"sweeps=3 mean_us=\d+ max_us=\d+ .*cpu_mhz=0", backend.stats)
        assert f"firmware timing: {backend.stats}" in render_grid(backend, TagMap())
    finally:
        backend.close()
        os.close(master)
        os.close(slave)

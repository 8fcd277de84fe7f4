"""The hub watches the scan board: PING with a timeout, a hung board reported in
hub/health and reset, a FULL report that arrived in part asked for again, pawn positions
from PAWNS lines (a fake firmware on a real pty)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial
from test_hub_serial import UID_A, UID_B, FakeFirmware

from engine.wire.contract import HubEvent, HubHealth
from hub.backends.base import PollResult
from hub.backends.serial import SerialBackend
from hub.layout import Layout


def run_until(backend: SerialBackend, fw: FakeFirmware, cond: Callable[[], bool],
              results: list[PollResult] | None = None, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fw.serve()
        result = backend.poll()
        if results is not None:
            results.append(result)
        if cond():
            return
        time.sleep(0.005)
    raise AssertionError("timed out")


@pytest.fixture
def board() -> Iterator[tuple[SerialBackend, FakeFirmware, list[str]]]:
    fw = FakeFirmware()
    resets: list[str] = []
    backend = SerialBackend(
        Layout(), lambda: serial.serial_for_url(fw.path, timeout=0), port_name="pty",
        reconnect_delay=0.05, ping_interval=0.05, ping_timeout=0.3, sync_timeout=0.3,
        reset=lambda: resets.append("RUN pulse"),
    )
    yield backend, fw, resets
    backend.close()
    fw.pull_cable()


def test_hung_board_is_reported_reset_and_resynchronised(
        board: tuple[SerialBackend, FakeFirmware, list[str]]) -> None:
    backend, fw, resets = board
    fw.state = {3: UID_A}
    backend.open()
    run_until(backend, fw, lambda: backend.state()[3] == UID_A and "PING" in fw.received)
    assert backend.board().state == "ok"
    fw.hung = True
    results: list[PollResult] = []
    run_until(backend, fw, lambda: backend.board().state == "hung", results)
    assert resets == ["RUN pulse"] and backend.board().resets == 1
    assert any(r.board_changed for r in results)
    fw.hung = False  # the reset brought it back: the hub reopens, SYNCs and PINGs again
    fw.state = {3: UID_A, 4: UID_B}
    run_until(backend, fw, lambda: backend.board().state == "ok" and backend.state()[4] == UID_B)
    assert resets == ["RUN pulse"]


def test_a_full_report_that_arrived_in_part_is_asked_for_again(
        board: tuple[SerialBackend, FakeFirmware, list[str]]) -> None:
    backend, fw, _resets = board
    fw.state = {r: f"04A1B2C3D4{r:04X}" for r in range(36)}  # two FULL lines
    fw.drop_full_part = 1
    backend.open()
    run_until(backend, fw, lambda: all(backend.state().values()))
    assert fw.received.count("SYNC") >= 2


def test_pawn_lines_become_sensed_positions(
        board: tuple[SerialBackend, FakeFirmware, list[str]]) -> None:
    backend, fw, _resets = board
    backend.open()
    assert backend.pawns() is None  # no PAWNS line yet: pawns not sensed
    fw.frame("PAWNS", [f"{(1 << 0) | (1 << 5) | (1 << 19):05X}"])
    results: list[PollResult] = []
    run_until(backend, fw, lambda: backend.pawns() is not None, results)
    assert backend.pawns() == frozenset({0, 5, 19})
    assert [r.pawns for r in results if r.pawns is not None] == [frozenset({0, 5, 19})]


def test_hub_health_carries_the_board_and_the_pawns(
        board: tuple[SerialBackend, FakeFirmware, list[str]], tmp_path: Path) -> None:
    from engine.wire.mqtt import WireClient
    from hub.outbox import Outbox
    from hub.service import Hub
    from hub.tagmap import TagMap

    backend, fw, _resets = board
    hub = Hub(table="t1", backend=backend, client=WireClient("mqtt://127.0.0.1:9"),
              outbox=Outbox(tmp_path / "o.sqlite"), tagmap=TagMap())
    backend.open()
    fw.frame("PAWNS", ["00021"])
    deadline = time.monotonic() + 5
    events: list[HubEvent] = []
    while time.monotonic() < deadline and len(events) < 2:
        fw.serve()
        events += hub.step()
    assert sorted((e.kind, e.action, e.position) for e in events) == [
        ("pawn", "placed", 0), ("pawn", "placed", 5)]
    assert all(e.uid is None and e.card_id is None for e in events)
    fw.hung = True
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and backend.board().state != "hung":
        hub.step()
    health = HubHealth.of(hub.snapshot())
    assert health.board is not None and health.board.state == "hung"
    assert health.board.resets == 1 and health.pawns == [0, 5]
    assert hub.degraded is not None and hub.degraded.code == "readers_failed"
    assert "the scan board is hung" in hub.degraded.reason
    hub.outbox.close()

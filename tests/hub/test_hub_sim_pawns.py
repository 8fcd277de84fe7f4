"""The simulated table's pawn sensors (Hall switches) and their hub/cmd/sim gestures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hub_events import hub_request

from engine.wire.contract import CommandRequest, TopicInfo
from engine.wire.mqtt import CommandRefused, WireClient
from hub.backends.sim import SimulatedTable
from hub.backends.sim_pawns import SimPawns
from hub.errors import BackendError
from hub.layout import Layout
from hub.outbox import Outbox
from hub.service import Hub
from hub.tagmap import TagMap

SIM_TOPIC = TopicInfo(table="t1", name="hub/cmd/sim", model=CommandRequest, verb="sim")


def test_switches_report_positions_not_pawns() -> None:
    pawns = SimPawns([0, 5])
    assert pawns.change() == frozenset({0, 5})  # the first poll always reports
    assert pawns.change() is None
    pawns.place(5)  # two pawns on one position: the switch sees one magnet
    assert pawns.change() is None
    pawns.move(5, 7)
    assert pawns.change() == frozenset({0, 5, 7})
    pawns.lift(5)
    assert pawns.sensed() == frozenset({0, 7})
    with pytest.raises(BackendError, match="no pawn"):
        pawns.move(3, 4)
    with pytest.raises(BackendError, match=r"0\.\.19"):
        pawns.place(20)


def test_simulated_table_polls_its_pawn_sensors(tmp_path: Path) -> None:
    sim = SimulatedTable(Layout(perimeter=True))
    assert sim.n_readers == 36  # sensors, not readers
    assert sim.pawn_switches is not None
    sim.pawn_switches.set([2, 12])
    hub = Hub(table="t1", backend=sim, client=WireClient("mqtt://127.0.0.1:9"),
              outbox=Outbox(tmp_path / "o.sqlite"), tagmap=TagMap())
    first = hub.step()
    assert sorted((e.kind, e.action, e.position) for e in first) == [
        ("pawn", "placed", 2), ("pawn", "placed", 12)]
    assert sim.poll().pawns is None  # reported once

    def sim_cmd(**args: object) -> object:
        return hub._on_command(SIM_TOPIC, hub_request("t1", "sim", args))

    assert sim_cmd(action="pawn", **{"from": 2, "to": 4}) == {"pawns": [4, 12]}
    events = hub.step()
    assert sorted((e.action, e.position) for e in events) == [("placed", 4), ("removed", 2)]
    assert sim_cmd(action="state")["pawns"] == [4, 12]  # type: ignore[index]
    with pytest.raises(CommandRefused, match="no pawn stands"):
        sim_cmd(action="pawn", **{"from": 9, "to": 10})
    hub.outbox.close()


def test_a_table_without_sensors_refuses_pawn_gestures(tmp_path: Path) -> None:
    sim = SimulatedTable()
    hub = Hub(table="t1", backend=sim, client=WireClient("mqtt://127.0.0.1:9"),
              outbox=Outbox(tmp_path / "o.sqlite"), tagmap=TagMap())
    with pytest.raises(CommandRefused, match="no pawn sensors"):
        hub._on_command(SIM_TOPIC, hub_request("t1", "sim", {"action": "pawns",
                                                             "positions": [1]}))
    hub.outbox.close()

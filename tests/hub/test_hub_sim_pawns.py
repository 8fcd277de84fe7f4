"""The simulated table's pawn sensors (Hall switches) and their hub/cmd/sim gestures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def test_pawns_are_saved_with_the_table_and_a_restarted_hub_moves_none(tmp_path: Path) -> None:
    from engine.games.glastonbury.table.pawn_check import PawnSensing

    state = tmp_path / "sim.json"
    sensing = PawnSensing()  # what the engine keeps from the hub's pawn events

    def run_hub(sim: SimulatedTable) -> Hub:
        return Hub(table="t1", backend=sim, client=WireClient("mqtt://127.0.0.1:9"),
                   outbox=Outbox(tmp_path / "o.sqlite"), tagmap=TagMap())

    def feed(events: list[Any]) -> None:
        for e in events:
            assert e.kind == "pawn" and e.position is not None
            sensing.update(e.position, e.action == "placed")

    sim = SimulatedTable(Layout(perimeter=True), state_path=state)
    hub = run_hub(sim)
    sim.place("2,3", card_id="yellow-a-1")
    hub._on_command(SIM_TOPIC, hub_request("t1", "sim", {"action": "pawns",
                                                         "positions": [0, 5, 10]}))
    hub._on_command(SIM_TOPIC, hub_request("t1", "sim", {"action": "pawn", "from": 5, "to": 7}))
    feed([e for e in hub.step() if e.kind == "pawn"])
    assert sensing.sensed == frozenset({0, 7, 10})
    hub.outbox.close()

    again = SimulatedTable(Layout(perimeter=True), state_path=state)
    assert again.pawns() == frozenset({0, 7, 10})
    assert again.truth() == sim.truth()  # the cards came back as before, pawns with them
    hub = run_hub(again)
    hub.seed_backend()
    events = [e for e in hub.step() if e.kind == "pawn"]
    assert all(e.action == "placed" for e in events)  # nothing lifted: no pawn moved
    feed(events)
    assert sensing.sensed == frozenset({0, 7, 10})
    # The pawns really stand there: one can be moved on from where it was saved.
    hub._on_command(SIM_TOPIC, hub_request("t1", "sim", {"action": "pawn", "from": 7, "to": 8}))
    feed([e for e in hub.step() if e.kind == "pawn"])
    assert sensing.sensed == frozenset({0, 8, 10})
    hub.outbox.close()


def test_a_saved_table_without_pawns_and_bad_pawns_in_a_save(tmp_path: Path) -> None:
    state = tmp_path / "sim.json"
    SimulatedTable(state_path=state).place("1,1", card_id="yellow-a-1")  # no sensors: no pawns
    assert "pawns" not in json.loads(state.read_text())
    with_sensors = SimulatedTable(Layout(perimeter=True), state_path=state)
    assert with_sensors.pawns() == frozenset() and with_sensors.truth()
    data = json.loads(state.read_text())
    state.write_text(json.dumps({**data, "pawns": [3, 25]}))
    damaged = SimulatedTable(Layout(perimeter=True), state_path=state)
    assert damaged.truth() == {} and damaged.pawns() == frozenset()  # set aside, as for cards
    assert (tmp_path / "sim.json.bad").exists()


def test_restore_lays_the_pawns_where_the_game_says(tmp_path: Path) -> None:
    sim = SimulatedTable(Layout(perimeter=True), state_path=tmp_path / "sim.json")
    sim.set_pawns([0, 5])
    sim.restore({"cells": {"1,1": "yellow-a-1"}, "pawns": [2, 12]})
    assert sim.pawns() == frozenset({2, 12})
    sim.restore({"cells": {"1,1": "yellow-a-1"}})  # no pawns in the layout: they stay
    assert sim.pawns() == frozenset({2, 12})
    with pytest.raises(BackendError, match=r"0\.\.19"):
        sim.restore({"cells": {}, "pawns": [2, 40]})
    with pytest.raises(BackendError, match="position 4"):  # named 1-based for people
        sim.move_pawn(3, 4)
    assert SimulatedTable(Layout(perimeter=True),
                          state_path=tmp_path / "sim.json").pawns() == frozenset({2, 12})

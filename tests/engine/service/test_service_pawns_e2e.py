"""Sensed pawns end to end on the simulated table (hardware issue 13): a real hub on a
simulated table with pawn sensors (Hall switches), a real broker, the engine service. A pawn
moved to the wrong position raises a G4 alert with the way back before any card is taken;
moving it to the right position clears it. Without pawn sensors nothing changes."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from glastonbury_table import glastonbury
from waiting import wait_for

from engine.games.glastonbury.rules.board import cell_name
from engine.games.glastonbury.table.interpreter import SensorInput
from engine.games.glastonbury.table.table_driver import scripted_game
from engine.service.service import EngineService, ServiceConfig
from engine.wire.contract import Topics
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.layout import Layout
from hub.outbox import Outbox
from hub.service import Hub


def lay(sim: SimulatedTable, hub: Hub, inp: SensorInput) -> None:
    before = hub.outbox.last_seq
    where = cell_name(inp.cell) if inp.cell is not None else f"pad:{inp.pad}"
    sim.place(where, card_id=inp.card)
    wait_for(lambda: hub.outbox.last_seq > before, 20, "the hub to see the card")


def test_wrong_pawn_move_alerts_and_the_right_one_clears_it(
        mqtt_broker: str, tmp_path: Path, table_id: str) -> None:
    script = scripted_game(2, 5, max_decisions=2)
    tagmap = virtual_box_tagmap()
    sim = SimulatedTable(Layout(perimeter=True), tagmap=tagmap)
    assert sim.pawn_switches is not None
    client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                        state_topic=Topics(table_id).hub_state)
    hub = Hub(table=table_id, backend=sim, client=client, outbox=Outbox(tmp_path / "o.sqlite"),
              tagmap=tagmap, poll_interval=0.002, snapshot_interval=0.2).start()
    config = ServiceConfig(mqtt=mqtt_broker, data_dir=tmp_path / "data",
                           tables=frozenset({table_id}), name=f"eng-{uuid.uuid4().hex[:8]}")
    service = EngineService(config).start(wait=10)
    try:
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        service.command(table_id, "new_game", args)
        for inp in script.deal:
            lay(sim, hub, inp)
        interp = glastonbury(service.tables[table_id].interp)
        wait_for(lambda: interp.game is not None and interp.status.value == "playing", 30,
                 "the game to start")
        game = interp.game
        assert game is not None
        seat, target = game.seat, game.pawns[game.seat]
        start = (target - game.move_value) % 20
        others = [game.pawns[s] for s in range(game.players) if s != seat]

        def table() -> dict[str, Any]:  # the table part of the public view, as on the wire
            return dict(interp.public_view().to_wire()["table"])

        def alerts() -> list[tuple[str, str]]:
            return [(a["rule"], a["params"]["code"]) for a in table()["alerts"]]

        # The engine had the simulated table lay the pawns where the turn starts (the
        # active pawn not moved yet); nothing else puts them there. No alert.
        wait_for(lambda: interp.pawn_sensing.to_wire() == sorted({start, *others}), 30,
                 "the pawns laid at their start")
        assert sim.pawn_switches.positions() == sorted([start, *others])
        assert alerts() == []
        # One step too far: G4, with the way back, before any card is lifted.
        wrong = next(p for p in ((target + k) % 20 for k in (1, 2, 3))
                     if p not in others and p != start)
        sim.pawn_switches.move(start, wrong)
        wait_for(lambda: ("G4", "pawn_wrong_position") in alerts(), 30, "the pawn alert")
        alert = next(a for a in table()["alerts"]
                     if a["params"]["code"] == "pawn_wrong_position")
        assert f"from position {wrong + 1} to position {target + 1}" in alert["instruction"]
        assert table()["pawns_sensed"] == sorted({wrong, *others})
        # Moved where the rules put it: the alert clears.
        sim.pawn_switches.move(wrong, target)
        wait_for(lambda: alerts() == [], 30, "the alert to clear")
        # The turn then goes on as before: the first take of the script is accepted.
        for inp in script.turns[0]:
            if inp.kind == "button":
                assert inp.button is not None
                hub.button_pressed(inp.button, inp.seat)
            elif inp.kind == "placed":
                lay(sim, hub, inp)
            elif inp.kind == "removed":
                where = cell_name(inp.cell) if inp.cell is not None else f"pad:{inp.pad}"
                before = hub.outbox.last_seq
                sim.remove(where)

                def lifted(b: int = before) -> bool:
                    return hub.outbox.last_seq > b

                wait_for(lifted, 20, "the lift")
        wait_for(lambda: interp.game is not None and len(interp.game.actions) >= 1, 30,
                 "the first take")
        # The pawn then knocked to a wrong place, and the take undone: the undo's physical
        # restore lays the pawns where the game now says, and the alert clears.
        stray = next(p for p in range(20) if p not in {*others, start, target})
        sim.move_pawn(target, stray)
        wait_for(lambda: any(c.startswith("pawn_") for _, c in alerts()), 30, "the pawn alert")
        service.command(table_id, "undo", {})
        wait_for(lambda: interp.game is not None and len(interp.game.actions) == 0, 30,
                 "the undo")
        undone, switches = interp.game, sim.pawn_switches
        assert undone is not None and switches is not None
        wait_for(lambda: switches.positions() == sorted(undone.pawns), 30,
                 "the pawns laid back where the game says")
        wait_for(lambda: [c for _, c in alerts() if c != "undone"] == [], 30,
                 "the pawn alert to clear (the undo's own notice stays)")
        assert interp.pawn_sensing.sensed == frozenset(undone.pawns)
    finally:
        service.stop()
        hub.stop()


def test_without_pawn_sensors_no_pawn_is_reported(tmp_path: Path) -> None:
    sim = SimulatedTable()
    assert sim.pawn_switches is None and sim.pawns() is None
    assert sim.poll().pawns is None

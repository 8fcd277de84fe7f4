"""Shared helpers for the engine-service tests (a module, not a conftest: unique name)."""

from __future__ import annotations

import random
from typing import Any

from engine.rules import Game, GameConfig, Take
from engine.rules.board import TAKEABLE_CELLS, parse_cell
from engine.rules.cards import INGREDIENTS
from engine.service.interpreter import Status, TableInterpreter, lay
from engine.service.table_driver import inputs_for, next_decision, refill_of

# With yellow and red at the table, green is the colour removed (G2).
FILL = [c for c in INGREDIENTS if not c.startswith("green")]


def deal_grid(placed: dict[str, str]) -> list[str]:
    fixed = {parse_cell(k): v for k, v in placed.items()}
    rest = iter(c for c in FILL if c not in fixed.values())
    return [fixed.get(cell) or next(rest) for cell in TAKEABLE_CELLS]


def start(placed: dict[str, str] | None = None, **config: Any) -> TableInterpreter:
    """A 2-player game (yellow, red; seat 0 first) dealt with `placed` where given."""
    interp = TableInterpreter("t")
    args = {"game_id": "g", "colours": ["yellow", "red"], "first_seat": 0, **config}
    interp.command("new_game", args)
    for cell, card in zip(TAKEABLE_CELLS, deal_grid(placed or {}), strict=True):
        interp.handle(lay(cell, card))
    assert interp.status is Status.PLAYING, interp.alerts
    return interp


def play(interp: TableInterpreter, *inputs: Any) -> list[Any]:
    return [interp.handle(i) for i in inputs]


def next_pile_card(interp: TableInterpreter) -> str:
    assert interp.game is not None
    return interp.game.pile.possible_next()[0]


def until_last_card(seed: int, players: int = 2) -> tuple[TableInterpreter, int] | None:
    """Play random legal moves through the table until a take would end the game; return
    the interpreter and that cell (None when this seed's game ends another way)."""
    rng = random.Random(seed)
    colours = ("yellow", "red", "green", "blue")[:players]
    ref = Game.new(GameConfig(colours=colours), rng)
    interp = TableInterpreter("t")
    interp.command("new_game", {"game_id": "g", "colours": list(colours)})
    for cell, card in zip(TAKEABLE_CELLS, ref.deal.grid, strict=True):
        interp.handle(lay(cell, card))
    while not ref.is_over():
        if ref.phase.value == "take" and not ref.pile.size:
            for action in ref.legal_actions():
                if isinstance(action, Take) and TableInterpreter._ends_game(ref, action.cell):
                    return interp, action.cell
        decision = next_decision(ref, rng)
        for inp in inputs_for(interp, decision, refill_of(ref, decision)):
            interp.handle(inp)
    return None


def hub_event(inp: Any, seq: int, epoch: str = "e1", hub_id: str = "hub-test") -> Any:
    """The `HubEvent` a hub would publish for an interpreter input."""
    from engine.rules.board import cell_name
    from engine.wire.contract import HubEvent
    from hub.backends.sim import made_up_uid

    common: dict[str, Any] = {"hub_id": hub_id, "epoch": epoch, "seq": seq, "ts": 1000.0 + seq}
    if inp.kind == "button":
        place = {"seat": inp.seat} if inp.button == "confirm" else {}
        return HubEvent(kind="button", action="pressed", button=inp.button, **place, **common)
    place = {"cell": cell_name(inp.cell)} if inp.cell is not None else {"seat": inp.pad}
    if inp.card is None:
        return HubEvent(kind="unknown_tag", action=inp.kind, uid=inp.uid, **place, **common)
    kind = "cell" if inp.cell is not None else "pad"
    return HubEvent(kind=kind, action=inp.kind, uid=made_up_uid(inp.card), card_id=inp.card,
                    **place, **common)

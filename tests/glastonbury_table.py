"""Shared helpers for the tests of Glastonbury's table interpreter and the engine service
(a module, not a conftest: unique name)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

from hub_events import hub_event

from engine.games.glastonbury.rules import Game, GameConfig, Take
from engine.games.glastonbury.rules.actions import USE_DECLINATIO
from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, parse_cell
from engine.games.glastonbury.rules.cards import INGREDIENTS
from engine.games.glastonbury.table.interpreter import (
    Outcome,
    SensorInput,
    Status,
    TableInterpreter,
    lay,
)
from engine.games.glastonbury.table.table_driver import inputs_for, next_decision, refill_of

__all__ = ["hub_event"]  # re-exported for the service tests

T = TypeVar("T")

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


def play(interp: TableInterpreter, *inputs: SensorInput) -> list[Outcome]:
    return [interp.handle(i) for i in inputs]


def game_of(interp: TableInterpreter) -> Game:
    """The interpreter's game, which a test past ``new_game`` has."""
    assert interp.game is not None
    return interp.game


def next_pile_card(interp: TableInterpreter) -> str:
    assert interp.game is not None
    return interp.game.pile.possible_next()[0]


def play_until(seed: int, players: int, found: Callable[[Game], T | None]
               ) -> tuple[TableInterpreter, T] | None:
    """Play random legal moves through the table until `found(reference game)` says
    something; return the interpreter and that (None when the game ends first)."""
    rng = random.Random(seed)
    colours = ("yellow", "red", "green", "blue")[:players]
    ref = Game.new(GameConfig(colours=colours), rng)
    interp = TableInterpreter("t")
    interp.command("new_game", {"game_id": "g", "colours": list(colours)})
    for cell, card in zip(TAKEABLE_CELLS, ref.deal.grid, strict=True):
        interp.handle(lay(cell, card))
    while not ref.is_over():
        what = found(ref)
        if what is not None:
            return interp, what
        decision = next_decision(ref, rng)
        for inp in inputs_for(interp, decision, refill_of(ref, decision)):
            interp.handle(inp)
    return None


def _ending_take(ref: Game) -> int | None:
    if ref.phase.value == "take" and not ref.pile.size:
        for action in ref.legal_actions():
            if isinstance(action, Take) and TableInterpreter._ends_game(ref, action.cell):
                return action.cell
    return None


def until_last_card(seed: int, players: int = 2) -> tuple[TableInterpreter, int] | None:
    """Random play until a take would end the game; the interpreter and that cell."""
    return play_until(seed, players, _ending_take)


def _blocked_declinatio(ref: Game) -> bool | None:
    if USE_DECLINATIO in ref.legal_actions():
        probe = ref.copy()
        probe.apply(USE_DECLINATIO)
        if probe.is_over():
            return True
    return None


def until_blocked_declinatio(seed: int, players: int = 2) -> TableInterpreter | None:
    """Random play until the active seat stands at a corner where Declinatio would face
    only Vanesco/Perluceo (using it ends the game, G7)."""
    found = play_until(seed, players, _blocked_declinatio)
    return found[0] if found else None


def glastonbury(interp: object) -> TableInterpreter:
    """A table's interpreter (`engine.games.base.Interpreter`) as Glastonbury's, to look
    inside it (its game, cells, pads); fails if the table plays another game."""
    assert isinstance(interp, TableInterpreter), f"not a Glastonbury table: {interp!r}"
    return interp

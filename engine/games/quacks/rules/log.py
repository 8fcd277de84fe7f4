"""A game's log (configuration, fortune deck, actions with chance resolved), its wire form,
`replay()` and `undo()`: a draw or a choice is taken back by replaying all but the last."""

from __future__ import annotations

import random
from dataclasses import asdict
from typing import Any

from engine.games.quacks.rules.actions import Action, action_from_wire, to_wire
from engine.games.quacks.rules.catalogue import Catalogue
from engine.games.quacks.rules.errors import IllegalAction, InvalidWire, QuacksError
from engine.games.quacks.rules.game import Game, QuacksConfig


class InvalidLog(QuacksError):
    """A log whose action does not replay."""


def log_to_wire(game: Game) -> dict[str, Any]:
    return {
        "game": "quacks",
        "config": asdict(game.config),
        "deck": list(game.start_deck),
        "actions": [to_wire(a) for a in game.log],
    }


def replay(
    config: QuacksConfig,
    deck: list[str],
    actions: list[Action],
    catalogue: Catalogue | None = None,
) -> Game:
    """The game after `actions`; every draw and roll in them is resolved, so no rng is used
    (a fresh seeded one continues a simulation from there)."""
    game = Game(config, list(deck), random.Random(0), catalogue)
    for n, action in enumerate(actions):
        try:
            game.apply(action)
        except IllegalAction as exc:
            raise InvalidLog(
                exc.rule, f"action #{n} ({to_wire(action)}) is illegal: {exc.message}"
            ) from None
    return game


def replay_wire(data: Any, catalogue: Catalogue | None = None) -> Game:
    if not isinstance(data, dict) or data.get("game") != "quacks":
        raise InvalidWire("Q29", "not a Quacks game log")
    try:
        config = QuacksConfig(**data["config"])
        deck = [str(c) for c in data["deck"]]
        actions = [action_from_wire(a) for a in data["actions"]]
    except (KeyError, TypeError) as exc:
        raise InvalidWire("Q29", f"malformed Quacks game log: {exc}") from None
    return replay(config, deck, actions, catalogue)


def undo(game: Game, count: int = 1) -> Game:
    """The game without its last `count` actions (an automatic step goes with the action
    that caused it). A simulation's draws and rolls go on from the same seeded stream."""
    if not 0 <= count <= len(game.log):
        raise InvalidLog("Q29", f"cannot undo {count} of {len(game.log)} actions")
    back = replay(game.config, list(game.start_deck), game.log[: len(game.log) - count], game.cat)
    back.rng.setstate(game.rng.getstate())
    return back


def rng_state(game: Game) -> list[Any]:
    """The simulation's rng state as JSON, so a restored game draws on as it would have."""
    version, internal, gauss = game.rng.getstate()
    return [version, list(internal), gauss]


def restore_rng(game: Game, state: Any) -> None:
    try:
        version, internal, gauss = state
        game.rng.setstate((int(version), tuple(int(x) for x in internal), gauss))
    except (TypeError, ValueError) as exc:
        raise InvalidWire("Q29", f"not a random state: {exc}") from None


def restart(game: Game) -> Game:
    """The same game before its first action (same configuration and deck): to replay its
    log action by action, e.g. to gather events."""
    return replay(game.config, list(game.start_deck), [], game.cat)

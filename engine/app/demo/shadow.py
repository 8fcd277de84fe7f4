"""The game as a person at the table knows it, rebuilt from the public ``game/events`` stream.

The engine publishes, after every applied input, the rules actions and their public events
(`engine.wire.contract.GameEvents`); when a game starts, its configuration and the dealt
square. `ShadowGame` follows them with the bots' one game tracker
(`engine.games.glastonbury.bots.PublicGame`:
the rules engine's real-table mode, where the draw pile is an unordered set and each refill
is an action naming the card laid into the hole); an undo steps back by its snapshots.
Nothing covered is ever needed, so bots fed from the shadow know exactly what a person
watching the table knows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from engine.games.glastonbury.bots import PublicGame
from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.rules.actions import Action, action_from_wire
from engine.games.glastonbury.rules.cards import RECIPE_A, RECIPE_B
from engine.games.glastonbury.rules.errors import RulesError
from engine.games.glastonbury.rules.events import Event
from engine.wire.contract import GameEvents

log = logging.getLogger("cauldron.demo")


class ShadowError(Exception):
    """The stream cannot be followed (a missed message, an action the shadow refuses)."""


@dataclass
class ShadowGame:
    """Follows one table's ``game/events``; `game` is None until a game start is seen."""

    game_id: str | None = None
    status: str | None = None
    config: GameConfig | None = None
    grid: tuple[str, ...] = ()
    public: PublicGame | None = None
    actions: list[Action] = field(default_factory=list)
    mismatches: int = 0  # public events that differ from the engine's (should stay 0)
    resets: int = 0  # undo / rebuild count: followers holding state derived from us re-read
    recipes: dict[int, tuple[str, ...]] = field(default_factory=dict)  # seats' own, if known

    @property
    def game(self) -> Game | None:
        """The game as followed (None until a game start is seen)."""
        return self.public.shadow if self.public is not None else None

    def feed(self, message: GameEvents) -> list[tuple[Action, list[Event]]]:
        """Apply one message; returns the (action, events) newly applied, in order.

        Raises `ShadowError` when the message does not follow from what was seen (the shadow
        then waits for the next game start)."""
        started = message.config is not None and message.grid is not None
        if started:
            self._start(message)
        elif self.public is None or message.game_id != self.game_id:
            self.status = message.status
            return []  # a game whose start we did not see: nothing to follow
        follower = self.public
        assert follower is not None
        self.status = message.status
        if message.index < len(self.actions) or message.undone:
            self._rewind(message.index)
        if message.index != len(self.actions):
            self._lose(f"game {self.game_id}: message starts at action {message.index}, the "
                       f"shadow holds {len(self.actions)} (a message was lost)")
        applied: list[tuple[Action, list[Event]]] = []
        mine: list[Event] = list(follower.shadow.opening_events) if started else []
        for wire in message.actions:
            try:
                action = action_from_wire(wire)
                events = follower.observe(action)
            except RulesError as exc:
                self._lose(f"game {self.game_id}: action {wire} does not apply: {exc}")
            self.actions.append(action)
            applied.append((action, events))
            mine.extend(events)
        if message.actions or started:
            public = [e.to_wire() for e in mine if not e.private]
            if self._comparable(public) != self._comparable(message.events):
                self.mismatches += 1
                log.warning("game %s: shadow events differ from the engine's at action %d",
                            self.game_id, message.index)
        return applied

    def _comparable(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The events as far as the shadow can know them: with stand-in recipes (G11, see
        `_recipes`) the winners at the end are not ours to compute, so they are left out."""
        assert self.config is not None
        if not self.config.recipes or all(s in self.recipes
                                          for s in range(self.config.players)):
            return events
        return [{k: v for k, v in e.items() if k != "winners"}
                if e.get("type") == "game_ended" else e for e in events]

    def _start(self, message: GameEvents) -> None:
        assert message.config is not None and message.grid is not None
        try:
            config = GameConfig.from_wire(message.config)
            public = PublicGame(config, list(message.grid), self._recipes(config))
        except RulesError as exc:
            self.public = None
            raise ShadowError(f"game {message.game_id}: cannot set up the shadow: {exc}") from None
        self.game_id = message.game_id
        self.config = config
        self.grid = tuple(message.grid)
        self.public = public
        self.actions = []
        self.resets += 1

    def _recipes(self, config: GameConfig) -> tuple[tuple[str, ...], ...]:
        """Each seat's recipes are its own secret (G11): the public stream does not name
        them. The shadow follows the game with stand-ins (`recipes`, when a seat's own are
        known, replace them), which changes no move's legality, only end scores."""
        if not config.recipes:
            return ()
        return tuple(self.recipes.get(s, (RECIPE_A[s % len(RECIPE_A)],
                                          RECIPE_B[s % len(RECIPE_B)]))
                     for s in range(config.players))

    def _rewind(self, length: int) -> None:
        """An undo: back to the game after its first `length` actions (by snapshots)."""
        assert self.public is not None
        length = min(length, len(self.actions))  # further on: a lost message (`feed`)
        self.public.rewind(length)
        del self.actions[length:]
        self.resets += 1

    def reveals(self, seat: int) -> tuple[tuple[str, ...], ...]:
        """`seat`'s own cauldron as each of its Perluceos showed it (its bot's memory)."""
        return self.public.reveals(seat) if self.public is not None else ()

    def _lose(self, why: str) -> None:
        self.public = None
        self.game_id = None
        raise ShadowError(why + "; waiting for the next game")

"""The event-sourced game log: configuration, deal and every action.

`replay(log)` rebuilds the identical game, keeping a snapshot per action (`Game.push`), so
undo is `Game.pop()`: no replay.
Shuffles are recorded as the deal, refills as `Refill` actions, so a log replays exactly
whether the pile was known (simulation) or observed card by card (a real table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from engine.games.glastonbury.rules.actions import Action, action_from_wire
from engine.games.glastonbury.rules.errors import (
    IllegalAction,
    InvalidLog,
    InvalidSetup,
    InvalidWire,
)
from engine.games.glastonbury.rules.game import Deal, Game, GameConfig

LOG_SCHEMA_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class GameLog:
    config: GameConfig
    deal: Deal
    actions: tuple[Action, ...] = ()

    @classmethod
    def of(cls, game: Game) -> GameLog:
        return cls(game.config, game.deal, tuple(game.actions))

    def to_wire(self) -> dict[str, Any]:
        return {
            "schema_version": LOG_SCHEMA_VERSION,
            "config": self.config.to_wire(),
            "deal": self.deal.to_wire(),
            "actions": [a.to_wire() for a in self.actions],
        }

    @classmethod
    def from_wire(cls, data: Any) -> GameLog:
        if not isinstance(data, dict):
            raise InvalidLog("G2", "a game log must be a JSON object")
        version = data.get("schema_version")
        if version != LOG_SCHEMA_VERSION:
            raise InvalidLog("G2", f"unsupported log schema_version {version!r}")
        actions = data.get("actions", [])
        if not isinstance(actions, list):
            raise InvalidLog("G4", "'actions' must be a list")
        try:
            config = GameConfig.from_wire(data.get("config"))
            deal = Deal.from_wire(data.get("deal"))
        except InvalidSetup as exc:
            raise InvalidLog(exc.rule, f"bad log header: {exc.message}") from None
        decoded = []
        for i, raw in enumerate(actions):
            try:
                decoded.append(action_from_wire(raw))
            except InvalidWire as exc:
                raise InvalidLog(exc.rule, f"action #{i + 1}: {exc.message}") from None
        return cls(config, deal, tuple(decoded))

    def without_last(self, count: int = 1) -> GameLog:
        return GameLog(self.config, self.deal, self.actions[: max(0, len(self.actions) - count)])


def replay(log: GameLog) -> Game:
    """Rebuild the game from its log (pushed: it can `pop()` back); raises `InvalidLog`
    naming the first bad action."""
    try:
        game = Game(log.config, log.deal)
    except InvalidSetup as exc:
        raise InvalidLog(exc.rule, f"bad deal: {exc.message}") from None
    for i, action in enumerate(log.actions):
        try:
            game.push(action)
        except IllegalAction as exc:
            raise InvalidLog(
                exc.rule, f"action #{i + 1} ({action}) is illegal: {exc.message}"
            ) from None
    return game

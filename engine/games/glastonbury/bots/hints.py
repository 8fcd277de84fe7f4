"""Hints for a person at the table: the card a bot would take, and why, in plain words.

`hint(game, seat)` looks at the game only through `observe_game(game, seat)`: the hint
knows what the seat knows (the public table, its own recipes and its own cauldron) and
nothing hidden, so it can be shown on that seat's screen without leaking anything.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from engine.games.glastonbury.bots.base import Bot, BotError, Memory, Observation, observe_game
from engine.games.glastonbury.bots.greedy import GreedyBot, declinatio_target
from engine.games.glastonbury.bots.search import SearchBot
from engine.games.glastonbury.rules.actions import Action, Discard, Keep, Take, UseDeclinatio
from engine.games.glastonbury.rules.board import cell_name
from engine.games.glastonbury.rules.cards import LANGS, Lang
from engine.games.glastonbury.rules.game import Game, Phase
from engine.games.glastonbury.rules.names import seat_name

Level = Literal["search", "greedy"]
LEVELS: Final[tuple[Level, ...]] = get_args(Level)  # the bots that give hints
HINT_SIMULATIONS = 120  # a hint may think a little longer than a tournament move


@dataclass(frozen=True, slots=True)
class Hint:
    """The suggested action, the card concerned and the cell (as "r,c"), and why."""

    seat: int
    level: Level
    action: Action
    card: str | None
    cell: str | None
    reason: str  # in the requested language
    reasons: dict[str, str]  # fr / en / de

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "level": self.level,
            "action": self.action.to_wire(),
            "card": self.card,
            "cell": self.cell,
            "reason": self.reason,
            "reasons": dict(self.reasons),
        }


def _card_of(observation: Observation, action: Action) -> tuple[str | None, str | None]:
    if isinstance(action, Take):
        return observation.grid_card(action.cell), cell_name(action.cell)
    if isinstance(action, UseDeclinatio):
        card, _ = declinatio_target(observation)
        return card, None
    if isinstance(action, Keep | Discard):
        last = observation.shadow.last_card
        return (last[1] if last else None), None
    return None, None


def hint(
    game: Game,
    seat: int,
    level: Level = "search",
    lang: Lang = "en",
    *,
    memory: Memory = "perfect",
    seed: int = 0,
    simulations: int = HINT_SIMULATIONS,
) -> Hint:
    """What `seat` should do now, by the `level` bot, with the reason in `lang`.

    Raises `BotError` when the seat has nothing to decide (not its turn, game over)."""
    if level not in LEVELS:
        raise BotError(f"unknown hint level {level!r}; use one of {', '.join(LEVELS)}")
    if lang not in LANGS:
        raise BotError(f"unknown language {lang!r}; use one of {', '.join(LANGS)}")
    if game.is_over():
        raise BotError("the game is over: no hint")
    if game.phase is Phase.REFILL:
        raise BotError("the table is waiting for a refill, not for a player's choice")
    if game.seat != seat:
        colours = game.config.colours
        raise BotError(f"it is {seat_name(game.seat, colours[game.seat])}'s turn, not "
                       f"{seat_name(seat, colours[seat] if 0 <= seat < len(colours) else None)}'s")
    observation = observe_game(game, seat, memory)
    bot: Bot = SearchBot(simulations=simulations) if level == "search" else GreedyBot()
    action = bot.choose(observation, random.Random(seed))
    reasons: dict[str, str] = {code: bot.explain(observation, action, code) for code in LANGS}
    card, cell = _card_of(observation, action)
    return Hint(seat, level, action, card, cell, reasons[lang], reasons)

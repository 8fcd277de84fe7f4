"""Bots for Glastonbury: random, greedy and information-set Monte Carlo search, hints,
and tournaments. A bot sees only an `Observation` (what one seat may know; see
`engine.games.glastonbury.bots.base`), never the game's hidden state."""

from engine.games.glastonbury.bots.base import (
    Bot,
    BotError,
    BotSeat,
    Memory,
    Observation,
    ObservationTracker,
    PublicGame,
    decide,
    observe_game,
    observe_public,
    tracker_for,
    visible_to,
)
from engine.games.glastonbury.bots.determinize import sample_world
from engine.games.glastonbury.bots.greedy import GreedyBot
from engine.games.glastonbury.bots.hints import Hint, hint
from engine.games.glastonbury.bots.random_bot import RandomBot
from engine.games.glastonbury.bots.registry import BOT_NAMES, make_bot
from engine.games.glastonbury.bots.search import SearchBot

__all__ = [
    "BOT_NAMES",
    "Bot",
    "BotError",
    "BotSeat",
    "GreedyBot",
    "Hint",
    "Memory",
    "Observation",
    "ObservationTracker",
    "PublicGame",
    "RandomBot",
    "SearchBot",
    "decide",
    "hint",
    "make_bot",
    "observe_game",
    "observe_public",
    "sample_world",
    "tracker_for",
    "visible_to",
]

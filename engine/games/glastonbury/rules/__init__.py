"""Glastonbury rules engine: a pure model (no I/O, no clock, seeded RNG passed in).

>>> import random
>>> from engine.games.glastonbury.rules import Game, GameConfig
>>> game = Game.new(GameConfig(colours=("yellow", "red")), random.Random(7))
>>> while not game.is_over():
...     _ = game.apply(game.legal_actions()[0])
>>> sorted(game.scores().winners)[0] in (0, 1)
True
"""

from engine.games.glastonbury.rules.actions import (
    Action,
    Discard,
    Keep,
    Pass,
    Refill,
    Take,
    UseDeclinatio,
    action_from_wire,
)
from engine.games.glastonbury.rules.errors import (
    IllegalAction,
    InvalidLog,
    InvalidSetup,
    InvalidWire,
    RulesError,
)
from engine.games.glastonbury.rules.game import Deal, Game, GameConfig, Phase
from engine.games.glastonbury.rules.log import GameLog, replay

__all__ = [
    "Action",
    "Deal",
    "Discard",
    "Game",
    "GameConfig",
    "GameLog",
    "IllegalAction",
    "InvalidLog",
    "InvalidSetup",
    "InvalidWire",
    "Keep",
    "Pass",
    "Phase",
    "Refill",
    "RulesError",
    "Take",
    "UseDeclinatio",
    "action_from_wire",
    "replay",
]

"""`engine.games.quacks`: The Quacks of Quedlinburg's pure rules core (RULES-QUACKS.md, Q1–Q37).

No I/O, no clock, no global randomness; the standard library and itself only, like
`engine.games.glastonbury.rules` (tests/test_dependency_rule.py checks both)."""

from engine.games.quacks.actions import (
    Action,
    Answer,
    Buy,
    Choose,
    ChooseOffer,
    Draw,
    RollDie,
    Spend,
    Stop,
    UseFlask,
    action_from_wire,
    to_wire,
)
from engine.games.quacks.catalogue import Catalogue, default_catalogue, from_data
from engine.games.quacks.errors import IllegalAction, InvalidSetup, InvalidWire, QuacksError
from engine.games.quacks.events import Event
from engine.games.quacks.game import Game, Phase, QuacksConfig

__all__ = [
    "Action", "Answer", "Buy", "Catalogue", "Choose", "ChooseOffer", "Draw", "Event", "Game",
    "IllegalAction", "InvalidSetup", "InvalidWire", "Phase", "QuacksConfig", "QuacksError",
    "RollDie", "Spend", "Stop", "UseFlask", "action_from_wire", "default_catalogue",
    "from_data", "to_wire",
]  # fmt: skip

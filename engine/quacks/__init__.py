"""`engine.quacks`: The Quacks of Quedlinburg's pure rules core (RULES-QUACKS.md, Q1–Q37).

No I/O, no clock, no global randomness; the standard library and itself only, like
`engine.rules` (tests/test_dependency_rule.py checks both)."""

from engine.quacks.actions import (
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
from engine.quacks.catalogue import Catalogue, default_catalogue, from_data
from engine.quacks.errors import IllegalAction, InvalidSetup, InvalidWire, QuacksError
from engine.quacks.events import Event
from engine.quacks.game import Game, Phase, QuacksConfig

__all__ = [
    "Action", "Answer", "Buy", "Catalogue", "Choose", "ChooseOffer", "Draw", "Event", "Game",
    "IllegalAction", "InvalidSetup", "InvalidWire", "Phase", "QuacksConfig", "QuacksError",
    "RollDie", "Spend", "Stop", "UseFlask", "action_from_wire", "default_catalogue",
    "from_data", "to_wire",
]  # fmt: skip

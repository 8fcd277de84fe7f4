"""`engine.games.quacks.rules`: The Quacks of Quedlinburg's pure rules core (RULES-QUACKS.md).

No I/O, no clock, no global randomness; the standard library and itself only, like
`engine.games.glastonbury.rules` (tests/test_dependency_rule.py checks both)."""

from engine.games.quacks.rules.actions import (
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
from engine.games.quacks.rules.catalogue import Catalogue, default_catalogue, from_data
from engine.games.quacks.rules.errors import IllegalAction, InvalidSetup, InvalidWire, QuacksError
from engine.games.quacks.rules.events import Event
from engine.games.quacks.rules.game import Game, Phase, QuacksConfig

__all__ = [
    "Action", "Answer", "Buy", "Catalogue", "Choose", "ChooseOffer", "Draw", "Event", "Game",
    "IllegalAction", "InvalidSetup", "InvalidWire", "Phase", "QuacksConfig", "QuacksError",
    "RollDie", "Spend", "Stop", "UseFlask", "action_from_wire", "default_catalogue",
    "from_data", "to_wire",
]  # fmt: skip

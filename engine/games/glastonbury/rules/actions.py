"""Actions: immutable values with paired `to_wire()` / `from_wire()` (like `Move.uci()`).

A turn is a sequence of actions by the active seat: `Take` (a card from the faced line, or
from anywhere with Accio), or at a corner `UseDeclinatio` / `Pass`; then `Refill` (the card
that went into the hole, a chance action in simulation, an observation at a real table);
at the end, `Keep` or `Discard` the last card. Pawn moves are not actions: they follow
from the rules (G4) and appear as events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Final

from engine.games.glastonbury.rules.board import CELLS, cell_name, parse_cell
from engine.games.glastonbury.rules.cards import CARDS
from engine.games.glastonbury.rules.errors import InvalidWire


@dataclass(frozen=True, slots=True)
class Take:
    """Take the card at `cell`: a normal take when the cell is in the faced line, an Accio
    take otherwise (G6), a Declinatio take after `UseDeclinatio` (G7)."""

    cell: int
    TYPE: ClassVar[str] = "take"

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "cell": cell_name(self.cell)}

    def __str__(self) -> str:
        return f"take {cell_name(self.cell)}"


@dataclass(frozen=True, slots=True)
class UseDeclinatio:
    """At a corner: spend one Declinatio use and move again by the same value (G7)."""

    TYPE: ClassVar[str] = "declinatio"

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.TYPE}

    def __str__(self) -> str:
        return "declinatio"


@dataclass(frozen=True, slots=True)
class Pass:
    """At a corner, holding a Declinatio: decline to use it; the turn ends (G4)."""

    TYPE: ClassVar[str] = "pass"

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.TYPE}

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Refill:
    """The card laid into the hole from the top of the draw pile (G4 refill)."""

    card: str
    TYPE: ClassVar[str] = "refill"

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, "card": self.card}

    def __str__(self) -> str:
        return f"refill {self.card}"


@dataclass(frozen=True, slots=True)
class Keep:
    """Keep the last card of the game (G10a)."""

    TYPE: ClassVar[str] = "keep"

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.TYPE}

    def __str__(self) -> str:
        return "keep"


@dataclass(frozen=True, slots=True)
class Discard:
    """Discard the last card of the game (G10a)."""

    TYPE: ClassVar[str] = "discard"

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.TYPE}

    def __str__(self) -> str:
        return "discard"


Action = Take | UseDeclinatio | Pass | Refill | Keep | Discard

# Interned instances: legal_actions() hands these out, so listing moves allocates nothing.
TAKES: Final[tuple[Take, ...]] = tuple(Take(cell) for cell in range(CELLS))
USE_DECLINATIO: Final = UseDeclinatio()
PASS: Final = Pass()
KEEP: Final = Keep()
DISCARD: Final = Discard()
REFILLS: Final[dict[str, Refill]] = {card: Refill(card) for card in CARDS}


def action_from_wire(data: object) -> Action:
    """Decode an action from its wire form; raises `InvalidWire` naming the problem."""
    if not isinstance(data, dict):
        raise InvalidWire("G4", f"an action must be a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    if kind == Take.TYPE:
        if set(data) != {"type", "cell"}:
            raise InvalidWire("G4", "a take has exactly the fields 'type' and 'cell'")
        return TAKES[parse_cell(data["cell"])]
    if kind == Refill.TYPE:
        card = data.get("card")
        if set(data) != {"type", "card"} or not isinstance(card, str):
            raise InvalidWire("G4", "a refill has exactly the fields 'type' and 'card' (a card id)")
        if card not in REFILLS:
            raise InvalidWire("G1", f"unknown card id {card!r}")
        return REFILLS[card]
    simple: dict[str, Action] = {
        UseDeclinatio.TYPE: USE_DECLINATIO,
        Pass.TYPE: PASS,
        Keep.TYPE: KEEP,
        Discard.TYPE: DISCARD,
    }
    if isinstance(kind, str) and kind in simple:
        if set(data) != {"type"}:
            raise InvalidWire("G4", f"a {kind} action has only the field 'type'")
        return simple[kind]
    raise InvalidWire(
        "G4",
        f"unknown action type {kind!r}; expected one of take, declinatio, pass, refill, "
        "keep, discard",
    )

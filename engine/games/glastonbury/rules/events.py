"""Events: what `Game.apply()` reports happened, in order.

Events are plain slotted dataclasses, not frozen ones: `apply()` creates several per
turn and a frozen dataclass costs four times as much to build. Treat them as values.

Every event is public except those with `private = True` (the Perluceo reveal), which are
for `seat` alone. The engine service routes them; nothing else leaves the engine except
through `Game.view()` / `Game.view_public()`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from engine.games.glastonbury.rules.board import cell_name


class Event:
    __slots__ = ()
    TYPE: ClassVar[str] = "event"
    private: ClassVar[bool] = False
    _CELL_FIELDS: ClassVar[frozenset[str]] = frozenset({"cell"})

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name in self._CELL_FIELDS and isinstance(value, int):
                value = cell_name(value)
            elif isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[f.name] = value
        return out


@dataclass(slots=True)
class TurnStarted(Event):
    """The seat's pawn moved by its move value (G4, G5); `faced_line` None at a corner."""

    seat: int
    move_value: int
    from_position: int
    to_position: int
    faced_line: int | None
    TYPE: ClassVar[str] = "turn_started"


@dataclass(slots=True)
class TurnPassed(Event):
    """The seat took nothing: its pawn stands at a corner (G4)."""

    seat: int
    reason: str
    TYPE: ClassVar[str] = "turn_passed"


@dataclass(slots=True)
class DeclinatioUsed(Event):
    seat: int
    spell_card: str
    uses_left: int
    from_position: int
    to_position: int
    faced_line: int
    TYPE: ClassVar[str] = "declinatio_used"


@dataclass(slots=True)
class CardTaken(Event):
    """`via` is "line" (faced line), "accio" (G6) or "declinatio" (G7)."""

    seat: int
    cell: int
    card: str
    via: str
    spell_card: str | None = None
    uses_left: int | None = None
    TYPE: ClassVar[str] = "card_taken"


@dataclass(slots=True)
class CardToCauldron(Event):
    """The card now lies face up on top of the seat's cauldron (its new visible top)."""

    seat: int
    card: str
    cauldron_size: int
    TYPE: ClassVar[str] = "card_to_cauldron"


@dataclass(slots=True)
class SpellKept(Event):
    """A spell laid beside the cauldron: Accio/Declinatio with uses, or face down."""

    seat: int
    card: str
    uses_left: int
    TYPE: ClassVar[str] = "spell_kept"


@dataclass(slots=True)
class VanescoResolved(Event):
    """Others' top cards (public: they were face up) went under the pile, or out of the
    game when the pile was empty (G8). `removed` is ((seat, card), …) in resolution order."""

    seat: int
    card: str
    removed: tuple[tuple[int, str], ...]
    to_pile: bool
    TYPE: ClassVar[str] = "vanesco_resolved"


@dataclass(slots=True)
class PerluceoReveal(Event):
    """Private to `seat`: its whole cauldron, bottom first, shown once (G9)."""

    seat: int
    card: str
    cauldron: tuple[str, ...]
    TYPE: ClassVar[str] = "perluceo_reveal"
    private: ClassVar[bool] = True


@dataclass(slots=True)
class PerluceoUsed(Event):
    """The public trace of a Perluceo: who looked, not what they saw (G9)."""

    seat: int
    card: str
    TYPE: ClassVar[str] = "perluceo_used"


@dataclass(slots=True)
class Refilled(Event):
    cell: int
    card: str
    pile_size: int
    TYPE: ClassVar[str] = "refilled"


@dataclass(slots=True)
class LastCardTaken(Event):
    """The seat took the last card of a line with the pile empty: keep or discard (G10a)."""

    seat: int
    card: str
    line: int
    TYPE: ClassVar[str] = "last_card_taken"


@dataclass(slots=True)
class LastCardResolved(Event):
    seat: int
    card: str
    kept: bool
    TYPE: ClassVar[str] = "last_card_resolved"


@dataclass(slots=True)
class GameEnded(Event):
    """`reason`: "line_emptied" (G10a) or "declinatio_blocked" (G7)."""

    reason: str
    last_card_seat: int | None
    winners: tuple[int, ...]
    TYPE: ClassVar[str] = "game_ended"

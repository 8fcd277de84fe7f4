"""Actions: frozen dataclasses, each made by one seat (simultaneous play is per-seat
actions, N1), with paired `to_wire()` / `action_from_wire()`.

Chance is part of an action when it comes from the table: `Draw(seat, chip)` names the
chip a real table sensed, `RollDie(seat, face)` the face the die showed. Leave them `None`
in a simulation and the game's seeded `random.Random` picks (the bag has no order, Q29).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from engine.games.quacks.rules.errors import InvalidWire


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw one chip from the seat's own bag and place it (Q12)."""

    seat: int
    chip: str | None = None
    TYPE: ClassVar[str] = "draw"


@dataclass(frozen=True, slots=True)
class Stop:
    """Stop drawing this round (Q12)."""

    seat: int
    TYPE: ClassVar[str] = "stop"


@dataclass(frozen=True, slots=True)
class UseFlask:
    """Put the last chip, a white that did not explode, back into the bag (Q14)."""

    seat: int
    TYPE: ClassVar[str] = "flask"


@dataclass(frozen=True, slots=True)
class ChooseOffer:
    """Blue chip (Q15): place one of the offered chips (`chip`), or none."""

    seat: int
    chip: str | None = None
    TYPE: ClassVar[str] = "offer"


@dataclass(frozen=True, slots=True)
class Answer:
    """Yes/no to the seat's open question: `red` bonus (N4), `yellow` put the white back
    (Q15), `stirred` FB10 put the first white back (N5), `restart` FB3 (N6)."""

    seat: int
    question: str
    yes: bool
    TYPE: ClassVar[str] = "answer"


@dataclass(frozen=True, slots=True)
class Choose:
    """A named option of a choice the seat is asked for: a fortune card (Q27), a purple
    tier (Q18, N15), the exploded player's `vp`/`buy` (Q20), an FB2 gift, an FB7 chip."""

    seat: int
    option: str
    TYPE: ClassVar[str] = "choose"


@dataclass(frozen=True, slots=True)
class RollDie:
    """Roll the bonus die (Q7, Q17); `face` 1–6 at a real table, None in a simulation."""

    seat: int
    face: int | None = None
    TYPE: ClassVar[str] = "roll"


@dataclass(frozen=True, slots=True)
class Buy:
    """Evaluation E (Q22): 0–2 chips, each a kind (`red-2`) or a physical chip (`red-2-03`)."""

    seat: int
    chips: tuple[str, ...] = ()
    TYPE: ClassVar[str] = "buy"


@dataclass(frozen=True, slots=True)
class Spend:
    """Evaluation F (Q23): 2 rubies per droplet step and for a flask refill; in round 9
    (Q25) `vp` counts rubies→VP by 2 and coins→VP by 5 (`coins_vp`, only in E)."""

    seat: int
    droplet: int = 0
    refill: bool = False
    vp: int = 0
    coins_vp: int = 0
    TYPE: ClassVar[str] = "spend"


Action = Draw | Stop | UseFlask | ChooseOffer | Answer | Choose | RollDie | Buy | Spend
ACTION_TYPES: dict[str, type[Any]] = {
    t.TYPE: t for t in (Draw, Stop, UseFlask, ChooseOffer, Answer, Choose, RollDie, Buy, Spend)
}


def to_wire(action: Action) -> dict[str, Any]:
    out: dict[str, Any] = {"type": action.TYPE}
    for f in fields(action):
        value = getattr(action, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


_STR = {"chip", "option", "question"}
_BOOL = {"yes", "refill"}
_OPTIONAL = {"chip", "face"}


def _fits(name: str, value: Any) -> bool:
    if value is None:
        return name in _OPTIONAL
    if name in _STR:
        return isinstance(value, str)
    if name in _BOOL:
        return isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)  # seat, face, counts


def action_from_wire(data: Any) -> Action:
    if not isinstance(data, dict) or data.get("type") not in ACTION_TYPES:
        raise InvalidWire("Q29", f"not a Quacks action: {data!r}")
    cls = ACTION_TYPES[data["type"]]
    unknown = set(data) - {"type"} - {f.name for f in fields(cls)}
    if unknown:
        raise InvalidWire("Q29", f"unknown fields {sorted(unknown)} in a {data['type']} action")
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name == "chips":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InvalidWire("Q22", f"chips must be a list of chip names: {value!r}")
            value = tuple(value)
        elif not _fits(f.name, value):
            raise InvalidWire("Q29", f"bad {f.name} {value!r} in a {data['type']} action")
        kwargs[f.name] = value
    if not isinstance(kwargs.get("seat"), int) or isinstance(kwargs.get("seat"), bool):
        raise InvalidWire("Q29", f"an action needs an integer seat: {data!r}")
    try:
        action: Action = cls(**kwargs)
    except TypeError as exc:
        raise InvalidWire("Q29", f"bad {data['type']} action: {exc}") from None
    return action

"""The box as data (`catalogue.json`, Q1–Q7, Q27, Q30): chip kinds, prices, the pot track,
rat tails, the die and the fortune cards. A host may load a corrected copy (Q36)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from engine.games.quacks.rules.errors import InvalidSetup

COLOURS = ("white", "orange", "green", "blue", "red", "yellow", "purple", "black")


@dataclass(frozen=True, slots=True)
class Space:
    coins: int
    vp: int
    ruby: bool


@dataclass(frozen=True, slots=True)
class FortuneCard:
    id: str
    kind: str  # "purple" (resolved at once) or "blue" (for the round)
    text: str


@dataclass(frozen=True, slots=True)
class Catalogue:
    counts: dict[str, int]  # kind ("red-2") -> chips in the box
    unlock: dict[str, int | None]  # colour -> first round it may be bought (None: never)
    prices: dict[int, dict[str, int]]  # set -> kind -> price
    built: dict[str, tuple[int, ...]]  # colour -> sets whose effects are built (Q30)
    start_bag: tuple[str, ...]
    explosion_limit: int
    rounds: int
    round_6_white: str
    rubies_supply: int
    track: tuple[Space, ...]
    rat_tails_after: tuple[int, ...]
    rat_tails_lap: int
    die: tuple[str, ...]
    fortune: tuple[FortuneCard, ...]

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.counts)

    @property
    def last_space(self) -> int:
        """The last space a chip can land on (Q4: index 52); the spoon is one further."""
        return len(self.track) - 2

    @property
    def spoon(self) -> int:
        return len(self.track) - 1

    def chips(self, kind: str) -> tuple[str, ...]:
        """The physical chips of a kind, `<kind>-<nn>` from 01 (Q2 Decision)."""
        return tuple(f"{kind}-{n:02d}" for n in range(1, self.counts[kind] + 1))

    def all_chips(self) -> tuple[str, ...]:
        return tuple(c for k in self.counts for c in self.chips(k))

    def card(self, card_id: str) -> FortuneCard:
        for card in self.fortune:
            if card.id == card_id:
                return card
        raise InvalidSetup("Q27", f"no fortune card {card_id!r}")

    def rat_tails_between(self, low: int, high: int) -> int:
        """Tails printed strictly between markers on VP `low` < `high` (Q5, Q11, D5):
        a tail after t lies between t and t+1, and repeats every lap of 50."""
        count = 0
        for lap in range(low // self.rat_tails_lap, high // self.rat_tails_lap + 1):
            for t in self.rat_tails_after:
                pos = t + lap * self.rat_tails_lap
                if low <= pos and pos + 1 <= high:
                    count += 1
        return count


def kind_of(chip: str) -> str:
    """`red-2-07` -> `red-2`; a kind stays a kind."""
    parts = chip.split("-")
    return "-".join(parts[:2])


def colour_of(chip: str) -> str:
    return chip.split("-")[0]


def value_of(chip: str) -> int:
    return int(chip.split("-")[1])


def from_data(data: dict[str, Any]) -> Catalogue:
    """Build and check a catalogue from its JSON form; a bad file raises InvalidSetup."""
    try:
        counts: dict[str, int] = {}
        unlock: dict[str, int | None] = {}
        for colour in COLOURS:
            entry = data["colours"][colour]
            for value, count in entry["values"].items():
                counts[f"{colour}-{int(value)}"] = int(count)
            unlock[colour] = entry["unlock_round"] if entry["buyable"] else None
        prices = {
            int(s): {f"{c}-{int(v)}": int(p) for c, vs in table.items() for v, p in vs.items()}
            for s, table in data["prices"].items()
        }
        track = tuple(Space(int(t["coins"]), int(t["vp"]), bool(t["ruby"])) for t in data["track"])
        cards = tuple(FortuneCard(c["id"], c["kind"], c["text"]) for c in data["fortune"])
        cat = Catalogue(
            counts=counts,
            unlock=unlock,
            prices=prices,
            built={
                c: tuple(int(n) for n in sets)
                for c, sets in data["built_effects"].items()
                if not c.startswith("_")
            },
            start_bag=tuple(data["start_bag"]),
            explosion_limit=int(data["explosion_limit"]),
            rounds=int(data["rounds"]),
            round_6_white=str(data["round_6_white"]),
            rubies_supply=int(data["rubies_supply"]),
            track=track,
            rat_tails_after=tuple(int(t) for t in data["rat_tails_after"]),
            rat_tails_lap=int(data["rat_tails_lap"]),
            die=tuple(data["die"]),
            fortune=cards,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidSetup("Q2", f"catalogue is malformed: {exc!r}") from None
    for s, table in cat.prices.items():
        bad = [k for k in table if k not in counts or unlock[colour_of(k)] is None]
        if bad:
            raise InvalidSetup("Q3", f"set {s} prices chips that cannot be bought: {bad}")
    if len(track) < 3:
        raise InvalidSetup("Q4", "the pot track is too short")
    if any(k not in counts for k in cat.start_bag):
        raise InvalidSetup("Q8", "the start bag names an unknown chip kind")
    if len({c.id for c in cards}) != len(cards) or any(
        c.kind not in ("purple", "blue") for c in cards
    ):
        raise InvalidSetup("Q27", "fortune cards need unique ids and kind purple or blue")
    if any(face not in ("vp1", "vp2", "ruby", "droplet", "orange") for face in cat.die):
        raise InvalidSetup("Q7", f"unknown die face in {cat.die}")
    return cat


@cache
def default_catalogue() -> Catalogue:
    text = (
        resources.files("engine.games.quacks.rules").joinpath("catalogue.json").read_text("utf-8")
    )
    return from_data(json.loads(text))

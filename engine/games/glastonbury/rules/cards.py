"""Card ids and the catalogue (G1).

The catalogue (colours, families with fr/en/de names, spells, recipes) is a data file,
`catalogue.json`, bundled with the package; this module turns it into typed constants.
Card ids are the contract shared by every component (ARCHITECTURE.md, "Card ids").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, Literal

CardKind = Literal["ingredient", "immuto", "spell", "corner"]
Lang = Literal["fr", "en", "de"]
LANGS: Final[tuple[Lang, ...]] = ("fr", "en", "de")


@dataclass(frozen=True, slots=True)
class Card:
    """One physical card of the box."""

    id: str
    kind: CardKind
    colour: str | None = None  # ingredients only
    family: str | None = None  # ingredients only, e.g. "blue-a"
    value: int = 0  # ingredient value 1-4; 0 otherwise
    move_value: int | None = None  # pawn steps when on top of a cauldron (G4, G5)
    spell: str | None = None  # "accio", "declinatio", "vanesco", "perluceo"
    uses: int = 0  # uses of a kept spell (Accio 2, Declinatio 3)


def _load_catalogue() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("catalogue.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


CATALOGUE: Final[dict[str, Any]] = _load_catalogue()

COLOURS: Final[tuple[str, ...]] = tuple(c["id"] for c in CATALOGUE["colours"])
PLAYER_COLOURS: Final[tuple[str, ...]] = tuple(c["id"] for c in CATALOGUE["colours"] if c["player"])
NON_PLAYER_COLOURS: Final[tuple[str, ...]] = tuple(
    c["id"] for c in CATALOGUE["colours"] if not c["player"]
)
FAMILIES: Final[tuple[str, ...]] = tuple(f["id"] for f in CATALOGUE["families"])
FAMILY_COLOUR: Final[dict[str, str]] = {f["id"]: f["colour"] for f in CATALOGUE["families"]}
VALUES: Final[tuple[int, ...]] = tuple(CATALOGUE["values"])
EMPTY_CAULDRON_MOVE: Final[int] = int(CATALOGUE["cauldron"]["move_value"])
SPELLS: Final[tuple[str, ...]] = tuple(s["id"] for s in CATALOGUE["spells"])
SPELL_USES: Final[dict[str, int]] = {s["id"]: int(s["uses"]) for s in CATALOGUE["spells"]}
KEPT_SPELLS: Final[frozenset[str]] = frozenset(s for s, uses in SPELL_USES.items() if uses > 0)
RESOLVED_SPELLS: Final[frozenset[str]] = frozenset(s for s, uses in SPELL_USES.items() if uses == 0)
RECIPE_A: Final[tuple[str, ...]] = tuple(r["id"] for r in CATALOGUE["recipes"]["A"])
RECIPE_B: Final[tuple[str, ...]] = tuple(r["id"] for r in CATALOGUE["recipes"]["B"])
RECIPES: Final[tuple[str, ...]] = RECIPE_A + RECIPE_B


def _build_cards() -> dict[str, Card]:
    cards: dict[str, Card] = {}
    for family in FAMILIES:
        colour = FAMILY_COLOUR[family]
        for value in VALUES:
            card_id = f"{family}-{value}"
            cards[card_id] = Card(card_id, "ingredient", colour, family, value, move_value=value)
    immuto = CATALOGUE["immuto"]
    for i in range(1, int(immuto["count"]) + 1):
        cards[f"immuto-{i}"] = Card(f"immuto-{i}", "immuto", move_value=int(immuto["move_value"]))
    for spell in CATALOGUE["spells"]:
        for i in range(1, int(spell["count"]) + 1):
            card_id = f"{spell['id']}-{i}"
            cards[card_id] = Card(card_id, "spell", spell=spell["id"], uses=int(spell["uses"]))
    for i in range(1, int(CATALOGUE["corners"]["count"]) + 1):
        cards[f"corner-{i}"] = Card(f"corner-{i}", "corner")
    return cards


CARDS: Final[dict[str, Card]] = _build_cards()
INGREDIENTS: Final[tuple[str, ...]] = tuple(c for c, v in CARDS.items() if v.kind == "ingredient")
IMMUTOS: Final[tuple[str, ...]] = tuple(c for c, v in CARDS.items() if v.kind == "immuto")
SPELL_CARDS: Final[tuple[str, ...]] = tuple(c for c, v in CARDS.items() if v.kind == "spell")
CORNER_CARDS: Final[tuple[str, ...]] = tuple(c for c, v in CARDS.items() if v.kind == "corner")
# The 84 shuffled cards (G2): ingredients, Immuto and spells.
PLAYING_CARDS: Final[tuple[str, ...]] = INGREDIENTS + IMMUTOS + SPELL_CARDS


def is_card_id(text: str) -> bool:
    return text in CARDS


def enrolment_order() -> list[str]:
    """Every card that carries a tag, in catalogue order (corner cards carry none)."""
    return list(PLAYING_CARDS)


def deck_for(removed_colour: str | None = None) -> tuple[str, ...]:
    """The cards shuffled for a game; with 2 players one unused player colour is removed."""
    if removed_colour is None:
        return PLAYING_CARDS
    return tuple(c for c in PLAYING_CARDS if CARDS[c].colour != removed_colour)


def family_name(family: str, lang: Lang = "en") -> str:
    for entry in CATALOGUE["families"]:
        if entry["id"] == family:
            return str(entry["names"][lang])
    raise KeyError(family)


def card_label(card_id: str, lang: Lang = "en") -> str:
    """A human label: 'Sulphur scent 3 (yellow)', 'Accio', 'Immuto'."""
    card = CARDS[card_id]
    if card.kind == "ingredient":
        assert card.family is not None and card.colour is not None
        colour = next(c for c in CATALOGUE["colours"] if c["id"] == card.colour)
        return f"{family_name(card.family, lang)} {card.value} ({colour['names'][lang]})"
    if card.kind == "immuto":
        return str(CATALOGUE["immuto"]["names"][lang])
    if card.kind == "spell":
        spell = next(s for s in CATALOGUE["spells"] if s["id"] == card.spell)
        return str(spell["names"][lang])
    return f"{CATALOGUE['corners']['names'][lang]} {card_id.rsplit('-', 1)[1]}"

"""Names for people (CONTRACTS.md, "Human-readable names"): seats are "Seat 1".."Seat 4"
with their colour, never a raw 0-based number."""

from __future__ import annotations

from engine.rules.cards import CATALOGUE, Lang

_COLOUR_NAMES = {c["id"]: c["names"] for c in CATALOGUE["colours"]}
_SEAT_WORD = {"en": "Seat", "fr": "Place", "de": "Platz"}


def seat_name(seat: int, colour: str | None = None, lang: Lang = "en") -> str:
    """'Seat 1' for seat 0; 'Seat 1 (yellow)' with its colour."""
    name = f"{_SEAT_WORD[lang]} {seat + 1}"
    if colour in _COLOUR_NAMES:
        return f"{name} ({_COLOUR_NAMES[colour][lang]})"
    return name

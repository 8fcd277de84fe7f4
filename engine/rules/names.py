"""Names for people, the one owner of them (README "Names people read"): seats are
"Seat 1".."Seat 4" with their colour, cells "row R, column C" with R, C = 1..6 (top-left is
row 1, column 1), lines "row 1".."column 6", perimeter positions 1..20 clockwise from the
top-left corner; never a raw 0-based number or a raw card id (the wire keeps "r,c" 0-based,
seats 0..3, lines 0..11, positions 0..19)."""

from __future__ import annotations

from engine.rules.board import SIZE, parse_cell
from engine.rules.cards import CARDS, CATALOGUE, Lang, card_label
from engine.rules.errors import RulesError

_COLOUR_NAMES = {c["id"]: c["names"] for c in CATALOGUE["colours"]}
_SEAT_WORD = {"en": "Seat", "fr": "Place", "de": "Platz"}


def seat_name(seat: int, colour: str | None = None, lang: Lang = "en") -> str:
    """'Seat 1' for seat 0; 'Seat 1 (yellow)' with its colour."""
    name = f"{_SEAT_WORD[lang]} {seat + 1}"
    if colour in _COLOUR_NAMES:
        return f"{name} ({_COLOUR_NAMES[colour][lang]})"
    return name


def pad_label(seat: int, colour: str | None = None) -> str:
    """"Seat 2's pad" for seat 1 (with its colour: "Seat 2 (blue)'s pad")."""
    return f"{seat_name(seat, colour)}'s pad"


def cell_label(cell: int | str) -> str:
    """``"1,2"`` or 8 -> ``"row 2, column 3"``."""
    index = parse_cell(cell) if isinstance(cell, str) else cell
    return f"row {index // SIZE + 1}, column {index % SIZE + 1}"


def line_label(line: int) -> str:
    """Line 0 -> "row 1", line 6 -> "column 1" (lines 0-5 are rows, 6-11 columns)."""
    return f"row {line + 1}" if line < SIZE else f"column {line - SIZE + 1}"


def position_label(position: int) -> str:
    """Perimeter position 0 -> "position 1" (1..20 clockwise from the top-left corner)."""
    return f"position {position + 1}"


def place_label(where: str) -> str:
    """A place of the wire (``"r,c"``, ``"pad:<seat>"``, ``"pile"``) for people."""
    if where == "pile":
        return "the draw pile"
    if where.startswith("pad:") and where[4:].isdigit():
        return pad_label(int(where[4:]))
    try:
        return cell_label(where)
    except (ValueError, RulesError):
        return where


def card_name(card: str) -> str:
    """A card for people ("Bottles 3 (orange)"); never a raw id for a known card."""
    return card_label(card) if card in CARDS else "an unknown card"

"""Names for people: cells, seats and places as the screens and messages write them.

Cells are "row R, column C" with R, C = 1..6 (top-left is row 1, column 1); seats are
"Seat 1".."Seat 4", with their colour when known. Nothing shown to a person uses a raw id or
a 0-based number (the wire keeps "r,c" 0-based and seats 0..3).
"""

from __future__ import annotations

from engine.rules.board import SIZE, parse_cell
from engine.rules.cards import CARDS, card_label
from engine.rules.errors import RulesError


def cell_label(cell: int | str) -> str:
    """``"1,2"`` or 8 -> ``"row 2, column 3"``."""
    index = parse_cell(cell) if isinstance(cell, str) else cell
    return f"row {index // SIZE + 1}, column {index % SIZE + 1}"


def seat_label(seat: int, colour: str | None = None) -> str:
    """0 -> ``"Seat 1"`` (``"Seat 1 (blue)"`` with a colour)."""
    return f"Seat {seat + 1}" + (f" ({colour})" if colour else "")


def place_label(where: str) -> str:
    """A place of the wire (``"r,c"``, ``"pad:<seat>"``, ``"pile"``) for people."""
    if where == "pile":
        return "the draw pile"
    if where.startswith("pad:") and where[4:].isdigit():
        return f"{seat_label(int(where[4:]))}'s pad"
    try:
        return cell_label(where)
    except (ValueError, RulesError):
        return where


def card_name(card: str) -> str:
    """A card for people ("Bottles 3 (orange)"); never a raw id for a known card."""
    return card_label(card) if card in CARDS else "an unknown card"

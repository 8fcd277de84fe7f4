"""The table's game as the hub knows it: through the game seam only (`engine.games`), never
a game's own modules. The hub reads, enrols and names what the game's catalogue lists;
one hub serves one game, the registry's default."""

from __future__ import annotations

from typing import Final

from engine import games
from engine.games.base import GameDefinition

GAME: Final[GameDefinition] = games.get()


def is_piece(text: str) -> bool:
    """Whether ``text`` is a piece id of the game's catalogue (a card, a chip, …)."""
    return GAME.catalogue.is_piece(text)


def is_tagged_piece(text: str) -> bool:
    """A piece that carries a tag (one the hub enrols): Glastonbury's corners carry none."""
    return text in _TAGGED


def enrolment_order() -> list[str]:
    """Every tagged piece, in the catalogue's order (the order enrolment asks for them)."""
    return list(GAME.catalogue.pieces)


def piece_name(piece: str) -> str:
    """A piece for people ("Bottles 3 (orange)"); never a raw id."""
    return GAME.names.piece(piece)


def place_name(where: str) -> str:
    """A place of the wire (``"r,c"``, ``"pad:<seat>"``, ``"pos:<n>"``) for people."""
    return GAME.names.place(where)


def seat_name(seat: int) -> str:
    return GAME.names.seat(seat)


_TAGGED: Final = frozenset(GAME.catalogue.pieces)

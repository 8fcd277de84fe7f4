"""The table's game as the hub knows it: through the game seam only (`engine.games`), never
a game's own modules. The hub reads, enrols and names what the game's catalogue lists.
One hub serves one game: the one its config names (``game``; `use`), else the registry's
default. Nothing here is read at import: a hub chooses its game before it lays out its
readers."""

from __future__ import annotations

from engine import games
from engine.games.base import GameDefinition, UnknownGame
from hub.errors import ConfigError

_serving: GameDefinition | None = None


def use(game_id: str | None) -> GameDefinition:
    """Serve ``game_id`` (None: the registry's default) from now on; `ConfigError` naming
    the games offered for an unknown id."""
    global _serving
    try:
        _serving = games.get(game_id)
    except UnknownGame as exc:
        raise ConfigError(str(exc)) from None
    return _serving


def current() -> GameDefinition:
    """The game this hub serves."""
    return _serving if _serving is not None else use(None)


def check_game(game_id: str) -> str:
    """``game_id`` when the registry offers it; `ConfigError` naming the games offered."""
    if game_id not in games.game_ids():
        raise ConfigError(str(UnknownGame(game_id, games.game_ids())))
    return game_id


def is_piece(text: str) -> bool:
    """Whether ``text`` is a piece id of the game's catalogue (a card, a chip, …)."""
    return current().catalogue.is_piece(text)


def is_tagged_piece(text: str) -> bool:
    """A piece that carries a tag (one the hub enrols): Glastonbury's corners carry none."""
    return text in _tagged(current())


def piece_noun(many: bool = False) -> str:
    """What the game's piece is called in English: "card", "chip" (``many``: "cards")."""
    return current().catalogue.noun[1 if many else 0]


def enrolment_order() -> list[str]:
    """Every tagged piece, in the catalogue's order (the order enrolment asks for them)."""
    return list(current().catalogue.pieces)


def piece_kind(piece: str) -> str:
    """The catalogue's kind of ``piece`` (Quacks: ``white-1``; Glastonbury: ``spell``)."""
    return current().catalogue.kinds[piece]


def enrols_by_kind() -> bool:
    """Whether enrolment goes kind by kind (identical pieces tapped in a row: Quacks' chips)
    rather than piece by piece (Glastonbury's cards, each its own)."""
    return current().catalogue.enrol_by == "kind"


def piece_name(piece: str) -> str:
    """A piece for people ("Bottles 3 (orange)"); never a raw id."""
    return current().names.piece(piece)


def place_name(where: str) -> str:
    """A place of the wire (``"r,c"``, ``"pad:<seat>"``, ``"pos:<n>"``) for people."""
    return current().names.place(where)


def seat_name(seat: int) -> str:
    return current().names.seat(seat)


_TAGGED: dict[str, frozenset[str]] = {}


def _tagged(game: GameDefinition) -> frozenset[str]:
    found = _TAGGED.get(game.id)
    if found is None:
        found = _TAGGED[game.id] = frozenset(game.catalogue.pieces)
    return found

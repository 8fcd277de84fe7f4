"""The games a table offers, by id: `games()`, `get(game_id)`, `DEFAULT_GAME`.

The platform (hub, wire, engine service, dashboard) finds a game here and uses it through
`engine.games.base.GameDefinition` only; it imports no game package itself
(tests/test_dependency_rule.py). Each game package holds ``definition.DEFINITION``; the
registry imports it by name, on first use.

>>> from engine.games import get
>>> get("glastonbury").titles["en"]
'Glastonbury'
"""

from __future__ import annotations

import importlib
from typing import Final

from engine.games.base import GameDefinition, UnknownGame

# id -> the package that holds its DEFINITION. A new game adds one line here.
GAME_PACKAGES: Final[dict[str, str]] = {
    "glastonbury": "engine.games.glastonbury",
    "quacks": "engine.games.quacks",
}
DEFAULT_GAME: Final[str] = "glastonbury"

_loaded: dict[str, GameDefinition] = {}


def game_ids() -> tuple[str, ...]:
    """The ids of the games this table offers, the default first."""
    return tuple(GAME_PACKAGES)


def get(game_id: str | None = None) -> GameDefinition:
    """The definition of ``game_id`` (None: the default game); `UnknownGame` (a KeyError
    whose text names the games offered) for any other id."""
    game_id = DEFAULT_GAME if game_id is None else game_id
    found = _loaded.get(game_id)
    if found is not None:
        return found
    package = GAME_PACKAGES.get(game_id)
    if package is None:
        raise UnknownGame(game_id, game_ids())
    definition = importlib.import_module(f"{package}.definition").DEFINITION
    if not isinstance(definition, GameDefinition) or definition.id != game_id:
        raise TypeError(f"{package}.definition.DEFINITION is not the GameDefinition of {game_id!r}")
    _loaded[game_id] = definition
    return definition


def games() -> tuple[GameDefinition, ...]:
    """Every game this table offers, the default first."""
    return tuple(get(g) for g in GAME_PACKAGES)


__all__ = ["DEFAULT_GAME", "GAME_PACKAGES", "GameDefinition", "UnknownGame", "game_ids",
           "games", "get"]

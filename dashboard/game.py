"""The table's game as the dashboard shell knows it: through the game seam only
(`engine.games`), never a game's own modules. One dashboard serves one table's game, the
registry's default."""

from __future__ import annotations

from typing import Final

from engine import games
from engine.games.base import GameDefinition

GAME: Final[GameDefinition] = games.get()

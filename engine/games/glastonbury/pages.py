"""The board's geometry for Glastonbury's page fragments (in its page catalogue,
`GlastonburyDefinition.page_catalogue`), taken from the rules (G3), so no script
recomputes it: the cells of each line, the line each perimeter position faces, the corner
cells and their cards, and where each position sits around the square on screen."""

from __future__ import annotations

from functools import cache
from typing import Any

from engine.games.glastonbury.rules.board import (
    CORNER_ORDER,
    CORNER_POSITIONS,
    DEFAULT_START_POSITIONS,
    FACED_LINE,
    LINES,
    PERIMETER,
    SIZE,
    cell_name,
)
from engine.games.glastonbury.rules.cards import CORNER_CARDS


def _slot(position: int) -> tuple[int, int]:
    """(row, column) of a perimeter position in the 8×8 layout (the square is rows and
    columns 1-6): clockwise from the top-left corner, as G3 numbers them."""
    side, step = divmod(position, 5)
    last = SIZE + 1
    if side == 0:  # top edge, left to right
        return 0, step + (1 if step else 0)
    if side == 1:  # right edge, top to bottom
        return step + (1 if step else 0), last
    if side == 2:  # bottom edge, right to left
        return last, last - step - (1 if step else 0)
    return last - step - (1 if step else 0), 0  # left edge, bottom to top


@cache
def geometry() -> dict[str, Any]:
    return {
        "size": SIZE,
        "lines": [[cell_name(c) for c in cells] for cells in LINES],
        "faced": list(FACED_LINE),
        "corners": sorted(cell_name(c) for c in CORNER_ORDER),
        # the corner card on each corner cell (corner-1 top-left, clockwise)
        "corner_cards": {cell_name(c): card
                         for c, card in zip(CORNER_ORDER, CORNER_CARDS, strict=True)},
        "slots": [list(_slot(p)) for p in range(PERIMETER)],
        # where a pawn may start (G2: beside a corner) and where seat i starts by default
        "start_corners": sorted(CORNER_POSITIONS),
        "default_starts": list(DEFAULT_START_POSITIONS),
    }

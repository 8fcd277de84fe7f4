"""Geometry of the table (G3): 6×6 cells, 12 lines, 20 perimeter positions.

Cells are indexed `r * 6 + c` internally and written `"r,c"` on the wire. The four corner
cells hold the corner cards and are never taken.
"""

from __future__ import annotations

from typing import Final

from engine.games.glastonbury.rules.errors import InvalidWire

SIZE: Final = 6
CELLS: Final = SIZE * SIZE
# The corners clockwise from the top-left: corner-1 lies on 0,0 … corner-4 on 5,0.
CORNER_ORDER: Final[tuple[int, ...]] = (0, SIZE - 1, CELLS - 1, CELLS - SIZE)
CORNER_CELLS: Final[frozenset[int]] = frozenset(CORNER_ORDER)
TAKEABLE_CELLS: Final[tuple[int, ...]] = tuple(i for i in range(CELLS) if i not in CORNER_CELLS)
PERIMETER: Final = 20
CORNER_POSITIONS: Final[frozenset[int]] = frozenset({0, 5, 10, 15})
# Seat i starts beside corner i, clockwise from the top-left (G2 decision).
DEFAULT_START_POSITIONS: Final[tuple[int, ...]] = (0, 5, 10, 15)


def _line_cells(line: int) -> tuple[int, ...]:
    if line < SIZE:  # rows 0-5
        cells = [line * SIZE + c for c in range(SIZE)]
    else:  # columns 0-5
        cells = [r * SIZE + (line - SIZE) for r in range(SIZE)]
    return tuple(c for c in cells if c not in CORNER_CELLS)


# Lines 0-5 are rows 0-5, lines 6-11 are columns 0-5; corners belong to no line (G10a).
LINES: Final[tuple[tuple[int, ...], ...]] = tuple(_line_cells(line) for line in range(2 * SIZE))
CELL_LINES: Final[tuple[tuple[int, int], ...]] = tuple(
    (i // SIZE, SIZE + i % SIZE) for i in range(CELLS)
)


def _faced_line(position: int) -> int | None:
    if position in CORNER_POSITIONS:
        return None
    if position < 5:  # top edge, facing columns 1-4
        return SIZE + position
    if position < 10:  # right edge, facing rows 1-4
        return position - 5
    if position < 15:  # bottom edge, facing columns 4→1
        return SIZE + (15 - position)
    return 20 - position  # left edge, facing rows 4→1


FACED_LINE: Final[tuple[int | None, ...]] = tuple(_faced_line(p) for p in range(PERIMETER))


def cell_name(cell: int) -> str:
    return f"{cell // SIZE},{cell % SIZE}"


def is_cell(text: object) -> bool:
    """Whether `text` names a cell as `"r,c"` (0 ≤ r, c ≤ 5)."""
    try:
        parse_cell(text)
    except InvalidWire:
        return False
    return True


def parse_cell(text: object) -> int:
    """Parse `"r,c"` (0 ≤ r, c ≤ 5) into a cell index (row, column = divmod(cell, SIZE)).
    The one parser of a cell name; `InvalidWire` (a ValueError) names what is wrong."""
    if not isinstance(text, str):
        raise InvalidWire("G3", f"a cell must be a string 'r,c', got {text!r}")
    parts = text.split(",")
    # ASCII digits only: str.isdigit() also accepts '²' or '٢', which int() rejects or reads.
    if len(parts) != 2 or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        raise InvalidWire("G3", f"a cell must look like 'r,c' with 0 ≤ r, c ≤ 5, got {text!r}")
    r, c = (int(p) for p in parts)
    if not (0 <= r < SIZE and 0 <= c < SIZE):
        raise InvalidWire("G3", f"cell {text!r} is outside the 6×6 square")
    return r * SIZE + c

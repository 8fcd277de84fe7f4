"""Where each reader sits: the one map between reader indexes and table places.

Reader order (the chip-select order of the firmware and the SPI back-end):

- readers 0..31: the grid cells, row by row from the top-left, skipping the 4 corners
  (0 = cell 0,1 … 3 = cell 0,4; 4 = cell 1,0 … 9 = cell 1,5; … 31 = cell 5,4);
- readers 32..35: the scan pads of seats 0..3 (only as many as ``pads``);
- then, when pawn sensors are fitted (``perimeter=True``), one reader per perimeter
  position 0..19 (G3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.wire.contract import GRID_SIZE, N_PERIMETER, N_SEATS, cell_key

PlaceKind = Literal["cell", "pad", "perimeter"]

CORNERS: frozenset[tuple[int, int]] = frozenset({(0, 0), (0, 5), (5, 0), (5, 5)})
CELLS: tuple[tuple[int, int], ...] = tuple(
    (r, c) for r in range(GRID_SIZE) for c in range(GRID_SIZE) if (r, c) not in CORNERS
)


@dataclass(frozen=True)
class Place:
    """One reader's place on the table."""

    kind: PlaceKind
    cell: tuple[int, int] | None = None
    seat: int | None = None
    position: int | None = None

    @property
    def cell_key(self) -> str | None:
        return None if self.cell is None else cell_key(*self.cell)

    def label(self) -> str:
        if self.kind == "cell":
            assert self.cell is not None
            return f"cell {self.cell[0]},{self.cell[1]}"
        if self.kind == "pad":
            return f"pad {self.seat}"
        return f"perimeter {self.position}"


class Layout:
    """Reader index <-> place for a table with ``pads`` scan pads (1-4) and optional pawn
    sensors on the 20 perimeter positions."""

    def __init__(self, pads: int = N_SEATS, perimeter: bool = False) -> None:
        if not 0 <= pads <= N_SEATS:
            raise ValueError(f"pads must be 0..{N_SEATS}, got {pads}")
        self.pads = pads
        self.perimeter = perimeter
        places = [Place("cell", cell=cell) for cell in CELLS]
        places += [Place("pad", seat=seat) for seat in range(pads)]
        if perimeter:
            places += [Place("perimeter", position=p) for p in range(N_PERIMETER)]
        self.places: tuple[Place, ...] = tuple(places)
        self._index = {place: i for i, place in enumerate(self.places)}

    @property
    def n_readers(self) -> int:
        return len(self.places)

    def place(self, reader: int) -> Place:
        if not 0 <= reader < len(self.places):
            raise ValueError(f"reader {reader} is outside 0..{len(self.places) - 1}")
        return self.places[reader]

    def cell_reader(self, row: int, col: int) -> int:
        if (row, col) in CORNERS:
            raise ValueError(f"cell {row},{col} is a corner: corners have no reader")
        try:
            return self._index[Place("cell", cell=(row, col))]
        except KeyError:
            raise ValueError(f"cell {row},{col} is outside the 6x6 grid") from None

    def pad_reader(self, seat: int) -> int:
        try:
            return self._index[Place("pad", seat=seat)]
        except KeyError:
            raise ValueError(f"seat {seat} has no scan pad on this table") from None

    def position_reader(self, position: int) -> int:
        try:
            return self._index[Place("perimeter", position=position)]
        except KeyError:
            raise ValueError(f"perimeter position {position} has no reader") from None

    def reader_for(self, where: str) -> int:
        """Reader of a place written as ``"2,3"`` / ``"cell:2,3"``, ``"pad:1"``, ``"pos:7"``."""
        kind, _, value = where.partition(":") if ":" in where else ("cell", "", where)
        try:
            if kind == "cell":
                row, col = (int(x) for x in value.split(","))
                return self.cell_reader(row, col)
            if kind == "pad":
                return self.pad_reader(int(value))
            if kind in ("pos", "perimeter"):
                return self.position_reader(int(value))
        except ValueError as exc:
            raise ValueError(f"place {where!r}: {exc}") from None
        raise ValueError(f"place {where!r} is not 'r,c', 'pad:<seat>' or 'pos:<0-19>'")

"""Where each reader sits: the one map between reader indexes and table places.

Reader order (the chip-select order of the firmware and the SPI back-end):

- readers 0..31: the grid cells, row by row from the top-left, skipping the 4 corners
  (0 = cell 0,1 … 3 = cell 0,4; 4 = cell 1,0 … 9 = cell 1,5; … 31 = cell 5,4);
- readers 32..35: the scan pads of seats 0..3 (only as many as ``pads``).

Pawns are not read by RFID readers (20 more would need 56 chip selects, more than the 48
decoder outputs): with ``perimeter=True`` the table has Hall switches at the 20 perimeter
positions (hardware/wiring.md), reported by the firmware's ``PAWNS`` line, not as readers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Final, Literal

from engine.games.base import GameDefinition
from engine.wire.contract import GRID_SIZE, N_SEATS
from hub.game import current

PlaceKind = Literal["cell", "pad", "perimeter"]


def cells(game: GameDefinition | None = None) -> tuple[tuple[int, int], ...]:
    """The grid cells that carry a reader: the places of the game's catalogue (the hub's
    game by default). None for a game without a grid (Quacks: one draw pad per seat)."""
    catalogue = (game or current()).catalogue
    return tuple((p.row, p.col) for p in catalogue.places_of("cell")
                 if p.row is not None and p.col is not None)


def corners(game: GameDefinition | None = None) -> frozenset[tuple[int, int]]:
    """The grid's cells without a reader (Glastonbury's corner cards); none without a grid."""
    if (game or current()).catalogue.grid is None:
        return frozenset()
    return frozenset((r, c) for r in range(GRID_SIZE)
                     for c in range(GRID_SIZE)) - frozenset(cells(game))


_CELL: Final = re.compile(r"^\s*([0-9]+)\s*,\s*([0-9]+)\s*$")


def cell_key(row: int, col: int) -> str:
    """A grid cell as the wire writes it: ``"r,c"``, 0-based."""
    return f"{row},{col}"


def parse_cell_key(text: str) -> tuple[int, int]:
    """``"r,c"`` -> (row, column); a ValueError names what is wrong."""
    found = _CELL.match(text)
    if found is None or not all(int(v) < GRID_SIZE for v in found.groups()):
        raise ValueError(f"a cell must look like 'r,c' with 0 ≤ r, c ≤ {GRID_SIZE - 1}, "
                         f"got {text!r}")
    return int(found.group(1)), int(found.group(2))


# Cell pitch (x = along a row, y = down a column): a 59 x 91 mm card + a 6 mm gap
# (hardware/layout.md; the card size is to be measured on the printed copy).
CELL_PITCH_MM = (65.0, 97.0)
# Two antennas closer than this are never on together (the firmware's SCAN_ORDER keeps
# any FIELD_LEAD + 1 consecutive readers this far apart). Two cell pitches along a row
# (130 mm) pass, a diagonal neighbour (117 mm) does not. An estimate, ~3x the RC522's
# read range with a 25 mm tag (3-4 cm): the bench test checks it (hardware/bench-test.md).
FIELD_SEPARATION_MM = 125.0
# Scan pads of seats 0..3 (bottom, left, top, right edge), in cell pitches from the
# top-left cell centre, off the middle of their edge: as close as the pawn track allows
# (an 80 x 110 mm plate 10 mm clear of a 25 mm pawn, hardware/box.py checks it), which
# keeps the box and the pad cables short.
PAD_CENTRES = ((2.5, 6.8), (-2.0, 2.5), (2.5, -1.8), (7.0, 2.5))


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

    @property
    def where(self) -> str:
        """The place as gestures and the simulated table name it: ``"r,c"``, ``"pad:<seat>"``
        or ``"pos:<position>"``."""
        if self.cell_key is not None:
            return self.cell_key
        if self.seat is not None:
            return f"pad:{self.seat}"
        return f"pos:{self.position}"

    def label(self) -> str:
        """The reader's place for people: "row 1, column 2", "Seat 1's pad"."""
        if self.kind == "cell":
            assert self.cell_key is not None
            return current().names.place(self.cell_key)
        if self.kind == "pad":
            assert self.seat is not None
            return current().names.place(f"pad:{self.seat}")
        assert self.position is not None
        return f"the pawn sensor at {current().names.place(f'pos:{self.position}')}"


class Layout:
    """Reader index <-> place for a table with ``pads`` scan pads (1-4); ``perimeter``: Hall
    switch pawn sensors are fitted (they add no reader)."""

    def __init__(self, pads: int = N_SEATS, perimeter: bool = False,
                 game: GameDefinition | None = None) -> None:
        if not 0 <= pads <= N_SEATS:
            raise ValueError(f"pads must be 0..{N_SEATS}, got {pads}")
        self.pads = pads
        self.perimeter = perimeter
        # The game's places (the hub's game by default): Glastonbury's 32 cells, or none.
        self.cells = cells(game)
        self.corners = corners(game)
        places = [Place("cell", cell=cell) for cell in self.cells]
        places += [Place("pad", seat=seat) for seat in range(pads)]
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
        if not self.cells:
            raise ValueError(f"row {row + 1}, column {col + 1}: this game's table has no grid "
                             "of readers (only the seats' pads)")
        if (row, col) in self.corners:
            raise ValueError(f"row {row + 1}, column {col + 1} is a corner: corners have no "
                             "reader")
        try:
            return self._index[Place("cell", cell=(row, col))]
        except KeyError:
            raise ValueError(f"row {row + 1}, column {col + 1} is outside the 6x6 grid "
                             "(rows and columns 1 to 6)") from None

    def pad_reader(self, seat: int) -> int:
        try:
            return self._index[Place("pad", seat=seat)]
        except KeyError:
            seat_name = current().names.seat(seat)
            raise ValueError(f"{seat_name} has no scan pad on this table") from None

    def position_reader(self, position: int) -> int:
        try:
            return self._index[Place("perimeter", position=position)]
        except KeyError:
            raise ValueError(f"perimeter {current().names.place(f'pos:{position}')} has no reader: "
                             "pawns are sensed by Hall switches (PAWNS), not readers") from None

    def position_mm(self, reader: int) -> tuple[float, float]:
        """Centre of a reader's antenna, in mm from the top-left cell's centre."""
        place = self.place(reader)
        col: float
        row: float
        if place.kind == "cell":
            assert place.cell is not None
            col, row = place.cell[1], place.cell[0]
        elif place.kind == "pad":
            assert place.seat is not None
            col, row = PAD_CENTRES[place.seat]
        else:
            assert place.position is not None
            col, row = _perimeter_centre(place.position)
        return col * CELL_PITCH_MM[0], row * CELL_PITCH_MM[1]

    def neighbour_pairs(self, min_mm: float = FIELD_SEPARATION_MM) -> list[tuple[int, int]]:
        """Reader pairs closer than ``min_mm``: their fields must never be on together."""
        n = self.n_readers
        where = [self.position_mm(r) for r in range(n)]
        return [(a, b) for a in range(n) for b in range(a + 1, n)
                if math.dist(where[a], where[b]) < min_mm]

    def reader_for(self, where: str) -> int:
        """Reader of a place written as ``"2,3"`` / ``"cell:2,3"``, ``"pad:1"``, ``"pos:7"``."""
        kind, _, value = where.partition(":") if ":" in where else ("cell", "", where)
        try:
            if kind == "cell":
                return self.cell_reader(*parse_cell_key(value))
            if kind == "pad":
                return self.pad_reader(int(value))
            if kind in ("pos", "perimeter"):
                return self.position_reader(int(value))
        except ValueError as exc:
            raise ValueError(f"place {where!r}: {exc}") from None
        raise ValueError(f"place {where!r} is not 'r,c', 'pad:<seat>' or 'pos:<0-19>'")


def perimeter_mm(position: int) -> tuple[float, float]:
    """Centre of a pawn position (0..19), in mm from the top-left cell's centre."""
    col, row = _perimeter_centre(position)
    return col * CELL_PITCH_MM[0], row * CELL_PITCH_MM[1]


def _perimeter_centre(position: int) -> tuple[float, float]:
    """(column, row) of a perimeter position (G3: clockwise from the top-left corner),
    one pitch outside the grid."""
    side, step = divmod(position, 5)
    if side == 0:
        return -1.0 + 1.4 * step, -1.0
    if side == 1:
        return 6.0, -1.0 + 1.4 * step
    if side == 2:
        return 6.0 - 1.4 * step, 6.0
    return -1.0, 6.0 - 1.4 * step

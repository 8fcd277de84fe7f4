"""The box, computed from the reader layout (hub/layout.py): the top's size, where the pads
and the boards go, every reader cable's run and its limit.

    python -m hardware.box        # the figures; exit 1 when a run is over its limit

hardware/layout.md's box table is generated from here (python -m hardware.netlist --write)
and tests/hardware/test_box.py checks the runs and the clearances.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from hub.layout import CELL_PITCH_MM, PAD_CENTRES, Layout, PlaceKind, cells, perimeter_mm

N_POSITIONS = 20
CARD_MM = (59.0, 91.0)  # estimate: measure the printed copy (layout.md)
PAWN_DIAMETER_MM = 25.0  # choice: a pawn's base, magnet in its centre
PAD_PLATE_MM = (80.0, 110.0)  # choice: a card outline with room to lay it
CLEARANCE_MM = 10.0  # choice: between a pawn, a pad plate and the top's outline
EDGE_MARGIN_MM = 30.0  # choice: top beyond the outermost pad or pawn (frame, fingers)
# Routing: cables run along the carrier between rows (Manhattan), 10 % for bends and
# ties, plus 60 mm down from the board's header and up to the module's pins.
ROUTING_FACTOR = 1.10
DROP_MM = 60.0
# Reader cable limits. A grid reader's 50 cm is the design's choice (it keeps the bank's
# cables in a bundle). A pad's cable may be 80 cm: its SCK is a terminated point-to-point
# line (netlist.check_edges passes at 80 cm), MISO is sampled 500 ns after SCK falls at
# 1 MHz (the margin with 80 cm: hardware/wiring.md), and 3.3 V on 80 cm of 28 AWG with 4
# ground wires drops ~25 mV at the reader's 100 mA bursts.
LIMIT_MM = {"cell": 500.0, "pad": 800.0}


@dataclass(frozen=True)
class Board:
    name: str
    xy: tuple[float, float]  # mm from the top-left cell's centre, on the carrier
    readers: range


def _centre() -> tuple[float, float]:
    grid = cells()  # the grid table's cells (the default game's)
    rows, cols = max(r for r, _c in grid), max(c for _r, c in grid)
    return cols * CELL_PITCH_MM[0] / 2, rows * CELL_PITCH_MM[1] / 2


# The bank boards on the carrier's centre line, between two columns of readers: bank 0
# (readers 0..15, rows 1-3) at the middle of its rows, bank 1 (16..31, rows 4-6) likewise,
# bank 2 (the 4 pads) with the controller at the table's centre, the one place that is
# equally far from the four pads.
BOARDS = (
    Board("bank0", (_centre()[0], 1.0 * CELL_PITCH_MM[1]), range(0, 16)),
    Board("bank1", (_centre()[0], 4.0 * CELL_PITCH_MM[1]), range(16, 32)),
    Board("bank2", _centre(), range(32, 36)),
)


def run_mm(reader: int, layout: Layout | None = None) -> float:
    """The reader's cable: Manhattan from its bank board, routed, plus the drops."""
    layout = layout or Layout()
    board = next(b for b in BOARDS if reader in b.readers)
    x, y = layout.position_mm(reader)
    return (abs(x - board.xy[0]) + abs(y - board.xy[1])) * ROUTING_FACTOR + DROP_MM


def runs(layout: Layout | None = None) -> dict[int, tuple[PlaceKind, float, float]]:
    """reader -> (kind, run mm, limit mm)."""
    layout = layout or Layout()
    out = {}
    for reader in range(layout.n_readers):
        kind = layout.place(reader).kind
        out[reader] = (kind, round(run_mm(reader, layout), 1), LIMIT_MM[kind])
    return out


def _rect(centre: tuple[float, float], size: tuple[float, float]) -> tuple[float, ...]:
    return (centre[0] - size[0] / 2, centre[1] - size[1] / 2,
            centre[0] + size[0] / 2, centre[1] + size[1] / 2)


def pad_plates() -> list[tuple[float, ...]]:
    return [_rect((c * CELL_PITCH_MM[0], r * CELL_PITCH_MM[1]), PAD_PLATE_MM)
            for c, r in PAD_CENTRES]


def pawns() -> list[tuple[float, ...]]:
    return [_rect(perimeter_mm(p), (PAWN_DIAMETER_MM, PAWN_DIAMETER_MM))
            for p in range(N_POSITIONS)]


def cards() -> list[tuple[float, ...]]:
    return [_rect((c * CELL_PITCH_MM[0], r * CELL_PITCH_MM[1]), CARD_MM)
            for r in range(6) for c in range(6)]


def top_mm() -> tuple[float, float, tuple[float, ...]]:
    """(width, depth, outline) of the top: every card, pawn and pad plate, plus the edge
    margin, rounded up to 5 mm."""
    shapes = cards() + pawns() + pad_plates()
    x0 = min(s[0] for s in shapes) - EDGE_MARGIN_MM
    y0 = min(s[1] for s in shapes) - EDGE_MARGIN_MM
    x1 = max(s[2] for s in shapes) + EDGE_MARGIN_MM
    y1 = max(s[3] for s in shapes) + EDGE_MARGIN_MM
    width = math.ceil((x1 - x0) / 5) * 5
    depth = math.ceil((y1 - y0) / 5) * 5
    return width, depth, (x0, y0, x0 + width, y0 + depth)


def _gap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Clear distance between two rectangles (negative: they overlap)."""
    dx = max(b[0] - a[2], a[0] - b[2])
    dy = max(b[1] - a[3], a[1] - b[3])
    return max(dx, dy) if dx < 0 or dy < 0 else math.hypot(dx, dy)


def problems() -> list[str]:
    """Every run over its limit, every pad plate too close to a pawn or a card, anything
    too close to the top's edge."""
    found = []
    for reader, (kind, run, limit) in runs().items():
        if run > limit:
            found.append(f"reader {reader} ({kind}): cable run {run:.0f} mm over its "
                         f"{limit:.0f} mm limit")
    shapes = {f"pawn {i}": r for i, r in enumerate(pawns())}
    shapes.update({f"card {i}": r for i, r in enumerate(cards())})
    for seat, plate in enumerate(pad_plates()):
        for name, other in shapes.items():
            if _gap(plate, other) < CLEARANCE_MM:
                found.append(f"pad of seat {seat} is {_gap(plate, other):.0f} mm from "
                             f"{name} (needs {CLEARANCE_MM:.0f})")
    _w, _d, outline = top_mm()
    for name, shape in {**shapes, **{f"pad {i}": p for i, p in enumerate(pad_plates())}
                        }.items():
        edge = min(shape[0] - outline[0], shape[1] - outline[1], outline[2] - shape[2],
                   outline[3] - shape[3])
        if edge < EDGE_MARGIN_MM - 0.01:
            found.append(f"{name} is {edge:.0f} mm from the top's edge")
    return found


def box_table() -> str:
    width, depth, _outline = top_mm()
    every = runs()
    rows = [f"Top: **{width:.0f} × {depth:.0f} mm** (cards, the 20 pawn positions and the "
            f"four {PAD_PLATE_MM[0]:.0f} × {PAD_PLATE_MM[1]:.0f} mm pad plates, "
            f"{EDGE_MARGIN_MM:.0f} mm margin).", "",
            "| board | at (mm from the top-left cell's centre) | readers | longest run | "
            "limit |", "|---|---|---|---|---|"]
    for board in BOARDS:
        longest = max(every[r][1] for r in board.readers if r in every)
        limit = min(every[r][2] for r in board.readers if r in every)
        rows.append(f"| {board.name} | {board.xy[0]:.0f}, {board.xy[1]:.0f} | "
                    f"{board.readers.start}–{board.readers.stop - 1} | {longest:.0f} mm | "
                    f"{limit:.0f} mm |")
    rows += ["", "| reader | place | run | limit |", "|---|---|---|---|"]
    layout = Layout()
    for reader, (_kind, run, limit) in every.items():
        rows.append(f"| {reader} | {layout.place(reader).label()} | {run:.0f} mm | "
                    f"{limit:.0f} mm |")
    return "\n".join(rows)


def main() -> int:
    print(box_table())
    found = problems()
    for problem in found:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())

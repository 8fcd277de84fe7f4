"""The firmware's poll order keeps simultaneously-on antennas apart (hub.layout geometry)."""

import math

from firmware.scan import FIELD_LEAD, SCAN_ORDER
from hub.layout import FIELD_SEPARATION_MM, Layout


def test_scan_order_lists_every_reader_of_the_table_once() -> None:
    assert sorted(SCAN_ORDER) == list(range(Layout().n_readers))


def test_any_fields_on_together_are_far_apart() -> None:
    """While one reader is polled the next FIELD_LEAD readers' fields warm up: any
    FIELD_LEAD + 1 consecutive readers (wrapping into the next sweep) must be
    FIELD_SEPARATION_MM apart."""
    layout = Layout()
    n = len(SCAN_ORDER)
    for step in range(n):
        window = [SCAN_ORDER[(step + k) % n] for k in range(FIELD_LEAD + 1)]
        for i, a in enumerate(window):
            for b in window[i + 1:]:
                gap = math.dist(layout.position_mm(a), layout.position_mm(b))
                assert gap >= FIELD_SEPARATION_MM, (a, b, gap)


def test_neighbours_are_the_adjacent_cells() -> None:
    layout = Layout()
    pairs = set(layout.neighbour_pairs())
    # Cell 0,1 (reader 0): 0,2 (reader 1) beside it, 1,1 (reader 5) below, 1,0/1,2 diagonal.
    assert {(0, 1), (0, 5), (0, 4), (0, 6)} <= pairs
    assert (0, 2) not in pairs  # two pitches along a row: 130 mm
    assert not any(a >= 32 or b >= 32 for a, b in pairs)  # pads are far from everything

"""The box (hardware/box.py): the top is sized from the layout, the pads clear the pawn
track, and every reader cable's computed run is within its limit (issue 20, item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hardware import box, netlist
from hub import layout


def test_every_cable_run_is_within_its_limit() -> None:
    runs = box.runs()
    assert len(runs) == 36
    assert box.problems() == []
    cells = [run for kind, run, _limit in runs.values() if kind == "cell"]
    pads = [run for kind, run, _limit in runs.values() if kind == "pad"]
    assert max(cells) <= 500 and max(pads) <= 800
    assert max(pads) > 500  # why the pads have their own limit (layout.md's decision)


def test_the_pad_limit_is_one_the_sck_edge_holds() -> None:
    """Pads may have 80 cm cables only because SCK is a terminated line per reader: the
    edge model passes at the longest pad run, and the netlist checks edges that far."""
    longest = max(run for _k, run, _l in box.runs().values()) / 1000
    assert netlist.CABLE_SPREAD_M[1] >= longest
    assert netlist.edge_problems([longest], 68.0) == []
    assert netlist.edge_problems([0.15, 0.3, 0.45, longest], 33.0)  # a star would not


def test_the_first_designs_pads_and_one_board_do_not_fit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Put the pads back two pitches out with a 50 cm limit: the runs fail."""
    monkeypatch.setattr(layout, "PAD_CENTRES", ((2.5, 7.0), (-2.0, 2.5), (2.5, -2.0),
                                                (7.0, 2.5)))
    monkeypatch.setitem(box.LIMIT_MM, "pad", 500.0)
    found = box.problems()
    assert any("reader 32 (pad): cable run" in p for p in found), found
    assert any("reader 34 (pad): cable run" in p for p in found), found


def test_the_top_holds_every_pawn_and_pad_with_its_margin() -> None:
    width, depth, outline = box.top_mm()
    assert (width, depth) == (725, 1005)
    for shape in box.pawns() + box.pad_plates() + box.cards():
        assert outline[0] + box.EDGE_MARGIN_MM <= shape[0] + 0.01
        assert shape[3] <= outline[3] - box.EDGE_MARGIN_MM + 0.01


def test_a_pad_on_the_pawn_track_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(box, "PAD_CENTRES", ((2.5, 6.2), (-2.0, 2.5), (2.5, -1.8),
                                             (7.0, 2.5)))
    assert any(p.startswith("pad of seat 0 is") for p in box.problems())


def test_the_box_table_in_layout_md_is_generated() -> None:
    doc = (Path(box.__file__).parent / "layout.md").read_text(encoding="utf-8")
    assert box.box_table() in doc
    assert "480 × 700 mm, with" not in doc  # the old size is gone

"""The simulated table's physical world (hub/backends/sim.py): one owner of the pile, the
stacks, the pads and the owned hands; gestures, the public view, saving, deal and restore."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, cell_name
from engine.games.glastonbury.rules.cards import CARDS, deck_for
from engine.wire.api import dump
from hub.backends.sim import GestureRefused, SimulatedTable


def gesture(sim: SimulatedTable, **args: object) -> dict[str, object]:
    return dict(dump(sim.gesture(dict(args))))


def test_deal_lays_32_and_keeps_the_rest_as_the_pile() -> None:
    sim = SimulatedTable()
    grid = sim.deal(None, seed=3)
    public = sim.public()
    assert len(grid) == len(public["cells"]) == 32 and public["dealt"]
    assert public["pile_size"] == len(deck_for(None)) - 32
    assert sim.deal(None, seed=3) == grid  # the seed repeats the shuffle
    two = sim.deal("green", seed=3)
    assert not any(CARDS[c].colour == "green" for c in two)


def test_a_card_in_another_hand_is_refused_naming_whose() -> None:
    sim = SimulatedTable()
    sim.deal(None, seed=1)
    card = gesture(sim, action="lift", where="2,3", owner="1")["card"]
    with pytest.raises(GestureRefused, match="row 3, column 4 is in Seat 2's hand"):
        gesture(sim, action="lift", where="2,3", owner="0")
    with pytest.raises(GestureRefused, match="row 3, column 4 is in Seat 2's hand"):
        gesture(sim, action="take", where="2,3", seat=0, owner="0")
    with pytest.raises(GestureRefused, match="Seat 1's hand is empty"):
        gesture(sim, action="lay", where="pad:0", owner="0")  # seat 0 cannot lay seat 1's card
    gesture(sim, action="lay", where="2,3", owner="1")
    assert sim.public()["cells"]["2,3"] == card and sim.public()["hands"] == {}


def test_take_refill_and_vanesco_tap_in_one_gesture_each() -> None:
    sim = SimulatedTable()
    sim.deal(None, seed=1)
    card = gesture(sim, action="take", where="0,1", seat=2, owner="2")["card"]
    assert sim.private(2)["stack"] == [card] or card in sim.public()["beside"]["2"]
    drawn = gesture(sim, action="refill", where="0,1", owner="2")["card"]
    assert sim.public()["cells"]["0,1"] == drawn
    if sim.private(2)["stack"]:
        pile = sim.physical()["pile"]
        gesture(sim, action="vanesco", seat=2)
        assert sim.private(2)["stack"] == [] and sim.physical()["pile"] == [*pile, card]


def test_a_take_finishes_the_card_already_lifted_from_that_cell() -> None:
    """The one-tap take when the seat's hand already holds the card from that cell (a bot's
    half-move handed to a person who joined): it lays and slides it, no second lift."""
    sim = SimulatedTable()
    sim.deal(None, seed=1)
    card = gesture(sim, action="lift", where="0,1", owner="2")["card"]
    assert gesture(sim, action="take", where="0,1", seat=2, owner="2")["card"] == card
    assert sim.public()["hands"] == {} and sim.public()["pads"] == {}
    assert sim.private(2)["stack"] == [card] or card in sim.public()["beside"]["2"]
    assert "0,1" not in sim.public()["cells"]


def test_a_take_with_another_card_in_hand_is_refused_naming_it() -> None:
    sim = SimulatedTable()
    grid = sim.deal(None, seed=1)
    gesture(sim, action="lift", where="0,2", owner="2")
    with pytest.raises(GestureRefused, match=r"holds .* \(from row 1, column 3\)"):
        gesture(sim, action="take", where="0,1", seat=2, owner="2")
    assert "0,1" in sim.public()["cells"] and len(grid) == len(sim.public()["cells"]) + 1


def test_the_public_view_never_shows_a_covered_card_nor_the_pile_order() -> None:
    sim = SimulatedTable()
    sim.deal(None, seed=5)
    taken = [gesture(sim, action="take", where=cell_name(c), seat=0, owner="0")["card"]
             for c in TAKEABLE_CELLS[:4]]
    stack = sim.private(0)["stack"]
    covered = stack[:-1]
    text = json.dumps(sim.public())
    assert covered and all(card not in text for card in covered)
    assert all(card not in text for card in sim.physical()["pile"])
    assert set(stack) <= set(taken)


def test_a_drawn_card_cannot_go_back_on_the_pile_unseen() -> None:
    sim = SimulatedTable()
    sim.deal(None, seed=1)
    gesture(sim, action="lift", where="0,1", owner="host")
    gesture(sim, action="draw", owner="0")
    with pytest.raises(GestureRefused, match="drawn from the pile"):
        gesture(sim, action="drop", owner="0")
    with pytest.raises(GestureRefused, match="already holds"):
        gesture(sim, action="draw", owner="0")


def test_a_seat_cannot_read_the_pile_through_its_pad_nor_reject_a_refill(
        tmp_path: Path) -> None:
    """The pile-reading loop: draw, lay on the own pad, lift (the card now comes 'from the
    pad'), drop under the pile, draw again. A drawn card goes only into a square cell, and
    never back under the pile, whatever it went through (a restart included)."""
    sim = SimulatedTable(state_path=tmp_path / "sim.json")
    sim.deal(None, seed=1)
    pile = sim.physical()["pile"]
    gesture(sim, action="take", where="0,1", seat=0, owner="0")
    read: set[object] = set()
    for _ in range(len(pile)):
        try:
            read.add(gesture(sim, action="draw", owner="0")["card"])
            gesture(sim, action="lay", where="pad:0", owner="0")
            gesture(sim, action="lift", where="pad:0", owner="0")
            gesture(sim, action="drop", owner="0")
        except GestureRefused:
            pass
    assert read == {pile[0]}  # one card: the refill's
    with pytest.raises(GestureRefused, match="not on Seat 1's pad"):
        gesture(sim, action="lay", where="pad:0", owner="0")
    with pytest.raises(GestureRefused, match="still in a hand"):
        gesture(sim, action="draw", owner="host")
    # Through another cell and back, after a restart: still never under the pile.
    sim = SimulatedTable(state_path=tmp_path / "sim.json")
    gesture(sim, action="lay", where="0,1", owner="0")
    gesture(sim, action="lift", where="0,1", owner="0")
    with pytest.raises(GestureRefused, match="drawn from the pile"):
        gesture(sim, action="drop", owner="0")
    assert sim.physical()["pile"] == pile[1:]


def test_bad_gestures_are_refused_with_a_reason_and_change_nothing() -> None:
    sim = SimulatedTable()
    sim.deal(None, seed=1)
    before = sim.physical()
    for args, reason in [({"action": "lift", "where": "0,0"}, "corner"),
                         ({"action": "lay", "where": "1,1"}, "hand is empty"),
                         ({"action": "slide", "seat": 9}, "seat 9"),
                         ({"action": "tap", "seat": 1}, "cauldron is empty"),
                         ({"action": "lift", "where": "9,9"}, "9,9"),
                         ({"action": "lift", "where": "1,1", "owner": "mallory"}, "owner"),
                         ({"action": "teleport"}, "unknown gesture")]:
        with pytest.raises(GestureRefused, match=reason):
            sim.gesture(args)
    assert sim.physical() == before


def test_restore_lays_the_table_out_and_the_pile_keeps_its_order() -> None:
    sim = SimulatedTable()
    grid = sim.deal(None, seed=2)
    first = gesture(sim, action="take", where="0,1", seat=0, owner="0")["card"]
    drawn = gesture(sim, action="refill", where="0,1", owner="0")["card"]
    pile = sim.physical()["pile"]
    # Undo both: the taken card back on its cell, the refill back on top of the pile.
    cells = {cell_name(c): card for c, card in zip(TAKEABLE_CELLS, grid, strict=True)}
    sim.restore({"cells": cells, "stacks": [[], [], [], []], "beside": [[], [], [], []],
                 "pile": [drawn, *pile]})
    after = sim.physical()
    assert after["pile"] == [drawn, *pile]
    assert sim.public()["cells"] == cells and after["stacks"][0] == [] and first in cells.values()
    assert after["hands"] == {}


def test_the_world_is_saved_and_comes_back_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "sim.json"
    sim = SimulatedTable(state_path=path)
    sim.deal(None, seed=4)
    gesture(sim, action="take", where="1,1", seat=1, owner="1")
    gesture(sim, action="lift", where="2,2", owner="host")
    again = SimulatedTable(state_path=path)
    assert again.physical() == sim.physical() and again.public() == sim.public()
    assert not list(tmp_path.glob(".*.tmp"))  # saved through a temp file + os.replace


def test_a_damaged_save_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "sim.json"
    path.write_text(json.dumps({"version": 2, "tags": {}, "memory": {},
                                "pile": ["blue-a-1", "blue-a-1"]}))
    sim = SimulatedTable(state_path=path)
    assert sim.public()["pile_size"] == 0 and path.with_name("sim.json.bad").exists()


@pytest.fixture
def polled() -> Iterator[SimulatedTable]:
    """A table whose readers are polled (as the hub does), so gestures wait to be seen."""
    sim = SimulatedTable()
    stop = threading.Event()
    changes: list[tuple[str, int, str]] = []

    def run() -> None:
        while not stop.is_set():
            changes.extend((c.kind, c.reader, c.uid) for c in sim.poll().changes)
            stop.wait(0.001)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    sim.changes = changes  # type: ignore[attr-defined]
    try:
        yield sim
    finally:
        stop.set()
        thread.join(2)


def test_a_vanesco_tap_is_seen_on_the_pad_then_off(polled: SimulatedTable) -> None:
    polled.deal(None, seed=1)
    gesture(polled, action="take", where="0,1", seat=3, owner="3")
    pad = polled.layout.reader_for("pad:3")
    changes = polled.changes  # type: ignore[attr-defined]
    del changes[:]
    card = gesture(polled, action="tap", seat=3)["card"]
    assert [(k, r) for k, r, _ in changes if r == pad] == [("placed", pad), ("removed", pad)]
    assert polled.card_at(changes[0][2]) == card

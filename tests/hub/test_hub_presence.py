"""The simulated table through the firmware's presence tracker: exactly the true placements
and removals under dropped polls, misreads, flicker, stuck and vanished readers."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from engine.games.glastonbury.rules.cards import enrolment_order
from hub.backends.base import Change
from hub.backends.sim import SimulatedTable, made_up_uid
from hub.errors import BackendError
from hub.layout import Layout, cells


def sweeps(sim: SimulatedTable, n: int) -> list[Change]:
    out: list[Change] = []
    for _ in range(n):
        out += sim.poll().changes
    return out


def test_layout_names_places_for_people() -> None:
    # A reader's place in the readers view and in errors: 1-based, never "cell 0,1" (issue 11).
    layout = Layout(pads=2)
    assert layout.place(0).label() == "row 1, column 2"
    assert layout.place(31).label() == "row 6, column 5"
    assert layout.place(layout.pad_reader(1)).label() == "Seat 2's pad"
    for place, said in [("0,0", "place '0,0': row 1, column 1 is a corner"),
                        ("pad:3", "place 'pad:3': Seat 4 has no scan pad on this table"),
                        ("pos:0", "place 'pos:0': perimeter position 1 has no reader")]:
        with pytest.raises(ValueError, match="^" + re.escape(said)):
            layout.reader_for(place)


def test_layout_maps_every_reader_once() -> None:
    layout = Layout()
    assert layout.n_readers == 36 and len(cells()) == 32
    assert layout.place(0).cell == (0, 1) and layout.place(31).cell == (5, 4)
    assert [layout.pad_reader(s) for s in range(4)] == [32, 33, 34, 35]
    for reader in range(36):
        place = layout.place(reader)
        key = f"pad:{place.seat}" if place.kind == "pad" else place.cell_key
        assert layout.reader_for(str(key)) == reader
    with pytest.raises(ValueError, match="corner"):
        layout.cell_reader(0, 0)
    # Pawn sensors are Hall switches on their own shift registers, not 20 more readers.
    assert Layout(pads=2, perimeter=True).n_readers == 34


def test_place_and_remove_confirmed_after_two_reads_and_two_misses() -> None:
    sim = SimulatedTable()
    uid = sim.place("2,3", card_id="blue-a-4")
    assert uid == made_up_uid("blue-a-4")
    assert sweeps(sim, 1) == []
    assert sweeps(sim, 1) == [Change("placed", sim.layout.cell_reader(2, 3), uid)]
    sim.remove("2,3")
    assert sweeps(sim, 1) == []
    assert sweeps(sim, 1) == [Change("removed", sim.layout.cell_reader(2, 3), uid)]
    with pytest.raises(BackendError, match="corner"):
        sim.place("0,0", card_id="red-a-1")


def test_stacking_on_one_reader_is_refused() -> None:
    sim = SimulatedTable()
    sim.place("pad:0", card_id="blue-a-4")
    with pytest.raises(BackendError, match="stacked tags"):
        sim.place("pad:0", card_id="blue-a-3")


def random_play(seed: int, drop: float, misread: float) -> tuple[list[Change], list[Change]]:
    """Random placements/removals, each held for 16 sweeps; returns (truth, seen)."""
    rng = random.Random(seed)
    sim = SimulatedTable(seed=seed, drop_rate=drop, misread_rate=misread)
    cards = enrolment_order()
    truth: list[Change] = []
    seen: list[Change] = []
    on_table: dict[int, str] = {}
    for _ in range(120):
        reader = rng.randrange(sim.n_readers)
        if reader in on_table:
            uid = on_table.pop(reader)
            sim.remove(reader)
            truth.append(Change("removed", reader, uid))
        else:
            free = [c for c in cards if sim.uid_of(c) not in on_table.values()]
            if not free:
                continue
            uid = sim.place(reader, card_id=rng.choice(free))
            on_table[reader] = uid
            truth.append(Change("placed", reader, uid))
        seen += sweeps(sim, 16)
    return truth, seen


@pytest.mark.parametrize("seed", range(5))
def test_dropped_polls_and_misreads_give_exactly_the_true_changes(seed: int) -> None:
    truth, seen = random_play(seed, drop=0.15, misread=0.1)
    assert len(truth) > 100
    assert seen == truth


def test_flicker_on_an_occupied_reader_gives_no_event_and_reports_flicker() -> None:
    sim = SimulatedTable()
    uid = sim.place("1,1", card_id="grey-b-2")
    reader = sim.layout.cell_reader(1, 1)
    assert sweeps(sim, 3) == [Change("placed", reader, uid)]
    sim.flicker("1,1")
    assert sweeps(sim, 20) == []
    assert sim.health()[reader] == "flicker"
    sim.repair("1,1")
    assert sweeps(sim, 10) == []
    assert sim.health()[reader] == "ok"


def test_crosstalk_flicker_on_an_empty_reader_gives_no_phantom_card() -> None:
    sim = SimulatedTable()
    sim.place("1,2", card_id="grey-b-2")  # neighbour of 1,1 (reader + 1)
    sim.flicker("1,1")
    changes = sweeps(sim, 20)
    assert [c.reader for c in changes] == [sim.layout.cell_reader(1, 2)]


def test_stuck_and_vanished_readers_invent_no_removal() -> None:
    sim = SimulatedTable()
    uid = sim.place("3,3", card_id="red-a-1")
    pad = sim.place("pad:2", card_id="red-a-2")
    assert len(sweeps(sim, 2)) == 2
    sim.stuck("3,3")
    sim.vanish("pad:2")
    sim.remove("3,3")
    assert sweeps(sim, 10) == []
    health = sim.health()
    assert health[sim.layout.cell_reader(3, 3)] == "silent"
    assert health[sim.layout.pad_reader(2)] == "absent"
    sim.repair("3,3")
    sim.repair("pad:2")
    assert sweeps(sim, 3) == [Change("removed", sim.layout.cell_reader(3, 3), uid)]
    assert sim.state()[sim.layout.pad_reader(2)] == pad


# ------------------------------------------------------------------ seeding after a restart

UID_A, UID_B, UID_C = "04A1B2C3D4E5F6", "04FFEEDDCCBBAA", "04010203040506"


def test_tracker_seed_emits_nothing_then_reports_what_changed() -> None:
    from firmware.presence import PresenceTracker

    tracker = PresenceTracker(4)
    tracker.seed({0: UID_A, 1: UID_B, 2: UID_C, 3: None})
    assert tracker.state() == {0: UID_A, 1: UID_B, 2: UID_C, 3: None}
    reads = {0: UID_A, 1: None, 2: UID_B, 3: None}  # A stays, B lifted, C swapped for B
    events = []
    for _ in range(3):
        for reader, uid in reads.items():
            events += tracker.update(reader, uid)
    assert events == [("removed", 1, UID_B), ("removed", 2, UID_C), ("placed", 2, UID_B)]
    with pytest.raises(ValueError):
        tracker.seed({0: None, 9: UID_A})  # a bad reader changes nothing
    assert tracker.uid(0) == UID_A


def test_raw_backend_seed_state_makes_a_removal_of_a_tag_lifted_meanwhile() -> None:
    sim = SimulatedTable()
    sim.place("1,1", uid=UID_A)
    sim.place("pad:2", uid=UID_C)
    seeded = {sim.layout.reader_for("1,1"): UID_A, sim.layout.reader_for("2,2"): UID_B,
              sim.layout.reader_for("3,3"): UID_C, 99: UID_A}  # 99: not in the layout
    sim.seed_state(seeded)
    assert sweeps(sim, 4) == [
        Change("removed", sim.layout.reader_for("2,2"), UID_B),
        Change("removed", sim.layout.reader_for("3,3"), UID_C),
        Change("placed", sim.layout.reader_for("pad:2"), UID_C),
    ]


def test_sim_table_truth_survives_in_its_state_file(tmp_path: Path) -> None:
    path = tmp_path / "hub" / "sim-t.json"
    sim = SimulatedTable(state_path=path)
    a = sim.place("1,1", card_id="blue-a-4")
    sim.place("2,2", uid=UID_B)
    sim.place("pad:0", uid=UID_C)
    sim.move("2,2", "3,3")
    sim.remove("pad:0")
    sim.write_tag(sim.layout.reader_for("1,1"), "blue-a-4")
    again = SimulatedTable(state_path=path)
    assert again.truth() == {sim.layout.reader_for("1,1"): a, sim.layout.reader_for("3,3"): UID_B}
    assert again.tag_memory(a) == "blue-a-4"
    with pytest.raises(BackendError, match="already holds"):
        again.move("3,3", "1,1")  # refused: the card stays where it was, on disk too
    assert SimulatedTable(state_path=path).truth() == again.truth()
    again.clear()
    assert SimulatedTable(state_path=path).truth() == {}
    assert [p.name for p in path.parent.iterdir()] == ["sim-t.json"]  # no temp file left


def test_sim_table_damaged_file_is_set_aside_and_unsaved_change_not_made(tmp_path: Path) -> None:
    path = tmp_path / "sim.json"
    path.write_text('{"version": 1, "tags": {"4": "nothex"}}')
    sim = SimulatedTable(state_path=path)
    assert sim.truth() == {} and not path.exists()
    assert (tmp_path / "sim.json.bad").read_text().startswith('{"version": 1')
    blocked = tmp_path / "later-a-file"
    sim = SimulatedTable(state_path=blocked / "sim.json")
    blocked.write_text("")  # now its directory cannot be made
    with pytest.raises(BackendError, match="cannot save"):
        sim.place("1,1", uid=UID_A)
    assert sim.truth() == {}

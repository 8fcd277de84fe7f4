"""Enrolment: catalogue order on one pad, refusal of a known UID, undo, skip, resume from
the saved file, tag writes; the tag map file itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from people_words import leaks

from engine.games.glastonbury.rules.cards import enrolment_order
from engine.games.glastonbury.rules.names import card_name
from hub.backends.sim import SimulatedTable
from hub.enroll import Enrolment, run_enrolment
from hub.errors import BackendError, TagMapError
from hub.tagmap import TagMap


def uid(n: int) -> str:
    return f"04{n:012X}"


class Person:
    """Lays tags on pad 0 one after another (each held, then lifted, long enough to be
    confirmed) and types commands at chosen moments."""

    def __init__(self, sim: SimulatedTable, script: list[str | int]) -> None:
        self.sim = sim
        self.script = list(script)
        self.holding = False
        self.since = -10

    def read_command(self) -> str | None:
        settled = self.sim.sweeps - self.since >= 3
        if not settled:
            return None
        if self.holding:
            self.sim.remove("pad:0")
            self.holding, self.since = False, self.sim.sweeps
            return None
        if not self.script:
            return "q"
        step = self.script.pop(0)
        if isinstance(step, str):
            return step
        self.sim.place("pad:0", uid=uid(step))
        self.holding, self.since = True, self.sim.sweeps
        return None


def run(tmp_path: Path, script: list[str | int], order: list[str] | None = None,
        write: bool = False) -> tuple[Enrolment, list[str], bool]:
    sim = SimulatedTable()
    tagmap = TagMap.load(tmp_path / "tagmap.json")
    enrolment = Enrolment(tagmap, order=order or enrolment_order()[:4], backend=sim,
                          reader=sim.layout.pad_reader(0), write_tags=write)
    said: list[str] = []
    person = Person(sim, script)
    finished = run_enrolment(enrolment, sim, sim.layout.pad_reader(0), person.read_command,
                             said.append, poll_interval=0)
    return enrolment, said, finished


def test_walks_the_box_in_catalogue_order(tmp_path: Path) -> None:
    _, said, finished = run(tmp_path, [1, 2, 3, 4])
    assert finished
    order = enrolment_order()[:4]
    saved = json.loads((tmp_path / "tagmap.json").read_text())["tags"]
    assert saved == {uid(i + 1): order[i] for i in range(4)}
    assert said[0].startswith("[") and "0/4" in said[0] and card_name(order[0]) in said[0]
    assert "4/4" in said[-1]


def test_refuses_a_tag_already_enrolled_then_undo_and_skip(tmp_path: Path) -> None:
    order = enrolment_order()[:4]
    _, said, finished = run(tmp_path, [1, 1, 2, "u", 3, "x", "s", 4])
    assert not finished
    assert any("Refused: tag 04000000000001 is already enrolled as " + card_name(order[0]) in s
               for s in said)
    assert any(s.startswith(f"Undone: {card_name(order[1])} (tag ") for s in said)
    assert any(s.startswith(f"Skipped {card_name(order[2])} (") for s in said)
    # Cards by their printed names, never an id (the cards carry none: hardware/tags.md).
    assert not [s for s in said if leaks(s)], [leaks(s) for s in said]
    assert any("Unknown command 'x'" in s for s in said)
    tags = TagMap.load(tmp_path / "tagmap.json")
    assert dict(tags.items()) == {uid(1): order[0], uid(3): order[1], uid(4): order[3]}


def test_resume_from_the_saved_file(tmp_path: Path) -> None:
    order = enrolment_order()[:4]
    _, said, finished = run(tmp_path, [1, 2, "q"])
    assert not finished and "2/4" in said[-1]
    _, said, finished = run(tmp_path, [3, 4])
    assert finished and f"next: {card_name(order[2])}: tap it" in said[0]
    assert len(TagMap.load(tmp_path / "tagmap.json")) == 4


def test_card_id_written_into_the_tag(tmp_path: Path) -> None:
    sim = SimulatedTable()
    tagmap = TagMap(tmp_path / "t.json")
    order = enrolment_order()[:2]
    enrolment = Enrolment(tagmap, order=order, backend=sim, reader=sim.layout.pad_reader(0),
                          write_tags=True)
    sim.place("pad:0", uid=uid(7))
    assert "written into the tag" in str(enrolment.tag_seen(uid(7)))
    assert sim.tag_memory(uid(7)) == order[0]


def test_tag_map_file_rules(tmp_path: Path) -> None:
    tags = TagMap(tmp_path / "t.json")
    tags.add("04:a1:b2:c3", "blue-a-4")
    assert tags.card_for("04A1B2C3") == "blue-a-4"
    for bad_uid, card, reason in [("04A1B2C3", "blue-a-3", "already enrolled"),
                                  ("1234", "blue-a-3", "hex digits"),
                                  ("04A1B2C4", "blue-a-4", "already enrolled with tag"),
                                  ("04A1B2C5", "corner-1", "corner"),
                                  ("04A1B2C6", "dragon-1", "not a card id")]:
        with pytest.raises(TagMapError, match=reason):
            tags.add(bad_uid, card)
    tags.save()
    (tmp_path / "bad.json").write_text("{oops")
    with pytest.raises(TagMapError, match="cannot be read"):
        TagMap.load(tmp_path / "bad.json")
    (tmp_path / "dup.json").write_text(json.dumps({"tags": {"04A1B2C3": "blue-a-4",
                                                            "04A1B2C4": "blue-a-4"}}))
    with pytest.raises(TagMapError, match="already enrolled"):
        TagMap.load(tmp_path / "dup.json")
    with pytest.raises(TagMapError, match="run `cauldron enroll`"):
        TagMap.load(tmp_path / "none.json", missing_ok=False)


def test_write_needs_a_capable_backend(tmp_path: Path) -> None:
    from hub.backends.base import RawBackend, ReaderRead
    from hub.layout import Layout

    class ReadOnly(RawBackend):
        name = "read-only"

        def sweep(self) -> list[ReaderRead]:
            return [ReaderRead()] * self.n_readers

    with pytest.raises(BackendError, match="cannot write tags"):
        Enrolment(TagMap(), backend=ReadOnly(Layout()), reader=32, write_tags=True)



def test_identical_cards_are_counted_and_a_tag_maps_file_error_quotes_the_file(
        tmp_path: Path) -> None:
    # Three Accio cards look the same: the person is told which copy is asked.
    enrolment = Enrolment(TagMap(tmp_path / "t.json"), order=["accio-1", "accio-2", "blue-a-1"])
    assert str(enrolment.prompt()).endswith("next: Accio (copy 1 of 2): tap it on the pad")
    assert (str(enrolment.tag_seen(uid(1)))
            == f"Enrolled Accio (copy 1 of 2) (tag {uid(1)}). Lift it.")
    assert "next: Accio (copy 2 of 2)" in str(enrolment.prompt())
    assert enrolment.status()["next_label"] == "Accio (copy 2 of 2)"
    # Editing a tag map by hand: the error names the card and quotes the file's line.
    (tmp_path / "dup.json").write_text(json.dumps({"tags": {"04A1B2C3": "pawn-1",
                                                            "04A1B2C4": "pawn-1"}}))
    with pytest.raises(TagMapError) as dup:
        TagMap.load(tmp_path / "dup.json")
    assert "Seat 2's pawn is already enrolled with tag 04A1B2C3" in str(dup.value)
    assert str(dup.value).endswith('(the file has "04A1B2C4": "pawn-1")')

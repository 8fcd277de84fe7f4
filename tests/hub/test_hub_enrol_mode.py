"""Enrolment as a mode of the running hub (``hub/cmd/enrol``), the tag map read again when
another program changes it, and ``hub/cmd/readers`` (what `cauldron readers` shows)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from glastonbury_table import glastonbury
from test_hub_service import fast_client, make_hub
from waiting import wait_for

from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, cell_name
from engine.games.glastonbury.rules.cards import INGREDIENTS, enrolment_order
from engine.games.glastonbury.table.interpreter import Status
from engine.service.service import EngineService, ServiceConfig
from engine.wire.contract import HubEvent, Topics
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, made_up_uid
from hub.service import Hub
from hub.tagmap import TagMap

NEW_TAG = "04AABBCCDD0001"


@pytest.fixture
def live(mqtt_broker: str, table_id: str, tmp_path: Path
         ) -> Iterator[tuple[Hub, SimulatedTable, WireClient, list[HubEvent]]]:
    tagmap = TagMap.load(tmp_path / "tagmap.json")
    sim = SimulatedTable(tagmap=tagmap)
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o.sqlite", sim, tagmap)
    events: list[HubEvent] = []
    try:
        with fast_client(mqtt_broker) as client:
            client.subscribe(Topics(table_id).hub_event,
                             lambda t, m: events.append(m) if isinstance(m, HubEvent) else None,
                             wait=5)
            yield hub, sim, client, events
    finally:
        hub.stop()


def ask(client: WireClient, table: str, verb: str, **args: Any) -> Any:
    reply = client.request(Topics(table).hub_cmd(verb), args, timeout=5)
    return reply


def test_enrolment_mode_consumes_the_pad_and_undoes_a_skip(
        live: tuple[Hub, SimulatedTable, WireClient, list[HubEvent]], table_id: str,
        tmp_path: Path) -> None:
    hub, sim, client, events = live
    first, second = enrolment_order()[:2]
    started = ask(client, table_id, "enrol", action="start", pad=0)
    assert started.status == "ok" and started.data["next"] == first
    assert ask(client, table_id, "enrol", action="skip").data["next"] == second
    undone = ask(client, table_id, "enrol", action="undo").data
    assert undone["next"] == first and "Skip undone" in undone["message"]
    sim.place("pad:0", uid=NEW_TAG)
    wait_for(lambda: hub.tagmap.card_for(NEW_TAG) == first)
    sim.remove("pad:0")
    status = ask(client, table_id, "enrol", action="status").data
    assert status["active"] and status["done"] == 1 and status["next"] == second
    stopped = ask(client, table_id, "enrol", action="stop").data
    assert not stopped["active"] and "saved: the 1 card enrolled this time" in stopped["message"]
    assert TagMap.load(tmp_path / "tagmap.json").card_for(NEW_TAG) == first
    # The pad's taps were enrolment, not play: no event reached the wire.
    assert events == []
    # The new tag is known at once, without a restart.
    sim.place("2,3", uid=NEW_TAG)
    wait_for(lambda: any(e.card_id == first for e in events))
    # Stopping again, or starting on a pad the table lacks, is refused with the reason.
    refused = ask(client, table_id, "enrol", action="stop")
    assert refused.status == "error" and "no enrolment is running" in str(refused.error)
    refused = ask(client, table_id, "enrol", action="start", pad=7)
    assert refused.status == "error" and "no pad for Seat 8" in str(refused.error)
    again = ask(client, table_id, "enrol", action="start", pad=1)
    nothing = ask(client, table_id, "enrol", action="stop").data
    assert again.status == "ok" and "nothing new was enrolled" in nothing["message"]


def test_the_hub_reads_a_changed_tag_map_file(
        live: tuple[Hub, SimulatedTable, WireClient, list[HubEvent]], tmp_path: Path) -> None:
    hub, sim, _client, events = live
    other = TagMap(tmp_path / "tagmap.json")
    other.add(NEW_TAG, "blue-a-4")
    other.save()  # another program (an offline `cauldron enroll`) wrote the file
    wait_for(lambda: hub.tagmap.card_for(NEW_TAG) == "blue-a-4")
    sim.place("1,2", uid=NEW_TAG)
    wait_for(lambda: any(e.card_id == "blue-a-4" and e.cell == "1,2" for e in events))


def test_readers_answer_what_each_reader_sees(
        live: tuple[Hub, SimulatedTable, WireClient, list[HubEvent]], table_id: str) -> None:
    hub, sim, client, _events = live
    sim.place("0,1", uid=NEW_TAG)
    wait_for(lambda: hub.backend.state().get(sim.layout.cell_reader(0, 1)) == NEW_TAG)
    data = ask(client, table_id, "readers").data
    assert data["backend"] == "sim" and data["pads"] == 4
    seen = {r["cell"]: r for r in data["readers"] if r.get("cell")}
    assert seen["0,1"]["uid"] == NEW_TAG and seen["0,1"]["card_id"] is None
    assert len(data["readers"]) == hub.backend.n_readers


def test_a_virtual_box_has_nothing_to_enrol(mqtt_broker: str, table_id: str,
                                            tmp_path: Path) -> None:
    from hub.backends.sim import virtual_box_tagmap

    tagmap = virtual_box_tagmap()
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o.sqlite", SimulatedTable(tagmap=tagmap),
                   tagmap)
    try:
        with fast_client(mqtt_broker) as client:
            refused = ask(client, table_id, "enrol", action="start")
    finally:
        hub.stop()
    assert refused.status == "error" and "nothing to enrol" in str(refused.error)


def _grid_cards() -> list[str]:
    # With yellow and red at the table, green is the colour removed (G2).
    return [c for c in INGREDIENTS if not c.startswith("green")][:len(TAKEABLE_CELLS)]


def test_a_tag_map_changed_under_the_grid_renames_each_lying_card_and_no_game_starts(
        mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    """Issue 19: the tag map replaced while 32 cards lie on the grid (one card's tag not yet
    enrolled again, two tags swapped): the hub reports each renamed reader as a lift under
    the old name and a lay under the new, so an engine fed its events has the square the
    readers know now and does not start a game on a card they no longer know."""
    grid = _grid_cards()
    path = tmp_path / "tagmap.json"
    TagMap(path, {made_up_uid(card): card for card in grid}).save()
    tagmap = TagMap.load(path)
    sim = SimulatedTable(tagmap=tagmap)
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o.sqlite", sim, tagmap)
    events: list[HubEvent] = []
    try:
        with fast_client(mqtt_broker) as client:
            client.subscribe(Topics(table_id).hub_event,
                             lambda t, m: events.append(m) if isinstance(m, HubEvent) else None,
                             wait=5)
            for cell, card in zip(TAKEABLE_CELLS, grid, strict=True):
                sim.place(cell_name(cell), card_id=card)
            wait_for(lambda: len(events) == len(grid))
            first, a, b = grid[0], grid[1], grid[2]
            renamed = {made_up_uid(card): card for card in grid[3:]}
            renamed[made_up_uid(a)], renamed[made_up_uid(b)] = b, a  # swapped
            TagMap(path, renamed).save()  # another program (an offline enrol) wrote it
            wait_for(lambda: len(events) == len(grid) + 6)
    finally:
        hub.stop()
    said = [(e.kind, e.action, e.cell, e.card_id) for e in events[len(grid):]]
    at = [cell_name(c) for c in TAKEABLE_CELLS[:3]]
    assert said == [("cell", "removed", at[0], first), ("unknown_tag", "placed", at[0], None),
                    ("cell", "removed", at[1], a), ("cell", "placed", at[1], b),
                    ("cell", "removed", at[2], b), ("cell", "placed", at[2], a)]
    engine = EngineService(ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=tmp_path / "e",
                                         name="tagmap-hub-test"))
    for event in sorted(events, key=lambda e: e.seq):
        engine.receive(table_id, event)
    runtime = engine.table(table_id)
    assert glastonbury(runtime.interp).cells[TAKEABLE_CELLS[1]] == b
    assert glastonbury(runtime.interp).cells[TAKEABLE_CELLS[0]].startswith("uid:")
    engine.command(table_id, "new_game", {"colours": ["yellow", "red"], "first_seat": 0})
    assert runtime.interp.status is Status.DEALING


def test_an_undone_enrolment_renames_its_tag_already_lying_on_the_grid(
        live: tuple[Hub, SimulatedTable, WireClient, list[HubEvent]], table_id: str) -> None:
    """Enrolled, lifted and laid on the grid while enrolment still runs, then undone: the
    grid's card becomes the unknown tag it now is (the engine is told, not left stale)."""
    hub, sim, client, events = live
    first = enrolment_order()[0]
    assert ask(client, table_id, "enrol", action="start", pad=0).status == "ok"
    sim.place("pad:0", uid=NEW_TAG)
    wait_for(lambda: hub.tagmap.card_for(NEW_TAG) == first)
    sim.remove("pad:0")
    sim.place("2,3", uid=NEW_TAG)
    wait_for(lambda: any(e.card_id == first and e.cell == "2,3" for e in events))
    assert ask(client, table_id, "enrol", action="undo").status == "ok"
    wait_for(lambda: len(events) == 3)
    assert [(e.kind, e.action, e.cell, e.card_id) for e in events] == [
        ("cell", "placed", "2,3", first), ("cell", "removed", "2,3", first),
        ("unknown_tag", "placed", "2,3", None)]

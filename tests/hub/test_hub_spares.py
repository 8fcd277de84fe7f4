"""Spares from the running hub (issue 23: "spares enrol from the host page at any time"):
``hub/cmd/enrol`` ``spare`` takes the next tag laid on its pad as the lost piece's, a game
running, and the engine never sees that tap; the old tag, tapped at play time, is refused
as retired, not as a tag to enrol. The hub names the game it serves in its snapshot and
health; a field added to a signed message later leaves what was signed before it valid."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_hub_enrol_mode import ask, live
from test_hub_quacks import brewing, quacks
from test_hub_service import fast_client, make_hub
from waiting import wait_until

from engine import games
from engine.wire.auth import ensure_key, hub_mac_ok, keys_dir, sign_hub
from engine.wire.contract import HubEvent, HubHealth, Topics
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.layout import Layout
from hub.service import Hub
from hub.tagmap import TagMap

__all__ = ["live", "quacks"]  # the fixtures, used by name

QUACKS = games.get("quacks")
NEW_TAG = "04BEEF00000001"


def whites() -> list[str]:
    return [c for c in QUACKS.catalogue.pieces if QUACKS.catalogue.kinds[c] == "white-1"]


def test_a_spare_asked_in_a_quacks_game_takes_its_pads_next_tag_unseen_and_the_old_is_retired(
        quacks: None, mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    """A real broker, the hub (simulated readers, a tag map file) and the engine service: a
    Quacks game is brewing; seat 1 draws the first white 1; the host asks a spare white 1
    on seat 2's pad: the chip retired is not the one just drawn but one never seen (the
    hub's outbox says when each tag was last seen); the new tag laid there is enrolled (no
    hub event, no draw); the old tag laid on seat 1's pad is refused with ``retired_tag``
    (its UID named); the new tag is that chip at once."""
    box = TagMap(tmp_path / "tagmap.json", tags=dict(virtual_box_tagmap().items()))
    box.save()
    drawn, lost = whites()[0], whites()[1]  # all have a tag: the one not seen the longest
    old = box.uid_for(lost)
    assert old is not None
    with brewing(mqtt_broker, table_id, tmp_path, box, Topics(table_id).hub_event) as (
            _hub, sim, engine, told), fast_client(mqtt_broker) as client:

        def event(uid: str) -> HubEvent | None:
            return next((e for e in list(told) if isinstance(e, HubEvent) and e.uid == uid),
                        None)

        interp = engine.tables[table_id].interp
        drawn_uid = box.uid_for(drawn)
        assert drawn_uid is not None
        sim.place("pad:0", uid=drawn_uid)  # seat 1 draws it
        wait_until(lambda: event(drawn_uid), 10, "the draw's event")
        sim.remove("pad:0")
        asked = ask(client, table_id, "enrol", action="spare", pad=1, piece="white-1")
        assert asked.status == "ok", asked
        assert asked.data["active"] is True and asked.data["spare"] == lost
        assert [s["code"] for s in asked.data["said"]] == ["spare_next"]
        sim.place("pad:1", uid=NEW_TAG)
        wait_until(lambda: ask(client, table_id, "enrol").data.get("spares") == 1, 10,
                   "the spare enrolled")
        status = ask(client, table_id, "enrol").data
        assert status["active"] is False
        assert status["said"] == [{"code": "spare_enrolled", "params": {
            "uid": NEW_TAG, "card": lost, "old": old}}]
        saved = TagMap.load(tmp_path / "tagmap.json")  # what the file holds
        assert saved.card_for(NEW_TAG) == lost and saved.retired_for(old) == lost
        sim.remove("pad:1")  # lifting the spare's tag is not reported either
        # The old tag at play time: refused as retired (its own word), nothing drawn.
        sim.place("pad:0", uid=old)
        said = wait_until(lambda: event(old), 10, "the old tag's event")
        assert (said.kind, said.tag, said.card_id) == ("unknown_tag", "retired", None)
        wait_until(lambda: [a.wire() for a in interp.active_alerts], 10, "the refusal")
        (alert,) = [a.wire() for a in interp.active_alerts]
        assert alert["params"] == {"code": "retired_tag", "pad": 0, "uid": old}
        assert "retired" in str(alert["message"]) and alert["rule"] == "Q2"
        assert event(NEW_TAG) is None  # the spare's tap: unseen
        # The new tag is the chip at once (no restart).
        sim.remove("pad:0")
        sim.place("pad:0", uid=NEW_TAG)
        new = wait_until(lambda: event(NEW_TAG), 10, "the new tag's event")
        assert new.card_id == lost


def test_a_spare_and_an_enrolment_never_share_the_pads_and_stop_ends_a_waiting_spare(
        live: tuple[Hub, SimulatedTable, WireClient, list[HubEvent]], table_id: str) -> None:
    """Glastonbury: a spare names a card (its cards are each their own); an enrolment and a
    spare exclude each other, each refusal with its code; Stop ends a waiting spare and the
    card keeps its tag."""
    hub, sim, client, events = live
    refused = ask(client, table_id, "enrol", action="spare", pad=0, piece="spell")
    assert (refused.code, "name the lost piece itself" in str(refused.error)) == (
        "unknown_piece", True), refused
    assert ask(client, table_id, "enrol", action="spare", pad=0).code == "bad_enrol_args"
    started = ask(client, table_id, "enrol", action="start", pad=0)
    assert started.status == "ok", started
    during = ask(client, table_id, "enrol", action="spare", pad=1, piece="accio-1")
    assert (during.status, during.code) == ("error", "enrolment_running")
    assert ask(client, table_id, "enrol", action="stop").status == "ok"
    spare = ask(client, table_id, "enrol", action="spare", pad=2, piece="accio-1")
    assert spare.status == "ok" and spare.data["pad"] == 2, spare
    assert ask(client, table_id, "enrol", action="start").code == "spare_waiting"
    stopped = ask(client, table_id, "enrol", action="stop")
    assert stopped.data["active"] is False
    assert stopped.data["said"] == [{"code": "spare_stopped",
                                     "params": {"card": "accio-1", "old": "-"}}]
    assert "No spare enrolled: Accio" in str(stopped.data["message"])
    sim.place("pad:2", uid=NEW_TAG)  # no spare waits: a tag like any other, reported
    wait_until(lambda: any(e.uid == NEW_TAG for e in events), 10, "the tag's event")
    assert hub.tagmap.card_for(NEW_TAG) is None


def test_the_hubs_snapshot_and_health_name_the_game_it_serves(
        quacks: None, mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    box = virtual_box_tagmap()
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o.sqlite", SimulatedTable(Layout(),
                                                                                tagmap=box), box)
    try:
        snapshot = hub.snapshot()
        assert snapshot.game == "quacks" and hub_mac_ok(snapshot, table_id, hub.key)
        assert HubHealth.of(snapshot).game == "quacks"
        tampered = snapshot.model_copy(update={"game": "glastonbury"})
        assert not hub_mac_ok(tampered, table_id, hub.key)
    finally:
        hub.stop()


def test_a_hub_event_signed_before_its_tag_field_existed_still_verifies() -> None:
    """`WireModel.LATER`: a field added to a signed model counts in the signature only when
    set, so an outbox's events signed by an older hub are not refused after an update."""
    key, table = b"k" * 32, "t1"
    fields: dict[str, Any] = {"hub_id": "hub-1", "epoch": "e1", "seq": 3, "ts": 1.5,
                              "kind": "unknown_tag", "action": "placed", "seat": 0,
                              "uid": "04AA0000000001", "reader": 32}
    older = {"schema_version": 1, **{k: None for k in ("cell", "position", "card_id",
                                                       "pawn_seat", "button", "health")},
             **fields}  # every field an older HubEvent had, none of the later ones
    body = json.dumps(older, sort_keys=True, separators=(",", ":")).encode()
    mac = hmac.new(key, b"hub/event\n" + table.encode() + b"\n" + body, hashlib.sha256)
    assert hub_mac_ok(HubEvent(**fields, mac=mac.hexdigest()), table, key)
    retired = sign_hub(HubEvent(**fields, tag="retired"), table, key)
    assert hub_mac_ok(retired, table, key)
    assert not hub_mac_ok(retired.model_copy(update={"tag": None}), table, key)


def test_cauldron_enroll_spare_asks_the_running_hub_which_reads_the_pad(
        mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    """`cauldron enroll --spare` with the hub running: the hub reads the pad (the tool
    opens no reader of its own) and the tool says what it says, then exits 0."""
    ensure_key(keys_dir(), table_id, "cmd")  # the engine's and dashboard's (same machine)
    tagmap = TagMap(tmp_path / "tagmap.json", tags={"04AA0000000001": "accio-1"})
    tagmap.save()
    sim = SimulatedTable(tagmap=tagmap)
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o.sqlite", sim, tagmap)
    code = "import sys; from engine.app.cli import main; sys.exit(main(sys.argv[1:]))"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, "enroll", "--mqtt", mqtt_broker, "--table", table_id,
             "--pad", "2", "--spare", "accio-1", "--idle-timeout", "60"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: getattr(hub.enrolment_status(), "spare", None) == "accio-1",
                       30, "the tool's spare on the hub")
            sim.place("pad:1", uid=NEW_TAG)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        hub.stop()
    assert proc.returncode == 0, (out, err)
    assert "Spare for Accio: tap its new tag on the pad (its old tag 04AA0000000001" in out
    assert f"Spare enrolled: tag {NEW_TAG} is now Accio" in out
    assert TagMap.load(tmp_path / "tagmap.json").card_for(NEW_TAG) == "accio-1"

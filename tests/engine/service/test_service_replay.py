"""Replays across restarts (issue 24 item 7): a stale signed snapshot of a hub's old outbox
epoch, replayed after the hub's outbox was reset, gave 6 alerts and a game stuck for over
20 s. An outbox epoch is never resumed once left: the engine refuses its messages, checked
against the table's log (so also after the engine restarts). Against a real Mosquitto with
the shipped ACL; the attacker holds the hub's broker password, not its key."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from acl_broker import needs_mosquitto, secured_broker
from hub_events import hub_event, signed
from test_service_attacks import ACCOUNTS, DASHBOARD, HUB_ID, TABLE, TOPICS, Client, Scene
from waiting import wait_for

from engine.games.glastonbury.rules.board import cell_name
from engine.games.glastonbury.table.interpreter import lift
from engine.wire.auth import ensure_key, keys_dir
from engine.wire.contract import HubSnapshot, ReaderSeen

pytestmark = needs_mosquitto


@pytest.fixture
def replay_scene(tmp_path: Path) -> Iterator[Scene]:
    ensure_key(keys_dir(), TABLE, "hub", HUB_ID)
    with secured_broker(tmp_path, ACCOUNTS) as port:
        hub, dashboard = Client(port, TABLE), Client(port, DASHBOARD)
        attacker = Client(port, TABLE, sign=False)  # the hub's broker password, no key
        scene = Scene(port, tmp_path / "engine", None, hub, dashboard, attacker)  # type: ignore[arg-type]
        scene.start_engine()
        try:
            yield scene
        finally:
            scene.engine.stop()
            for client in (hub, dashboard, attacker):
                client.stop()


def snapshot(epoch: str, last_seq: int, cells: dict[int, str]) -> HubSnapshot:
    readers = [ReaderSeen(reader=r, cell=f"{r // 6},{r % 6}") for r in range(36)]
    for cell, card in cells.items():
        readers[cell] = readers[cell].model_copy(update={"uid": "04" + f"{cell:012X}",
                                                         "card_id": card})
    model = HubSnapshot(hub_id=HUB_ID, epoch=epoch, last_seq=last_seq, ts=time.time(),
                        backend="sim", readers=readers)
    signed_model = signed(model, TABLE)
    assert isinstance(signed_model, HubSnapshot)
    return signed_model


def test_a_stale_snapshot_replayed_after_an_outbox_reset_is_refused(replay_scene: Scene
                                                                     ) -> None:
    scene = replay_scene
    captured = snapshot("e1", 0, {})  # the hub's snapshot at start, seen on the wire
    scene.hub.send(TOPICS.hub_snapshot, captured)
    wait_for(lambda: scene.engine.stats.get("resyncs", 0) == 1, 10, "the first snapshot")
    scene.deal()
    interp = scene.interp
    assert interp.game is not None
    grid = {c: card for c, card in enumerate(interp.game.grid) if card}
    # The hub's outbox is reset (a new epoch): its first snapshot says what lies there.
    scene.hub.send(TOPICS.hub_snapshot, snapshot("e2", 0, grid))
    wait_for(lambda: scene.engine.stats.get("resyncs", 0) == 2, 10, "the new epoch")
    inputs = interp.inputs
    assert not interp.alerts and interp.status.value == "playing"
    scene.attacker.send(TOPICS.hub_snapshot, captured)  # the replay
    wait_for(lambda: scene.engine.stats.get("replayed", 0) == 1, 10, "the replay refused")
    assert interp.inputs == inputs and not interp.alerts
    # The old epoch's events are replays too.
    cell = next(iter(grid))
    old = hub_event(lift(cell_name(cell), grid[cell]), scene.seq + 1, hub_id=HUB_ID)
    scene.attacker.send(TOPICS.hub_event, signed(old, TABLE))
    wait_for(lambda: scene.engine.stats.get("replayed", 0) == 2, 10, "the old event refused")
    # A restarted engine remembers it from the table's log.
    scene.engine.stop()
    again = scene.start_engine()
    scene.attacker.send(TOPICS.hub_snapshot, captured)
    wait_for(lambda: again.stats.get("replayed", 0) == 1, 10, "the replay refused again")
    assert not scene.interp.alerts and scene.interp.status.value == "playing"
    assert scene.interp.inputs == inputs

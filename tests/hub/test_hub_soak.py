"""A random session on a faulty simulated table, the broker restarted again and again; every
true change arrives exactly once, in order. Default run: 160 gestures, 4 broker restarts;
``--soak``: a minute of gestures, a restart every 40."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from pathlib import Path

import pytest

from engine.games.glastonbury.rules.cards import enrolment_order
from engine.wire.broker import LocalBroker
from engine.wire.contract import HubEvent, HubSnapshot, Topics, WireError, WireModel
from engine.wire.mqtt import WireClient
from engine.wire.sequence import HubCursor
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.outbox import Outbox
from hub.service import Hub


def missing(cursors: dict[str, HubCursor]) -> dict[str, tuple[str, int, int]]:
    return {hub: (c.epoch, *gap) for hub, c in cursors.items() if (gap := c.gap())}


# (gestures, seconds): the default run stops at the gesture count, the soak at the time.
@pytest.mark.parametrize("gestures,seconds", [
    pytest.param(160, None, id="short"),
    pytest.param(None, 60.0, id="long", marks=pytest.mark.soak),
])
def test_long_session_with_faults_and_broker_restarts(
        restartable_broker: LocalBroker, table_id: str, tmp_path: Path,
        gestures: int | None, seconds: float | None) -> None:
    topics = Topics(table_id)
    url = restartable_broker.url
    tagmap = virtual_box_tagmap()
    sim = SimulatedTable(tagmap=tagmap, seed=7, drop_rate=0.1, misread_rate=0.05)
    hub = Hub(table=table_id, backend=sim, tagmap=tagmap, outbox=Outbox(tmp_path / "o.sqlite"),
              client=WireClient(url, reconnect_min=0.05, reconnect_max=0.5), poll_interval=0.002)
    cursors: dict[str, HubCursor] = {}
    delivered: list[HubEvent] = []
    lock = threading.Lock()

    def on_event(topic: str, model: WireModel) -> None:
        if isinstance(model, HubEvent):
            with lock:
                delivered.extend(HubCursor.of(cursors, model).feed(model))
        elif isinstance(model, HubSnapshot):
            with lock:
                cursor = cursors.get(model.hub_id)
                if cursor is not None and cursor.epoch == model.epoch:
                    cursor.expect(model.last_seq)

    consumer = WireClient(url, reconnect_min=0.05, reconnect_max=0.5).start(wait=5)
    consumer.subscribe(topics.hub_event, on_event, wait=5)
    consumer.subscribe(topics.hub_snapshot, on_event, wait=5)
    emitted: list[HubEvent] = []
    hub.listeners.append(emitted.append)
    hub.start()
    rng = random.Random(7)
    cards = enrolment_order()
    on_table: dict[str, str] = {}
    try:
        deadline = time.monotonic() + (seconds or 0.0)
        step = 0
        while (step < gestures) if gestures is not None else (time.monotonic() < deadline):
            step += 1
            where = f"{rng.randrange(1, 5)},{rng.randrange(0, 6)}"
            if where in on_table:
                sim.remove(where)
                cards.append(on_table.pop(where))
            else:
                card = cards.pop(rng.randrange(len(cards)))
                sim.place(where, card_id=card)
                on_table[where] = card
            time.sleep(0.02)  # 10 polls: the hub confirms a change on its second poll
            if step % 40 == 0:
                restartable_broker.stop()
                time.sleep(rng.uniform(0.05, 0.5))
                restartable_broker.start()
        sim.drop_rate = sim.misread_rate = 0.0  # the table goes quiet: the stream ends
        time.sleep(hub.health_hold * 2 + 0.5)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            with lock:
                gaps = missing(cursors)
                done = len(delivered) == len(emitted)
            if done:
                break
            for epoch, first, last in gaps.values():
                with contextlib.suppress(WireError):  # a timeout: ask again next round
                    consumer.request(topics.hub_cmd("replay"),
                                     {"epoch": epoch, "from_seq": first, "to_seq": last})
            time.sleep(0.2)
        assert len(delivered) == len(emitted), {
            "delivered": len(delivered), "emitted": len(emitted), "gaps": missing(cursors),
            "pending": hub.outbox.pending_count(), "consumer": dict(consumer.stats),
            "hub": dict(hub.client.stats), "counts": hub.counts}
        assert [e.seq for e in delivered] == [e.seq for e in emitted]
        placed = [e for e in emitted if e.kind == "cell" and e.action == "placed"]
        assert len(placed) >= len(on_table)
    finally:
        hub.stop()
        consumer.stop()

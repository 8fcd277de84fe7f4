"""A tag that carries its card id (hardware/tags.md) is known to the hub without its tag map;
the tag map still wins, and text that is no card id is no card."""

from __future__ import annotations

from pathlib import Path

from test_hub_service import Consumer, make_hub
from waiting import wait_for

from hub.backends.sim import SimulatedTable
from hub.tagmap import TagMap


def test_the_card_id_in_the_tag_names_the_card_when_the_tag_map_does_not(
        mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    consumer = Consumer(mqtt_broker, table_id)
    sim = SimulatedTable()
    tagmap = TagMap(tags={"04000000000003": "red-a-1"})
    pad = sim.layout.pad_reader(0)
    for uid, text in (("04000000000001", "blue-a-4"), ("04000000000002", "hello"),
                      ("04000000000003", "green-a-2")):
        sim.place(pad, uid=uid)
        sim.write_tag(pad, text)
        sim.remove(pad)
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o.sqlite", sim, tagmap)
    try:
        for uid in ("04000000000001", "04000000000002", "04000000000003"):
            sim.place(pad, uid=uid)

            def read(u: str = uid) -> bool:
                return hub.backend.state()[pad] == u

            wait_for(read)
            sim.remove(pad)
            wait_for(lambda: hub.backend.state()[pad] is None)
        wait_for(lambda: len(consumer.delivered) == 6)
        placed = [(e.kind, e.card_id) for e in consumer.delivered if e.action == "placed"]
        assert placed == [("pad", "blue-a-4"), ("unknown_tag", None), ("pad", "red-a-1")]
    finally:
        hub.stop()
        consumer.stop()

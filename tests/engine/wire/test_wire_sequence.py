"""HubCursor: exactly once, in order, gaps reported (the engine service's one sequencer)."""

from __future__ import annotations

from engine.wire.contract import HubEvent
from engine.wire.sequence import HubCursor


def ev(seq: int, epoch: str = "e1", hub: str = "h") -> HubEvent:
    return HubEvent(hub_id=hub, epoch=epoch, seq=seq, ts=0, kind="button", action="pressed",
                    button="undo")


def drain(cursor: HubCursor) -> list[int]:
    out = []
    while (ready := cursor.pop_next()) is not None:
        out.append(ready.seq)
    return out


def test_duplicates_dropped_and_order_restored() -> None:
    cursor = HubCursor.starting_at(ev(1))
    out, duplicates = [], 0
    for n in [1, 2, 2, 4, 5, 1, 3, 5, 6]:
        if not cursor.offer(ev(n)):
            duplicates += 1
        out += drain(cursor)
    assert out == [1, 2, 3, 4, 5, 6]
    assert duplicates == 3
    assert cursor.gap() is None


def test_gap_reported_until_filled_or_skipped() -> None:
    cursor = HubCursor.starting_at(ev(1))
    cursor.offer(ev(1))
    assert drain(cursor) == [1]
    cursor.offer(ev(4))
    assert drain(cursor) == [] and cursor.gap() == (2, 3)
    cursor.offer(ev(2))
    assert drain(cursor) == [2] and cursor.gap() == (3, 3)
    cursor.offer(ev(3))
    assert drain(cursor) == [3, 4] and cursor.gap() is None
    cursor.offer(ev(9))
    cursor.skip_gap()  # the hub no longer has 5..8
    assert drain(cursor) == [9] and cursor.last == 9


def test_a_lost_last_event_shows_through_the_snapshot_and_a_new_epoch_starts_over() -> None:
    cursors: dict[str, HubCursor] = {}
    assert [e.seq for e in HubCursor.of(cursors, ev(1)).feed(ev(1))] == [1]
    cursors["h"].expect(3)  # the retained snapshot: 2 and 3 exist
    assert cursors["h"].gap() == (2, 3)
    fresh = HubCursor.of(cursors, ev(1, epoch="e2"))  # the hub's outbox was reset
    assert fresh is cursors["h"] and fresh.epoch == "e2" and fresh.feed(ev(1, "e2"))


def test_restored_position_drops_what_was_handled() -> None:
    cursor = HubCursor("e1", 10)  # after a restart: up to 10 were handled
    assert not cursor.offer(ev(10))
    assert cursor.offer(ev(11)) and drain(cursor) == [11]

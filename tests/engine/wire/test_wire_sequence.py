"""EventSequencer: exactly once, in order, gaps reported."""

from __future__ import annotations

from engine.wire.contract import HubEvent
from engine.wire.sequence import EventSequencer


def ev(seq: int, epoch: str = "e1", hub: str = "h") -> HubEvent:
    return HubEvent(hub_id=hub, epoch=epoch, seq=seq, ts=0, kind="button", action="pressed",
                    button="undo")


def test_duplicates_dropped_and_order_restored() -> None:
    seq = EventSequencer()
    out = []
    for n in [1, 2, 2, 4, 5, 1, 3, 5, 6]:
        out += [e.seq for e in seq.feed(ev(n))]
    assert out == [1, 2, 3, 4, 5, 6]
    assert seq.duplicates == 3
    assert seq.missing() == {}


def test_gap_reported_until_filled_and_last_event_loss_seen_via_expect() -> None:
    seq = EventSequencer()
    assert [e.seq for e in seq.feed(ev(1))] == [1]
    assert seq.feed(ev(4)) == []
    assert seq.missing() == {"h": ("e1", 2, 3)}
    seq.feed(ev(2))
    assert [e.seq for e in seq.feed(ev(3))] == [3, 4]
    seq.expect("h", "e1", 6)
    assert seq.missing() == {"h": ("e1", 5, 6)}


def test_new_epoch_and_restore() -> None:
    seq = EventSequencer()
    seq.restore("h", "e1", 10)
    assert seq.feed(ev(10)) == []
    assert [e.seq for e in seq.feed(ev(11))] == [11]
    assert [e.seq for e in seq.feed(ev(1, epoch="e2"))] == [1]
    assert seq.last_seq("h") == ("e2", 1)

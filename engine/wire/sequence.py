"""Where one hub's event stream stands, for a consumer: exactly once and in order.

QoS 1 and the hub's outbox give *at least once*; an event may come twice (a resend after a
reconnect, a replay) or, after a broker restart, be missing until the hub replays it.
A `HubCursor` per hub (and table) turns that stream back into exactly-once, in-order
events; the engine service keeps one per hub and asks ``hub/cmd/replay`` for its gaps::

    cursors: dict[str, HubCursor] = {}               # hub id -> its cursor
    cursor = HubCursor.of(cursors, event)            # a new one at a hub's new epoch
    for ready in cursor.feed(event):                 # 0..n events now in order
        apply(ready)
    cursor.expect(snapshot.last_seq)                 # the retained hub/snapshot's word
    cursor.gap()                                     # (first, last) missing, or None

A new ``epoch`` from a hub (its outbox was reset) starts a new cursor at the event's seq.
``feed`` is ``offer`` (False: a duplicate) then ``pop_next`` until the next is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.wire.contract import HubEvent


@dataclass
class HubCursor:
    """Dedup by ``(epoch, seq)`` and reorder one hub's events. Not thread-safe."""

    epoch: str
    last: int  # highest seq handed out in order
    pending: dict[int, HubEvent] = field(default_factory=dict)
    gap_since: float | None = None  # when the open gap was first seen (engine service)
    asked: int = 0  # highest seq already asked again
    retried: bool = False  # the open gap was asked a second time
    announced: int = 0  # highest seq the hub says exists (its snapshot)

    @classmethod
    def starting_at(cls, event: HubEvent) -> HubCursor:
        """A cursor for a hub seen for the first time (or in a new epoch) at `event`."""
        return cls(event.epoch, event.seq - 1)

    @classmethod
    def of(cls, cursors: dict[str, HubCursor], event: HubEvent) -> HubCursor:
        """The cursor of `event`'s hub in `cursors`; a new one (kept there) at first sight
        of the hub or when its outbox started a new epoch."""
        cursor = cursors.get(event.hub_id)
        if cursor is None or cursor.epoch != event.epoch:
            cursor = cursors[event.hub_id] = cls.starting_at(event)
        return cursor

    def feed(self, event: HubEvent) -> list[HubEvent]:
        """Take one received event; return the events now in order (none for a duplicate)."""
        if not self.offer(event):
            return []
        out = []
        while (ready := self.pop_next()) is not None:
            out.append(ready)
        return out

    def expect(self, last_seq: int) -> None:
        """The hub says events up to `last_seq` exist: a lost last event shows as a gap."""
        self.announced = max(self.announced, last_seq)

    def offer(self, event: HubEvent) -> bool:
        """Keep `event` until its turn; False when it was already seen (a duplicate)."""
        if event.seq <= self.last or event.seq in self.pending:
            return False
        self.pending[event.seq] = event
        return True

    def pop_next(self) -> HubEvent | None:
        """The next event in order, if it has come."""
        event = self.pending.pop(self.last + 1, None)
        if event is not None:
            self.last += 1
        return event

    def gap(self) -> tuple[int, int] | None:
        """The seqs missing before the first one kept, ``(first, last)``, or None."""
        if self.pending:
            return self.last + 1, min(self.pending) - 1
        return (self.last + 1, self.announced) if self.announced > self.last else None

    def skip_gap(self) -> None:
        """Give up on the missing events (the hub no longer has them)."""
        if self.pending:
            self.last = min(self.pending) - 1

"""Delivering hub events exactly once and in order on the consumer side.

QoS 1 and the hub's outbox give *at least once*; an event may come twice (a resend after a
reconnect, a replay) or, after a broker restart, be missing until the hub replays it.
`EventSequencer` turns that stream back into exactly-once, in-order events per hub::

    seq = EventSequencer()
    for event in seq.feed(incoming):      # 0..n events now in order
        apply(event)
    if seq.missing():                     # gaps to ask the hub for: hub/cmd/replay
        ...

It keeps state per hub id. A new ``epoch`` from a hub (its outbox was reset) starts that hub
afresh at the event's seq. ``expect(hub, epoch, last_seq)`` tells it about events beyond the
last one received (from the retained ``hub/snapshot``), so a lost *last* event shows as a gap.
A consumer that persists its progress restores it with ``restore(hub, epoch, last_seq)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.wire.contract import HubEvent


@dataclass
class _HubStream:
    epoch: str
    delivered: int  # highest seq handed out in order
    pending: dict[int, HubEvent] = field(default_factory=dict)
    announced: int = 0  # highest seq the hub says exists


class EventSequencer:
    """Dedup by ``(epoch, seq)`` and reorder per hub. Not thread-safe: feed from one thread."""

    def __init__(self, max_pending: int = 10_000) -> None:
        self._hubs: dict[str, _HubStream] = {}
        self.max_pending = max_pending
        self.duplicates = 0

    def restore(self, hub_id: str, epoch: str, last_seq: int) -> None:
        """Resume after a restart: events up to ``last_seq`` were already handled."""
        self._hubs[hub_id] = _HubStream(epoch, last_seq, announced=last_seq)

    def last_seq(self, hub_id: str) -> tuple[str, int] | None:
        stream = self._hubs.get(hub_id)
        return None if stream is None else (stream.epoch, stream.delivered)

    def feed(self, event: HubEvent) -> list[HubEvent]:
        """Take one received event; return the events now deliverable, in seq order."""
        stream = self._hubs.get(event.hub_id)
        if stream is None or stream.epoch != event.epoch:
            # First sight of this hub, or its outbox restarted: begin where it is.
            stream = _HubStream(event.epoch, event.seq - 1)
            self._hubs[event.hub_id] = stream
        if event.seq <= stream.delivered or event.seq in stream.pending:
            self.duplicates += 1
            return []
        stream.pending[event.seq] = event
        stream.announced = max(stream.announced, event.seq)
        if len(stream.pending) > self.max_pending:
            # A gap the hub can no longer fill: skip it rather than stall forever.
            stream.delivered = min(stream.pending) - 1
        out: list[HubEvent] = []
        while stream.delivered + 1 in stream.pending:
            stream.delivered += 1
            out.append(stream.pending.pop(stream.delivered))
        return out

    def expect(self, hub_id: str, epoch: str, last_seq: int) -> None:
        """The hub says events up to ``last_seq`` exist (retained snapshot)."""
        stream = self._hubs.get(hub_id)
        if stream is None or stream.epoch != epoch:
            return
        stream.announced = max(stream.announced, last_seq)

    def missing(self, hub_id: str | None = None) -> dict[str, tuple[str, int, int]]:
        """Gaps per hub: ``{hub_id: (epoch, from_seq, to_seq)}`` (inclusive)."""
        gaps: dict[str, tuple[str, int, int]] = {}
        for hid, stream in self._hubs.items():
            if hub_id is not None and hid != hub_id:
                continue
            if stream.announced > stream.delivered:
                first = stream.delivered + 1
                upto = (min(stream.pending) - 1) if stream.pending else stream.announced
                gaps[hid] = (stream.epoch, first, upto)
        return gaps

"""Ingesting hub events and snapshots: the table's hub key and registered hub, dedup by
``(epoch, seq)``, events put back in order (gaps asked again with ``hub/cmd/replay``, never
skipped), each event through the table's interpreter, a snapshot resynchronising a hub not
followed from its start."""

from __future__ import annotations

import json
import logging
import time

from engine.games.base import Changes, Outcome
from engine.service.errors import StoreError
from engine.service.persistence import Persistence
from engine.service.runtime import TableRuntime, write_trouble
from engine.service.store import sensor_input, snapshot_state
from engine.wire import api
from engine.wire.api import ReplayArgs
from engine.wire.auth import hub_mac_ok
from engine.wire.contract import HubEvent, HubSnapshot, WireModel
from engine.wire.sequence import HubCursor

log = logging.getLogger("cauldron.engine")
# A gap larger than any hub outbox keeps (hub.outbox.Outbox keep=20,000) cannot be filled.
MAX_GAP = 20_000

MAX_PENDING = 1_000  # out-of-order events held per hub while a gap is filled


def _renamed(runtime: TableRuntime, model: HubSnapshot, cursor: HubCursor) -> bool:
    """The hub's tag map changed under the cards lying on the table (a card enrolled or
    re-enrolled, a map replaced): caught up with its events, the same readers hold cards
    but under other names than the engine believes. No event says so: only a snapshot."""
    if model.last_seq != cursor.last or cursor.pending:
        return False  # events in flight may explain any difference
    return runtime.interp.differs(snapshot_state(model))


class HubIntake(Persistence):
    """Hub events and snapshots in, in order, once."""

    def _forget_requests(self) -> None:
        """A replay asked before this (re)connection may have been lost with the broker:
        let the hub's next snapshot (retained, so it comes now) ask for it again."""
        with self._lock:
            for runtime in self.tables.values():
                for cursor in runtime.cursors.values():
                    cursor.asked = min(cursor.asked, cursor.last)

    def _hub_signed(self, table: str, model: HubEvent | HubSnapshot) -> bool:
        """A valid MAC of the table's hub key, for the hub that key was made for."""
        key = self._key(table, "hub")
        ok = key is not None and hub_mac_ok(model, table, key.key)  # one MAC per message
        if not ok:
            key = self._key(table, "hub", reload=True)  # a hub enrolled since
            ok = key is not None and hub_mac_ok(model, table, key.key)
        if key is None:
            self.stats["forged"] += 1
            self._log_bounded("nokey", "refused hub message on table %s: no hub key for it in "
                              "%s (start the hub once there, or copy its key file)", table,
                              self.config.keys)
            return False
        if not ok or model.hub_id != key.hub_id:
            self.stats["forged"] += 1
            self._log_bounded("forged", "refused hub message on table %s from %r: no valid MAC "
                              "of the table's hub key", table, model.hub_id[:64])
            return False
        return True

    def _hub_registered(self, table: str, model: HubEvent | HubSnapshot) -> bool:
        """From the table's registered hub; a first hub is registered, another one waits
        for the host to confirm it (a replaced Pi, or a stolen key)."""
        runtime = self.table(table)
        registered = self._registered_hub(runtime)
        if registered is None:
            self._register_hub(runtime, model.hub_id)
        elif registered != model.hub_id:
            self.stats["forged"] += 1
            if runtime.pending_hub != model.hub_id:
                runtime.pending_hub = model.hub_id
                self._degrade(runtime, f"hub {model.hub_id} wants to serve this table in place "
                              f"of {registered}; its events wait until the host accepts it "
                              "(POST /api/host/hub/confirm with its hub_id, or cmd/confirm "
                              f'{{"hub_id": "{model.hub_id}"}})')
            return False
        cursor = runtime.cursors.get(model.hub_id)
        if cursor is not None and cursor.epoch != model.epoch and runtime.name in self._staged:
            self._flush()  # the log is asked below: what this batch staged goes first
        if cursor is not None and cursor.epoch != model.epoch and (
                (model.hub_id, model.epoch) in runtime.old_epochs
                or runtime.store.epoch_seen(model.hub_id, model.epoch)):
            # An outbox epoch is never resumed once left (its file was reset): a signed
            # message of an older one is a replay. Checked against the log, so a restart
            # of the engine does not forget it.
            runtime.old_epochs.add((model.hub_id, model.epoch))
            self.stats["replayed"] = self.stats.get("replayed", 0) + 1
            self._log_bounded("old_epoch", "table %s: refused a message of hub %s from its "
                              "old outbox epoch %s (it is at %s now): a replay", table,
                              model.hub_id, model.epoch, cursor.epoch)
            return False
        return True

    def _register_hub(self, runtime: TableRuntime, hub_id: str) -> None:
        from engine.wire.auth import write_private

        write_private(self._hubs_file(runtime.name), json.dumps({"hub_id": hub_id}).encode())
        runtime.registered_hub = hub_id
        log.info("table %s: hub %s registered", runtime.name, hub_id)
        if runtime.pending_hub is not None:
            runtime.pending_hub = None
            self._heal(runtime)

    def _on_hub_event(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, HubEvent):
            return
        table = topic.split("/")[-3]  # <base>/<table>/hub/{event,snapshot}: checked already
        with self._lock:
            if not self.serves(table):  # another engine's (or shard's) table
                self.stats["ignored_tables"] += 1
                return
            if not self.configured(table):
                self._refuse_table(table, "hub event")
                return
            if not self._hub_signed(table, model) or self.open_table(table) is None \
                    or not self._hub_registered(table, model):
                return
            self.receive(table, model)

    def receive(self, table: str, event: HubEvent) -> list[Outcome]:
        """One received hub event: dedup, reorder, handle what is now in order."""
        with self._lock:
            return self._receive(table, event)

    def _receive(self, table: str, event: HubEvent) -> list[Outcome]:
        runtime = self.table(table)
        # First sight of this hub, or its outbox started a new epoch: begin here.
        cursor = HubCursor.of(runtime.cursors, event)
        if event.seq <= cursor.last:
            self.stats["duplicates"] += 1
            self._refusals.info("duplicate", "table %s: dropped duplicate event %s/%s", table,
                                event.epoch, event.seq)
            return []
        if event.seq in cursor.pending:  # held back (out of order, or its write failed)
            self.stats["duplicates"] += 1
            return self._drain(runtime, event.hub_id, cursor)
        if event.seq - cursor.last > MAX_GAP:
            # More than any outbox keeps: the events between cannot come back. Never move
            # the cursor on the strength of one event: say so and wait for the host.
            self.stats["gaps_refused"] += 1
            self._degrade(runtime, f"hub {event.hub_id} sent event {event.seq} but the last "
                          f"one followed is {cursor.last}: more than any hub outbox keeps, so "
                          "the events between are lost; restart the hub with a new outbox "
                          "(its snapshot then resynchronises the table)")
            return []
        if event.seq != cursor.last + 1:
            self.stats["reordered"] += 1
            if len(cursor.pending) >= MAX_PENDING:  # the replay fills the rest in order
                return []
        cursor.offer(event)
        return self._drain(runtime, event.hub_id, cursor)

    def _drain(self, runtime: TableRuntime, hub_id: str, cursor: HubCursor) -> list[Outcome]:
        outcomes: list[Outcome] = []
        while True:
            while cursor.last + 1 in cursor.pending:
                ready = cursor.pop_next()
                assert ready is not None
                outcome = self._process(runtime, ready)
                if cursor.last < ready.seq:  # not stored: kept for the retry tick
                    return outcomes
                if outcome is not None:
                    outcomes.append(outcome)
            if not cursor.pending:
                cursor.gap_since = None
                cursor.retried = False
                return outcomes
            now = time.monotonic()
            if cursor.gap_since is None:
                cursor.gap_since = now
            first_pending = min(cursor.pending)
            if cursor.asked < first_pending - 1:
                cursor.asked = first_pending - 1
                self._ask_replay(runtime, cursor, cursor.last + 1, first_pending - 1)
            if now - cursor.gap_since >= self.config.gap_timeout:
                # The request or its answer may have been lost: ask again (the tick does
                # this too, with no new event). A gap is never skipped.
                if not cursor.retried:
                    log.warning("table %s: events %s..%s of hub %s are late; asked again",
                                runtime.name, cursor.last + 1, first_pending - 1, hub_id)
                cursor.retried = True
                cursor.gap_since = now
                self._ask_replay(runtime, cursor, cursor.last + 1, first_pending - 1)
            return outcomes

    def _ask_replay(self, runtime: TableRuntime, cursor: HubCursor, first: int,
                    last: int | None) -> None:
        self._hub_command(runtime, api.REPLAY,
                          ReplayArgs(epoch=cursor.epoch, from_seq=first, to_seq=last))

    def _on_snapshot(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, HubSnapshot):
            return
        table = topic.split("/")[-3]  # <base>/<table>/hub/{event,snapshot}: checked already
        with self._lock:
            if not self._hub_signed(table, model):
                return
            if self.ownership is not None and len(self._snapshots) < 100_000:
                self._snapshots[table] = model  # what to resume from if we claim it later
            if not self.serves(table):
                return
            if not self.configured(table):
                self._refuse_table(table, "hub snapshot")
                return
            if self.open_table(table) is None or not self._hub_registered(table, model):
                return
            self._snapshot(table, model)

    def _snapshot(self, table: str, model: HubSnapshot) -> None:
        self._flush()  # the events before it are stored (and its cursors are theirs)
        runtime = self.table(table)
        runtime.hub_capabilities = frozenset(model.capabilities)
        cursor = runtime.cursors.get(model.hub_id)
        if (cursor is None or cursor.epoch != model.epoch or _renamed(runtime, model, cursor)
                or (runtime.resync_next and model.last_seq >= cursor.last)):
            # A hub not followed from its start (a new engine, a reset outbox), its tag map
            # changed under cards lying on the grid, or the table switched games: take what
            # its readers see now, then follow its events from there.
            interp = runtime.interp
            outcome = interp.resync(snapshot_state(model), model.pawns, model.ts)
            try:
                runtime.store.append_snapshot(model, interp)
            except StoreError as exc:
                self.stats["store_failures"] += 1
                runtime.reload()
                self._degrade(runtime, write_trouble(exc))
                return  # the hub's next snapshot (every few seconds) comes again
            runtime.cursors[model.hub_id] = HubCursor(model.epoch, model.last_seq)
            runtime.resync_next = False
            self.stats["resyncs"] = self.stats.get("resyncs", 0) + 1
            self.publish_views(runtime, outcome)
            return
        now = time.monotonic()
        if model.last_seq > max(cursor.last, cursor.asked, max(cursor.pending, default=0)) or (
                model.last_seq > cursor.last and not cursor.pending
                and now - runtime.replay_asked >= self.config.gap_timeout):
            # (asked before, yet still behind: that replay was lost, e.g. while this engine's
            # lease had lapsed; ask again rather than wait for ever)
            cursor.asked = model.last_seq
            runtime.replay_asked = now
            self._ask_replay(runtime, cursor, cursor.last + 1, model.last_seq)

    def _process(self, runtime: TableRuntime, event: HubEvent) -> Outcome | None:
        inp = sensor_input(event)
        try:
            runtime.fresh()
            interp = runtime.interp
            outcome: Outcome = interp.sense(inp) if inp is not None else Changes()
            if self._batching:  # written (and published) at the batch's end
                self._stage(runtime, event, outcome, inp is not None)
                return outcome
            written = runtime.store.append(ts=event.ts, interp=interp, actions=outcome.actions,
                                           hub_event=event, undone=outcome.undone)
        except StoreError as exc:
            # Not written: forget it here too (the log is the truth), keep the event and
            # retry on the tick (no new event needed); the table is degraded meanwhile.
            if runtime.name in self._staged:  # the log first gets what came before it
                self._flush()
            self.stats["store_failures"] += 1
            log.error("table %s: event %s/%s not stored: %s", runtime.name, event.epoch,
                      event.seq, exc)
            runtime.reload()
            cursor = runtime.cursors.get(event.hub_id)
            if cursor is not None and cursor.epoch == event.epoch:
                cursor.last = min(cursor.last, event.seq - 1)
                cursor.pending[event.seq] = event
            self._degrade(runtime, write_trouble(exc))
            return None
        except Exception:
            if runtime.name in self._staged:  # the log first gets what came before it
                self._flush()
            self.stats["errors"] += 1
            log.exception("table %s: event %s/%s failed; state rebuilt from the log",
                          runtime.name, event.epoch, event.seq)
            runtime.reload()
            return None
        if not written:  # stored before (a copy that outlived a restart)
            self.stats["duplicates"] += 1
            runtime.reload()
            return None
        self.stats["events"] += 1
        if runtime.degraded is not None and runtime.degraded.startswith("cannot write"):
            self._heal(runtime)
        if inp is not None:
            self.publish_views(runtime, outcome)
        return outcome

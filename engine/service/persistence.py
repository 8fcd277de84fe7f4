"""Persistence: each table's log opened (and closed when idle), hub events staged and
written in one transaction per batch (group commit: `_flush`, then published, then
acknowledged by the dispatcher), a batch that cannot be stored handled again one by one, and
commands written with their transaction id before anything is published."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import JsonValue

from engine.games.base import Outcome, Refused
from engine.service.errors import StoreError
from engine.service.publishing import Publishing
from engine.service.runtime import Staged, TableRuntime, write_trouble
from engine.service.store import PreparedInput, TableLog
from engine.wire.contract import HubEvent, Topics
from engine.wire.sequence import HubCursor

log = logging.getLogger("cauldron.engine")


class Persistence(Publishing):
    """The tables' logs: opened, written (group commit), closed."""

    def table(self, name: str) -> TableRuntime:
        runtime = self.tables.get(name)
        if runtime is None:
            self._close_least_used(keep=self.config.max_open_logs - 1)
            runtime = TableRuntime(name, self.store.table(name),
                                   reopen=lambda: self.store.table(name))
            runtime.topics = Topics(name, self.config.base)
            runtime.turn = runtime.interp.turn
            self.tables[name] = runtime
            if self.client.connected:
                self._publish(runtime.topics.engine_state,
                              self._state("online", runtime.topics), retain=True)
        return runtime

    def open_table(self, name: str) -> TableRuntime | None:
        """The table's runtime, or None when its log cannot be opened for writing (a
        read-only or full disk): the table is then shown ``degraded`` with that reason,
        its refusals say so, and the tick tries again."""
        try:
            runtime = self.table(name)
        except StoreError as exc:
            why = write_trouble(exc)
            if "(" not in why.split(":")[0]:
                raise  # not a disk's trouble: a damaged log
            if self.unopened.get(name) != why:
                self.unopened[name] = why
                log.error("table %s degraded: %s", name, why)
                if self.client.connected:
                    self._publish(Topics(name, self.config.base).engine_state,
                                  self._state("online", Topics(name, self.config.base), why),
                                  retain=True)
            return None
        if self.unopened.pop(name, None) is not None:
            log.warning("table %s healed: its log opens again", name)
            self._republish(runtime)
        return runtime

    def _close_least_used(self, keep: int) -> None:
        """Close the least recently used logs until at most `keep` are open."""
        open_ = sorted((rt for rt in self.tables.values()
                        if rt.is_open and rt.name not in self._staged), key=lambda r: r.used)
        for runtime in open_[:max(0, len(open_) - max(keep, 0))]:
            runtime.close()

    def _begin_batch(self) -> None:
        self._lock.acquire()
        self._batching = True

    def _end_batch(self) -> None:
        try:
            self._flush()
        finally:
            self._batching = False
            self._lock.release()

    def _stage(self, runtime: TableRuntime, event: HubEvent, outcome: Outcome,
               interpreted: bool) -> None:
        """Keep a handled hub event's rows for the batch's one transaction (`_flush`)."""
        prepared = runtime.store.prepare(ts=event.ts, interp=runtime.interp,
                                         actions=outcome.actions, hub_event=event,
                                         undone=outcome.undone)
        staged = self._staged.get(runtime.name)
        if staged is None:
            staged = self._staged[runtime.name] = Staged(runtime)
        staged.start.setdefault(event.hub_id, (event.epoch, event.seq - 1))
        staged.events.append(event)
        staged.inputs.append(prepared)
        if interpreted:
            staged.outcomes.append((outcome, self._game_events(runtime, outcome, self.clock())))

    def _flush(self) -> None:
        """Write every staged event (one transaction: SQLite per table file, PostgreSQL all
        of them in one round trip), then publish what they changed, once per table. Before
        any other write (a command, a snapshot) too, so the log keeps the order of arrival.
        A table whose batch was not stored is rolled back and its events are handled again
        one by one (a duplicate, a lost claim, a full disk: that path says which)."""
        if not self._staged:
            return
        staged, self._staged = self._staged, {}
        batches: list[tuple[TableLog, list[PreparedInput]]] = []
        failed: set[str] = set()
        for name, table in staged.items():
            try:
                batches.append((table.runtime.store, table.inputs))
            except StoreError:  # handed over meanwhile
                failed.add(name)
        failed |= self.store.append_batches(batches)
        for name, table in staged.items():
            if name not in failed:
                self.stats["events"] += len(table.events)
                self.stats["group_commits"] = self.stats.get("group_commits", 0) + 1
                runtime = table.runtime
                if runtime.degraded is not None and runtime.degraded.startswith("cannot write"):
                    self._heal(runtime)
                self._publish_staged(table)
        batching, self._batching = self._batching, False
        try:
            for name in failed:
                self._unstage(staged[name])
        finally:
            self._batching = batching

    def _unstage(self, staged: Staged) -> None:
        """A batch not stored: the table as its log says, its events again one by one."""
        self.stats["group_retries"] = self.stats.get("group_retries", 0) + 1
        runtime = staged.runtime
        runtime.reload()
        for hub, (epoch, before) in staged.start.items():
            cursor = runtime.cursors.get(hub)
            if cursor is None or cursor.epoch != epoch:
                runtime.cursors[hub] = HubCursor(epoch, before)
            else:
                cursor.last = min(cursor.last, before)
        for event in staged.events:
            cursor = HubCursor.of(runtime.cursors, event)
            if event.seq > cursor.last:
                cursor.pending[event.seq] = event
                self._drain(runtime, event.hub_id, cursor)

    def _store_command(self, runtime: TableRuntime, ts: float, outcome: Outcome, verb: str,
                       args: dict[str, JsonValue], seat: int | None,
                       observed: dict[str, Any] | None, answer: dict[str, JsonValue]) -> bool:
        """Write a command (with its transaction id and answer) before anything is
        published; not written, it did not happen: the game goes back to what the log
        says. False: its transaction id was stored already (nothing written)."""
        try:
            return runtime.store.append(ts=ts, interp=runtime.interp, actions=outcome.actions,
                                        verb=verb, args=args, seat=seat, observed=observed,
                                        undone=outcome.undone,
                                        transaction=runtime.transaction, answer=answer)
        except StoreError as exc:
            self.stats["store_failures"] += 1
            log.error("table %s: %s not stored: %s", runtime.name, verb, exc)
            runtime.reload()
            self._degrade(runtime, write_trouble(exc))
            raise Refused(f"{verb}: not stored, so nothing changed ({exc}); try again in a "
                          "moment", code="storage") from None

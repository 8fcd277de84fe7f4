"""`cauldron engine`: many tables' games from their hubs' events, over MQTT, nothing lost.

Per table (``cauldron/<table>/…``) it subscribes to ``hub/event`` (QoS 1), accepts only
events and snapshots of the table's registered hub with a valid MAC (`engine.wire.auth`;
a new hub id waits for the host's ``confirm {"hub_id"}``), drops duplicates by
``(epoch, seq)`` and puts reordered events back in order (a gap is asked again from the
hub with ``hub/cmd/replay`` until it is filled, never skipped; a gap larger than any outbox
keeps is refused and shown as ``degraded``), feeds the table's
`TableInterpreter`, writes the input and its actions to the table's log (`engine.service.store`)
*before* publishing anything (what the dispatcher hands over together is written in one
transaction, a group commit, and acknowledged after it: `_flush`), then publishes:

- ``game/public`` (retained): `GamePublic`, the public view plus the table state;
- ``game/seat/<n>`` (retained): `GameSeat`, what only that seat may see (its colour,
  recipes, own stack with the memory aid), published when it changes; a Perluceo reveal goes
  once, not retained, as the view's ``reveal``;
- ``game/alert``: `GameAlert` raised (``active``) and cleared (same ``alert_id``);
- ``game/events`` (QoS 1, not retained): `GameEvents`, the actions just applied and their
  public events (config and dealt grid when a game starts): what a person at the table
  sees happen, for bots and audit; published before the views it leads to;
- ``hub/cmd/turn`` ``{"seat"}`` when the turn changes, ``hub/cmd/buzz`` ``{"ms"}`` on an error
  alert (the hub's LEDs and buzzer); ``hub/cmd/layout`` after an undo, a game's end or
  start, to a hub whose back-end lays its table out itself (capability ``lay_out``);
- ``engine/state`` (retained) ``online``; the MQTT last will says ``offline`` (on the one
  table's topic, or on ``cauldron/<name>/engine/state`` when serving several tables, which
  each table's ``engine/state`` then names as its ``liveness_topic``).

Commands ``cmd/<verb>`` (`engine.wire.api.GAME_API`: each verb's args and result; one
handler each in `EngineService.handlers`, built from that map): ``new_game`` (the engine
deals the recipe cards itself, so no seat's recipes cross the broker), ``confirm``,
``undo``, ``keep``, ``discard``, ``declinatio``, ``end``, and the read-only ``hint`` and
``history``. Each must carry a ``deadline`` and be
signed with the table's command key (`engine.wire.auth`); an expired, unsigned, forged or
replayed one is refused and never runs. The answer is ``{transaction, status, data, error,
code, rule}``; a command that does not fit the moment is refused with a reason and changes
nothing.

Only configured tables are served: those named in ``tables``, or with a key in the keys
dir, or a stored log. Anything else is refused and logged at a bounded rate, and at most
``max_open_logs`` logs are open (idle ones are closed). A log that cannot be written makes
the table ``degraded`` (with the reason, on ``engine/state``); the engine retries on a timer
and resumes without loss. Every table is handled on the MQTT client's single dispatcher
thread (and the retry timer, under the same lock).
An engine that does not serve the table (another shard, another engine's table at a venue,
an id not in the venue's list) sends no answer at all, so each command gets exactly one;
with a PostgreSQL store, tables come and go as this engine claims and hands them over
(`engine.service.ownership`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from engine.service.commands import Commands
from engine.service.errors import ServiceError
from engine.service.runtime import Asking, ServiceConfig
from engine.wire import api
from engine.wire.api import GAME_API, Bound, handler_map
from engine.wire.contract import ServiceState, Topics, WireModel

__all__ = ["EngineService", "ServiceConfig"]
log = logging.getLogger("cauldron.engine")


class EngineService(Commands):
    """The engine service for every table this process serves."""

    def __init__(self, config: ServiceConfig, clock: Callable[[], float] = time.time) -> None:
        super().__init__(config, clock)
        self.handlers: dict[str, Bound[Asking]] = handler_map(GAME_API, [
            api.NEW_GAME.bind(self._cmd_new_game), api.HINT.bind(self._cmd_hint),
            api.HISTORY.bind(self._cmd_history), api.CONFIRM.bind(self._cmd_confirm),
            *(c.bind(self._cmd_game)
              for c in (api.UNDO, api.KEEP, api.DISCARD, api.DECLINATIO, api.END, api.PLAY)),
        ])

    def load(self) -> None:
        """Rebuild every open game of the tables this process serves, from their logs
        (with a shared store, tables come as they are claimed instead; at most
        `max_open_logs` stay open: start-up never runs out of files)."""
        if self.store.claims:
            return
        for table in self.store.tables():
            if not self.serves(table):
                continue
            try:
                self.open_table(table)
            except ServiceError as exc:  # one damaged log must not stop a venue
                self.stats["errors"] += 1
                self.broken[table] = str(exc)
                log.error("table %s is not served: its log does not replay: %s", table, exc)

    def start(self, wait: float | None = 10.0) -> EngineService:
        self.load()
        any_table = Topics("+", self.config.base)
        self.client.subscribe(any_table.hub_event, self._on_hub_event)
        self.client.subscribe(any_table.hub_snapshot, self._on_snapshot)
        self.client.subscribe(any_table.engine_state, self._on_engine_state)
        self.client.serve(any_table.cmd("+"), self._on_command)
        self.client.add_connect_hook(self._republish_all)
        self.client.add_connect_hook(self._forget_requests)
        self.client.set_batch(self._begin_batch, self._end_batch)
        self.client.start(wait=wait)
        if wait is not None:  # hub events and commands are heard from here on
            self.client.wait_ready(wait)
        self._start_ownership()
        self._ticker = threading.Thread(target=self._tick_loop, name="engine-tick", daemon=True)
        self._ticker.start()
        return self

    def stop(self) -> None:
        if self.ownership is not None:  # hand every table over before going
            self.ownership.stop()
        if self.client.connected:
            for runtime in self.tables.values():
                self._publish(runtime.topics.engine_state,
                              self._state("offline", runtime.topics), retain=True)
        self._stopped.set()
        self.client.stop()
        with self._lock:
            for runtime in self.tables.values():
                runtime.close()
        self.store.close()

    def wait(self, timeout: float | None = None) -> bool:
        return self._stopped.wait(timeout)

    def _tick_loop(self) -> None:
        while not self._stopped.wait(self.config.retry_interval):
            try:
                self.tick()
            except Exception:  # the timer must outlive any one table's trouble
                log.exception("engine tick failed")

    def tick(self) -> None:
        """Retry what a degraded log could not write, ask again for late replays, close
        idle logs. Runs on a timer: no new event is needed for a table to heal."""
        now = time.monotonic()
        with self._lock:
            for table in list(self.unopened):  # a disk freed or made writable again
                self.open_table(table)
            for runtime in list(self.tables.values()):
                for hub_id, cursor in list(runtime.cursors.items()):
                    if cursor.last + 1 in cursor.pending or (
                            cursor.pending and cursor.gap_since is not None
                            and now - cursor.gap_since >= self.config.gap_timeout):
                        self._drain(runtime, hub_id, cursor)
                if runtime.is_open and now - runtime.used > self.config.idle_close:
                    runtime.close()

    def _start_ownership(self) -> None:
        from engine.service.ownership import Ownership
        from engine.service.store.postgres import PostgresStore

        if not isinstance(self.store, PostgresStore) or self.ownership is not None:
            return
        self.ownership = Ownership(self.store, self.engine_id, on_claim=self._claimed,
                                   on_release=self._released, on_lost=self._lost,
                                   allowed=self._may_claim,
                                   interval=self.config.claim_interval).start()

    def _may_claim(self, table: str) -> bool:
        """A table this engine may serve: its settings allow it and it holds the table's
        hub key (an engine without it would refuse the table's hub)."""
        return self.config.serves(table) and self._key(table, "hub", reload=True) is not None

    def _claimed(self, table: str) -> None:
        """A table just became ours: its game from the log, what the hubs hold beyond it,
        and its state for everyone watching."""
        with self._lock:
            self.broken.pop(table, None)
            self.tables.pop(table, None)
            try:
                runtime = self.table(table)
            except ServiceError as exc:  # kept (and reported), not bounced
                self.stats["errors"] += 1
                self.broken[table] = str(exc)
                log.error("table %s is not served: its log does not replay: %s", table, exc)
                return
            runtime.turn = None  # tell the hub whose turn it is
            self._republish(runtime)
            for cursor in runtime.cursors.values():  # events the last owner never stored
                self._ask_replay(runtime, cursor, cursor.last + 1, None)
            snapshot = self._snapshots.get(table)
            if snapshot is not None:
                self._snapshot(table, snapshot)
            self.stats["claims"] = self.stats.get("claims", 0) + 1
        log.info("table %s: claimed (%s)", table, runtime.interp.status.value)

    def _released(self, table: str) -> None:
        """A table goes to another engine: stop serving it (before its lock goes)."""
        with self._lock:
            runtime = self.tables.pop(table, None)
            self.broken.pop(table, None)
            if runtime is not None:
                runtime.hand_over()
        log.info("table %s: handed over", table)

    def _lost(self, table: str, why: str) -> None:
        """Given up because this engine cannot reach the database: say so on the table's
        state (its screens show it), rather than leave the last "online" standing. The hub
        keeps every event meanwhile. (Should this land after the "online" of another engine
        that reached the database and claimed the table, that engine says it again:
        `_on_engine_state`.)"""
        fence = self.ownership.claimed_fence(table) if self.ownership is not None else None
        if self.client.connected and fence is not None:
            self._publish(Topics(table, self.config.base).engine_state,
                          self._state("online", Topics(table, self.config.base),
                                      degraded=f"the games' database cannot be reached "
                                      f"({why[:200]}); the table waits for it, and the hub "
                                      "keeps every card seen meanwhile"), retain=True,
                          fence=fence)

    def _on_engine_state(self, topic: str, model: WireModel) -> None:
        """Another process's word on a table this engine serves (an engine that lost the
        database and gave the table up, after this one claimed it): say it again at once,
        so the retained state is always the owner's, unless the word comes from a newer
        claim (then this engine is the stale one). Without claims (no epochs), at most
        once a second."""
        if not isinstance(model, ServiceState) or model.client_id == self.client.client_id:
            return
        table = topic.split("/")[-3]
        with self._lock:
            runtime = self.tables.get(table) if self.serves(table) else None
            if runtime is None:
                return
            mine = self.ownership.fence(table) if self.ownership is not None else None
            if mine is not None and model.fence is not None and model.fence > mine:
                return
            if mine is None and time.monotonic() - runtime.state_said < 1.0:
                return
            runtime.state_said = time.monotonic()
            self._publish(runtime.topics.engine_state,
                          self._state("online", runtime.topics, runtime.degraded, runtime),
                          retain=True)

    def status(self) -> dict[str, Any]:
        return {
            "tables": {
                name: {"status": rt.interp.status.value, "game_id": rt.interp.game_id,
                       "inputs": rt.interp.inputs}
                for name, rt in self.tables.items()
            },
            "stats": dict(self.stats),
        }


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

import dataclasses
import json
import logging
import os
import random
import re
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, JsonValue

from engine import games
from engine.datadir import TROUBLES, text_trouble
from engine.games.base import Refused
from engine.games.glastonbury.rules import GameLog, replay
from engine.games.glastonbury.rules.errors import RulesError
from engine.games.glastonbury.rules.events import Event, PerluceoReveal
from engine.games.glastonbury.table.interpreter import Outcome, Status, TableInterpreter
from engine.games.glastonbury.table.pawn_check import start_positions
from engine.service.errors import ServiceError, StoreError
from engine.service.ownership import speaks_for
from engine.service.store import (
    PreparedInput,
    Store,
    TableLog,
    default_data_dir,
    open_store,
    sensor_input,
    snapshot_state,
)
from engine.wire import api
from engine.wire.api import (
    GAME_API,
    BadArgs,
    Bound,
    Command,
    ConfirmArgs,
    GameAnswer,
    HintAnswer,
    HintArgs,
    HistoryAnswer,
    HubAccepted,
    NewGameBase,
    NoArgs,
    ReplayArgs,
    StoredAnswer,
    TurnArgs,
    dispatch,
    dump,
    handler_map,
)
from engine.wire.auth import (
    CommandGuard,
    TableKey,
    Unauthorised,
    ensure_key,
    hub_mac_ok,
    key_path,
    keys_dir,
    load_key,
    sign_command,
)
from engine.wire.contract import (
    CommandRequest,
    GameAlert,
    GameEvents,
    GamePublic,
    GameSeat,
    HubEvent,
    HubSnapshot,
    Prompt,
    ServiceState,
    TableAlert,
    TopicInfo,
    Topics,
    WireModel,
    encode,
)
from engine.wire.mqtt import CommandRefused, NoAnswer, WireClient
from engine.wire.ratelog import RateLimitedLog
from engine.wire.sequence import HubCursor

if TYPE_CHECKING:
    from engine.service.ownership import Ownership

A = TypeVar("A", bound=BaseModel)
log = logging.getLogger("cauldron.engine")
VERSION = "1"
VIEW_QOS = 0
# `history` answers in messages within `GameEvents`' limits (64 actions, 256 events).
HISTORY_ACTIONS = 64
HISTORY_EVENTS = 256
# A gap larger than any hub outbox keeps (hub.outbox.Outbox keep=20,000) cannot be filled.
MAX_GAP = 20_000
# Commands that change nothing: not stored, so a repeat simply runs again.
READ_ONLY_VERBS = frozenset({"hint", "history"})
MAX_PENDING = 1_000  # out-of-order events held per hub while a gap is filled
# A hub command not run within this is dropped by the hub (an LED or a replay asked long
# ago is stale; the gap is asked again anyway).
HUB_COMMAND_LIFE = 30.0


@dataclass
class ServiceConfig:
    mqtt: str = "mqtt://127.0.0.1:1883"
    data_dir: Path = field(default_factory=default_data_dir)
    tables: frozenset[str] | None = None  # None: every table (subject to the shard)
    shard: tuple[int, int] | None = None  # (i, n): tables whose crc32 % n == i
    name: str = "engine"
    base: str = "cauldron"
    buzz_ms: int = 300
    hub_io: bool = True  # send hub/cmd/turn and hub/cmd/buzz
    gap_timeout: float = 3.0  # then the replay is asked again (never skipped)
    # Where games are kept: None (SQLite in data_dir) or a URL (`open_store`); with
    # postgresql://, tables are claimed by the venue's engines (`engine.service.ownership`).
    store: str | None = None
    claim_interval: float = 1.0
    keys: Path = field(default_factory=keys_dir)  # engine.wire.auth: hub and command keys
    max_open_logs: int = 256
    idle_close: float = 300.0  # seconds without input before a table's log is closed
    retry_interval: float = 2.0  # a degraded table's writes are retried this often
    refusal_log_interval: float = 10.0  # at most one log line per interval per kind

    def serves(self, table: str) -> bool:
        if self.tables is not None and table not in self.tables:
            return False
        if self.shard is not None:
            index, count = self.shard
            return zlib.crc32(table.encode()) % count == index
        return True


def write_trouble(error: object) -> str:
    """Why a log cannot be written, in a host's words, ahead of the store's own message:
    "cannot write the table's log (read-only file system): ..." (doctor and the refusals
    show it)."""
    text = str(error)
    code = text_trouble(text)
    return f"cannot write the table's log ({TROUBLES[code]}): {text}" if code else \
        f"cannot write the table's log: {text}"


@dataclass
class _Staged:
    """A table's hub events handled in this batch, written at its end (group commit)."""

    runtime: TableRuntime
    start: dict[str, tuple[str, int]] = field(default_factory=dict)  # hub -> cursor before
    events: list[HubEvent] = field(default_factory=list)
    inputs: list[PreparedInput] = field(default_factory=list)
    # What each interpreted event did, with its game/events message (made when handled:
    # its index and status are the game's at that moment), published once stored.
    outcomes: list[tuple[Outcome, GameEvents | None]] = field(default_factory=list)


def _renamed(runtime: TableRuntime, model: HubSnapshot, cursor: HubCursor) -> bool:
    """The hub's tag map changed under the cards lying on the table (a card enrolled or
    re-enrolled, a map replaced): caught up with its events, the same readers hold cards
    but under other names than the engine believes. No event says so: only a snapshot."""
    if model.last_seq != cursor.last or cursor.pending:
        return False  # events in flight may explain any difference
    cells, pads = snapshot_state(model)
    interp = runtime.interp
    if cells.keys() != interp.cells.keys() or pads.keys() != interp.pads.keys():
        return False
    return cells != interp.cells or pads != interp.pads


class TableRuntime:
    def __init__(self, name: str, store: TableLog,
                 reopen: Callable[[], TableLog] | None = None) -> None:
        self.name = name
        self.topics: Topics = Topics(name)
        self._reopen = reopen
        self._store: TableLog | None = store
        self.used = time.monotonic()
        self.interp = store.rebuild()
        self.cursors: dict[str, HubCursor] = {
            hub: HubCursor(epoch, seq) for hub, (epoch, seq) in store.hub_positions().items()
        }
        self.turn: int | None = None
        self.sent_seats: dict[int, bytes] = {}
        # What the hub's back-end can do (its snapshots): "lay_out", a table that lays itself
        # out as the game holds it (the simulated one), gets ``hub/cmd/layout``.
        self.hub_capabilities: frozenset[str] = frozenset()
        self.degraded: str | None = None  # why the table cannot be followed now
        self.pending_hub: str | None = None  # a new hub id waiting for the host
        self.registered_hub: str | None = None  # read once from the data dir
        self.old_epochs: set[tuple[str, str]] = set()  # (hub, epoch) the log left behind
        # The interpreter went past a log that could not be written, nor then read (the
        # database is down): it is rebuilt from the log before it is used again.
        self.stale = False
        self.state_said = 0.0  # when `_on_engine_state` last said this table's state again
        self.transaction: str | None = None  # the command running now (stored with it)
        self.replay_asked = 0.0  # when a hub snapshot last made this engine ask for a replay

    def reload(self) -> bool:
        """Back to what the log holds (after a write that failed); False, and `stale`, when
        the log cannot be read either: a later `reload` (the next event, a command or the
        retry timer) brings it back once the store answers."""
        try:
            self.interp = self.store.rebuild()
        except StoreError as exc:
            if not self.stale:
                log.error("table %s: the log cannot be read either (%s); the table waits "
                          "for its store", self.name, exc)
            self.stale = True
            return False
        self.stale = False
        return True

    def fresh(self) -> None:
        """Raise `StoreError` unless the interpreter matches the log (see `stale`)."""
        if self.stale and not self.reload():
            raise StoreError(f"table {self.name}'s log cannot be read now")

    @property
    def store(self) -> TableLog:
        """The table's log, opened again when it was closed for being idle."""
        self.used = time.monotonic()
        if self._store is None:
            if self._reopen is None:  # handed over: its writes belong to the new owner
                raise StoreError(f"table {self.name} was handed over: this engine no longer "
                                 "serves it")
            self._store = self._reopen()
        return self._store

    @property
    def is_open(self) -> bool:
        return self._store is not None

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def hand_over(self) -> None:
        """Closed for good: reopening would write through this engine's next database
        session, which does not hold the table's lock."""
        self.close()
        self._reopen = None


@dataclass(frozen=True, slots=True)
class Asking:
    """Who a command handler serves: the table, the verb, the seat asking (if any)."""

    runtime: TableRuntime
    verb: str
    seat: int | None


class EngineService:
    """The engine service for every table this process serves."""

    def __init__(self, config: ServiceConfig, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.tables: dict[str, TableRuntime] = {}
        self.broken: dict[str, str] = {}  # tables whose log could not be replayed
        self.unopened: dict[str, str] = {}  # tables whose log cannot be opened now: why
        self.stats: dict[str, int] = {
            "events": 0, "duplicates": 0, "reordered": 0, "gaps_skipped": 0, "commands": 0,
            "refused": 0, "ignored_tables": 0, "errors": 0, "forged": 0, "expired": 0,
            "gaps_refused": 0, "store_failures": 0,
        }
        self.store: Store = open_store(config.store or config.data_dir)
        self.engine_id = engine_id(config.name)
        # The venue's table list (SQLite: venue.toml in the data dir; PostgreSQL: in the
        # database, followed by the ownership): other table ids are refused.
        self.venue = None if self.store.claims else self.store.venue_tables()
        self.ownership: Ownership | None = None
        self._snapshots: dict[str, HubSnapshot] = {}  # latest per table, for a claim
        self._known: dict[str, tuple[float, bool]] = {}  # table -> (checked at, has a key)
        self._keys: dict[tuple[str, str], tuple[float, TableKey | None]] = {}
        self._guard = CommandGuard(hint=" (send commands through the dashboard)")
        self._refusals = RateLimitedLog(log, burst=1, window=config.refusal_log_interval)
        self.handlers: dict[str, Bound[Asking]] = handler_map(GAME_API, [
            api.NEW_GAME.bind(self._cmd_new_game), api.HINT.bind(self._cmd_hint),
            api.HISTORY.bind(self._cmd_history), api.CONFIRM.bind(self._cmd_confirm),
            *(c.bind(self._cmd_game)
              for c in (api.UNDO, api.KEEP, api.DISCARD, api.DECLINATIO, api.END)),
        ])
        single = sorted(config.tables)[0] if config.tables and len(config.tables) == 1 else None
        if self.store.claims:  # many engines, each its own liveness topic
            state_table = self.engine_id
        else:
            state_table = single or (config.name if config.shard is None
                                     else f"{config.name}-{config.shard[0]}-of-{config.shard[1]}")
        self.state_topic = Topics(state_table, config.base).engine_state
        self.client = WireClient(
            config.mqtt,
            # Unique per process: two engines under one client id would kick each other off.
            # So the broker keeps no session for us: what a restart missed comes from the
            # hub's outbox (its retained snapshot tells us to ask for a replay).
            client_id=f"cauldron-{self.engine_id}",
            state_topic=self.state_topic,
            clean_session=True,
            base=config.base,
        )
        self._stopped = threading.Event()
        self._ticker: threading.Thread | None = None
        # Handlers run on the MQTT dispatcher thread; the lock lets `command` be called
        # directly too (tests, an embedding program).
        self._lock = threading.RLock()
        # Group commit: the dispatcher hands over what is queued as one batch (holding the
        # lock); its hub events are staged and written in one transaction at its end, then
        # published, then acknowledged (`_end_batch`).
        self._batching = False
        self._staged: dict[str, _Staged] = {}

    # ------------------------------------------------------------------ lifecycle

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
            except (ServiceError, RulesError) as exc:  # one damaged log must not stop a venue
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

    def _state(self, state: str, topics: Topics | None = None,
               degraded: str | None = None, runtime: TableRuntime | None = None
               ) -> ServiceState:
        """A table's ``engine/state`` (`topics`) or the process's own (the last will's);
        with `runtime`, the hub waiting for the host's confirmation, if any."""
        liveness = (self.state_topic if topics is not None
                    and topics.engine_state != self.state_topic else None)
        pending = runtime.pending_hub if runtime is not None else None
        return ServiceState(state=state, client_id=self.client.client_id,  # type: ignore[arg-type]
                            ts=self.clock(), version=VERSION, liveness_topic=liveness,
                            degraded=degraded, pending_hub=pending,
                            registered_hub=self._registered_hub(runtime)
                            if pending and runtime else None)

    def _forget_requests(self) -> None:
        """A replay asked before this (re)connection may have been lost with the broker:
        let the hub's next snapshot (retained, so it comes now) ask for it again."""
        with self._lock:
            for runtime in self.tables.values():
                for cursor in runtime.cursors.values():
                    cursor.asked = min(cursor.asked, cursor.last)

    def _republish_all(self) -> None:
        with self._lock:
            for runtime in list(self.tables.values()):
                self._republish(runtime)
            for table, why in self.unopened.items():  # a log that would not open at start
                topics = Topics(table, self.config.base)
                self._publish(topics.engine_state, self._state("online", topics, why),
                              retain=True)

    def _republish(self, runtime: TableRuntime) -> None:
        self._publish(runtime.topics.engine_state,
                      self._state("online", runtime.topics, runtime.degraded, runtime),
                      retain=True)
        runtime.sent_seats.clear()
        # Standing alerts too (the dashboard may have restarted and lost them): they stay
        # until the table is right.
        self.publish_views(runtime, Outcome(changed=True,
                                            raised=runtime.interp.active_alerts))

    # ------------------------------------------------------------------ hub events

    # ------------------------------------------------------------------ admission

    def _log_bounded(self, kind: str, message: str, *args: Any) -> None:
        """Log a refusal, at most once per `refusal_log_interval` per kind (a flood of
        junk must not flood the log); the next line says how many were not logged."""
        self._refusals.warning(kind, message, *args)

    def _key(self, table: str, kind: str, reload: bool = False) -> TableKey | None:
        """The table's hub or command key from the keys dir; with `reload`, read again
        when its file changed (a hub enrolled, a key replaced while the engine runs)."""
        cached = self._keys.get((table, kind))
        if cached is not None and not reload:
            return cached[1]
        try:
            stamp = float(key_path(self.config.keys, table, kind).stat().st_mtime_ns)  # type: ignore[arg-type]
        except OSError:
            stamp = -1.0
        if cached is not None and cached[0] == stamp:
            return cached[1]
        key = load_key(self.config.keys, table, kind)  # type: ignore[arg-type]
        if len(self._keys) > 4 * self.config.max_open_logs:
            self._keys.clear()
        self._keys[(table, kind)] = (stamp, key)
        return key

    def configured(self, table: str) -> bool:
        """A table this engine serves: its shard's, and named in `tables`, or with a key,
        or a log of its own. Anything else is junk (a flood must not open logs)."""
        if not self.serves(table) or table in self.broken:
            return False
        if (table in self.tables or table in self.unopened or self.config.tables is not None
                or self.store.claims):
            return True  # a table with a log, or one of the venue's
        now = time.monotonic()
        known = self._known.get(table)
        if known is None or (not known[1] and now - known[0] > 1.0):
            found = (self._key(table, "hub", reload=True) is not None
                     or self._key(table, "cmd", reload=True) is not None)
            if len(self._known) > 4 * self.config.max_open_logs:
                self._known.clear()
            known = (now, found)
            self._known[table] = known
        return known[1]

    def _refuse_table(self, table: str, what: str) -> None:
        self.stats["ignored_tables"] += 1
        self._log_bounded("table", "refused %s for table %r: not a table this engine serves "
                          "(no key in %s, not in --tables)", what, table[:64], self.config.keys)

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

    def _hubs_file(self, table: str) -> Path:
        return self.config.data_dir / "hubs" / f"{table}.json"

    def _registered_hub(self, runtime: TableRuntime) -> str | None:
        if runtime.registered_hub is not None:
            return runtime.registered_hub
        try:
            data = json.loads(self._hubs_file(runtime.name).read_text(encoding="utf-8"))
            hub = data.get("hub_id")
            runtime.registered_hub = hub if isinstance(hub, str) else None
            return runtime.registered_hub
        except (OSError, ValueError, AttributeError):
            known = list(runtime.cursors)  # a log from before hub registration
            if len(known) == 1:
                runtime.registered_hub = known[0]  # not read again for every event
            return runtime.registered_hub

    def _register_hub(self, runtime: TableRuntime, hub_id: str) -> None:
        from engine.wire.auth import write_private

        write_private(self._hubs_file(runtime.name), json.dumps({"hub_id": hub_id}).encode())
        runtime.registered_hub = hub_id
        log.info("table %s: hub %s registered", runtime.name, hub_id)
        if runtime.pending_hub is not None:
            runtime.pending_hub = None
            self._heal(runtime)

    def _degrade(self, runtime: TableRuntime, reason: str) -> None:
        if runtime.degraded != reason:
            runtime.degraded = reason
            log.error("table %s degraded: %s", runtime.name, reason)
            self._publish(runtime.topics.engine_state,
                          self._state("online", runtime.topics, reason, runtime), retain=True)

    def _heal(self, runtime: TableRuntime) -> None:
        if runtime.degraded is not None:
            log.warning("table %s healed (was: %s)", runtime.name, runtime.degraded)
            runtime.degraded = None
            self._publish(runtime.topics.engine_state,
                          self._state("online", runtime.topics), retain=True)

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
        if cursor is None or cursor.epoch != model.epoch or _renamed(runtime, model, cursor):
            # A hub not followed from its start (a new engine, a reset outbox), or its tag
            # map changed under cards lying on the grid: take what its readers see now,
            # then follow its events from there.
            interp = runtime.interp
            outcome = interp.resync(*snapshot_state(model), pawns=model.pawns, ts=model.ts)
            try:
                runtime.store.append_snapshot(model, interp)
            except StoreError as exc:
                self.stats["store_failures"] += 1
                runtime.reload()
                self._degrade(runtime, write_trouble(exc))
                return  # the hub's next snapshot (every few seconds) comes again
            runtime.cursors[model.hub_id] = HubCursor(model.epoch, model.last_seq)
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
            outcome = interp.handle(inp) if inp is not None else Outcome()
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

    # ------------------------------------------------------------------ group commit

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
            staged = self._staged[runtime.name] = _Staged(runtime)
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

    def _unstage(self, staged: _Staged) -> None:
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

    def _publish_staged(self, staged: _Staged) -> None:
        """What a table's stored batch changed: every alert and game/events message in
        order, then its views once (the last state; each view supersedes the one before)."""
        runtime = staged.runtime
        now = self.clock()
        merged = Outcome()
        for outcome, events in staged.outcomes:
            self._publish_alerts(runtime, outcome, now)
            if events is not None:
                self._publish(runtime.topics.game_events, events)
            merged.actions += outcome.actions
            merged.events += outcome.events
            merged.raised += outcome.raised
            merged.changed = merged.changed or outcome.changed
            merged.started = merged.started or outcome.started
            merged.ended = merged.ended or outcome.ended
            merged.undone += outcome.undone
        if staged.outcomes:
            self._publish_state(runtime, merged, now)

    # ------------------------------------------------------------------ commands

    def _on_command(self, info: TopicInfo, request: CommandRequest) -> JsonValue:
        """A command from the broker: a served table, a signed request within its deadline
        (never one seen before), then its verb's handler."""
        table = info.table
        if not self.serves(table):  # another engine answers: one answer per command
            self.stats["ignored_tables"] += 1
            raise NoAnswer
        assert info.verb is not None
        with self._lock:
            if table in self.broken:  # the real reason, not "not served"
                raise CommandRefused(f"table {table}'s log does not replay "
                                     f"({self.broken[table]}); see the engine's log",
                                     code="broken_log")
            if not self.configured(table):
                self._refuse_table(table, f"command {info.verb}")
                raise CommandRefused(f"this engine does not serve table {table}",
                                     code="unknown_table")
            try:
                self._check_credential(table, info.verb, request)
            except CommandRefused as exc:  # a repeat seen here: the answer it got, if stored
                stored = (self._stored_answer(table, info.verb, request.transaction)
                          if exc.code == "replayed" else None)
                if stored is None:
                    raise
                return stored
            if self.open_table(table) is None:
                raise CommandRefused(f"table {table}: {self.unopened[table]}; free or repair "
                                     "the engine's disk (`sudo cauldron doctor`)",
                                     code="log_unwritable")
        try:
            return self.command(table, info.verb, request.args, seat=request.seat,
                                transaction=request.transaction)
        except Refused as exc:
            self.stats["refused"] += 1
            raise CommandRefused(str(exc), code=exc.code, rule=exc.rule) from None

    def _check_credential(self, table: str, verb: str, request: CommandRequest) -> None:
        """Refuse (`CommandRefused`) an unsigned, forged, expired or replayed command."""
        try:
            self._guard.admit(request, table, verb,
                              lambda reload: self._key(table, "cmd", reload=reload), self.clock())
        except Unauthorised as exc:
            if exc.code == "expired":
                self.stats["expired"] += 1
                self._log_bounded("expired_cmd", "table %s: dropped command %s (%s): %s",
                                  table, verb, request.transaction[:64], exc)
            else:
                self.stats["forged"] += 1
                if exc.code == "unauthorised":
                    self._log_bounded("forged_cmd", "refused command %s on table %s: %s", verb,
                                      table, exc)
            raise CommandRefused(str(exc), code=exc.code) from None

    def command(self, table: str, verb: str, args: Mapping[str, object] | None = None,
                seat: int | None = None, transaction: str | None = None
                ) -> dict[str, JsonValue]:
        """Run one command for `table` (already admitted); raises `Refused` (nothing
        changed) when it does not fit or its args are malformed (`GAME_API`). A
        `transaction` already stored (it ran, here or on another engine, before a restart or
        a handover) runs no more: its stored answer."""
        with self._lock:
            if verb not in self.handlers:
                raise Refused(f"unknown command {verb!r}", code="unknown_command")
            self._flush()  # the events before it are stored before it (the log's order)
            stored = self._stored_answer(table, verb, transaction)
            if stored is not None:
                return stored
            runtime = self.table(table)
            runtime.transaction = transaction
            try:
                return dispatch(self.handlers, verb, Asking(runtime, verb, seat), args)
            except BadArgs as exc:
                raise Refused(exc.message, code=exc.code, rule=exc.rule) from None
            finally:
                runtime.transaction = None

    def _stored_answer(self, table: str, verb: str,
                       transaction: str | None) -> dict[str, Any] | None:
        """The stored answer of a command that ran already (game commands are stored with
        their transaction id, in the transaction of their effect)."""
        if transaction is None or verb in READ_ONLY_VERBS:
            return None
        try:
            stored = self.table(table).store.stored_answer(transaction)
        except StoreError as exc:
            raise Refused(f"{verb}: the table's log cannot be read now ({exc}), so nothing "
                          "changed; try again in a moment", code="storage") from None
        if stored is not None:
            self.stats["repeats"] = self.stats.get("repeats", 0) + 1
            log.info("table %s: %s %s ran before; its stored answer again", table, verb,
                     transaction)
        return stored

    def _cmd_hint(self, asking: Asking, args: HintArgs) -> HintAnswer:  # read-only
        return self._hint(asking.runtime.interp, args, asking.seat)

    def _cmd_history(self, asking: Asking, args: NoArgs) -> HistoryAnswer:  # read-only
        return HistoryAnswer(messages=[m.model_dump(mode="json", exclude_none=True)
                                       for m in self._history(asking.runtime)])

    def _cmd_new_game(self, asking: Asking, args: NewGameBase) -> GameAnswer | StoredAnswer:
        runtime = asking.runtime
        if args.game_id is not None:
            raise Refused("new_game: the engine names the game; do not send game_id",
                          code="bad_args")
        ts = self.clock()
        named: dict[str, object] = {"game_id": time.strftime(
            "%Y%m%d-%H%M%S", time.gmtime(ts)) + f"-{len(runtime.store.games()) + 1}"}
        if args.recipe_cards is None:
            # Dealt here, so no seat's secret crosses the broker in a command (G11): each
            # seat sees its own on game/seat/<n> only. Stored with the command for replay.
            named.update(games.get(args.game).secret_setup(args.config_wire(),
                                                           random.SystemRandom()))
        return self._run(runtime, "new_game", args.model_copy(update=named), asking.seat, ts,
                         runtime.interp.observed())

    def _cmd_confirm(self, asking: Asking, args: ConfirmArgs
                     ) -> GameAnswer | HubAccepted | StoredAnswer:
        if args.hub_id is not None:
            return self._confirm_hub(asking.runtime, args.hub_id)
        return self._cmd_game(asking, args)

    def _cmd_game(self, asking: Asking, args: BaseModel) -> GameAnswer | StoredAnswer:
        return self._run(asking.runtime, asking.verb, args, asking.seat, self.clock(), None)

    def _confirm_hub(self, runtime: TableRuntime, hub_id: str) -> HubAccepted:
        """The host accepts a new hub for the table (a replaced Raspberry Pi)."""
        if hub_id != runtime.pending_hub:
            raise Refused(f"confirm: no hub {hub_id[:64]!r} is waiting to serve table "
                          f"{runtime.name}", code="no_pending_hub")
        self._register_hub(runtime, hub_id)
        return HubAccepted(table=runtime.name, hub_id=hub_id)

    def _run(self, runtime: TableRuntime, verb: str, args: BaseModel, seat: int | None,
             ts: float, observed: dict[str, Any] | None) -> GameAnswer | StoredAnswer:
        """Apply a game command, store it (or undo it and refuse), publish."""
        try:
            runtime.fresh()
        except StoreError as exc:
            raise Refused(f"{verb}: the table's log cannot be read now ({exc}), so nothing "
                          "changed; try again in a moment", code="storage") from None
        interp = runtime.interp
        outcome = interp.command(verb, args, seat=seat, ts=ts)
        answer = GameAnswer(
            table=runtime.name,
            game_id=interp.game_id,
            status=interp.status.value,
            actions=[a.to_wire() for a in outcome.actions],
            instructions=outcome.instructions,
            undone=outcome.undone_text,
            undone_codes=outcome.undone_codes,  # the same two, for the pages' languages
            steps=outcome.undo_steps,
            prompt=Prompt.model_validate(interp.prompt()),
        )
        if not self._store_command(runtime, ts, outcome, verb, dump(args), seat, observed,
                                   dump(answer)):
            runtime.reload()  # it ran before (another engine, a race): what it answered then
            stored = runtime.store.stored_answer(runtime.transaction or "")
            if stored is None:
                raise Refused(f"{verb}: not stored, so nothing changed; try again",
                              code="storage")
            return StoredAnswer(stored)
        self.stats["commands"] += 1
        if runtime.degraded is not None and runtime.degraded.startswith("cannot write"):
            self._heal(runtime)
        self.publish_views(runtime, outcome)
        return answer

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

    @staticmethod
    def _hint(interp: TableInterpreter, args: HintArgs, seat: int | None) -> HintAnswer:
        """What a bot suggests to `seat`, seeing only what that seat sees (the game's bots)."""
        game = interp.game
        if game is None or interp.status is not Status.PLAYING:
            raise Refused("no game is in progress: there is nothing to hint", code="no_game")
        if seat is None:
            raise Refused("hint: say which seat asks (the request's seat)", code="bad_args")
        try:
            suggestion = games.get().hint(game, seat, args.level, args.lang)
        except Refused as exc:  # its own turn with nothing to choose (a refill): no_choice_now
            raise Refused(f"hint: {exc.message}", code=exc.code) from None
        return HintAnswer.model_validate(suggestion)

    @staticmethod
    def _history(runtime: TableRuntime) -> list[GameEvents]:
        """The current game's `GameEvents` from its start, as a follower that missed them
        (a restarted bot, an audit) would have received them: public events only, in
        messages within the model's size limits."""
        interp = runtime.interp
        game = interp.game
        if game is None:
            raise Refused("history: no game on this table yet", code="no_game")
        replayed = replay(GameLog.of(game).without_last(len(game.actions)))
        messages: list[GameEvents] = []
        actions: list[dict[str, Any]] = []
        events = [e.to_wire() for e in replayed.opening_events if not e.private]

        def flush(index: int) -> None:
            start = not messages
            messages.append(GameEvents(
                table=runtime.name, game_id=interp.game_id, status=interp.status.value,
                index=index, actions=list(actions), events=list(events),
                config=game.config.to_wire() if start else None,
                grid=list(game.deal.grid) if start else None))
            actions.clear()
            events.clear()

        index = 0
        for number, action in enumerate(game.actions):
            public = [e.to_wire() for e in replayed.apply(action) if not e.private]
            if actions and (len(actions) >= HISTORY_ACTIONS
                            or len(events) + len(public) > HISTORY_EVENTS):
                flush(index)
                index = number
            actions.append(action.to_wire())
            events.extend(public)
        flush(index)
        return messages

    # ------------------------------------------------------------------ the tick

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

    # ------------------------------------------------------------------ publishing

    def _publish(self, topic: str, model: WireModel, retain: bool = False, qos: int = 1,
                 *, fence: int | None = None) -> None:
        """Publish for a table only while this engine owns it (with a shared store), its
        claim's epoch in the payload (`engine.service.ownership.speaks_for`); `fence`: said
        for a table just given up, with the claim it had."""
        if fence is None and topic != self.state_topic:
            fence, allowed = speaks_for(self.ownership, self.store.claims, self.config.base, topic)
            if not allowed:
                self.stats["fenced"] = self.stats.get("fenced", 0) + 1
                return
        if (fence is not None and "fence" in type(model).model_fields
                and getattr(model, "fence", None) != fence):  # (a view made with it: no copy)
            model = model.model_copy(update={"fence": fence})
        self.client.publish(topic, model, retain=retain, qos=qos)

    def publish_views(self, runtime: TableRuntime, outcome: Outcome) -> None:
        now = self.clock()
        self._publish_alerts(runtime, outcome, now)
        events = self._game_events(runtime, outcome, now)
        if events is not None:
            self._publish(runtime.topics.game_events, events)
        self._publish_state(runtime, outcome, now)

    def _publish_alerts(self, runtime: TableRuntime, outcome: Outcome, now: float) -> None:
        game_id = runtime.interp.game_id
        for alert in outcome.cleared:
            self._publish(runtime.topics.game_alert,
                          self._alert(alert.table_alert(), False, game_id, now))
        for alert in outcome.raised:
            self._publish(runtime.topics.game_alert,
                          self._alert(alert.table_alert(), True, game_id, now))

    def _publish_state(self, runtime: TableRuntime, outcome: Outcome, now: float) -> None:
        """The views (public, seats), the hub's turn LED and buzzer, a simulated table's
        layout: what the table looks like after `outcome`."""
        interp = runtime.interp
        topics = runtime.topics
        game_id = interp.game_id
        if outcome.changed:
            turn = interp.turn
            fence, allowed = speaks_for(self.ownership, self.store.claims, self.config.base,
                                        topics.game_public)
            if not allowed:  # (said once, by `_publish`)
                fence = None
            public = GamePublic(table=runtime.name, game_id=game_id, turn=turn, ts=now,
                                view=interp.public_view(), fence=fence)
            # Views are state, each superseding the last: QoS 0 (no PUBACK traffic); after a
            # reconnect every view is published again (`_republish_all`).
            self._publish(topics.game_public, public, retain=True, qos=VIEW_QOS)
            if turn != runtime.turn:
                runtime.turn = turn
                if self.config.hub_io:
                    self._hub_command(runtime, api.TURN, TurnArgs(seat=turn))
            if (outcome.actions or outcome.started or outcome.ended or outcome.undone
                    or not runtime.sent_seats):  # a seat's own view changes with the game
                self._publish_seats(runtime, outcome.private_events, game_id, now)
        if "lay_out" in runtime.hub_capabilities:
            self._lay_out(runtime, outcome)
        if self.config.hub_io and any(a.severity == "error" for a in outcome.raised):
            self._hub_command(runtime, api.BUZZ, {"ms": self.config.buzz_ms})

    def _lay_out(self, runtime: TableRuntime, outcome: Outcome) -> None:
        """A table that lays itself out (the hub's ``lay_out`` capability) is asked to, when
        the game changed without its readers: after an undo, carried out physically (its
        sensor events then clear the alerts), and at a game's end (a Vanesco kept as the last
        card sends tops out of the game that nobody taps any more, and the last card goes
        from the pad to its cauldron). At a start, with pawn sensors, its pawns go to their
        start, as the deal laid the cards (people then move them; a wrong move gets its
        G3/G4 alert)."""
        interp = runtime.interp
        if outcome.undone or outcome.ended:
            layout = interp.physical_layout()
            if layout is not None:
                self._hub_command(runtime, api.LAYOUT, {"layout": layout, "pawns": None})
        if (outcome.started and interp.game is not None
                and interp.pawn_sensing.sensed is not None):
            self._hub_command(runtime, api.LAYOUT, {"layout": None,
                                                   "pawns": start_positions(interp.game)})

    @staticmethod
    def _game_events(runtime: TableRuntime, outcome: Outcome, now: float) -> GameEvents | None:
        """The game/events message of `outcome`, just applied (None: it did nothing a
        follower sees)."""
        if not (outcome.actions or outcome.started or outcome.undone or outcome.ended):
            return None
        interp = runtime.interp
        game = interp.game
        if game is None:
            return None
        started = outcome.started
        model = GameEvents(
            table=runtime.name, game_id=interp.game_id, status=interp.status.value,
            index=len(game.actions) - len(outcome.actions),
            actions=[a.to_wire() for a in outcome.actions],
            events=[e.to_wire() for e in outcome.events if not e.private],  # public only
            undone=outcome.undone,
            config=game.config.to_wire() if started else None,
            grid=list(game.deal.grid) if started else None,
            ts=now,
        )
        return model

    def _publish_seats(self, runtime: TableRuntime, private: list[Event], game_id: str | None,
                       now: float) -> None:
        interp = runtime.interp
        players = interp.game.players if interp.game is not None else 0
        for seat in range(players):
            view = interp.seat_view(seat)
            if view is None:
                continue
            fence, allowed = speaks_for(self.ownership, self.store.claims,
                                        self.config.base, runtime.topics.game_public)
            if not allowed:
                return
            model = GameSeat(seat=seat, game_id=game_id, ts=None, view=view, fence=fence)
            payload = encode(model)
            if runtime.sent_seats.get(seat) != payload:  # only what changed for that seat
                runtime.sent_seats[seat] = payload
                self.client.publish_raw(runtime.topics.game_seat(seat), payload, retain=True,
                                        qos=VIEW_QOS)
            reveals = [e.cauldron for e in private
                       if isinstance(e, PerluceoReveal) and e.seat == seat]
            if reveals:  # once, not retained: a one-time look (G9)
                once = GameSeat(seat=seat, game_id=game_id, ts=now,
                                view=dataclasses.replace(view, reveal=reveals[-1]))
                self._publish(runtime.topics.game_seat(seat), once)

    @staticmethod
    def _alert(alert: TableAlert, active: bool, game_id: str | None, now: float) -> GameAlert:
        return GameAlert(**{**dict(alert), "ts": now}, active=active, game_id=game_id)

    def _hub_command(self, runtime: TableRuntime, command: Command[A, Any],
                     args: A | Mapping[str, object]) -> None:
        """``hub/cmd/<verb>`` (`HUB_API`: its args typed, so a malformed one fails here, not
        at the hub), signed with the table's command key (the hub refuses anything else); a
        unique transaction, since the hub refuses one it has seen."""
        verb = command.verb
        try:
            typed = command.parse(args)
        except BadArgs as exc:  # a bad setting (e.g. buzz_ms): said, and the game goes on
            self._log_bounded(f"bad_hub_{verb}", "table %s: hub/cmd/%s not sent: %s",
                              runtime.name, verb, exc)
            return
        self.stats[f"hub_{verb}"] = self.stats.get(f"hub_{verb}", 0) + 1
        request = CommandRequest(transaction=f"engine-{verb}-{uuid.uuid4().hex[:16]}",
                                 args=dump(typed), source="engine",
                                 deadline=time.time() + HUB_COMMAND_LIFE)  # the hub's clock
        table = runtime.name
        key = self._key(table, "cmd") or self._key(table, "cmd", reload=True)
        signing = key.key if key is not None else ensure_key(self.config.keys, table, "cmd").key
        request = sign_command(request, table, verb, signing, hub=True)
        self._publish(runtime.topics.hub_cmd(verb), request)

    # ------------------------------------------------------------------ ownership

    def serves(self, table: str) -> bool:
        """Whether this process serves `table` now: its settings allow it (tables, shard)
        and, with a shared store, it holds the table's lock."""
        if not self.config.serves(table):
            return False
        if self.venue is not None and table not in self.venue:
            return False
        if self.store.claims:  # nothing before the ownership loop has claimed it
            return self.ownership is not None and self.ownership.owns(table)
        return True

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
            except (ServiceError, RulesError) as exc:  # kept (and reported), not bounced
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

    # ------------------------------------------------------------------ queries

    def status(self) -> dict[str, Any]:
        return {
            "tables": {
                name: {"status": rt.interp.status.value, "game_id": rt.interp.game_id,
                       "inputs": rt.interp.inputs}
                for name, rt in self.tables.items()
            },
            "stats": dict(self.stats),
        }


def engine_id(name: str) -> str:
    """This engine's id: its name, host, pid and a random tag (unique on a venue's network,
    even for two services in one process)."""
    host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname().split(".")[0])[:20]
    return f"{name[:24]}-{host}-{os.getpid()}-{uuid.uuid4().hex[:4]}"


"""The engine service's common ground (`EngineService`'s base): its settings
(`ServiceConfig`), a table's runtime (`TableRuntime`), the service's state and counters,
which tables it serves and admits (keys, the venue's list, ownership), each table's
``engine/state``, and the one fenced way to publish (`ServiceBase._publish`). The concerns
build on it, one module each: `alerts`, `publishing`, `persistence`, `intake` (hub events),
`commands`; `service` puts them together."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.datadir import TROUBLES, text_trouble
from engine.games.base import Interpreter, Outcome
from engine.service.errors import StoreError
from engine.service.ownership import speaks_for
from engine.service.store import PreparedInput, Store, TableLog, default_data_dir, open_store
from engine.wire.auth import CommandGuard, TableKey, key_path, keys_dir, load_key
from engine.wire.contract import GameEvents, HubEvent, HubSnapshot, ServiceState, Topics, WireModel
from engine.wire.mqtt import WireClient
from engine.wire.ratelog import RateLimitedLog
from engine.wire.sequence import HubCursor

if TYPE_CHECKING:
    from engine.service.ownership import Ownership


log = logging.getLogger("cauldron.engine")
VERSION = "1"
VIEW_QOS = 0
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


class TableRuntime:
    def __init__(self, name: str, store: TableLog,
                 reopen: Callable[[], TableLog] | None = None) -> None:
        self.name = name
        self.topics: Topics = Topics(name)
        self._reopen = reopen
        self._store: TableLog | None = store
        self.used = time.monotonic()
        self.interp: Interpreter = store.rebuild()
        self.cursors: dict[str, HubCursor] = {
            hub: HubCursor(epoch, seq) for hub, (epoch, seq) in store.hub_positions().items()
        }
        self.turn: int | None = None
        # A new game of another game: the old game's observations do not cover the new one's
        # readers, so the hub's next snapshot is taken whole, whatever the cursors say.
        self.resync_next = False
        # What each seat's retained view says now (game, fence, view): published on change.
        self.sent_seats: dict[int, tuple[str | None, int | None, object]] = {}
        # The observer's public view and its JSON, made once per change of the game.
        self.rules_json: tuple[object, bytes] | None = None
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


@dataclass
class Staged:
    """A table's hub events handled in this batch, written at its end (group commit)."""

    runtime: TableRuntime
    start: dict[str, tuple[str, int]] = field(default_factory=dict)  # hub -> cursor before
    events: list[HubEvent] = field(default_factory=list)
    inputs: list[PreparedInput] = field(default_factory=list)
    # What each interpreted event did, with its game/events message (made when handled:
    # its index and status are the game's at that moment), published once stored.
    outcomes: list[tuple[Outcome, GameEvents | None]] = field(default_factory=list)


def engine_id(name: str) -> str:
    """This engine's id: its name, host, pid and a random tag (unique on a venue's network,
    even for two services in one process)."""
    host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname().split(".")[0])[:20]
    return f"{name[:24]}-{host}-{os.getpid()}-{uuid.uuid4().hex[:4]}"


class ServiceBase:
    """The engine service's state and what every concern uses."""

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
        self._staged: dict[str, Staged] = {}

    def _drain(self, runtime: TableRuntime, hub_id: str, cursor: HubCursor
               ) -> list[Outcome]:
        """Handle what is now in order for one hub (`engine.service.intake`)."""
        raise NotImplementedError

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

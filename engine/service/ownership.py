"""Which engine serves which table, when a venue's engines share a PostgreSQL store.

Each engine holds one PostgreSQL session (`PgSession`) and, on it, one advisory lock per
table it serves (`pg_try_advisory_lock(LOCK_NAMESPACE, lock_key)`). The database is the
only judge: a lock is held by one session at most, and it goes when the session ends (a
killed engine's connection closes; a vanished machine's is ended by TCP keepalives).

Every `interval` seconds each engine:

- counts the live engines (sessions named ``cauldron-engine:<id>``) and takes its fair
  share of the venue's tables: ``ceil(tables / engines)``;
- claims free tables (no lock held) up to that share, and gives back what it holds beyond
  it (a new engine joined), so that N engines split T tables evenly;
- gives up every table at once when its session breaks, and opens a new one.

Claiming a table calls `on_claim` (the engine rebuilds the game from the log, asks the
hubs for what it missed, publishes the table's state); giving one up calls `on_release`
*before* the lock is released, so two engines never serve a table at the same time.
"""

from __future__ import annotations

import logging
import math
import threading
import zlib
from collections.abc import Callable

from engine.service.errors import StoreError
from engine.service.store.postgres import LOCK_NAMESPACE, PgSession, PostgresStore

log = logging.getLogger("cauldron.engine.ownership")


class Ownership:
    def __init__(self, store: PostgresStore, engine_id: str, *,
                 on_claim: Callable[[str], None], on_release: Callable[[str], None],
                 on_lost: Callable[[str, str], None] | None = None,
                 allowed: Callable[[str], bool] = lambda table: True,
                 interval: float = 1.0) -> None:
        self.store = store
        self.engine_id = engine_id
        self.on_claim = on_claim
        self.on_release = on_release
        self.on_lost = on_lost  # (table, why): given up because the database went away
        self.allowed = allowed
        self.interval = interval
        self._owned: dict[str, int] = {}  # table -> lock key
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.session: PgSession | None = None
        self.rounds = 0

    # ------------------------------------------------------------------ queries

    def owns(self, table: str) -> bool:
        return table in self._owned

    def owned(self) -> list[str]:
        return sorted(self._owned)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Ownership:
        self._connect()
        self._thread = threading.Thread(target=self._loop, name="cauldron-ownership",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Give every table back (on_release, then unlock) and close the session."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        for table in self.owned():
            self._release(table)
        if self.session is not None:
            self.session.close()

    def _connect(self) -> None:
        self.session = self.store.open_session(self.engine_id)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as exc:  # the database went away: serve nothing until back
                log.warning("ownership: %s; giving up every table until PostgreSQL answers",
                            exc)
                self._lose_all(str(exc))
            self._stop.wait(self.interval)

    def _lose_all(self, why: str) -> None:
        for table in self.owned():
            try:
                self.on_release(table)
                if self.on_lost is not None:
                    self.on_lost(table, why)
            finally:
                self._owned.pop(table, None)
        try:
            self._connect()
        except StoreError as exc:
            log.warning("ownership: %s", exc)

    # ------------------------------------------------------------------ one round

    def step(self) -> None:
        """One round of claiming and shedding (also called directly by tests)."""
        session = self.session
        if session is None or not session.alive:
            raise StoreError("the engine's PostgreSQL session is closed")
        self.rounds += 1
        # The session answers and still holds our locks (one ended by the server, e.g.
        # pg_terminate_backend, fails here: then we serve nothing until a new one claims).
        held_here = {int(r[0]) for r in session.execute(
            "SELECT objid FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = "
            "'advisory' AND classid = %s::oid AND objsubid = 2", (LOCK_NAMESPACE,))}
        for table, key in list(self._owned.items()):
            if key not in held_here:
                log.warning("ownership: the lock of table %s was lost; not serving it", table)
                self.on_release(table)
                self._owned.pop(table, None)
        keys = {t: k for t, k in self.store.lock_keys().items() if self.allowed(t)}
        for table in self.owned():  # removed from the venue, or no longer ours to serve
            if table not in keys:
                self._release(table)
        engines = max(1, len(self.store.live_engines()))
        share = math.ceil(len(keys) / engines) if keys else 0
        extra = len(self._owned) - share
        if extra > 0:  # a new engine joined: hand over the tables beyond our share
            for table in sorted(self._owned, key=self._order)[-extra:]:
                self._release(table)
            return
        if len(self._owned) >= share:
            return
        held = {o.table for o in self.store.owners() if o.engine is not None}
        free = sorted((t for t in keys if t not in held and t not in self._owned),
                      key=self._order)
        for table in free:
            if len(self._owned) >= share or self._stop.is_set():
                break
            got = session.execute("SELECT pg_try_advisory_lock(%s, %s)",
                                  (LOCK_NAMESPACE, keys[table]))
            if not got or not got[0][0]:
                continue  # another engine was quicker
            self._owned[table] = keys[table]
            try:
                self.on_claim(table)
            except Exception:
                log.exception("ownership: claiming table %s failed; giving it back", table)
                self._release(table)

    def _order(self, table: str) -> int:
        """Engines try the free tables in different orders (fewer collisions)."""
        return zlib.crc32(f"{self.engine_id}/{table}".encode())

    def _release(self, table: str) -> None:
        key = self._owned.get(table)
        if key is None:
            return
        try:
            self.on_release(table)  # stop serving first, then let another engine claim
        finally:
            self._owned.pop(table, None)
            session = self.session
            if session is not None and session.alive:
                try:
                    session.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_NAMESPACE, key))
                except Exception as exc:  # the session broke: its locks are gone anyway
                    log.warning("ownership: unlocking %s: %s", table, exc)

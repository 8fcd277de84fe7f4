"""Which engine serves which table, when a venue's engines share a PostgreSQL store.

Each engine holds one PostgreSQL session (`PgSession`) and, on it, one advisory lock per
table it serves (`pg_try_advisory_lock(LOCK_NAMESPACE, lock_key)`) plus its presence lock
(`PRESENCE_NAMESPACE`). The database is the only judge: a lock is held by one session at
most, and it goes when the session ends.

- **Fencing**: each claim bumps the table's epoch (`cauldron_claim`, only by the session
  holding the lock). The engine writes with that epoch and the database refuses a stale
  one; the engine's publishes carry it too, so a follower can ignore a stale owner's word.
- **Lease**: every `interval` seconds a round talks to the database (the heartbeat). The
  server ends a session silent for `idle` seconds (``idle_session_timeout``), so a hung or
  stopped engine's locks go and its tables are claimed by the others; the engine itself
  stops serving (`owns` turns false) once `lease` (< `idle`) has passed without a round
  that answered, so on waking it neither writes nor publishes: it finds itself fenced.
- **Shares**: T tables, N live engines: each holds ``floor(T/N)`` or one more (±1), the
  extra ones going to the engines that already hold them. Hysteresis: an engine sheds
  tables only when the set of live engines has been the same for two rounds, and it sheds
  the tables it has held longest, so that a table that just moved (a kill) does not move
  again (the restart): a kill plus a restart moves each table at most once.
- A broken session: every table is given up at once, a new session is opened.

Claiming a table calls `on_claim` (the engine rebuilds the game from the log, asks the
hubs for what it missed, publishes the table's state); giving one up calls `on_release`
*before* the lock is released, so two engines never serve a table at the same time.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from engine.service.errors import StoreError
from engine.service.store.postgres import (
    LOCK_NAMESPACE,
    PRESENCE_NAMESPACE,
    PgSession,
    PostgresStore,
)

log = logging.getLogger("cauldron.engine.ownership")


@dataclass(frozen=True)
class Claim:
    key: int  # the table's advisory lock number
    epoch: int  # the fencing token of this claim
    since: float  # monotonic time of the claim


# The fence said on the wire: the venue database's generation above the claim's epoch.
FENCE_EPOCH_BITS = 21


def published_fence(generation: int, epoch: int) -> int:
    """A claim's fence as followers see it (`GamePublic.fence`…): the venue's generation
    (the OID of its table list, new whenever the venue's tables are made again: a database
    reset or restored, which starts every table's epoch afresh) above the table's epoch,
    so a follower that heard the old database's fences takes the new owner as newer, not
    as stale. Within one database: 2^21 claims of a table before its fences stop rising."""
    return (generation << FENCE_EPOCH_BITS) | min(epoch, (1 << FENCE_EPOCH_BITS) - 1)


def speaks_for(ownership: Ownership | None, claims: bool, base: str,
               topic: str) -> tuple[int | None, bool]:
    """Whether an engine may publish on `topic` (``<base>/<table>/…``) now, and its claim's
    epoch to put in the payload: with a shared store, only while it owns the table (its
    lease holding), so a stopped or cut-off engine says nothing once it wakes."""
    if not claims:
        return None, True
    rest = topic[len(base) + 1:] if topic.startswith(base + "/") else ""
    table = rest.split("/", 1)[0]
    fence = ownership.fence(table) if ownership is not None and table else None
    return fence, fence is not None


class Ownership:
    def __init__(self, store: PostgresStore, engine_id: str, *,
                 on_claim: Callable[[str], None], on_release: Callable[[str], None],
                 on_lost: Callable[[str, str], None] | None = None,
                 allowed: Callable[[str], bool] = lambda table: True,
                 interval: float = 1.0, lease: float | None = None) -> None:
        self.store = store
        self.engine_id = engine_id
        self.on_claim = on_claim
        self.on_release = on_release
        self.on_lost = on_lost  # (table, why): given up because the database went away
        self.allowed = allowed
        self.interval = interval
        # Trusted this long after a round began that the database answered; the server
        # ends a session silent for `idle` (a margin later), which frees its locks.
        self.lease = lease if lease is not None else max(4.0, 3 * interval)
        self.idle = self.lease + 2.0
        self._owned: dict[str, Claim] = {}
        self._renewed = -1e9  # monotonic start of the last round the database answered
        self._last_live: frozenset[int] = frozenset()
        self._intruders_said = -1e9  # when a lock held by no engine was last logged
        self.generation = store.generation  # of the venue's database (`published_fence`)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.session: PgSession | None = None
        self.rounds = 0

    # ------------------------------------------------------------------ queries

    def leased(self) -> bool:
        """The lease holds: a round answered less than `lease` seconds ago."""
        return time.monotonic() - self._renewed < self.lease

    def owns(self, table: str) -> bool:
        return table in self._owned and self.leased()

    def owned(self) -> list[str]:
        return sorted(self._owned) if self.leased() else []

    def epoch(self, table: str) -> int | None:
        """The fencing token of this engine's claim of `table` (None: not ours)."""
        claim = self._owned.get(table)
        return claim.epoch if claim is not None and self.leased() else None

    def claimed_epoch(self, table: str) -> int | None:
        """The epoch of this engine's claim of `table`, lease or not (what it last held)."""
        claim = self._owned.get(table)
        return claim.epoch if claim is not None else None

    def fence(self, table: str) -> int | None:
        """`epoch` as said on the wire (`published_fence`)."""
        epoch = self.epoch(table)
        return None if epoch is None else published_fence(self.generation, epoch)

    def claimed_fence(self, table: str) -> int | None:
        """`claimed_epoch` as said on the wire."""
        epoch = self.claimed_epoch(table)
        return None if epoch is None else published_fence(self.generation, epoch)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Ownership:
        try:
            self._connect()
        except StoreError as exc:  # the loop tries again; nothing is served meanwhile
            log.warning("ownership: %s", exc)
        self._thread = threading.Thread(target=self._loop, name="cauldron-ownership",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Give every table back (on_release, then unlock) and close the session."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        for table in list(self._owned):
            self._release(table)
        if self.session is not None:
            self.session.close()

    def _connect(self) -> None:
        self.session = self.store.open_session(self.engine_id, idle=self.idle)

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
        # Said on the tables' state only while the lease held: past it, another engine may
        # serve them already (this one was stopped, or cut off), and it speaks for them.
        speak = self.leased()
        self._renewed = -1e9
        for table in list(self._owned):
            try:
                self.on_release(table)
                if self.on_lost is not None and speak:
                    self.on_lost(table, why)
            finally:
                self._owned.pop(table, None)
                self.store.fences.pop(table, None)
        if self.session is not None:
            self.session.close()
        try:
            self._connect()
        except StoreError as exc:
            log.warning("ownership: %s", exc)

    # ------------------------------------------------------------------ one round

    def step(self) -> None:
        """One round: the heartbeat, then claiming and shedding (also called by tests)."""
        session = self.session
        if session is None or not session.alive:
            raise StoreError("the engine's PostgreSQL session is closed")
        self.rounds += 1
        began = time.monotonic()
        # The session answers and still holds our locks (one ended by the server, e.g.
        # pg_terminate_backend or its idle timeout, fails here).
        rows = session.execute(
            "SELECT classid::bigint, objid::bigint FROM pg_locks WHERE pid = pg_backend_pid() "
            "AND locktype = 'advisory' AND objsubid = 2 AND classid IN (%s::oid, %s::oid)",
            (LOCK_NAMESPACE, PRESENCE_NAMESPACE))
        if began - self._renewed > self.lease and self._owned:
            # This round began after the lease ran out (the engine was stopped or starved):
            # the server may have ended the session meanwhile; start afresh.
            raise StoreError("the lease ran out before this round (the engine was stopped "
                             "or starved)")
        held_here = {int(o) for c, o in rows if int(c) == LOCK_NAMESPACE}
        if not any(int(c) == PRESENCE_NAMESPACE for c, _ in rows):
            session.execute("SELECT pg_try_advisory_lock(%s, %s)",
                            (PRESENCE_NAMESPACE, self._presence_key()))
        self._renewed = began
        for table, claim in list(self._owned.items()):
            if claim.key not in held_here:
                log.warning("ownership: the lock of table %s was lost; not serving it", table)
                self.on_release(table)
                self._owned.pop(table, None)
                self.store.fences.pop(table, None)
        keys = {t: k for t, k in self.store.lock_keys().items() if self.allowed(t)}
        for table in list(self._owned):  # removed from the venue, or no longer ours to serve
            if table not in keys:
                self._release(table)
        self._share(session, keys)

    def _share(self, session: PgSession, keys: dict[str, int]) -> None:
        """Claim or shed towards a fair share (±1), see the module's doc."""
        live = self.store.live_sessions()
        me = session.pid
        live.setdefault(me, self.engine_id)
        stable = frozenset(live) == self._last_live
        self._last_live = frozenset(live)
        holders = self.store.lock_holders()
        by_key = {k: t for t, k in keys.items()}
        held_by_others = sorted(t for t, k in keys.items() if holders.get(k, me) not in live)
        if held_by_others and time.monotonic() - self._intruders_said > 60:
            self._intruders_said = time.monotonic()
            log.error("ownership: the lock of table(s) %s is held by a database session that "
                      "is no engine (pid %s): no engine can serve them; end that session and "
                      "let only engines connect (engine.service.store.postgres, roles)",
                      ", ".join(held_by_others[:10]),
                      ", ".join(str(holders[keys[t]]) for t in held_by_others[:10]))
        counts = Counter(holders[k] for k in by_key if holders.get(k) in live)
        counts[me] = len(self._owned)
        floor, extra = divmod(len(keys), len(live))
        ceiling = floor + (1 if extra else 0)
        mine = len(self._owned)
        if mine > ceiling and stable:
            self._shed(mine - ceiling)
            return
        if extra and mine == ceiling and stable and any(counts[p] < floor for p in live):
            at_ceiling = sorted((p for p in live if counts[p] >= ceiling),
                                key=lambda p: (-counts[p], p))
            if me in at_ceiling[extra:]:  # one too many hold the extra: the last ones shed
                self._shed(1)
            return
        others_over = sum(1 for p in live if p != me and counts[p] > floor)
        target = ceiling if others_over < extra else floor
        if mine >= target:
            return
        free = sorted((t for t, k in keys.items() if k not in holders and t not in self._owned),
                      key=self._order)
        for table in free:
            if len(self._owned) >= target or self._stop.is_set():
                break
            if time.monotonic() - self._renewed > self.lease / 2:
                break  # the rest next round: claiming must not starve the heartbeat
            asked = time.monotonic()
            got = session.execute("SELECT pg_try_advisory_lock(%s, %s)",
                                  (LOCK_NAMESPACE, keys[table]))
            self._renewed = max(self._renewed, asked)  # the session answered: a heartbeat
            if not got or not got[0][0]:
                continue  # another engine was quicker
            try:
                epoch = int(session.execute("SELECT cauldron_claim(%s)", (table,))[0][0])
            except Exception:
                session.execute("SELECT pg_advisory_unlock(%s, %s)",
                                (LOCK_NAMESPACE, keys[table]))
                raise
            self.store.fences[table] = epoch
            self._owned[table] = Claim(keys[table], epoch, time.monotonic())
            try:
                self.on_claim(table)
            except Exception:
                log.exception("ownership: claiming table %s failed; giving it back", table)
                self._release(table)

    def _shed(self, count: int) -> None:
        """Give back `count` tables: those held longest (one that just moved stays)."""
        for table in sorted(self._owned, key=lambda t: self._owned[t].since)[:count]:
            self._release(table)

    def _presence_key(self) -> int:
        return zlib.crc32(self.engine_id.encode()) & 0x7FFFFFFF

    def _order(self, table: str) -> int:
        """Engines try the free tables in different orders (fewer collisions)."""
        return zlib.crc32(f"{self.engine_id}/{table}".encode())

    def _release(self, table: str) -> None:
        claim = self._owned.get(table)
        if claim is None:
            return
        try:
            self.on_release(table)  # stop serving first, then let another engine claim
        finally:
            self._owned.pop(table, None)
            self.store.fences.pop(table, None)
            session = self.session
            if session is not None and session.alive:
                try:
                    session.execute("SELECT pg_advisory_unlock(%s, %s)",
                                    (LOCK_NAMESPACE, claim.key))
                except Exception as exc:  # the session broke: its locks are gone anyway
                    log.warning("ownership: unlocking %s: %s", table, exc)

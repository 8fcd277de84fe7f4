"""The PostgreSQL back-end: a venue's tables in one database (psycopg 3, a connection pool).

Tables (``cauldron_`` prefix, in the connection's search path):

- ``cauldron_inputs`` / ``cauldron_actions`` / ``cauldron_games``: the same log as SQLite's,
  with a ``table_id`` column; a hub event is unique by ``(table_id, hub_id, epoch, seq)``;
  inputs and actions refuse UPDATE and DELETE (append-only, by trigger);
- ``cauldron_venue_tables``: the venue's table list, each with the number of its advisory
  lock (`engine.service.ownership`);
- ``cauldron_schema``: the versions applied (`MIGRATIONS`, applied under an advisory lock
  so that engines starting together migrate once).

Roles: the migrations run as the database's owner (an admin role: the first
``cauldron games tables --store …`` or engine start with it). Engines log in with a role
of their own, member of ``cauldron_engine``, which may only read and insert the log, set a
game's status and claim tables through `cauldron_claim` (it cannot truncate, delete,
change the venue's list or disable a trigger: it owns nothing)::

    CREATE ROLE engine1 LOGIN PASSWORD '…' IN ROLE cauldron_engine;

Only the owner and ``cauldron_engine`` may connect to the venue's database (migration 6
revokes CONNECT from PUBLIC): any login that may connect can take any advisory lock, and
one holding a table's lock would keep every engine from serving that table (it could not
write or claim: `cauldron_claim` and the log are the engines'). Grant CONNECT to no other
login; read the games with the owner's login (`cauldron games … --store`). With
``pg_hba.conf``, also let only those roles in (``host venue +cauldron_engine … scram-sha-256``
and a line for the owner). `Ownership` names a table lock held by a session that is no
engine in its log.

An engine that owns tables writes through its own session (`PgSession`), the connection that
holds its advisory locks: when that session ends, its locks go and so do its writes, so an
engine cut off from the database can never write a table another engine has claimed.
Everything else (reads, the CLI) borrows connections from the pool.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.service.errors import StoreError
from engine.service.store.base import (
    ExportedInput,
    GameWrite,
    Migration,
    PreparedInput,
    Store,
    TableLog,
)
from engine.wire.contract import check_table_id

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

# Advisory lock namespace (the first int4 of the two-key form): "CALD".
LOCK_NAMESPACE = 0x43414C44
# An engine's presence lock ("CALE", crc32 of its id): live engines are the sessions holding
# one whose role may write the log (a visitor who can only connect is not counted).
PRESENCE_NAMESPACE = 0x43414C45
_MIGRATION_KEY = 0  # (LOCK_NAMESPACE, 0) serialises migrations; tables have keys >= 1
APPLICATION_PREFIX = "cauldron-engine:"

MIGRATIONS = (
    Migration(1, "the append-only log: inputs, actions, games; the venue's tables", """
CREATE TABLE IF NOT EXISTS cauldron_inputs (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    table_id TEXT NOT NULL,
    ts DOUBLE PRECISION NOT NULL,
    source TEXT NOT NULL,
    hub_id TEXT, epoch TEXT, seq BIGINT,
    verb TEXT, seat INTEGER,
    payload TEXT NOT NULL,
    observed TEXT,
    game_id TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS cauldron_inputs_hub_key
    ON cauldron_inputs (table_id, hub_id, epoch, seq) WHERE source = 'hub';
CREATE INDEX IF NOT EXISTS cauldron_inputs_table ON cauldron_inputs (table_id, id);
CREATE INDEX IF NOT EXISTS cauldron_inputs_new_game ON cauldron_inputs (table_id, id)
    WHERE verb = 'new_game';
CREATE TABLE IF NOT EXISTS cauldron_actions (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    table_id TEXT NOT NULL,
    input_id BIGINT NOT NULL REFERENCES cauldron_inputs (id),
    game_id TEXT NOT NULL,
    action TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cauldron_actions_table ON cauldron_actions (table_id, id);
CREATE TABLE IF NOT EXISTS cauldron_games (
    table_id TEXT NOT NULL,
    game_id TEXT NOT NULL,
    started_input BIGINT NOT NULL,
    started_ts DOUBLE PRECISION NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    updated_ts DOUBLE PRECISION NOT NULL,
    result TEXT,
    PRIMARY KEY (table_id, game_id)
);
CREATE TABLE IF NOT EXISTS cauldron_venue_tables (
    table_id TEXT PRIMARY KEY,
    lock_key INTEGER GENERATED ALWAYS AS IDENTITY UNIQUE
);
"""),
    Migration(2, "the hub cursors read by index", """
CREATE INDEX IF NOT EXISTS cauldron_inputs_hub_last ON cauldron_inputs (table_id, hub_id, id)
    WHERE source IN ('hub', 'snapshot');
"""),
    Migration(3, "the log is append-only: inputs and actions are never changed", """
CREATE OR REPLACE FUNCTION cauldron_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the table log is append-only'; END $$;
DROP TRIGGER IF EXISTS cauldron_inputs_append_only ON cauldron_inputs;
CREATE TRIGGER cauldron_inputs_append_only BEFORE UPDATE OR DELETE ON cauldron_inputs
    FOR EACH ROW EXECUTE FUNCTION cauldron_append_only();
DROP TRIGGER IF EXISTS cauldron_actions_append_only ON cauldron_actions;
CREATE TRIGGER cauldron_actions_append_only BEFORE UPDATE OR DELETE ON cauldron_actions
    FOR EACH ROW EXECUTE FUNCTION cauldron_append_only();
"""),
    Migration(4, "exactly once for commands (their transaction id and stored answer); a "
              "fencing epoch per table, bumped at each claim", """
ALTER TABLE cauldron_inputs ADD COLUMN IF NOT EXISTS txn TEXT;
ALTER TABLE cauldron_inputs ADD COLUMN IF NOT EXISTS answer TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS cauldron_inputs_txn ON cauldron_inputs (table_id, txn)
    WHERE txn IS NOT NULL;
ALTER TABLE cauldron_venue_tables ADD COLUMN IF NOT EXISTS epoch BIGINT NOT NULL DEFAULT 0;
-- A write carries its owner's epoch; a stale one (another claim since) is refused. (No
-- row lock: a claim needs the advisory lock, which a session writing still holds.)
CREATE OR REPLACE FUNCTION cauldron_fence(t TEXT, e BIGINT) RETURNS BOOLEAN
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM 1 FROM cauldron_venue_tables WHERE table_id = t AND epoch = e;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'fenced: table % was claimed again since epoch % (another engine '
            'owns it now)', t, e USING ERRCODE = 'P0003';
    END IF;
    RETURN TRUE;
END $$;
-- A claim: only by the session holding the table's advisory lock; the new epoch.
CREATE OR REPLACE FUNCTION cauldron_claim(t TEXT) RETURNS BIGINT
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    k INTEGER;
    e BIGINT;
BEGIN
    SELECT lock_key INTO k FROM cauldron_venue_tables WHERE table_id = t;
    IF k IS NULL OR NOT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid()
            AND locktype = 'advisory' AND granted AND classid = 1128352836::oid
            AND objid = k::oid AND objsubid = 2) THEN
        RAISE EXCEPTION 'table % is not locked by this session', t;
    END IF;
    UPDATE cauldron_venue_tables SET epoch = epoch + 1 WHERE table_id = t RETURNING epoch
        INTO e;
    RETURN e;
END $$;
"""),
    Migration(5, "roles: engines (role cauldron_engine) may only insert and read the log, "
              "and set a game's status; nobody may truncate it or delete a game", """
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cauldron_engine') THEN
        CREATE ROLE cauldron_engine NOLOGIN;
    END IF;
END $$;
REVOKE ALL ON cauldron_inputs, cauldron_actions, cauldron_games, cauldron_venue_tables,
    cauldron_schema FROM PUBLIC;
REVOKE ALL ON FUNCTION cauldron_claim(TEXT), cauldron_fence(TEXT, BIGINT) FROM PUBLIC;
GRANT SELECT, INSERT ON cauldron_inputs, cauldron_actions TO cauldron_engine;
GRANT SELECT, INSERT, UPDATE (status, updated_ts, result) ON cauldron_games
    TO cauldron_engine;
GRANT SELECT ON cauldron_venue_tables, cauldron_schema TO cauldron_engine;
GRANT EXECUTE ON FUNCTION cauldron_claim(TEXT), cauldron_fence(TEXT, BIGINT)
    TO cauldron_engine;
CREATE OR REPLACE FUNCTION cauldron_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the table log is append-only: % cannot be truncated', TG_TABLE_NAME;
END $$;
DROP TRIGGER IF EXISTS cauldron_inputs_no_truncate ON cauldron_inputs;
CREATE TRIGGER cauldron_inputs_no_truncate BEFORE TRUNCATE ON cauldron_inputs
    FOR EACH STATEMENT EXECUTE FUNCTION cauldron_no_truncate();
DROP TRIGGER IF EXISTS cauldron_actions_no_truncate ON cauldron_actions;
CREATE TRIGGER cauldron_actions_no_truncate BEFORE TRUNCATE ON cauldron_actions
    FOR EACH STATEMENT EXECUTE FUNCTION cauldron_no_truncate();
DROP TRIGGER IF EXISTS cauldron_games_no_truncate ON cauldron_games;
CREATE TRIGGER cauldron_games_no_truncate BEFORE TRUNCATE ON cauldron_games
    FOR EACH STATEMENT EXECUTE FUNCTION cauldron_no_truncate();
DROP TRIGGER IF EXISTS cauldron_games_no_delete ON cauldron_games;
CREATE TRIGGER cauldron_games_no_delete BEFORE DELETE ON cauldron_games
    FOR EACH ROW EXECUTE FUNCTION cauldron_append_only();
"""),
    Migration(6, "only engines (and the owner) may connect: a login that may connect can "
              "take any advisory lock, so one could hold a table's lock and keep every "
              "engine from serving it", """
DO $$ BEGIN
    EXECUTE format('REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC',
                   current_database());
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO cauldron_engine', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'cannot restrict CONNECT on database %: run the migration as its owner, '
        'or REVOKE CONNECT ON DATABASE % FROM PUBLIC yourself', current_database(),
        current_database();
END $$;
"""),
)
SCHEMA_VERSION = MIGRATIONS[-1].version
_NAMES = {"{inputs}": "cauldron_inputs", "{actions}": "cauldron_actions",
          "{games}": "cauldron_games", "{table}": "table_id = %s"}
_NAME = re.compile("|".join(re.escape(k) for k in _NAMES))
# Hub events are committed without waiting for the WAL flush (as SQLite's
# synchronous=NORMAL: an engine killed loses nothing; a database crash may lose the last
# fraction of a second of events, which the new owner asks the hubs for again, from their
# outbox). Commands, which nothing can replay, are flushed (`_transaction`).
_OPTIONS = "-c synchronous_commit=off"
# Server-side keepalives: a dead engine's session (and its locks) ends within ~15 s even when
# its machine vanishes without closing the connection (a killed process closes it at once).
_SESSION_OPTIONS = _OPTIONS + " -c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 " \
                   "-c tcp_keepalives_count=3"
# Client side: a send the server does not acknowledge fails within this (a cut cable must
# not freeze an engine for minutes), in ms.
_TCP_USER_TIMEOUT = 4000
HUNG_CALL = 5.0  # seconds: a call on an engine's session taking longer is cut (`PgSession`)
log = logging.getLogger("cauldron.engine.store")


def session_options(idle: float | None) -> str:
    """The engine session's settings. `idle` (seconds): the server ends the session, and so
    frees its locks, when the engine says nothing that long (its heartbeat stopped: a hung,
    stopped or cut-off engine), in or out of a transaction."""
    if idle is None:
        return _SESSION_OPTIONS
    ms = int(idle * 1000)
    return (f"{_SESSION_OPTIONS} -c idle_session_timeout={ms} "
            f"-c idle_in_transaction_session_timeout={ms}")


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency of the project
        raise StoreError("PostgreSQL needs psycopg 3: pip install 'psycopg[binary]' "
                         "psycopg-pool") from None
    return psycopg


def redact(url: str) -> str:
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


@dataclass(frozen=True)
class Owner:
    table: str
    engine: str | None  # the owning engine's id (None: nobody serves it now)
    address: str | None


class PgSession:
    """One engine's own connection: it holds the engine's advisory locks and does its
    writes (one at a time, behind `lock`)."""

    def __init__(self, url: str, engine_id: str, idle: float | None = None) -> None:
        pg = _psycopg()
        self.engine_id = engine_id
        self.lock = threading.RLock()
        try:
            self.conn: Connection[Any] = pg.connect(
                url, autocommit=True, application_name=(APPLICATION_PREFIX + engine_id)[:63],
                options=session_options(idle), connect_timeout=3,
                tcp_user_timeout=_TCP_USER_TIMEOUT,
                keepalives=1, keepalives_idle=5, keepalives_interval=2, keepalives_count=3)
        except pg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL {redact(url)}: {exc}") from None
        self.pid = int(self.conn.info.backend_pid)
        self._busy_since: float | None = None
        threading.Thread(target=self._watchdog, name="cauldron-pg-watchdog",
                         daemon=True).start()

    @property
    def alive(self) -> bool:
        return not self.conn.closed and not self.conn.broken

    @contextmanager
    def using(self) -> Iterator[Connection[Any]]:
        """The connection, for one call at a time; a call that hangs (a silent network
        whose packets something still acknowledges, where no TCP timeout fires) is cut
        by `_watchdog`, so no thread waits on it, holding the engine's lock, for long."""
        with self.lock:
            self._busy_since = time.monotonic()
            try:
                yield self.conn
            finally:
                self._busy_since = None

    def _watchdog(self) -> None:
        while not self.conn.closed:
            time.sleep(0.5)
            since = self._busy_since
            if since is not None and time.monotonic() - since > HUNG_CALL:
                log.warning("PostgreSQL has not answered for %.0f s: cutting the engine's "
                            "session", HUNG_CALL)
                self._cut()
                return

    def _cut(self) -> None:
        """Shut the session's socket down: a call blocked on it fails at once."""
        try:
            with socket.socket(fileno=os.dup(self.conn.pgconn.socket)) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except (OSError, ValueError, AttributeError):
            pass  # closed already

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.using() as conn:
            cur = conn.execute(sql.encode(), tuple(params))
            return cur.fetchall() if cur.description else []

    def close(self) -> None:
        if not self.lock.acquire(timeout=1.0):  # a call hangs: break it first
            self._cut()
            if not self.lock.acquire(timeout=5.0):
                return
        try:
            self.conn.close()
        finally:
            self.lock.release()


class PgTableLog(TableLog):
    """One table's log in the venue database."""

    def __init__(self, store: PostgresStore, table: str) -> None:
        super().__init__(table)
        self._store = store
        # The engine's session when the table was opened, i.e. the one holding its lock:
        # writes go only through it (None: no ownership, e.g. the CLI; the pool).
        self._session = store.session
        # The table's epoch at this engine's claim (the fencing token): every write carries
        # it and the database refuses it once another claim has bumped it.
        self.fence: int | None = store.fences.get(self.table)

    @property
    def where(self) -> str:
        return f"{self._store.redacted()} (table {self.table})"

    def close(self) -> None:
        pass  # connections belong to the store

    one_statement_append = True

    @contextmanager
    def _transaction(self, single: bool = False, durable: bool = True) -> Iterator[Any]:
        if self._session is not None and self.fence is None:
            raise StoreError(f"this engine has not claimed table {self.table}: it writes "
                             "nothing there")
        with self._store.writer(self._session, self.table) as conn:
            if single:  # one statement: its own transaction, one round trip
                yield conn
                return
            with conn.transaction():
                if self.fence is not None:
                    conn.execute("SELECT cauldron_fence(%s, %s)", (self.table, self.fence))
                if durable:
                    conn.execute("SET LOCAL synchronous_commit TO on")
                yield conn

    def _write_input(self, tx: Any, row: ExportedInput, actions: list[tuple[str, str]],
                     game: GameWrite | None, strict: bool = False) -> int | None:
        sql, params = self.input_statement(row, actions, game, strict)
        found = self._exec(tx, sql, params).fetchone()
        return None if found is None else int(found[0])

    def input_statement(self, row: ExportedInput, actions: list[tuple[str, str]],
                        game: GameWrite | None, strict: bool = False
                        ) -> tuple[str, list[Any]]:
        """One statement (a round trip costs a context switch to the server): the input,
        then its actions and game row only if the input was written (not a duplicate).
        The fence first: a stale epoch fails the whole statement (nothing written).
        `strict` (a group commit): a duplicate fails it too, so the batch rolls back."""
        params: list[Any] = []
        fence = ""
        if self.fence is not None:
            fence = "f AS (SELECT cauldron_fence(%s, %s) AS ok), "
            params += [self.table, self.fence]
        parts = [f"WITH {fence}i AS (INSERT INTO cauldron_inputs (table_id, ts, source, hub_id, "
                 "epoch, seq, verb, seat, payload, observed, game_id, txn, answer) SELECT %s, "
                 "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s"
                 + (" FROM f WHERE f.ok" if fence else "")
                 + ("" if strict else " ON CONFLICT DO NOTHING") + " RETURNING id)"]
        params += [self.table, row.ts, row.source, row.hub_id, row.epoch, row.seq, row.verb,
                   row.seat, row.payload, row.observed, row.game_id, row.txn, row.answer]
        if actions:
            parts.append("a AS (INSERT INTO cauldron_actions (table_id, input_id, game_id, "
                         "action) SELECT %s, i.id, x.g, x.a FROM i CROSS JOIN "
                         "unnest(%s::text[], %s::text[]) WITH ORDINALITY AS x(g, a, n) "
                         "ORDER BY x.n)")
            params += [self.table, [g for g, _ in actions], [a for _, a in actions]]
        if game is not None and game.config is not None:
            parts.append("g AS (INSERT INTO cauldron_games (table_id, game_id, started_input, "
                         "started_ts, config, status, updated_ts, result) SELECT %s, %s, i.id, "
                         "%s, %s, %s, %s, %s FROM i ON CONFLICT (table_id, game_id) DO UPDATE "
                         "SET status = EXCLUDED.status, updated_ts = EXCLUDED.updated_ts, "
                         "result = EXCLUDED.result)")
            params += [self.table, game.game_id, game.ts, game.config, game.status, game.ts,
                       game.result]
        elif game is not None:
            parts.append("g AS (UPDATE cauldron_games SET status = %s, updated_ts = %s, "
                         "result = %s WHERE table_id = %s AND game_id = %s AND EXISTS "
                         "(SELECT 1 FROM i))")
            params += [game.status, game.ts, game.result, self.table, game.game_id]
        return ", ".join(parts) + " SELECT id FROM i", params

    def _exec(self, tx: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        return tx.execute(sql, tuple(params))

    def _insert_input(self, tx: Any, row: ExportedInput) -> int | None:
        found = self._exec(
            tx, "INSERT INTO cauldron_inputs (table_id, ts, source, hub_id, epoch, seq, verb, "
            "seat, payload, observed, game_id, txn, answer) VALUES (%s, %s, %s, %s, %s, %s, %s, "
            "%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING id",
            (self.table, row.ts, row.source, row.hub_id, row.epoch, row.seq, row.verb,
             row.seat, row.payload, row.observed, row.game_id, row.txn, row.answer)).fetchone()
        return None if found is None else int(found[0])

    def _insert_actions(self, tx: Any, rows: list[tuple[int, str, str]]) -> None:
        # One statement for all of an input's actions (one round trip).
        values = ", ".join(["(%s, %s, %s, %s)"] * len(rows))
        params = [v for input_id, game, action in rows
                  for v in (self.table, input_id, game, action)]
        self._exec(tx, "INSERT INTO cauldron_actions (table_id, input_id, game_id, action) "
                   f"VALUES {values}", params)

    def _write_game(self, tx: Any, game_id: str, input_id: int, ts: float, status: str,
                    config: str | None, result: str | None) -> None:
        if config is not None:
            self._exec(tx, "INSERT INTO cauldron_games (table_id, game_id, started_input, "
                       "started_ts, config, status, updated_ts, result) VALUES (%s, %s, %s, "
                       "%s, %s, %s, %s, %s) ON CONFLICT (table_id, game_id) DO UPDATE SET "
                       "status = EXCLUDED.status, updated_ts = EXCLUDED.updated_ts, "
                       "result = EXCLUDED.result",
                       (self.table, game_id, input_id, ts, config, status, ts, result))
        else:
            self._exec(tx, "UPDATE cauldron_games SET status = %s, updated_ts = %s, result = %s "
                       "WHERE table_id = %s AND game_id = %s",
                       (status, ts, result, self.table, game_id))

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        count = sql.count("{table}")
        query = _NAME.sub(lambda m: _NAMES[m.group(0)], sql)
        return self._store.query(query, (self.table,) * count + tuple(params))


# A group commit of hub events as one statement over arrays (a column each), the same for
# every batch, so the server plans it once per session (psycopg prepares a statement run
# often): a statement per input, parsed and planned each time, cost the server ~0.35 ms of
# CPU an input, this ~0.1 ms. The fences first (a stale epoch raises: nothing written); the
# inputs in order; each action joined to its input by the hub event's unique key. A
# duplicate fails the statement (a unique violation), so the batch rolls back whole.
_BATCH_SQL = (
    "WITH f AS (SELECT coalesce(bool_and(cauldron_fence(x.t, x.e)), true) AS ok "
    "FROM unnest(%s::text[], %s::bigint[]) AS x(t, e)), "
    "i AS (INSERT INTO cauldron_inputs (table_id, ts, source, hub_id, epoch, seq, verb, seat, "
    "payload, observed, game_id, txn, answer) SELECT u.t, u.ts, u.src, u.h, u.e, u.s, u.v, "
    "u.seat, u.p, u.o, u.g, u.x, u.ans FROM f, unnest(%s::text[], %s::float8[], %s::text[], "
    "%s::text[], %s::text[], %s::bigint[], %s::text[], %s::int[], %s::text[], %s::text[], "
    "%s::text[], %s::text[], %s::text[]) WITH ORDINALITY "
    "AS u(t, ts, src, h, e, s, v, seat, p, o, g, x, ans, n) WHERE f.ok ORDER BY u.n "
    "RETURNING id, table_id, hub_id, epoch, seq), "
    "a AS (INSERT INTO cauldron_actions (table_id, input_id, game_id, action) "
    "SELECT x.t, i.id, x.g, x.a FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], "
    "%s::text[], %s::text[]) WITH ORDINALITY AS x(t, h, e, s, g, a, n) JOIN i ON "
    "i.table_id = x.t AND i.hub_id = x.h AND i.epoch = x.e AND i.seq = x.s ORDER BY x.n), "
    "g AS (UPDATE cauldron_games c SET status = y.st, updated_ts = y.ts, result = y.r "
    "FROM unnest(%s::text[], %s::text[], %s::text[], %s::float8[], %s::text[]) "
    "AS y(t, g, st, ts, r) WHERE c.table_id = y.t AND c.game_id = y.g) "
    "SELECT count(*) FROM i")


def _batch_arrays(batches: Sequence[tuple[TableLog, Sequence[PreparedInput]]]
                  ) -> list[list[Any]] | None:
    """`_BATCH_SQL`'s parameters, or None when the batch starts a game or holds anything
    but hub events (those take the statement per input). A game's row is updated once, as
    the batch's last input for it leaves it (all of them commit together)."""
    fences: dict[str, int] = {}
    rows: list[list[Any]] = [[] for _ in range(13)]
    acts: list[list[Any]] = [[] for _ in range(6)]
    games: dict[tuple[str, str], GameWrite] = {}
    for tlog, inputs in batches:
        assert isinstance(tlog, PgTableLog)
        if tlog.fence is not None:
            fences[tlog.table] = tlog.fence
        for prepared in inputs:
            r = prepared.row
            game = prepared.game
            if (r.source != "hub" or r.hub_id is None or r.epoch is None or r.seq is None
                    or (game is not None and game.config is not None)):
                return None
            if game is not None:
                games.pop((tlog.table, game.game_id), None)  # the last one, in order
                games[(tlog.table, game.game_id)] = game
            values: tuple[Any, ...] = (tlog.table, r.ts, r.source, r.hub_id, r.epoch, r.seq,
                                       r.verb, r.seat, r.payload, r.observed, r.game_id,
                                       r.txn, r.answer)
            for column, value in zip(rows, values, strict=True):
                column.append(value)
            for game_id, action in prepared.actions:
                values = (tlog.table, r.hub_id, r.epoch, r.seq, game_id, action)
                for column, value in zip(acts, values, strict=True):
                    column.append(value)
    updates: list[list[Any]] = [
        [t for t, _ in games], [g for _, g in games], [w.status for w in games.values()],
        [w.ts for w in games.values()], [w.result for w in games.values()]]
    return [list(fences), list(fences.values()), *rows, *acts, *updates]


class PostgresStore(Store):
    """A venue's store in PostgreSQL; tables are claimed by engines (`claims`)."""

    kind = "postgresql"
    claims = True

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 4,
                 timeout: float = 10.0) -> None:
        psycopg = _psycopg()
        from psycopg_pool import ConnectionPool, PoolTimeout

        self.url = url
        self.session: PgSession | None = None  # an engine's own connection, once it has one
        self.fences: dict[str, int] = {}  # table -> epoch of this engine's claim (ownership)
        try:  # one plain attempt first: a clear error now, not the pool's retries
            psycopg.connect(url, connect_timeout=5).close()
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL {self.redacted()}: "
                             f"{' '.join(str(exc).split())}; is it running, and may this user "
                             "connect?") from None
        self._pool: ConnectionPool[Any] = ConnectionPool(
            url, min_size=min_size, max_size=max_size, open=False,
            kwargs={"autocommit": True, "connect_timeout": 3, "options": _OPTIONS,
                    "tcp_user_timeout": _TCP_USER_TIMEOUT},
            # waiting longer for a connection than a lease lasts would only freeze an engine
            timeout=3.0,
            # a pooled connection is checked before use: after the server restarted, a
            # connection it cut is replaced instead of failing the next query
            check=ConnectionPool.check_connection, name="cauldron-store")
        try:
            self._pool.open(wait=True, timeout=timeout)
        except (PoolTimeout, psycopg.Error) as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to PostgreSQL {self.redacted()}: {exc}; is it "
                             "running, and may this user connect?") from None
        self.version = self.migrate()
        # The venue's generation: its table list's OID, new whenever the venue's tables are
        # made again (a reset or restored database), from PostgreSQL's ever-rising counter.
        self.generation = int(self.query(
            "SELECT 'cauldron_venue_tables'::regclass::oid::bigint")[0][0])

    def redacted(self) -> str:
        return redact(self.url)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        self._pool.close()

    # ------------------------------------------------------------------ connections

    @contextmanager
    def writer(self, session: PgSession | None, table: str) -> Iterator[Connection[Any]]:
        """The connection a table's writes go through: the engine session that holds the
        table's lock, refused once that session has ended or been replaced (the lock went
        with it: another engine may own the table now); without ownership, the pool."""
        if session is not None:
            if session is not self.session or not session.alive:
                raise StoreError(f"this engine no longer owns table {table}: its database "
                                 "session ended; another engine serves it")
            with session.using() as conn:
                yield conn
            return
        with self._pool.connection() as conn:
            yield conn

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        psycopg = _psycopg()
        try:
            with self._pool.connection() as conn:
                cur = conn.execute(sql, tuple(params))
                return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise StoreError(f"cannot read {self.redacted()}: {exc}") from None

    def open_session(self, engine_id: str, idle: float | None = None) -> PgSession:
        """A new own connection for an engine (replacing a broken one)."""
        if self.session is not None:
            self.session.close()
        self.fences.clear()  # claims belong to the session that made them
        self.session = PgSession(self.url, engine_id, idle)
        return self.session

    # ------------------------------------------------------------------ schema

    def migrate(self) -> int:
        psycopg = _psycopg()
        try:  # up to date: no DDL at all (an engine's role may not create anything)
            with self._pool.connection() as conn:
                found = conn.execute("SELECT to_regclass('cauldron_schema') IS NOT NULL"
                                     ).fetchone()
                if found and found[0]:
                    row = conn.execute("SELECT MAX(version) FROM cauldron_schema").fetchone()
                    if row and row[0] == SCHEMA_VERSION:
                        return SCHEMA_VERSION
        except psycopg.Error as exc:
            raise StoreError(f"cannot read the schema of {self.redacted()}: {exc}") from None
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                             (LOCK_NAMESPACE, _MIGRATION_KEY))
                conn.execute("CREATE TABLE IF NOT EXISTS cauldron_schema (version INTEGER "
                             "PRIMARY KEY, what TEXT NOT NULL, applied TIMESTAMPTZ NOT NULL "
                             "DEFAULT now())")
                row = conn.execute("SELECT MAX(version) FROM cauldron_schema").fetchone()
                version = int(row[0] or 0) if row else 0
                if version > SCHEMA_VERSION:
                    raise StoreError(f"{self.redacted()} has schema version {version}, newer "
                                     f"than this program's ({SCHEMA_VERSION}); upgrade "
                                     "cauldron-table")
                for migration in MIGRATIONS:
                    if migration.version > version:
                        with conn.transaction():  # a savepoint per version
                            conn.execute(migration.sql.encode())
                            conn.execute("INSERT INTO cauldron_schema (version, what) VALUES "
                                         "(%s, %s)", (migration.version, migration.what))
                        version = migration.version
            return version
        except psycopg.Error as exc:
            raise StoreError(f"cannot migrate {self.redacted()}: {exc}") from None

    def schema_version(self) -> int:
        return int(self.query("SELECT MAX(version) FROM cauldron_schema")[0][0] or 0)

    # ------------------------------------------------------------------ tables

    def table(self, name: str) -> PgTableLog:
        return PgTableLog(self, name)

    def append_batches(self, batches: Sequence[tuple[TableLog, Sequence[PreparedInput]]]
                       ) -> set[str]:
        """Group commit: every table's prepared inputs in one transaction and one round
        trip (their statements in one simple query: one implicit transaction, one commit),
        each statement fenced by its table's epoch. All or nothing: any error (a stale
        fence, a duplicate, the database gone) rolls it all back and every table is said
        failed (the caller then writes input by input, which finds and says which table,
        and why). Not pipeline mode: after it the server no longer ends the session when
        idle (`session_options`), and the lease depends on that."""
        psycopg = _psycopg()
        logs = [tlog for tlog, _ in batches]
        names = {tlog.table for tlog in logs}
        sessions = {id(tlog._session) for tlog in logs if isinstance(tlog, PgTableLog)}
        if len(sessions) != 1 or not all(isinstance(tlog, PgTableLog) for tlog in logs):
            return names  # opened under different sessions: one by one says which is stale
        first = logs[0]
        assert isinstance(first, PgTableLog)
        try:
            if any(isinstance(tlog, PgTableLog) and tlog._session is not None
                   and tlog.fence is None for tlog in logs):
                raise StoreError("a table of the batch is not claimed by this engine")
            arrays = _batch_arrays(batches)
            with self.writer(first._session, first.table) as conn:
                if arrays is not None:  # one statement, planned once per session
                    stored = conn.execute(_BATCH_SQL, arrays).fetchone()
                    if stored is None or stored[0] != len(arrays[2]):
                        raise StoreError("the group commit stored fewer inputs than it had")
                else:  # a game row too (a start, a status change): a statement per input
                    statements: list[str] = []
                    params: list[Any] = []
                    for tlog, inputs in batches:
                        assert isinstance(tlog, PgTableLog)
                        for prepared in inputs:
                            sql, values = tlog.input_statement(
                                prepared.row, prepared.actions, prepared.game, strict=True)
                            statements.append(sql)
                            params += values
                    # Parameters bound by the client: the only way to send many statements
                    # in one message (the server runs them as one transaction).
                    psycopg.ClientCursor(conn).execute("; ".join(statements).encode(),
                                                       params)
        except (psycopg.Error, StoreError) as exc:
            log.debug("group commit of %d tables rolled back: %s", len(batches), exc)
            for tlog in logs:
                tlog.discard()
            return names
        for tlog, inputs in batches:
            tlog.committed(inputs)
        return set()

    def tables(self) -> list[str]:
        return [r[0] for r in self.query(
            "SELECT DISTINCT table_id FROM cauldron_inputs ORDER BY table_id")]

    def has_table(self, name: str) -> bool:
        return bool(self.query("SELECT 1 FROM cauldron_inputs WHERE table_id = %s LIMIT 1",
                               (name,)))

    def venue_tables(self) -> list[str] | None:
        return [r[0] for r in self.query(
            "SELECT table_id FROM cauldron_venue_tables ORDER BY table_id")]

    def lock_keys(self) -> dict[str, int]:
        """Each venue table's advisory lock number."""
        return {t: int(k) for t, k in self.query(
            "SELECT table_id, lock_key FROM cauldron_venue_tables")}

    def set_venue_tables(self, add: Sequence[str] = (), remove: Sequence[str] = ()) -> list[str]:
        psycopg = _psycopg()
        added = [check_table_id(n) for n in add]
        try:
            with self._pool.connection() as conn, conn.transaction():
                for name in added:
                    conn.execute("INSERT INTO cauldron_venue_tables (table_id) VALUES (%s) "
                                 "ON CONFLICT DO NOTHING", (name,))
                for name in remove:
                    conn.execute("DELETE FROM cauldron_venue_tables WHERE table_id = %s",
                                 (name,))
        except psycopg.Error as exc:
            raise StoreError(f"cannot change the venue's tables in {self.redacted()}: "
                             f"{exc}") from None
        return self.venue_tables() or []

    # ------------------------------------------------------------------ ownership (read)

    def live_engines(self) -> list[str]:
        """Engines with a session on this database now (their ids)."""
        return sorted(self.live_sessions().values())

    def live_sessions(self) -> dict[int, str]:
        """Engine sessions now: backend pid -> engine id. An engine holds its presence lock,
        and its role may write the log: a session that only names itself like an engine,
        or a visitor that takes the lock without that right, is not counted."""
        rows = self.query(
            "SELECT l.pid, a.application_name FROM pg_locks l "
            "JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s::oid "
            "AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database WHERE "
            "datname = current_database()) "
            "AND has_table_privilege(a.usesysid, 'cauldron_inputs', 'INSERT')",
            (PRESENCE_NAMESPACE,))
        return {int(pid): (app or "")[len(APPLICATION_PREFIX):] or f"pid-{pid}"
                for pid, app in rows}

    def lock_holders(self) -> dict[int, int]:
        """Each held table lock (its key) and the backend pid holding it."""
        return {int(k): int(p) for k, p in self.query(
            "SELECT objid::bigint, pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = %s::oid AND objsubid = 2 AND database = (SELECT oid FROM "
            "pg_database WHERE datname = current_database())", (LOCK_NAMESPACE,))}

    def owners(self) -> list[Owner]:
        """Every venue table and the engine holding its lock now."""
        rows = self.query(
            "SELECT v.table_id, a.application_name, host(a.client_addr) "
            "FROM cauldron_venue_tables v "
            "LEFT JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted "
            "  AND l.classid = %s::oid AND l.objid = v.lock_key::oid AND l.objsubid = 2 "
            "  AND l.database = (SELECT oid FROM pg_database WHERE datname = "
            "current_database()) "
            "LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
            "ORDER BY v.table_id", (LOCK_NAMESPACE,))
        return [Owner(t, app[len(APPLICATION_PREFIX):] if app else None, addr)
                for t, app, addr in rows]

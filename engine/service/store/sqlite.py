"""The SQLite back-end (the embedded default): one log file per table.

Layout under the data dir (default ``$XDG_DATA_HOME/cauldron/engine`` or
``~/.local/share/cauldron/engine``)::

    tables/<table>.sqlite     inputs, actions, games (`engine.service.store.base`)
    venue.toml                optional: the venue's table list (``tables = [...]``)

WAL with ``synchronous=NORMAL``: a killed process loses no committed input. The schema
version is SQLite's ``user_version``; `MIGRATIONS` bring an older file up to date when it
is opened.
"""

from __future__ import annotations

import os
import re
import sqlite3
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.datadir import data_dir
from engine.service.errors import StoreError
from engine.service.store.base import ExportedInput, Migration, Store, TableLog
from engine.wire.auth import private_dir
from engine.wire.contract import TopicError, check_table_id

MIGRATIONS = (
    Migration(1, "the append-only log: inputs, actions, games", """
CREATE TABLE IF NOT EXISTS inputs (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    source TEXT NOT NULL,            -- 'hub', 'snapshot' or 'cmd'
    hub_id TEXT, epoch TEXT, seq INTEGER,
    verb TEXT, seat INTEGER,
    payload TEXT NOT NULL,           -- hub event JSON, or command args JSON
    observed TEXT,                   -- new_game only: what the readers saw
    game_id TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS inputs_hub_key ON inputs(hub_id, epoch, seq)
    WHERE source = 'hub';
CREATE INDEX IF NOT EXISTS inputs_new_game ON inputs(id) WHERE verb = 'new_game';
CREATE TABLE IF NOT EXISTS actions (
    id INTEGER PRIMARY KEY,
    input_id INTEGER NOT NULL,
    game_id TEXT NOT NULL,
    action TEXT NOT NULL             -- rules action wire JSON, or {"type": "undo", ...}
);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    started_input INTEGER NOT NULL,
    started_ts REAL NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    updated_ts REAL NOT NULL,
    result TEXT
);
"""),
    Migration(2, "the hub cursors read by index", """
CREATE INDEX IF NOT EXISTS inputs_hub_last ON inputs(hub_id, id)
    WHERE source IN ('hub', 'snapshot');
"""),
    Migration(3, "the log is append-only: inputs and actions are never changed", """
CREATE TRIGGER IF NOT EXISTS inputs_append_only BEFORE UPDATE ON inputs
    BEGIN SELECT RAISE(ABORT, 'the table log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS inputs_no_delete BEFORE DELETE ON inputs
    BEGIN SELECT RAISE(ABORT, 'the table log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS actions_append_only BEFORE UPDATE ON actions
    BEGIN SELECT RAISE(ABORT, 'the table log is append-only'); END;
"""),
    Migration(4, "exactly once for commands: their transaction id and stored answer", """
ALTER TABLE inputs ADD COLUMN txn TEXT;
ALTER TABLE inputs ADD COLUMN answer TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS inputs_txn ON inputs(txn) WHERE txn IS NOT NULL;
"""),
)
SCHEMA_VERSION = MIGRATIONS[-1].version
_NAMES = {"{inputs}": "inputs", "{actions}": "actions", "{games}": "games", "{table}": "1 = 1"}
_NAME = re.compile("|".join(re.escape(k) for k in _NAMES))


def default_data_dir() -> Path:
    return data_dir("engine")


def table_path(data_dir: Path, table: str) -> Path:
    return data_dir / "tables" / f"{check_table_id(table)}.sqlite"


def stored_tables(data_dir: Path) -> list[str]:
    folder = data_dir / "tables"
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.sqlite"))


def migrate(db: sqlite3.Connection, where: object) -> int:
    """Apply the migrations a file lacks, each in one transaction; its schema version."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(f"{where} has schema version {version}, newer than this program's "
                         f"({SCHEMA_VERSION}); upgrade cauldron-table")
    for migration in MIGRATIONS:
        if migration.version <= version:
            continue
        try:
            db.execute("BEGIN IMMEDIATE")
            for statement in _statements(migration.sql):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {migration.version}")
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"cannot migrate {where} to version {migration.version} "
                             f"({migration.what}): {exc}") from None
        version = migration.version
    return version


def _statements(sql: str) -> Iterator[str]:
    """Split a migration into statements (triggers keep their inner ``;``)."""
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if line.lstrip().startswith("--") and not buffer.strip():
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()


class TableStore(TableLog):
    """The log of one table in its own SQLite file."""

    def __init__(self, path: Path, table: str) -> None:
        super().__init__(table)
        self.path = path
        try:
            private_dir(path.parent.parent)  # the data dir, when new
            private_dir(path.parent, tighten=path.parent.name == "tables")
            # 0600 from its creation; SQLite gives its -wal and -shm files the same mode.
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self.version = migrate(self._db, path)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the table log {path}: {exc}") from None

    @classmethod
    def open(cls, data_dir: Path, table: str) -> TableStore:
        return cls(table_path(data_dir, table), table)

    @property
    def where(self) -> str:
        return str(self.path)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self, single: bool = False,
                     durable: bool = True) -> Iterator[sqlite3.Connection]:
        db = self._db
        if single:  # one statement: atomic by itself (autocommit), no BEGIN/COMMIT calls
            yield db
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        try:
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _exec(self, tx: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        return tx.execute(sql, tuple(params))

    def _insert_input(self, tx: Any, row: ExportedInput) -> int | None:
        cur = self._exec(
            tx, "INSERT INTO inputs (ts, source, hub_id, epoch, seq, verb, seat, payload, "
            "observed, game_id, txn, answer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (row.ts, row.source, row.hub_id, row.epoch, row.seq, row.verb, row.seat,
             row.payload, row.observed, row.game_id, row.txn, row.answer))
        return int(cur.lastrowid) if cur.rowcount > 0 else None

    def _insert_actions(self, tx: Any, rows: list[tuple[int, str, str]]) -> None:
        self._exec_many(tx, "INSERT INTO actions (input_id, game_id, action) VALUES (?, ?, ?)",
                        rows)

    def _exec_many(self, tx: Any, sql: str, rows: list[tuple[Any, ...]]) -> None:
        for row in rows:
            self._exec(tx, sql, row)

    def _write_game(self, tx: Any, game_id: str, input_id: int, ts: float, status: str,
                    config: str | None, result: str | None) -> None:
        if config is not None:
            self._exec(tx, "INSERT OR REPLACE INTO games (game_id, started_input, started_ts, "
                       "config, status, updated_ts, result) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (game_id, input_id, ts, config, status, ts, result))
        else:
            self._exec(tx, "UPDATE games SET status = ?, updated_ts = ?, result = ? "
                       "WHERE game_id = ?", (status, ts, result, game_id))

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        query = _NAME.sub(lambda m: _NAMES[m.group(0)], sql).replace("%s", "?")
        try:
            return self._db.execute(query, tuple(params)).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the table log {self.path}: {exc}") from None


class SqliteStore(Store):
    """Every table's log as its own file under a data dir."""

    kind = "sqlite"

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir

    def table(self, name: str) -> TableStore:
        return TableStore.open(self.data_dir, name)

    def tables(self) -> list[str]:
        return stored_tables(self.data_dir)

    def has_table(self, name: str) -> bool:
        return table_path(self.data_dir, name).exists()

    @property
    def venue_file(self) -> Path:
        return self.data_dir / "venue.toml"

    def venue_tables(self) -> list[str] | None:
        path = self.venue_file
        if not path.exists():
            return None
        try:
            data = tomllib.loads(path.read_text())
            names = data.get("tables", [])
            if not isinstance(names, list):
                raise StoreError(f"{path}: tables must be a list of table ids")
            return sorted({check_table_id(str(n)) for n in names})
        except (OSError, ValueError, TopicError) as exc:
            raise StoreError(f"cannot read the venue's table list {path}: {exc}") from None

    def set_venue_tables(self, add: Sequence[str] = (), remove: Sequence[str] = ()) -> list[str]:
        names = (set(self.venue_tables() or []) | {check_table_id(n) for n in add}) - set(remove)
        private_dir(self.data_dir)
        listed = ", ".join(f'"{n}"' for n in sorted(names))
        tmp = self.venue_file.with_suffix(".tmp")
        tmp.write_text("# The venue's tables (`cauldron games tables`); others are refused.\n"
                       f"tables = [{listed}]\n")
        tmp.replace(self.venue_file)
        return sorted(names)

    def schema_version(self) -> int:
        return SCHEMA_VERSION

    def redacted(self) -> str:
        return str(self.data_dir)

"""Persistence: one append-only SQLite log per table; games rebuilt by replaying it.

Layout under the data dir (default ``$XDG_DATA_HOME/cauldron/engine`` or
``~/.local/share/cauldron/engine``)::

    tables/<table>.sqlite     inputs (every accepted hub event and command, in order),
                              actions (the rules actions each produced), games

Every accepted input is written, with the actions it produced, in one transaction before the
service publishes anything or answers (WAL, ``synchronous=NORMAL``: a killed process loses
nothing). Each hub's last stored ``(epoch, seq)`` is where it resumes, so duplicates stay
duplicates after a restart. A ``new_game`` command row carries what the readers saw at that
moment, so an open game is rebuilt by replaying from its ``new_game`` row onwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.rules import Action
from engine.service.errors import StoreError
from engine.service.interpreter import (
    UNKNOWN_PREFIX,
    SensorInput,
    SensorKind,
    Status,
    TableInterpreter,
)
from engine.wire.auth import private_dir
from engine.wire.contract import HubEvent, HubSnapshot, check_table_id, parse_cell

_SCHEMA = """
CREATE TABLE IF NOT EXISTS inputs (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    source TEXT NOT NULL,            -- 'hub' or 'cmd'
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
"""


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cauldron" / "engine"


def snapshot_state(snapshot: HubSnapshot) -> tuple[dict[int, str], dict[int, str]]:
    """What a hub snapshot says lies on each cell and pad (unknown tags as ``uid:…``)."""
    cells: dict[int, str] = {}
    pads: dict[int, str] = {}
    for reader in snapshot.readers:
        if reader.uid is None:
            continue
        seen = reader.card_id or f"{UNKNOWN_PREFIX}{reader.uid}"
        if reader.cell is not None:
            row, col = parse_cell(reader.cell)
            cells[row * 6 + col] = seen
        elif reader.seat is not None:
            pads[reader.seat] = seen
    return cells, pads


def sensor_input(event: HubEvent) -> SensorInput | None:
    """A hub event as an interpreter input (None for pawn sensors and reader health)."""
    if event.kind == "button":
        assert event.button is not None
        return SensorInput("button", button=event.button, seat=event.seat, ts=event.ts)
    if event.kind not in ("cell", "pad", "unknown_tag") or event.action == "pressed":
        return None
    action: SensorKind = "placed" if event.action == "placed" else "removed"
    card = event.card_id if event.kind != "unknown_tag" else None
    if event.cell is not None:
        row, col = parse_cell(event.cell)
        return SensorInput(action, cell=row * 6 + col, card=card, uid=event.uid, ts=event.ts)
    if event.seat is not None:
        return SensorInput(action, pad=event.seat, card=card, uid=event.uid, ts=event.ts)
    return None


@dataclass(frozen=True)
class GameRow:
    table: str
    game_id: str
    started_ts: float
    updated_ts: float
    status: str
    config: dict[str, Any]
    result: dict[str, Any] | None


@dataclass(frozen=True)
class StoredInput:
    id: int
    source: str
    payload: str
    verb: str | None
    seat: int | None
    ts: float
    observed: str | None


class TableStore:
    """The log of one table."""

    def __init__(self, path: Path, table: str) -> None:
        self.path = path
        self.table = check_table_id(table)
        try:
            private_dir(path.parent)
            # 0600 from its creation; SQLite gives its -wal and -shm files the same mode.
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the table log {path}: {exc}") from None
        self._status: dict[str, str] = {}  # last game status written, per game

    @classmethod
    def open(cls, data_dir: Path, table: str) -> TableStore:
        return cls(table_path(data_dir, table), table)

    def close(self) -> None:
        self._db.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on *any* error (a bad value, a full disk,
        an exception in between): no half-written input, and no transaction left open
        for the next write to land in and be lost with. Errors come out as `StoreError`."""
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            yield db
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error | ValueError | OverflowError | TypeError):
                raise StoreError(f"cannot write the table log {self.path}: {exc}") from None
            raise

    def probe(self) -> None:
        """Write (and commit) a little, to see whether the log can be written again."""
        with self._transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS probe (id INTEGER PRIMARY KEY, ts REAL)")
            db.execute("INSERT OR REPLACE INTO probe (id, ts) VALUES (1, julianday('now'))")

    # ------------------------------------------------------------------ writing

    def append(
        self,
        *,
        ts: float,
        interp: TableInterpreter,
        actions: list[Action],
        hub_event: HubEvent | None = None,
        verb: str | None = None,
        args: dict[str, Any] | None = None,
        seat: int | None = None,
        observed: dict[str, Any] | None = None,
        undone: int = 0,
    ) -> bool:
        """Write one accepted input and what it did, atomically. False: a duplicate hub
        event (already stored; nothing written)."""
        db = self._db
        game_id = interp.game_id
        status = interp.status.value
        game_rows = game_id is not None and (
            bool(actions) or bool(undone) or verb is not None
            or self._status.get(game_id) != status)
        with self._transaction():
            if hub_event is not None:
                cur = self._insert_hub_event(ts, hub_event, game_id)
                if cur.rowcount == 0 or not game_rows:  # a duplicate; or nothing else to add
                    return cur.rowcount > 0
            else:
                cur = db.execute(
                    "INSERT INTO inputs (ts, source, verb, seat, payload, observed, game_id) "
                    "VALUES (?, 'cmd', ?, ?, ?, ?, ?)",
                    (ts, verb, seat, json.dumps(args or {}),
                     json.dumps(observed) if observed is not None else None, game_id),
                )
            input_id = cur.lastrowid
            if game_id is not None and game_rows:
                rows = [(input_id, game_id, json.dumps(a.to_wire())) for a in actions]
                if undone:
                    rows.insert(0, (input_id, game_id, json.dumps({"type": "undo",
                                                                   "count": undone})))
                db.executemany(
                    "INSERT INTO actions (input_id, game_id, action) VALUES (?, ?, ?)", rows
                )
                self._game_row(interp, input_id, ts, verb == "new_game")
        if game_id is not None and game_rows:  # only once committed
            self._status[game_id] = status
        return True

    def append_snapshot(self, snapshot: HubSnapshot, interp: TableInterpreter) -> None:
        """Store a hub snapshot the interpreter resynchronised from."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO inputs (ts, source, hub_id, epoch, seq, payload, game_id) "
                "VALUES (?, 'snapshot', ?, ?, ?, ?, ?)",
                (snapshot.ts, snapshot.hub_id, snapshot.epoch, snapshot.last_seq,
                 snapshot.model_dump_json(), interp.game_id),
            )

    def _insert_hub_event(self, ts: float, event: HubEvent,
                          game_id: str | None) -> sqlite3.Cursor:
        return self._db.execute(
            "INSERT OR IGNORE INTO inputs (ts, source, hub_id, epoch, seq, payload, game_id) "
            "VALUES (?, 'hub', ?, ?, ?, ?, ?)",
            (ts, event.hub_id, event.epoch, event.seq, event.model_dump_json(), game_id),
        )

    def _game_row(self, interp: TableInterpreter, input_id: int | None, ts: float,
                  new: bool) -> None:
        result = None
        if interp.game is not None and interp.status is Status.OVER:
            result = json.dumps(interp.game.scores().to_json())
        if new:
            config = interp.config.to_wire() if interp.config else {}
            self._db.execute(
                "INSERT OR REPLACE INTO games (game_id, started_input, started_ts, config, "
                "status, updated_ts, result) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (interp.game_id, input_id, ts, json.dumps(config), interp.status.value, ts,
                 result),
            )
        else:
            self._db.execute(
                "UPDATE games SET status = ?, updated_ts = ?, result = ? WHERE game_id = ?",
                (interp.status.value, ts, result, interp.game_id),
            )

    # ------------------------------------------------------------------ reading

    def hub_positions(self) -> dict[str, tuple[str, int]]:
        rows = self._db.execute(
            "SELECT hub_id, epoch, seq FROM inputs WHERE id IN "
            "(SELECT MAX(id) FROM inputs WHERE source IN ('hub', 'snapshot') GROUP BY hub_id)"
        ).fetchall()
        return {hub: (epoch, seq) for hub, epoch, seq in rows}

    def seen(self, event: HubEvent) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM inputs WHERE source = 'hub' AND hub_id = ? AND epoch = ? AND seq = ?",
            (event.hub_id, event.epoch, event.seq),
        ).fetchone()
        return row is not None

    def count_inputs(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM inputs").fetchone()[0])

    def _inputs(self, first_id: int, last_id: int | None = None) -> Iterator[StoredInput]:
        query = ("SELECT id, source, payload, verb, seat, ts, observed FROM inputs "
                 "WHERE id >= ?" + (" AND id < ?" if last_id is not None else "") + " ORDER BY id")
        params: tuple[int, ...] = (first_id,) if last_id is None else (first_id, last_id)
        for row in self._db.execute(query, params):
            yield StoredInput(*row)

    def games(self) -> list[GameRow]:
        rows = self._db.execute(
            "SELECT game_id, started_ts, updated_ts, status, config, result FROM games "
            "ORDER BY started_input"
        ).fetchall()
        return [GameRow(self.table, g, s, u, st, json.loads(c), json.loads(r) if r else None)
                for g, s, u, st, c, r in rows]

    def rebuild(self, game_id: str | None = None) -> TableInterpreter:
        """The interpreter as it stands after the last input (or, with `game_id`, at the end
        of that game: just before the next new_game)."""
        if game_id is None:
            row = self._db.execute(
                "SELECT MAX(id) FROM inputs WHERE verb = 'new_game'").fetchone()
            start, end = (row[0] or 1), None
        else:
            row = self._db.execute(
                "SELECT started_input FROM games WHERE game_id = ?", (game_id,)).fetchone()
            if row is None:
                raise StoreError(f"no game {game_id!r} in table {self.table}; list them with "
                                 "`cauldron games`")
            start = row[0]
            nxt = self._db.execute(
                "SELECT MIN(id) FROM inputs WHERE verb = 'new_game' AND id > ?", (start,)
            ).fetchone()
            end = nxt[0]
        interp: TableInterpreter | None = None
        for stored in self._inputs(start, end):
            if interp is None:
                observed = json.loads(stored.observed) if stored.observed else {}
                interp = TableInterpreter.from_observed(self.table, observed)
            replay_input(interp, stored)
        return interp or TableInterpreter(self.table)


def replay_input(interp: TableInterpreter, stored: StoredInput) -> None:
    """Feed one stored input to the interpreter again (crash recovery, `games show`)."""
    if stored.source == "hub":
        try:
            event = HubEvent.model_validate_json(stored.payload)
        except ValueError as exc:  # written by us: only a damaged file gets here
            raise StoreError(f"input #{stored.id} is damaged: {exc}") from None
        inp = sensor_input(event)
        if inp is not None:
            interp.handle(inp)
        return
    if stored.source == "snapshot":
        snapshot = HubSnapshot.model_validate_json(stored.payload)
        interp.resync(*snapshot_state(snapshot), ts=stored.ts)
        return
    assert stored.verb is not None
    interp.command(stored.verb, json.loads(stored.payload), seat=stored.seat, ts=stored.ts)


def table_path(data_dir: Path, table: str) -> Path:
    return data_dir / "tables" / f"{check_table_id(table)}.sqlite"


def stored_tables(data_dir: Path) -> list[str]:
    folder = data_dir / "tables"
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.sqlite"))


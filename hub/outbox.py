"""The hub's on-disk outbox: nothing produced by the readers is lost.

Every event is written to SQLite (WAL) *before* it is published, under the next sequence
number; it is marked delivered only when the broker's QoS 1 PUBACK arrives. After a restart
the undelivered events are published again, in order. Delivered events are kept (the last
``keep``) so the hub can answer ``hub/cmd/replay`` for a consumer that missed some.

``epoch`` names this outbox's lifetime: it is created with the database and kept across
restarts, so ``(epoch, seq)`` identifies an event for ever; deleting the file starts a new
epoch and consumers start that hub afresh.

It also keeps what those events say lies on each reader (``readers``: reader -> UID and the
card id the event named it, `Lying`), updated in the transaction that stores the event, so
after a kill the two never disagree: on start the hub seeds its back-end with `reader_state`
and reports only what changed while it was down (a card lifted meanwhile is ``removed``,
under the name it was laid with: `reader_names`, even if the tag map changed meanwhile).

And when each tag was last laid or lifted (``seen``, `last_seen`), in that transaction too:
a spare for a kind retires the tag of the kind's piece not seen the longest (`hub.enroll`).

A write the disk refuses (read-only, full) raises `OutboxError` naming why.

Durability: ``synchronous=NORMAL`` in WAL mode survives a killed process (kill -9); use
``durable=True`` (``synchronous=FULL``) to survive a power cut too, at one fsync per event.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from engine.datadir import disk_trouble
from hub.errors import OutboxError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    created REAL NOT NULL,
    delivered REAL
);
CREATE INDEX IF NOT EXISTS events_undelivered ON events(seq) WHERE delivered IS NULL;
CREATE TABLE IF NOT EXISTS readers (reader INTEGER PRIMARY KEY, uid TEXT NOT NULL,
                                    card_id TEXT);
CREATE TABLE IF NOT EXISTS commands (txid TEXT PRIMARY KEY, deadline REAL NOT NULL);
CREATE TABLE IF NOT EXISTS seen (uid TEXT PRIMARY KEY, at REAL NOT NULL);
"""


@dataclass(frozen=True)
class Lying:
    """What an event said lies on a reader: the tag and the card it named (None: an unknown
    tag). Stored, it keeps the event's meaning across a change of the tag map."""

    uid: str
    card_id: str | None


@dataclass(frozen=True)
class OutboxRow:
    seq: int
    topic: str
    payload: bytes
    delivered: bool


class Outbox:
    """A durable, ordered queue of (topic, payload) with per-row delivery marks."""

    def __init__(self, path: Path | str, keep: int = 20_000, durable: bool = False) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.keep = keep
        self._lock = threading.Lock()
        with self._writing("open the outbox"):
            self._db = sqlite3.connect(str(path), check_same_thread=False,
                                       isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self._db.executescript(_SCHEMA)
            if not _has_column(self._db, "readers", "card_id"):  # an outbox from before
                self._db.execute("ALTER TABLE readers ADD COLUMN card_id TEXT")
            row = self._db.execute("SELECT value FROM meta WHERE key='epoch'").fetchone()
            if row is None:
                epoch = f"{time.strftime('%Y%m%d')}-{uuid.uuid4().hex[:8]}"
                self._db.execute("INSERT INTO meta VALUES ('epoch', ?)", (epoch,))
                self._db.execute("INSERT INTO meta VALUES ('last_seq', '0')")
        self.epoch: str = self._meta("epoch")
        self._last_seq = int(self._meta("last_seq"))
        self._appended = 0

    def _meta(self, key: str) -> str:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0])

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def append(
        self,
        topic: str,
        make_payload: Callable[[int], bytes],
        readers: Mapping[int, Lying | str | None] | None = None,
    ) -> tuple[int, bytes]:
        """Store the next event; ``make_payload(seq)`` builds it. Returns (seq, payload).

        ``readers`` (reader -> `Lying`, or a bare UID when no name is known, None for empty)
        is what the event says now lies on its reader(s); it is stored in the same
        transaction as the event."""
        with self._lock, self._writing("store an event"):
            seq = self._last_seq + 1
            payload = make_payload(seq)
            now = time.time()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO events (seq, topic, payload, created) VALUES (?, ?, ?, ?)",
                    (seq, topic, payload, now),
                )
                self._db.execute("UPDATE meta SET value=? WHERE key='last_seq'", (str(seq),))
                for reader, lying in (readers or {}).items():
                    if lying is None:  # lifted: the tag that lay there was seen now
                        self._db.execute("INSERT OR REPLACE INTO seen SELECT uid, ? FROM "
                                         "readers WHERE reader=?", (now, reader))
                        self._db.execute("DELETE FROM readers WHERE reader=?", (reader,))
                        continue
                    # '' names an unknown tag; NULL: no name known (named by the map).
                    uid, card = ((lying, None) if isinstance(lying, str)
                                 else (lying.uid, lying.card_id or ""))
                    self._db.execute("INSERT OR REPLACE INTO readers VALUES (?, ?, ?)",
                                     (reader, uid, card))
                    self._db.execute("INSERT OR REPLACE INTO seen VALUES (?, ?)", (uid, now))
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # a failed COMMIT has rolled back already
                    self._db.execute("ROLLBACK")
                raise
            self._last_seq = seq
            self._appended += 1
            if self._appended % 1000 == 0:
                self._prune()
            return seq, payload

    def reader_state(self) -> dict[int, str]:
        """What the stored events say lies on each reader: reader -> UID (empty readers are
        left out)."""
        with self._lock:
            rows = self._db.execute("SELECT reader, uid FROM readers ORDER BY reader").fetchall()
        return {int(r): str(u) for r, u in rows}

    def reader_names(self) -> dict[int, Lying]:
        """What the stored events named on each reader (readers stored with no name, by an
        outbox from before names were kept, are left out)."""
        with self._lock:
            rows = self._db.execute("SELECT reader, uid, card_id FROM readers "
                                    "WHERE card_id IS NOT NULL ORDER BY reader").fetchall()
        return {int(r): Lying(str(u), str(c) or None) for r, u, c in rows}

    def last_seen(self) -> dict[str, float]:
        """When each tag was last laid on or lifted from a reader, by the stored events:
        UID -> time (tags never seen are left out)."""
        with self._lock:
            rows = self._db.execute("SELECT uid, at FROM seen").fetchall()
        return {str(u): float(a) for u, a in rows}

    def claim_command(self, txid: str, deadline: float, now: float) -> bool:
        """Note a signed command's transaction until its deadline; False when it was noted
        before (a replay, also across a restart of the hub)."""
        with self._lock, self._writing("note a command"):
            self._db.execute("DELETE FROM commands WHERE deadline < ?", (now,))
            cursor = self._db.execute("INSERT OR IGNORE INTO commands VALUES (?, ?)",
                                      (txid, deadline))
            return cursor.rowcount == 1

    def command_claimed(self, txid: str, now: float) -> bool:
        """Whether a command's transaction is noted and not yet past its deadline (reads
        only: works on a disk that takes no write)."""
        with self._lock:
            row = self._db.execute("SELECT 1 FROM commands WHERE txid=? AND deadline >= ?",
                                   (txid, now)).fetchone()
        return row is not None

    def mark_delivered(self, seq: int) -> None:
        with self._lock, self._writing("mark an event delivered"):
            self._db.execute(
                "UPDATE events SET delivered=? WHERE seq=? AND delivered IS NULL",
                (time.time(), seq),
            )

    def undelivered(self) -> list[OutboxRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, topic, payload FROM events WHERE delivered IS NULL ORDER BY seq"
            ).fetchall()
        return [OutboxRow(int(s), str(t), bytes(p), False) for s, t, p in rows]

    def undelivered_before(self, created_before: float, limit: int = 500) -> list[OutboxRow]:
        """Undelivered events older than ``created_before`` (unix time), oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, topic, payload FROM events WHERE delivered IS NULL AND created < ? "
                "ORDER BY seq LIMIT ?",
                (created_before, limit),
            ).fetchall()
        return [OutboxRow(int(s), str(t), bytes(p), False) for s, t, p in rows]

    def pending_count(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM events WHERE delivered IS NULL").fetchone()
        return int(row[0])

    def rows(self, from_seq: int, to_seq: int | None = None) -> list[OutboxRow]:
        """Kept events from ``from_seq`` to ``to_seq`` (inclusive), in order (for replay)."""
        upto = self._last_seq if to_seq is None else to_seq
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, topic, payload, delivered FROM events WHERE seq BETWEEN ? AND ? "
                "ORDER BY seq",
                (from_seq, upto),
            ).fetchall()
        return [OutboxRow(int(s), str(t), bytes(p), d is not None) for s, t, p, d in rows]

    def _prune(self) -> None:
        self._db.execute(
            "DELETE FROM events WHERE delivered IS NOT NULL AND seq <= ?",
            (self._last_seq - self.keep,),
        )

    @contextlib.contextmanager
    def _writing(self, what: str) -> Iterator[None]:
        """SQLite's operational errors (a read-only or full disk...) as `OutboxError`."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            trouble = disk_trouble(exc, self.path.parent)
            raise OutboxError(f"cannot {what} in {self.path} ({trouble.words}; SQLite: "
                              f"{exc})", trouble) from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return any(row[1] == column for row in db.execute(f"PRAGMA table_info({table})"))

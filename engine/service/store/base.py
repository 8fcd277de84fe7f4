"""The store interface: an append-only log per table (and game), hub cursors, exactly-once.

Two back-ends implement it, chosen by URL (`engine.service.store.open_store`): SQLite (one
file per table, the embedded default) and PostgreSQL (one database for a venue, where table
ownership follows advisory locks, `engine.service.ownership`).

What each back-end keeps, per table:

- ``inputs``: every accepted hub event, hub snapshot and command, in order (append-only);
- ``actions``: the rules actions each input produced, per game;
- ``games``: one summary row per game (status, result);
- the hub cursors: each hub's last stored ``(epoch, seq)``, read back from ``inputs``.

Exactly-once: a hub event is unique by ``(table, hub, epoch, seq)``, and a command by its
transaction id (stored with its answer); either is written in the same transaction as the
actions it produced, so a copy that comes again (a resend, a replay after failover or a
restart) writes nothing, and a repeated command gets the stored answer (`stored_answer`).
**Every write runs in one transaction that is rolled back on any error**
(`TableLog._atomic`): all rows of an input or none, whatever fails where. A ``new_game``
command row carries what the readers saw at that moment, so an open game is
rebuilt by replaying from its ``new_game`` row onwards.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from engine import games
from engine.games.base import UNKNOWN_TAG, Interpreter, Sensed, UnknownGame, WireItem
from engine.service.errors import StoreError
from engine.wire.contract import HubEvent, HubSnapshot, check_table_id


@dataclass(frozen=True)
class Migration:
    """One versioned schema change; applied in order, each in its own transaction."""

    version: int
    what: str
    sql: str


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


@dataclass(frozen=True)
class GameWrite:
    """A game's summary row as an input leaves it (`config`: the game starts here)."""

    game_id: str
    ts: float
    status: str
    config: str | None
    result: str | None


@dataclass(frozen=True)
class ExportedInput:
    """One input with its actions, as `cauldron games export` writes it (JSON lines)."""

    source: str
    ts: float
    hub_id: str | None
    epoch: str | None
    seq: int | None
    verb: str | None
    seat: int | None
    payload: str
    observed: str | None
    game_id: str | None
    actions: list[tuple[str, str]]  # (game_id, action JSON)
    txn: str | None = None  # a command's transaction id: unique per table (exactly once)
    answer: str | None = None  # a command's answer (JSON), given again to a repeat


@dataclass(frozen=True)
class PreparedInput:
    """One input's rows, ready to write (`TableLog.prepare`)."""

    row: ExportedInput
    actions: list[tuple[str, str]]  # (game_id, action JSON)
    game: GameWrite | None
    single: bool  # one statement, atomic alone


class TableLog(ABC):
    """The log of one table. Subclasses give the SQL; the rules of writing live here."""

    table: str

    def __init__(self, table: str) -> None:
        self.table = check_table_id(table)
        self._status: dict[str, str] = {}  # last game status written, per game
        self._staged_status: dict[str, str] = {}  # the same, as inputs prepared leave it

    # ------------------------------------------------------------------ back-end primitives

    @property
    @abstractmethod
    def where(self) -> str:
        """Where this log lives, for error messages (a path, a redacted URL)."""

    # True: `_write_input` is one statement (atomic by itself), so `append` runs it without
    # BEGIN/COMMIT round trips (PostgreSQL: one round trip per event).
    one_statement_append = False

    @abstractmethod
    def _transaction(self, single: bool = False, durable: bool = True) -> Any:
        """A context manager: one transaction, committed on a normal exit and rolled back
        when the block raises (anything). Yields the handle `_exec` takes. `single`: the
        block runs one statement, which a back-end may send on its own (it is atomic);
        `durable`: see `_atomic`."""

    @abstractmethod
    def _exec(self, tx: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement in `tx` (every write goes through here); returns the cursor."""

    @abstractmethod
    def _insert_input(self, tx: Any, row: ExportedInput) -> int | None:
        """Insert an input; its id, or None when it is a hub event already stored."""

    @abstractmethod
    def _insert_actions(self, tx: Any, rows: list[tuple[int, str, str]]) -> None:
        """Insert ``(input_id, game_id, action JSON)`` rows."""

    @abstractmethod
    def _write_game(self, tx: Any, game_id: str, input_id: int, ts: float, status: str,
                    config: str | None, result: str | None) -> None:
        """Insert (`config` given: a new game) or update a game's summary row."""

    @abstractmethod
    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query on this table's log (``{table}`` filters in the back-end's way)."""

    @abstractmethod
    def close(self) -> None: ...

    # ------------------------------------------------------------------ the guarantee

    @contextmanager
    def _atomic(self, single: bool = False, durable: bool = True) -> Iterator[Any]:
        """One transaction for one input and everything it wrote: rolled back on any error,
        which reaches the caller as `StoreError` (nothing of it is stored). `durable`: a
        back-end that commits hub events without waiting for the disk waits for this one
        (a command: nothing can replay it)."""
        try:
            with self._transaction(single, durable) as tx:
                yield tx
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"cannot write the table log {self.where}: {exc}") from exc

    # ------------------------------------------------------------------ writing

    def prepare(
        self,
        *,
        ts: float,
        interp: Interpreter,
        actions: Sequence[WireItem],
        hub_event: HubEvent | None = None,
        verb: str | None = None,
        args: dict[str, Any] | None = None,
        seat: int | None = None,
        observed: dict[str, Any] | None = None,
        undone: int = 0,
        transaction: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> PreparedInput:
        """The rows of one accepted input and what it did (nothing written yet: `append`
        writes one, `Store.append_batches` many in one transaction)."""
        game_id = interp.game_id
        status = interp.status.value
        game_rows = game_id is not None and (
            bool(actions) or bool(undone) or verb is not None
            or self._staged_status.get(game_id, self._status.get(game_id)) != status)
        if hub_event is not None:
            row = ExportedInput("hub", ts, hub_event.hub_id, hub_event.epoch, hub_event.seq,
                                None, None, hub_event.model_dump_json(), None, game_id, [])
        else:
            row = ExportedInput("cmd", ts, None, None, None, verb, seat, json.dumps(args or {}),
                                json.dumps(observed) if observed is not None else None,
                                game_id, [], transaction,
                                json.dumps(answer) if answer is not None else None)
        wrote: list[tuple[str, str]] = []
        game: GameWrite | None = None
        if game_id is not None and game_rows:
            wrote = [(game_id, json.dumps(a.to_wire())) for a in actions]
            if undone:
                wrote.insert(0, (game_id, json.dumps({"type": "undo", "count": undone})))
            game = self._game_write(interp, ts, verb == "new_game")
            self._staged_status[game.game_id] = status  # what the next input compares with
        # A hub event may go alone (one statement: where the back-end writes it all in one,
        # or when it wrote nothing else); a command is never replayable, so it always gets a
        # full transaction (`_transaction`: durable even where events are not).
        single = hub_event is not None and (self.one_statement_append
                                            or (not wrote and game is None))
        return PreparedInput(row, wrote, game, single)

    def append(self, **what: Any) -> bool:
        """Write one accepted input and what it did (`prepare`'s arguments), atomically.
        False: a duplicate hub event or command transaction (already stored; nothing
        written)."""
        prepared = self.prepare(**what)
        try:
            with self._atomic(single=prepared.single) as tx:
                if self._write_input(tx, prepared.row, prepared.actions,
                                     prepared.game) is None:
                    return False  # a duplicate: the transaction wrote nothing
        finally:
            self._staged_status.clear()
        self.committed([prepared])
        return True

    def append_batch(self, inputs: Sequence[PreparedInput]) -> None:
        """Write prepared inputs in one transaction (a group commit), all or nothing:
        `StoreError` (nothing written) on any error, a duplicate among them included."""
        with self._atomic(durable=False) as tx:
            self.write_batch(tx, inputs)

    def write_batch(self, tx: Any, inputs: Sequence[PreparedInput]) -> None:
        """`append_batch`'s writes, in the caller's transaction `tx`."""
        for prepared in inputs:
            if self._write_input(tx, prepared.row, prepared.actions, prepared.game,
                                 strict=True) is None:
                raise StoreError(f"table {self.table}: an input of the batch is stored "
                                 "already")

    def committed(self, inputs: Sequence[PreparedInput]) -> None:
        """Prepared inputs are stored: their games' status is what the log says now."""
        for prepared in inputs:
            if prepared.game is not None:
                self._status[prepared.game.game_id] = prepared.game.status
        self._staged_status.clear()

    def discard(self) -> None:
        """Prepared inputs were not stored (their batch failed)."""
        self._staged_status.clear()

    def _write_input(self, tx: Any, row: ExportedInput, actions: list[tuple[str, str]],
                     game: GameWrite | None, strict: bool = False) -> int | None:
        """An input, its actions and its game row (a back-end may do it in one statement);
        the input's id, or None for a hub event already stored (nothing written). `strict`:
        a duplicate may raise instead (a batch is then rolled back whole)."""
        input_id = self._insert_input(tx, row)
        if input_id is None:
            return None
        if actions:
            self._insert_actions(tx, [(input_id, g, a) for g, a in actions])
        if game is not None:
            self._write_game(tx, game.game_id, input_id, game.ts, game.status, game.config,
                             game.result)
        return input_id

    def append_snapshot(self, snapshot: HubSnapshot, interp: Interpreter) -> None:
        """Store a hub snapshot the interpreter resynchronised from."""
        row = ExportedInput("snapshot", snapshot.ts, snapshot.hub_id, snapshot.epoch,
                            snapshot.last_seq, None, None, snapshot.model_dump_json(), None,
                            interp.game_id, [])
        with self._atomic() as tx:
            self._insert_input(tx, row)

    @staticmethod
    def _game_write(interp: Interpreter, ts: float, new: bool) -> GameWrite:
        assert interp.game_id is not None
        config, result = interp.record(new)
        return GameWrite(interp.game_id, ts, interp.status.value,
                         None if config is None else json.dumps({"game": interp.plays, **config}),
                         None if result is None else json.dumps(result))

    # ------------------------------------------------------------------ export / import

    def export(self) -> Iterator[ExportedInput]:
        """Every input in order, with its actions (`cauldron games export`)."""
        actions: dict[int, list[tuple[str, str]]] = {}
        for input_id, game_id, action in self._rows(
                "SELECT input_id, game_id, action FROM {actions} WHERE {table} ORDER BY id"):
            actions.setdefault(int(input_id), []).append((game_id, action))
        for r in self._rows("SELECT id, source, ts, hub_id, epoch, seq, verb, seat, payload, "
                            "observed, game_id, txn, answer FROM {inputs} WHERE {table} "
                            "ORDER BY id"):
            yield ExportedInput(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
                                actions.get(int(r[0]), []), r[11], r[12])

    def import_inputs(self, inputs: list[ExportedInput], games: list[GameRow]) -> int:
        """Append exported inputs and their games' rows, all in one transaction; refused
        (nothing written) when this table already has a log."""
        if self.count_inputs():
            raise StoreError(f"table {self.table} already has a log in {self.where}; import "
                             "into an empty table")
        ids: dict[int, int] = {}
        with self._atomic() as tx:
            for number, row in enumerate(inputs):
                input_id = self._insert_input(tx, row)
                if input_id is None:
                    raise StoreError(f"input #{number + 1} repeats a hub event "
                                     f"({row.hub_id} {row.epoch}/{row.seq})")
                ids[number] = input_id
                if row.actions:
                    self._insert_actions(tx, [(input_id, g, a) for g, a in row.actions])
            starts = {r.game_id: n for n, r in enumerate(inputs)
                      if r.verb == "new_game" and r.game_id is not None}
            for game in games:
                start = ids[starts[game.game_id]]
                self._write_game(tx, game.game_id, start, game.started_ts, game.status,
                                 json.dumps(game.config), None)
                self._write_game(tx, game.game_id, start, game.updated_ts, game.status, None,
                                 json.dumps(game.result) if game.result is not None else None)
        return len(inputs)

    # ------------------------------------------------------------------ reading

    def hub_positions(self) -> dict[str, tuple[str, int]]:
        """The hub cursors: each hub's last stored ``(epoch, seq)`` (events and snapshots)."""
        rows = self._rows(
            "SELECT hub_id, epoch, seq FROM {inputs} WHERE id IN (SELECT MAX(id) FROM {inputs} "
            "WHERE {table} AND source IN ('hub', 'snapshot') GROUP BY hub_id)")
        return {hub: (epoch, int(seq)) for hub, epoch, seq in rows}

    def stored_answer(self, transaction: str) -> dict[str, Any] | None:
        """The answer given to command `transaction` when it ran (None: it never ran here)."""
        rows = self._rows("SELECT answer FROM {inputs} WHERE {table} AND txn = %s",
                          (transaction,))
        if not rows:
            return None
        answer = json.loads(rows[0][0]) if rows[0][0] else {}
        return answer if isinstance(answer, dict) else {}

    def seen(self, event: HubEvent) -> bool:
        return bool(self._rows(
            "SELECT 1 FROM {inputs} WHERE {table} AND source = 'hub' AND hub_id = %s "
            "AND epoch = %s AND seq = %s", (event.hub_id, event.epoch, event.seq)))

    def epoch_seen(self, hub_id: str, epoch: str) -> bool:
        """Whether the log holds an event or snapshot of `hub_id`'s outbox `epoch`."""
        return bool(self._rows(
            "SELECT 1 FROM {inputs} WHERE {table} AND source IN ('hub', 'snapshot') AND "
            "hub_id = %s AND epoch = %s LIMIT 1", (hub_id, epoch)))

    def count_inputs(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM {inputs} WHERE {table}")[0][0])

    def count_rows(self) -> tuple[int, int, int]:
        """How many inputs, actions and games are stored (tests: nothing half-written)."""
        return (self.count_inputs(),
                int(self._rows("SELECT COUNT(*) FROM {actions} WHERE {table}")[0][0]),
                int(self._rows("SELECT COUNT(*) FROM {games} WHERE {table}")[0][0]))

    def _inputs(self, first_id: int, last_id: int | None = None) -> Iterator[StoredInput]:
        query = ("SELECT id, source, payload, verb, seat, ts, observed FROM {inputs} "
                 "WHERE {table} AND id >= %s" + (" AND id < %s" if last_id is not None else "")
                 + " ORDER BY id")
        params: tuple[int, ...] = (first_id,) if last_id is None else (first_id, last_id)
        for row in self._rows(query, params):
            yield StoredInput(*row)

    def games(self) -> list[GameRow]:
        rows = self._rows(
            "SELECT game_id, started_ts, updated_ts, status, config, result FROM {games} "
            "WHERE {table} ORDER BY started_input")
        return [GameRow(self.table, g, s, u, st, json.loads(c), json.loads(r) if r else None)
                for g, s, u, st, c, r in rows]

    def rebuild(self, game_id: str | None = None) -> Interpreter:
        """The interpreter as it stands after the last input (or, with `game_id`, at the end
        of that game: just before the next new_game)."""
        if game_id is None:
            row = self._rows("SELECT MAX(id) FROM {inputs} WHERE {table} AND verb = 'new_game'")
            start, end = (row[0][0] or 1), None
            if row[0][0] is None:  # no game yet: from the first input
                first = self._rows("SELECT MIN(id) FROM {inputs} WHERE {table}")
                start = first[0][0] or 1
        else:
            found = self._rows("SELECT started_input FROM {games} WHERE {table} AND game_id = %s",
                               (game_id,))
            if not found:
                raise StoreError(f"no game {game_id!r} in table {self.table}; list them with "
                                 "`cauldron games`")
            start = found[0][0]
            nxt = self._rows("SELECT MIN(id) FROM {inputs} WHERE {table} AND "
                             "verb = 'new_game' AND id > %s", (start,))
            end = nxt[0][0]
        interp: Interpreter | None = None
        for stored in self._inputs(start, end):
            if interp is None:  # the game its new_game row names (none yet: the default)
                observed = json.loads(stored.observed) if stored.observed else {}
                try:
                    definition = games.get(game_of(stored))
                except UnknownGame as exc:
                    raise StoreError(f"table {self.table}: {exc}") from None
                interp = definition.interpreter(self.table, observed)
            try:
                replay_input(interp, stored)
            except StoreError:
                raise
            except Exception as exc:  # a game's own error: this log does not replay
                raise StoreError(f"table {self.table}: input #{stored.id} does not replay: "
                                 f"{exc}") from exc
        return interp or games.get().interpreter(self.table, {})


class Store(ABC):
    """A venue's (or one machine's) store: where every table's log lives."""

    kind: str  # "sqlite" or "postgresql"
    claims = False  # True: tables are owned by one engine at a time (`engine.service.ownership`)

    @abstractmethod
    def table(self, name: str) -> TableLog:
        """The log of table `name` (made when new)."""

    def append_batches(self, batches: Sequence[tuple[TableLog, Sequence[PreparedInput]]]
                       ) -> set[str]:
        """Group commit: each table's prepared inputs in one transaction (SQLite: a file
        each). The tables whose batch was not stored (rolled back whole: the caller writes
        those inputs one by one, which says why)."""
        failed: set[str] = set()
        for log, inputs in batches:
            try:
                if len(inputs) == 1 and inputs[0].single:
                    with log._atomic(single=True) as tx:
                        log.write_batch(tx, inputs)
                else:
                    log.append_batch(inputs)
            except StoreError:
                failed.add(log.table)
                log.discard()
            else:
                log.committed(inputs)
        return failed

    @abstractmethod
    def tables(self) -> list[str]:
        """Tables that have a log here."""

    @abstractmethod
    def venue_tables(self) -> list[str] | None:
        """The venue's table list (None: not kept here; any valid id is a table)."""

    @abstractmethod
    def set_venue_tables(self, add: Sequence[str] = (), remove: Sequence[str] = ()) -> list[str]:
        """Add/remove tables from the venue's list; returns the list."""

    @abstractmethod
    def schema_version(self) -> int: ...

    @abstractmethod
    def redacted(self) -> str:
        """The store's location, without a password."""

    def has_table(self, name: str) -> bool:
        return name in self.tables()

    def close(self) -> None:  # noqa: B027 - nothing to close by default
        pass


def game_of(stored: StoredInput) -> str | None:
    """The game a stored ``new_game`` names (None: not one, or the default game)."""
    if stored.verb != "new_game":
        return None
    game = json.loads(stored.payload).get("game")
    return game if isinstance(game, str) else None


def snapshot_state(snapshot: HubSnapshot) -> dict[str, str]:
    """What a hub snapshot says each reader holds: place id (``"r,c"``, ``"pad:<seat>"``)
    -> piece (unknown tags as ``uid:…``)."""
    seen: dict[str, str] = {}
    for reader in snapshot.readers:
        if reader.uid is None:
            continue
        piece = reader.card_id or f"{UNKNOWN_TAG}{reader.uid}"
        if reader.cell is not None:
            seen[reader.cell] = piece
        elif reader.seat is not None:
            seen[f"pad:{reader.seat}"] = piece
    return seen


def sensor_input(event: HubEvent) -> Sensed | None:
    """A hub event as a game hears it (None for reader health: stored, not interpreted)."""
    if event.kind == "button":
        assert event.button is not None
        return Sensed("button", button=event.button, seat=event.seat, ts=event.ts)
    if event.kind == "pawn" and event.position is not None and event.uid is None:
        # A Hall-switch pawn sensor (a magnet, no tag).
        return Sensed("placed" if event.action == "placed" else "removed",
                      place=f"pos:{event.position}", ts=event.ts)
    if event.kind not in ("cell", "pad", "unknown_tag") or event.action == "pressed":
        return None
    kind: Literal["placed", "removed"] = "placed" if event.action == "placed" else "removed"
    piece = event.card_id if event.kind != "unknown_tag" else None
    retired = event.tag == "retired"
    if event.cell is not None:
        return Sensed(kind, place=event.cell, piece=piece, uid=event.uid, ts=event.ts,
                      retired=retired)
    if event.seat is not None:
        return Sensed(kind, place=f"pad:{event.seat}", piece=piece, uid=event.uid, ts=event.ts,
                      retired=retired)
    return None


def replay_input(interp: Interpreter, stored: StoredInput) -> None:
    """Feed one stored input to the interpreter again (crash recovery, `games show`)."""
    if stored.source == "hub":
        try:
            event = HubEvent.model_validate_json(stored.payload)
        except ValueError as exc:  # written by us: only a damaged file gets here
            raise StoreError(f"input #{stored.id} is damaged: {exc}") from None
        sensed = sensor_input(event)
        if sensed is not None:
            interp.sense(sensed)
        return
    if stored.source == "snapshot":
        snapshot = HubSnapshot.model_validate_json(stored.payload)
        interp.resync(snapshot_state(snapshot), snapshot.pawns, stored.ts)
        return
    assert stored.verb is not None
    interp.command(stored.verb, json.loads(stored.payload), seat=stored.seat, ts=stored.ts)

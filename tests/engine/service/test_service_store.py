"""The table log on both back-ends (SQLite and a real PostgreSQL, `store_url`): every input
written, games rebuilt by replay, exactly-once across restarts, every write rolled back on
any error, migrations, export/import, and the `cauldron games` commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from glastonbury_table import glastonbury, hub_event

from engine.app.cli import main
from engine.games.base import Refused
from engine.games.glastonbury.rules import GameLog
from engine.games.glastonbury.table.interpreter import TableInterpreter
from engine.games.glastonbury.table.table_driver import scripted_game
from engine.service.errors import StoreError
from engine.service.service import EngineService, ServiceConfig
from engine.service.store import open_store
from engine.wire.contract import HubSnapshot


def _service(where: Path | str) -> EngineService:
    # Not started: `receive`/`command` work without a broker (publishes wait in memory).
    if isinstance(where, Path):
        return EngineService(ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=where,
                                           name="store-test"))
    return EngineService(ServiceConfig(mqtt="mqtt://127.0.0.1:1", store=where,
                                       name="store-test"))


def _feed(service: EngineService, table: str, players: int, seed: int, decisions: int) -> int:
    script = scripted_game(players, seed, max_decisions=decisions)
    args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
    service.command(table, "new_game", args)
    seq = 0
    for inp in script.deal + [i for turn in script.turns for i in turn]:
        seq += 1
        service.receive(table, hub_event(inp, seq))
    return seq


def test_every_input_is_stored_and_the_game_rebuilds_identically(store_url: str) -> None:
    service = _service(store_url)
    sent = _feed(service, "t1", 3, seed=5, decisions=40)
    live = glastonbury(service.tables["t1"].interp)
    assert live.game is not None and len(live.game.actions) > 40
    store = open_store(store_url).table("t1")
    assert store.count_inputs() == sent + 1  # the events and the new_game command
    rebuilt = glastonbury(store.rebuild())
    assert rebuilt.game is not None
    assert GameLog.of(rebuilt.game).to_wire() == GameLog.of(live.game).to_wire()
    assert rebuilt.public_view() == live.public_view()
    assert store.hub_positions() == {"hub-test": ("e1", sent)}
    assert open_store(store_url).tables() == ["t1"]


def test_duplicates_stay_duplicates_after_a_restart(store_url: str) -> None:
    service = _service(store_url)
    sent = _feed(service, "t1", 2, seed=1, decisions=10)
    _feed(service, "t2", 2, seed=2, decisions=3)  # another table, the same hub sequence
    inputs = service.tables["t1"].interp.inputs
    again = _service(store_url)
    again.table("t1")  # as `load` (SQLite) or a claim (PostgreSQL) does
    assert again.tables["t1"].interp.inputs == inputs
    script = scripted_game(2, 1, max_decisions=10)
    replayed = (script.deal + [i for t in script.turns for i in t])[:5]
    for seq, inp in enumerate(replayed, start=1):  # old events come again
        assert again.receive("t1", hub_event(inp, seq)) == []
    assert again.stats["duplicates"] == 5 and again.tables["t1"].interp.inputs == inputs
    assert open_store(store_url).table("t1").count_inputs() == sent + 1


def test_a_stored_hub_event_is_written_once_even_past_the_cursor(store_url: str) -> None:
    # Exactly-once lives in the store, not only in the engine's cursor: the same hub
    # sequence offered to the log again (a replay after failover) writes nothing.
    service = _service(store_url)
    _feed(service, "t1", 2, seed=4, decisions=6)
    log = service.tables["t1"].store
    before = log.count_rows()
    script = scripted_game(2, 4, max_decisions=6)
    interp = glastonbury(service.tables["t1"].interp)
    assert log.append(ts=1.0, interp=interp, actions=[], hub_event=hub_event(script.deal[0], 1)
                      ) is False
    assert log.count_rows() == before


def test_reordered_events_are_put_back_in_order(store_url: str) -> None:
    service = _service(store_url)
    script = scripted_game(2, 2, max_decisions=4)
    service.command("t1", "new_game", {k: v for k, v in script.new_game_args.items()
                                       if k != "game_id"})
    events = [hub_event(i, n) for n, i in enumerate(script.deal, start=1)]
    events[3], events[4] = events[4], events[3]
    for event in events:
        service.receive("t1", event)
    assert service.stats["reordered"] == 1
    assert service.tables["t1"].interp.status.value == "playing"
    assert service.tables["t1"].interp.active_alerts == []


def test_games_cli_lists_shows_and_exports_a_replayable_log(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = _service(store_url)
    _feed(service, "t9", 2, seed=3, decisions=400)  # to the end
    game_id = service.tables["t9"].interp.game_id
    assert service.tables["t9"].interp.status.value == "over"
    assert main(["games", "--store", store_url]) == 0
    listing = capsys.readouterr().out
    assert "t9" in listing and str(game_id) in listing and "over" in listing
    # The winners for people: "Seat 2 (red)", not the wire's "1" (issue 11).
    row = next(line for line in listing.splitlines() if line.startswith("t9"))
    result = open_store(store_url).table("t9").games()[0].result
    assert result is not None
    colours = scripted_game(2, 3).new_game_args["colours"]
    assert row.endswith(", ".join(f"Seat {w + 1} ({colours[w]})" for w in result["winners"]))
    assert main(["games", "--store", store_url, "show", "t9", str(game_id), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "over" and shown["end"]["scores"]
    assert main(["games", "--store", store_url, "show", "t9", str(game_id), "--log"]) == 0
    log_file = tmp_path / "log.json"
    log_file.write_text(capsys.readouterr().out)
    assert main(["replay", str(log_file), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["view"]["end"] == shown["end"]
    assert main(["games", "--store", store_url, "show", "t9", "nope"]) == 2
    assert "no game 'nope'" in capsys.readouterr().err


def test_a_damaged_table_log_does_not_stop_the_other_tables(store_url: str) -> None:
    service = _service(store_url)
    _feed(service, "good", 2, seed=1, decisions=5)
    _feed(service, "bad", 2, seed=2, decisions=5)
    for runtime in service.tables.values():
        runtime.store.close()
    if service.store.kind == "sqlite":
        import sqlite3

        db = sqlite3.connect(Path(store_url) / "tables" / "bad.sqlite")
        db.execute("DROP TRIGGER inputs_append_only")  # damage from outside the program
        db.execute("UPDATE inputs SET payload = '{broken' WHERE id = 5")
        db.commit()
        db.close()
    else:  # a row written by something else than the engine
        service.store.table("bad")._rows(
            "INSERT INTO {inputs} (table_id, ts, source, hub_id, epoch, seq, payload) "
            "VALUES (%s, 1, 'hub', 'other', 'e9', 1, '{broken')", ("bad",))
    again = _service(store_url)
    if again.store.claims:  # tables come as they are claimed
        again._claimed("good")
        again._claimed("bad")
    else:
        again.load()
    assert "good" in again.tables and "bad" not in again.tables
    assert "damaged" in again.broken["bad"]


def test_the_log_refuses_changes_to_what_it_stored(store_url: str) -> None:
    service = _service(store_url)
    _feed(service, "t1", 2, seed=1, decisions=3)
    log = service.tables["t1"].store
    for sql in ("UPDATE {inputs} SET payload = 'x' WHERE {table}",
                "DELETE FROM {inputs} WHERE {table}",
                "UPDATE {actions} SET action = 'x' WHERE {table}"):
        with pytest.raises(StoreError, match="append-only"):
            log._rows(sql)
    live = glastonbury(service.tables["t1"].interp)
    assert glastonbury(log.rebuild()).public_view() == live.public_view()


class Boom(Exception):
    pass


def _actions_per_input(args: dict[str, Any], inputs: list[Any]) -> list[bool]:
    """For each input of a script: whether it produces rules actions (a pure interpreter)."""
    interp = TableInterpreter("ref")
    interp.command("new_game", {**args, "game_id": "ref"})
    return [bool(interp.handle(inp).actions) for inp in inputs]


@pytest.mark.parametrize("kind", ["new_game", "event_with_actions", "event", "snapshot"])
def test_every_write_rolls_back_on_an_error_at_any_statement(
    store_url: str, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guarantee lives in the interface (`TableLog._atomic`): an exception raised at
    any statement of an input's transaction leaves the log exactly as it was, and the
    engine's state stays the log's, on both back-ends. The fault moves one statement
    further each time until the input is written whole."""
    service = _service(store_url)
    script = scripted_game(2, 6, max_decisions=12)
    args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
    inputs = script.deal + [i for turn in script.turns for i in turn]
    with_actions = _actions_per_input(args, inputs)
    target = 0
    if kind != "new_game":
        service.command("t1", "new_game", dict(args))
        target = next(n for n in range(32, len(inputs))
                      if with_actions[n] == (kind == "event_with_actions"))
        for seq in range(1, target + 1):
            service.receive("t1", hub_event(inputs[seq - 1], seq))
    runtime = service.table("t1")
    log = runtime.store
    snapshot = HubSnapshot(hub_id="hub-test", epoch="e2", last_seq=7, ts=1.0, backend="sim",
                           readers=[])

    def attempt() -> None:
        if kind == "new_game":
            service.command("t1", "new_game", dict(args))
        elif kind == "snapshot":
            log.append_snapshot(snapshot, runtime.interp)
        else:
            service.receive("t1", hub_event(inputs[target], target + 1))

    real = type(log)._exec
    failing = 0
    while True:
        before = log.count_rows()
        reached = {"n": 0}

        def faulty(self: Any, tx: Any, sql: str, params: Any = (), at: int = failing,
                   count: dict[str, int] = reached) -> Any:
            count["n"] += 1
            if count["n"] - 1 == at:
                raise Boom(f"injected at statement {at}")
            return real(self, tx, sql, params)

        monkeypatch.setattr(type(log), "_exec", faulty)
        try:
            attempt()
        except (StoreError, Refused) as exc:
            assert "injected" in str(exc)
        finally:
            monkeypatch.setattr(type(log), "_exec", real)
        if reached["n"] <= failing:  # the fault lay beyond the input's statements: written
            break
        assert log.count_rows() == before, f"statement {failing}: half an input was stored"
        live = glastonbury(service.tables["t1"].interp)
        assert live.public_view() == glastonbury(log.rebuild()).public_view()
        failing += 1
    after = log.count_rows()
    assert after[0] == before[0] + 1  # the input itself, once, at the last attempt
    # SQLite writes an input, its actions and its game row as separate statements;
    # PostgreSQL as one (a round trip saved), which the fault hit too.
    several = service.store.kind == "sqlite"
    if kind == "event_with_actions":
        assert failing == (3 if several else 1) and after[1] > before[1]
    if kind == "new_game":
        assert failing == (2 if several else 1) and after[2] == before[2] + 1


def test_export_and_import_round_trip_between_sqlite_and_postgresql(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    single = str(tmp_path / "single")
    service = _service(single)
    _feed(service, "club", 3, seed=9, decisions=400)  # a finished game
    _feed(service, "club", 2, seed=10, decisions=20)  # and one in play
    live = glastonbury(service.tables["club"].interp)
    first = tmp_path / "from-sqlite.jsonl"
    assert main(["games", "--store", single, "export", "club", "--out", str(first)]) == 0
    # Into the venue's PostgreSQL: the same games, the same state, and a venue table.
    assert main(["games", "--store", pg_url, "import", str(first)]) == 0
    assert "imported table club" in capsys.readouterr().out
    venue = open_store(pg_url)
    log = venue.table("club")
    assert [(g.game_id, g.status, g.result) for g in log.games()] == [
        (g.game_id, g.status, g.result) for g in open_store(single).table("club").games()]
    assert glastonbury(log.rebuild()).public_view() == live.public_view()
    assert log.hub_positions() == open_store(single).table("club").hub_positions()
    assert venue.venue_tables() == ["club"]
    # Importing again is refused and changes nothing.
    counts = log.count_rows()
    assert main(["games", "--store", pg_url, "import", str(first)]) == 2
    assert "already has a log" in capsys.readouterr().err
    assert log.count_rows() == counts
    # And back into a fresh SQLite store: byte for byte the same export.
    second = tmp_path / "from-postgresql.jsonl"
    assert main(["games", "--store", pg_url, "export", "club", "--out", str(second)]) == 0
    back = str(tmp_path / "back")
    assert main(["games", "--store", back, "import", str(second)]) == 0
    third = tmp_path / "back.jsonl"
    assert main(["games", "--store", back, "export", "club", "--out", str(third)]) == 0
    assert first.read_text() == second.read_text() == third.read_text()
    finished = log.games()[0]
    assert open_store(back).table("club").rebuild(finished.game_id).status.value == "over"
    # A file that is not an export is refused with what to do.
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"hello": 1}\n')
    assert main(["games", "--store", back, "import", str(junk), "--table", "other"]) == 2
    assert "not a table log written by `cauldron games export`" in capsys.readouterr().err


def test_migrations_are_versioned_and_a_newer_schema_is_refused(store_url: str) -> None:
    store = open_store(store_url)
    from engine.service.store import postgres, sqlite

    latest = (postgres if store.kind == "postgresql" else sqlite).SCHEMA_VERSION
    assert store.schema_version() == latest >= 3
    log = store.table("t1")
    assert log.count_inputs() == 0
    log.close()
    if store.kind == "sqlite":
        import sqlite3

        path = Path(store_url) / "tables" / "old.sqlite"  # a file from before migrations
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path)
        db.executescript(sqlite.MIGRATIONS[0].sql)
        db.execute("INSERT INTO inputs (ts, source, payload) VALUES (1, 'cmd', '{}')")
        db.commit()
        assert db.execute("PRAGMA user_version").fetchone()[0] == 0
        db.close()
        old = store.table("old")
        assert old.count_inputs() == 1
        assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == latest
        old.close()
        db = sqlite3.connect(path)
        db.execute("PRAGMA user_version = 99")
        db.commit()
        db.close()
        with pytest.raises(StoreError, match="newer than this program"):
            store.table("old")
    else:
        assert isinstance(store, postgres.PostgresStore)
        versions = [r[0] for r in store.query("SELECT version FROM cauldron_schema ORDER BY 1")]
        assert versions == list(range(1, latest + 1))
        assert open_store(store_url).schema_version() == latest  # opening again: no change
        store.query("INSERT INTO cauldron_schema (version, what) VALUES (99, 'future')")
        with pytest.raises(StoreError, match="newer than this program"):
            open_store(store_url)
    store.close()


def test_the_venue_table_list_refuses_other_tables(
    store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["games", "--store", store_url, "tables", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) in (None, [])
    assert main(["games", "--store", store_url, "tables", "--add", "t1,t2"]) == 0
    assert main(["games", "--store", store_url, "tables", "--remove", "t2"]) == 0
    capsys.readouterr()
    assert main(["games", "--store", store_url, "tables", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == ["t1"]
    assert main(["games", "--store", store_url, "tables", "--add", "bad id!"]) == 2
    assert "table id" in capsys.readouterr().err
    service = _service(store_url)
    if service.store.kind == "sqlite":  # (PostgreSQL: only venue tables are ever claimed)
        assert service.serves("t1") and not service.serves("t2")
        from engine.wire.contract import CommandRequest, parse_topic
        from engine.wire.mqtt import NoAnswer

        request = CommandRequest(transaction="x1", args={})
        with pytest.raises(NoAnswer):  # an unknown table: refused, and no answer
            service._on_command(parse_topic("cauldron/t2/cmd/history"), request)


def test_an_unreachable_database_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://cauldron:secret@127.0.0.1:{port}/venue"
    assert main(["games", "--store", url]) == 2
    err = capsys.readouterr().err
    assert "cannot connect to PostgreSQL" in err and "is it running" in err
    assert "secret" not in err and "Traceback" not in err
    assert main(["games", "--store", "ftp://x/y"]) == 2
    assert "use postgresql://" in capsys.readouterr().err

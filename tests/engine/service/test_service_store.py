"""The table log on both back-ends (SQLite and a real PostgreSQL, `store_url`): every input
written, games rebuilt by replay, exactly-once across restarts, every write rolled back on
any error, migrations, export/import, and the `cauldron games` commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from service_helpers import hub_event

from engine.cli import main
from engine.rules import GameLog
from engine.service.errors import Refused, StoreError
from engine.service.interpreter import TableInterpreter
from engine.service.service import EngineService, ServiceConfig
from engine.service.store import open_store
from engine.service.table_driver import scripted_game
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
    live = service.tables["t1"].interp
    assert live.game is not None and len(live.game.actions) > 40
    store = open_store(store_url).table("t1")
    assert store.count_inputs() == sent + 1  # the events and the new_game command
    rebuilt = store.rebuild()
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
    interp = service.tables["t1"].interp
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


def test_a_damaged_table_log_does_not_stop_the_other_tables(tmp_path: Path) -> None:
    service = _service(tmp_path)
    _feed(service, "good", 2, seed=1, decisions=5)
    _feed(service, "bad", 2, seed=2, decisions=5)
    for runtime in service.tables.values():
        runtime.store.close()
    import sqlite3

    db = sqlite3.connect(tmp_path / "tables" / "bad.sqlite")
    db.execute("DROP TRIGGER inputs_append_only")  # damage from outside the program
    db.execute("UPDATE inputs SET payload = '{broken' WHERE id = 5")
    db.commit()
    db.close()
    again = _service(tmp_path)
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
    assert log.rebuild().public_view() == service.tables["t1"].interp.public_view()


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
        live = service.tables["t1"].interp
        assert live.public_view() == log.rebuild().public_view()
        failing += 1
    after = log.count_rows()
    assert after[0] == before[0] + 1  # the input itself, once, at the last attempt
    if kind == "event_with_actions":
        assert failing >= 3 and after[1] > before[1]  # input, actions, game row
    if kind == "new_game":
        assert failing >= 2 and after[2] == before[2] + 1

"""The table log: every input written, games rebuilt by replay, dedup across restarts, and
the `cauldron games` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from service_helpers import hub_event

from engine.cli import main
from engine.rules import GameLog
from engine.service.service import EngineService, ServiceConfig
from engine.service.store import TableStore, stored_tables
from engine.service.table_driver import scripted_game


def _service(tmp_path: Path) -> EngineService:
    # Not started: `receive`/`command` work without a broker (publishes wait in memory).
    return EngineService(ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=tmp_path,
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


def test_every_input_is_stored_and_the_game_rebuilds_identically(tmp_path: Path) -> None:
    service = _service(tmp_path)
    sent = _feed(service, "t1", 3, seed=5, decisions=40)
    live = service.tables["t1"].interp
    assert live.game is not None and len(live.game.actions) > 40
    store = TableStore.open(tmp_path, "t1")
    assert store.count_inputs() == sent + 1  # the events and the new_game command
    rebuilt = store.rebuild()
    assert GameLog.of(rebuilt.game).to_wire() == GameLog.of(live.game).to_wire()
    assert rebuilt.public_view() == live.public_view()
    assert store.hub_positions() == {"hub-test": ("e1", sent)}
    assert stored_tables(tmp_path) == ["t1"]


def test_duplicates_stay_duplicates_after_a_restart(tmp_path: Path) -> None:
    service = _service(tmp_path)
    sent = _feed(service, "t1", 2, seed=1, decisions=10)
    inputs = service.tables["t1"].interp.inputs
    again = _service(tmp_path)
    again.load()
    assert again.tables["t1"].interp.inputs == inputs
    script = scripted_game(2, 1, max_decisions=10)
    replayed = (script.deal + [i for t in script.turns for i in t])[:5]
    for seq, inp in enumerate(replayed, start=1):  # old events come again
        assert again.receive("t1", hub_event(inp, seq)) == []
    assert again.stats["duplicates"] == 5 and again.tables["t1"].interp.inputs == inputs
    assert TableStore.open(tmp_path, "t1").count_inputs() == sent + 1


def test_reordered_events_are_put_back_in_order(tmp_path: Path) -> None:
    service = _service(tmp_path)
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
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = _service(tmp_path)
    _feed(service, "t9", 2, seed=3, decisions=400)  # to the end
    game_id = service.tables["t9"].interp.game_id
    assert service.tables["t9"].interp.status.value == "over"
    assert main(["games", "--data-dir", str(tmp_path)]) == 0
    listing = capsys.readouterr().out
    assert "t9" in listing and str(game_id) in listing and "over" in listing
    assert main(["games", "--data-dir", str(tmp_path), "show", "t9", str(game_id), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "over" and shown["end"]["scores"]
    assert main(["games", "--data-dir", str(tmp_path), "show", "t9", str(game_id), "--log"]) == 0
    log_file = tmp_path / "log.json"
    log_file.write_text(capsys.readouterr().out)
    assert main(["replay", str(log_file), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["view"]["end"] == shown["end"]
    assert main(["games", "--data-dir", str(tmp_path), "show", "t9", "nope"]) == 2
    assert "no game 'nope'" in capsys.readouterr().err


def test_a_damaged_table_log_does_not_stop_the_other_tables(tmp_path: Path) -> None:
    service = _service(tmp_path)
    _feed(service, "good", 2, seed=1, decisions=5)
    _feed(service, "bad", 2, seed=2, decisions=5)
    for runtime in service.tables.values():
        runtime.store.close()
    import sqlite3

    db = sqlite3.connect(tmp_path / "tables" / "bad.sqlite")
    db.execute("UPDATE inputs SET payload = '{broken' WHERE id = 5")
    db.commit()
    db.close()
    again = _service(tmp_path)
    again.load()
    assert "good" in again.tables and "bad" not in again.tables
    assert "damaged" in again.broken["bad"]

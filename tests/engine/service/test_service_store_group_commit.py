"""Group commit (issue 21): the hub events the dispatcher hands over as one batch are
written in one transaction (PostgreSQL: one round trip), published once stored (each
table's views once per batch) and acknowledged only after that; a batch that cannot be
stored is rolled back whole and its events handled again one by one. On both back-ends
(`store_url`: SQLite and a real PostgreSQL)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from glastonbury_table import glastonbury, hub_event
from waiting import wait_for

from engine.games.glastonbury.table.interpreter import TableInterpreter
from engine.games.glastonbury.table.table_driver import scripted_game
from engine.service.service import EngineService, ServiceConfig
from engine.service.store import ExportedInput, open_store
from engine.wire import mqtt
from engine.wire.contract import HubEvent, Topics
from engine.wire.mqtt import WireClient


def _service(where: str, *tables: str) -> tuple[EngineService, list[str]]:
    """An engine not started (no broker), recording the topics it publishes; at a venue
    (PostgreSQL), owning `tables` (claimed, so its writes and publishes carry its fence)."""
    config = (ServiceConfig(mqtt="mqtt://127.0.0.1:1", store=where, name="group-test")
              if where.startswith("postgresql") else
              ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=Path(where), name="group-test"))
    service = EngineService(config)
    published: list[str] = []

    def record(topic: str, payload: bytes, **_: Any) -> int:
        published.append(topic)
        return 0

    service.client.publish_raw = record  # type: ignore[method-assign]
    if service.store.claims:
        service.store.set_venue_tables(add=tables)
        service._may_claim = lambda table: True  # type: ignore[method-assign]
        service._start_ownership()
        wait_for(lambda: all(service.serves(t) for t in tables), 30, "the tables claimed")
    return service, published


def _events(seed: int) -> tuple[dict[str, Any], list[HubEvent]]:
    script = scripted_game(2, seed, max_decisions=8)
    args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
    inputs = script.deal + [i for turn in script.turns for i in turn]
    return args, [hub_event(inp, seq) for seq, inp in enumerate(inputs, start=1)]


def _playing(service: EngineService, seeds: dict[str, int], inputs: int,
             ) -> dict[str, tuple[dict[str, Any], list[HubEvent]]]:
    """Each table's scripted game (seeded), started and fed its first ``inputs`` hub events."""
    games = {table: _events(seed) for table, seed in seeds.items()}
    for table, (args, events) in games.items():
        service.command(table, "new_game", dict(args))
        for event in events[:inputs]:
            service.receive(table, event)
    return games


def test_a_batch_is_stored_whole_before_anything_is_published(store_url: str) -> None:
    service, published = _service(store_url, "t1", "t2")
    games = _playing(service, {"t1": 3, "t2": 4}, 32)
    logs = {table: open_store(store_url).table(table) for table in games}
    before = {table: log.count_inputs() for table, log in logs.items()}
    published.clear()
    service._begin_batch()
    try:
        for index in range(32, 40):  # queued together: both tables, several events each
            for table, (_, events) in games.items():
                service.receive(table, events[index])
        # Handled, but nothing stored or said yet.
        assert {t: log.count_inputs() for t, log in logs.items()} == before
        assert published == []
    finally:
        service._end_batch()
    for table, log in logs.items():
        assert log.count_inputs() == before[table] + 8
        live = glastonbury(service.tables[table].interp)
        assert glastonbury(log.rebuild()).public_view() == live.public_view()
        # Each table's public view once for the batch (its last state).
        assert published.count(Topics(table).game_public) == 1
    assert service.stats["group_commits"] == 2 and "group_retries" not in service.stats
    service.stop()


def test_a_batch_that_cannot_be_stored_is_handled_again_one_by_one(store_url: str) -> None:
    # One event of the batch is in the log already (written meanwhile by another writer):
    # the batch's transaction fails and writes nothing; its events are then written one by
    # one, the stored one skipped as a duplicate, and the game stays the log's.
    service, _ = _service(store_url, "t1")
    args, events = _events(5)
    service.command("t1", "new_game", dict(args))
    for event in events[:32]:
        service.receive("t1", event)
    other = open_store(store_url).table("t1")
    before = other.count_inputs()
    service._begin_batch()
    try:
        for event in events[32:38]:
            service.receive("t1", event)
        taken = events[34]
        with other._atomic() as tx:
            other._insert_input(tx, ExportedInput(
                "hub", taken.ts, taken.hub_id, taken.epoch, taken.seq, None, None,
                taken.model_dump_json(), None, None, []))
    finally:
        service._end_batch()
    assert service.stats["group_retries"] == 1
    assert other.count_inputs() == before + 6  # five from the engine, one from the other
    assert service.stats["duplicates"] >= 1
    assert service.tables["t1"].interp.inputs == other.rebuild().inputs
    service.stop()


def test_the_dispatcher_acknowledges_a_batch_only_after_its_end() -> None:
    client = WireClient("mqtt://127.0.0.1:1", client_id="group-test")
    steps: list[str] = []
    client.subscribe("cauldron/+/hub/event", raw=lambda topic, payload: steps.append(
        f"handle {payload.decode()}"))
    client.set_batch(lambda: steps.append("begin"), lambda: steps.append("end"))
    client._client.ack = lambda mid, qos: steps.append(f"ack {mid}")  # type: ignore[assignment, return-value]
    for mid in (1, 2, 3):  # already queued when the dispatcher looks
        client._inbox.put(("message", "cauldron/t1/hub/event", str(mid).encode(), mid, 1))
    done = threading.Event()
    client._inbox.put(("connected",))
    client.add_connect_hook(done.set)
    thread = threading.Thread(target=client._dispatch, daemon=True)
    thread.start()
    assert done.wait(30)
    client._inbox.put(mqtt._STOP)
    thread.join(30)
    assert steps == ["begin", "handle 1", "handle 2", "handle 3", "end",
                     "ack 1", "ack 2", "ack 3"]


def test_an_event_failing_mid_batch_keeps_the_ones_before_it(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The failing event's table goes back to its log: the events staged before it are
    # written first, so the game and the log agree (nothing handled is forgotten).
    service, _ = _service(store_url, "t1")
    args, events = _events(6)
    service.command("t1", "new_game", dict(args))
    for event in events[:32]:
        service.receive("t1", event)
    log = open_store(store_url).table("t1")
    before = log.count_inputs()
    real = TableInterpreter.handle

    failed: list[bool] = []

    def handle(self: TableInterpreter, inp: Any) -> Any:
        if not failed:  # once: the rebuild that follows replays normally
            failed.append(True)
            raise RuntimeError("injected")
        return real(self, inp)

    service._begin_batch()
    try:
        for event in events[32:35]:
            service.receive("t1", event)
        monkeypatch.setattr(TableInterpreter, "handle", handle)
        service.receive("t1", events[35])
        monkeypatch.setattr(TableInterpreter, "handle", real)
    finally:
        service._end_batch()
    assert log.count_inputs() == before + 3
    live = glastonbury(service.tables["t1"].interp)
    assert live.public_view() == glastonbury(log.rebuild()).public_view()
    assert service.stats["errors"] == 1
    service.stop()


def test_a_venue_batch_of_hub_events_is_one_statement_each_action_on_its_input(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # PostgreSQL: hub events without a game row are written by one statement over arrays
    # (planned once per session), not a statement each; their actions go with their own
    # input, in order, and the log replays to the live game.
    import psycopg

    service, _ = _service(pg_url, "t1", "t2")
    games = _playing(service, {"t1": 6, "t2": 7}, 33)
    statements: list[str] = []

    def one_by_one(*args: Any, **kwargs: Any) -> Any:
        statements.append("per input")
        return psycopg.ClientCursor(*args, **kwargs)

    monkeypatch.setattr("engine.service.store.postgres._psycopg",
                        lambda: type("P", (), {"Error": psycopg.Error,
                                               "ClientCursor": one_by_one}))
    service._begin_batch()
    try:
        for index in range(33, 37):
            for table, (_, events) in games.items():
                service.receive(table, events[index])
    finally:
        service._end_batch()
    monkeypatch.undo()
    assert statements == [] and "group_retries" not in service.stats
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT i.table_id, i.seq, a.action FROM cauldron_actions a JOIN cauldron_inputs i "
            "ON i.id = a.input_id WHERE i.source = 'hub' AND i.seq > 33 ORDER BY a.id"
        ).fetchall()
        status: dict[str, str] = dict(conn.execute(
            "SELECT table_id, status FROM cauldron_games").fetchall())
    for table in games:
        log = open_store(pg_url).table(table)
        live = glastonbury(service.tables[table].interp)
        assert glastonbury(log.rebuild()).public_view() == live.public_view()
        assert log.count_inputs() == 1 + 37
        assert status[table] == live.status.value  # the game's row: as the last input left it
        stored = [(seq, action) for t, seq, action in rows if t == table]
        assert [seq for seq, _ in stored] == sorted(seq for seq, _ in stored)
    assert rows, "the batch's events took cards: their actions are stored"
    service.stop()

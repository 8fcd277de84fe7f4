"""Nothing lost: a real hub (simulated table, outbox) and a real broker; the engine process
is killed with SIGKILL mid-game and restarted, or the broker restarts mid-game. The game the
engine ends with is the one a pure interpreter builds from the same gestures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from glastonbury_table import glastonbury
from waiting import EXIT_WITHIN, wait_for

from engine.games.glastonbury.rules import GameLog
from engine.games.glastonbury.rules.board import cell_name
from engine.games.glastonbury.table.interpreter import SensorInput, TableInterpreter
from engine.games.glastonbury.table.table_driver import ScriptedGame, scripted_game
from engine.service.service import EngineService, ServiceConfig
from engine.service.store import TableStore
from engine.wire.broker import LocalBroker
from engine.wire.contract import PublicTableView, Topics
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.outbox import Outbox
from hub.service import Hub

pytestmark = pytest.mark.e2e  # the whole table, as processes

ROOT = Path(__file__).resolve().parents[3]


def table_answers(client: WireClient, table: str) -> bool:
    """Whether an engine serves `table` now: it answers a question (``history``). Its lock
    shows in `pg_locks` a round trip before the engine counts the table as its own, and a
    command that arrives in between is left to the owner: no one answers it."""
    from engine.wire.mqtt import RequestTimeout

    try:
        client.request(Topics(table).cmd("history"), {}, timeout=2)
    except RequestTimeout:
        return False
    return True


class Table:
    """A real hub on a simulated table, played by gestures."""

    def __init__(self, url: str, table: str, tmp: Path, poll_interval: float = 0.002) -> None:
        tagmap = virtual_box_tagmap()
        self.sim = SimulatedTable(tagmap=tagmap)
        client = WireClient(url, client_id=f"hub-{table}", state_topic=Topics(table).hub_state,
                            reconnect_min=0.05, reconnect_max=0.3)
        self.hub = Hub(table=table, backend=self.sim, client=client,
                       outbox=Outbox(tmp / "outbox.sqlite"), tagmap=tagmap,
                       poll_interval=poll_interval, snapshot_interval=0.2).start()

    def gesture(self, inp: SensorInput) -> None:
        self.seen(self.make(inp))

    def make(self, inp: SensorInput) -> int:
        """Make the gesture without waiting for the hub (several tables at once); returns
        the hub's last event before it, for `seen`."""
        before = self.hub.outbox.last_seq
        if inp.kind == "button":
            assert inp.button is not None
            self.hub.button_pressed(inp.button, inp.seat)
        else:
            where = cell_name(inp.cell) if inp.cell is not None else f"pad:{inp.pad}"
            if inp.kind == "placed":
                self.sim.place(where, card_id=inp.card)
            else:
                self.sim.remove(where)
        return before

    def seen(self, before: int) -> None:
        wait_for(lambda: self.hub.outbox.last_seq > before, 5, "the hub to see a gesture")

    def stop(self) -> None:
        self.hub.stop()


class Watcher:
    def __init__(self, url: str, table: str) -> None:
        self.topics = Topics(table)
        self.public: dict[str, Any] | None = None
        self.online = 0
        self.client = WireClient(url, client_id=f"w-{uuid.uuid4().hex[:8]}", reconnect_min=0.05,
                                 reconnect_max=0.3)
        self.client.subscribe(self.topics.game_public, raw=self._public)
        self.client.subscribe(self.topics.engine_state, raw=self._state)
        self.client.start(wait=10)

    def _public(self, topic: str, payload: bytes) -> None:
        self.public = json.loads(payload)

    def _state(self, topic: str, payload: bytes) -> None:
        if json.loads(payload)["state"] == "online":
            self.online += 1

    def inputs(self) -> int:
        return -1 if self.public is None else int(self.public["view"]["table"]["inputs"])


def _reference(script: ScriptedGame, inputs: list[SensorInput]) -> TableInterpreter:
    interp = TableInterpreter("ref")
    args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
    interp.command("new_game", {**args, "game_id": "ref"})
    for inp in inputs:
        interp.handle(inp)
    return interp


def _comparable(view: dict[str, Any] | PublicTableView) -> dict[str, Any]:
    view = view.to_wire() if isinstance(view, PublicTableView) else dict(view)
    view["table"] = {k: v for k, v in view["table"].items() if k != "game_id"}
    return view


def _engine_process(url: str, data: Path, table: str, name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "engine.app", "engine", "--mqtt", url, "--data-dir", str(data),
         "--tables", table, "--name", name],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def test_engine_killed_mid_game_and_restarted_loses_nothing(
    mqtt_broker: str, tmp_path: Path, table_id: str
) -> None:
    script = scripted_game(3, 21, max_decisions=36)
    inputs = script.deal + [i for turn in script.turns for i in turn]
    name = f"eng-{uuid.uuid4().hex[:8]}"
    watcher = Watcher(mqtt_broker, table_id)
    table = Table(mqtt_broker, table_id, tmp_path)
    engine = _engine_process(mqtt_broker, tmp_path / "data", table_id, name)
    try:
        wait_for(lambda: watcher.online >= 1, 20, "the engine online")
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        reply = watcher.client.request(watcher.topics.cmd("new_game"), args, timeout=30)
        assert reply.status == "ok", reply.error
        half = len(inputs) // 2
        for inp in inputs[:half]:
            table.gesture(inp)
        for inp in inputs[half:half + 4]:  # events in flight while it dies
            table.gesture(inp)
        engine.send_signal(signal.SIGKILL)
        engine.wait(EXIT_WITHIN)
        for inp in inputs[half + 4:half + 40]:  # played while the engine is down
            table.gesture(inp)
        engine = _engine_process(mqtt_broker, tmp_path / "data", table_id, name)
        wait_for(lambda: watcher.online >= 2, 20, "the engine online again")
        for inp in inputs[half + 40:]:
            table.gesture(inp)
        reference = _reference(script, inputs)
        wait_for(lambda: watcher.inputs() == reference.inputs, 30, "every event handled")
        assert table.hub.outbox.last_seq == len(inputs)
        assert watcher.public is not None
        assert _comparable(watcher.public["view"]) == _comparable(reference.public_view())
    finally:
        engine.send_signal(signal.SIGTERM)
        engine.wait(EXIT_WITHIN)
        table.stop()
        watcher.client.stop()
    # The stored log replays to the same game: nothing lost, nothing applied twice.
    out = subprocess.run(
        [sys.executable, "-m", "engine.app", "games", "--data-dir", str(tmp_path / "data"),
         "--json"], cwd=ROOT, capture_output=True, check=True)
    games = json.loads(out.stdout)
    assert len(games) == 1
    shown = subprocess.run(
        [sys.executable, "-m", "engine.app", "games", "--data-dir", str(tmp_path / "data"),
         "show", table_id, games[0]["game_id"], "--log"], cwd=ROOT, capture_output=True,
        check=True)
    assert reference.game is not None
    assert json.loads(shown.stdout) == GameLog.of(reference.game).to_wire()


def test_broker_restarted_mid_game_loses_nothing(
    restartable_broker: LocalBroker, tmp_path: Path, table_id: str
) -> None:
    url = restartable_broker.url
    script = scripted_game(2, 8, max_decisions=24)
    inputs = script.deal + [i for turn in script.turns for i in turn]
    config = ServiceConfig(mqtt=url, data_dir=tmp_path / "data", tables=frozenset({table_id}),
                           name=f"eng-{uuid.uuid4().hex[:8]}", gap_timeout=10.0)
    service = EngineService(config)
    service.client._client.reconnect_delay_set(0.05, 0.3)  # type: ignore[arg-type]
    service.start(wait=10)
    table = Table(url, table_id, tmp_path)
    try:
        # A hub the engine has never followed: it starts from the hub's snapshot.
        wait_for(lambda: service.stats.get("resyncs", 0) == 1, 10, "the hub's snapshot")
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        service.command(table_id, "new_game", args)
        half = len(inputs) // 2
        for inp in inputs[:half]:
            table.gesture(inp)
        restartable_broker.restart()
        for inp in inputs[half:]:
            table.gesture(inp)
        reference = _reference(script, inputs)
        interp = glastonbury(service.tables[table_id].interp)
        wait_for(lambda: interp.inputs == reference.inputs, 30, "every event handled")
        assert service.stats["gaps_skipped"] == 0 and service.stats["resyncs"] == 1
        assert _comparable(interp.public_view()) == _comparable(reference.public_view())
        assert interp.game is not None and reference.game is not None
        assert GameLog.of(interp.game).to_wire() == GameLog.of(reference.game).to_wire()
    finally:
        service.stop()
        table.stop()
    assert os.path.exists(tmp_path / "data" / "tables" / f"{table_id}.sqlite")


def test_engine_started_after_the_deal_reads_the_hubs_snapshot(
    mqtt_broker: str, tmp_path: Path, table_id: str
) -> None:
    script = scripted_game(4, 2, max_decisions=4)
    table = Table(mqtt_broker, table_id, tmp_path)
    for inp in script.deal:  # the cards are laid before any engine runs
        table.gesture(inp)
    config = ServiceConfig(mqtt=mqtt_broker, data_dir=tmp_path / "data",
                           tables=frozenset({table_id}), name=f"eng-{uuid.uuid4().hex[:8]}")
    service = EngineService(config).start(wait=10)
    try:
        wait_for(lambda: service.stats.get("resyncs", 0) == 1, 10, "the hub's snapshot")
        # (a snapshot may lag the last events by its interval: the gap is asked again)
        wait_for(lambda: len(glastonbury(service.tables[table_id].interp).cells) == 32, 10,
                 "the deal")
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        data = service.command(table_id, "new_game", args)
        assert data["status"] == "playing"  # the 32 cards already lie right: it starts
        for inp in [i for turn in script.turns for i in turn]:
            table.gesture(inp)
        interp = glastonbury(service.tables[table_id].interp)
        reference = _reference(script, script.deal + [i for t in script.turns for i in t])
        expected = reference.game
        assert expected is not None
        wait_for(lambda: interp.game is not None
                 and len(interp.game.actions) == len(expected.actions), 10, "the turns")
        assert interp.game is not None and interp.game.grid == expected.grid
        assert interp.active_alerts == []
    finally:
        service.stop()
        table.stop()
    rebuilt = glastonbury(TableStore.open(tmp_path / "data", table_id).rebuild())
    assert rebuilt.game is not None and rebuilt.game.grid == interp.game.grid


def test_an_event_lost_after_its_ack_is_asked_again_from_the_hub(
    mqtt_broker: str, tmp_path: Path, table_id: str
) -> None:
    """paho acknowledges QoS 1 before the handler runs; an event dropped in between (a
    crash) shows as a gap and comes back from the hub's outbox (hub/cmd/replay)."""
    script = scripted_game(2, 5, max_decisions=6)
    inputs = script.deal + [i for turn in script.turns for i in turn]
    config = ServiceConfig(mqtt=mqtt_broker, data_dir=tmp_path / "data",
                           tables=frozenset({table_id}), name=f"eng-{uuid.uuid4().hex[:8]}")
    service = EngineService(config)
    real_receive = service.receive
    dropped: list[int] = []

    def lossy(table: str, event: Any) -> Any:
        if event.seq in (10, len(inputs)) and event.seq not in dropped:
            dropped.append(event.seq)  # acked, then lost
            return []
        return real_receive(table, event)

    service.receive = lossy  # type: ignore[method-assign]
    service.start(wait=10)
    table = Table(mqtt_broker, table_id, tmp_path)
    try:
        wait_for(lambda: service.stats.get("resyncs", 0) == 1, 10, "the hub's snapshot")
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        service.command(table_id, "new_game", args)
        for inp in inputs:
            table.gesture(inp)
        reference = _reference(script, inputs)
        interp = glastonbury(service.tables[table_id].interp)
        wait_for(lambda: interp.inputs == reference.inputs, 15, "the lost events again")
        assert sorted(dropped) == [10, len(inputs)]  # the last one came back via the snapshot
        assert interp.game is not None and reference.game is not None
        assert GameLog.of(interp.game).to_wire() == GameLog.of(reference.game).to_wire()
    finally:
        service.stop()
        table.stop()

"""The whole system under faults: real broker, real hubs, the real engine process.

Several games run at once, each on its own table: a hub on a simulated table (drop and
misread faults, a flickering reader) or on the serial back-end fed firmware frames mixed
with line garbage, all played by `table_driver` gestures. Meanwhile the broker goes away
(the hubs' outboxes keep every event) and restarts, the engine process is SIGKILLed and
started again, and a vandal publishes malformed and replayed payloads on ``hub/event`` and
``cmd/*``. Every game must end exactly as the pure engine's reference game with the same
decisions: grid, cauldrons, spells, scores and the action list, nothing lost and nothing
applied twice (the hub's events equal the gestures; the engine's input count and its stored
log equal a reference interpreter's).

Default run (``make test``): 4 games of 2 players (one over serial); ``--soak``: 32 games of
2-4 players in batches of 4, with faults repeated in every batch.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import serial
from glastonbury_table import glastonbury
from waiting import wait_for

from engine.games.glastonbury.rules import GameLog, Refill
from engine.games.glastonbury.rules.board import cell_name
from engine.games.glastonbury.table.interpreter import SensorInput, Status, TableInterpreter
from engine.games.glastonbury.table.table_driver import ScriptedGame, scripted_game
from engine.service.store import TableStore
from engine.wire.api import ReplayArgs, ReplayResult
from engine.wire.broker import LocalBroker
from engine.wire.contract import HubEvent, Topics, encode
from engine.wire.mqtt import WireClient
from firmware.protocol import Sender
from hub.backends.serial import SerialBackend
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.layout import Layout
from hub.outbox import Outbox
from hub.service import Hub

pytestmark = pytest.mark.e2e  # the whole table, as processes

ROOT = Path(__file__).resolve().parents[1]
CARD_KINDS = ("cell", "pad", "button", "unknown_tag")


def as_gesture(event: HubEvent) -> tuple[Any, ...]:
    """What a hub event says a person did (to compare with the scripted inputs)."""
    if event.kind == "button":
        return ("button", event.button, event.seat if event.button == "confirm" else None)
    where = event.cell if event.cell is not None else f"pad:{event.seat}"
    return (event.action, where, event.card_id)


def input_gesture(inp: SensorInput) -> tuple[Any, ...]:
    if inp.kind == "button":
        return ("button", inp.button, inp.seat)
    where = cell_name(inp.cell) if inp.cell is not None else f"pad:{inp.pad}"
    return (inp.kind, where, inp.card)


def all_inputs(script: ScriptedGame) -> list[SensorInput]:
    return script.deal + [i for turn in script.turns for i in turn]


class TableHub:
    """A real hub on one table; `gesture` plays an input and waits until the hub saw it."""

    def __init__(self, url: str, table: str, tmp: Path, backend: Any) -> None:
        self.table = table
        self.tagmap = virtual_box_tagmap()
        self.backend = backend
        self.emitted: list[HubEvent] = []
        self._seen = threading.Condition()
        client = WireClient(url, client_id=f"hub-{table}", state_topic=Topics(table).hub_state,
                            reconnect_min=0.05, reconnect_max=0.3)
        self.hub = Hub(table=table, backend=backend, client=client,
                       outbox=Outbox(tmp / f"outbox-{table}.sqlite"), tagmap=self.tagmap,
                       poll_interval=0.002, snapshot_interval=0.2, health_hold=0.05)
        self.hub.listeners.append(self._on_event)

    def _on_event(self, event: HubEvent) -> None:
        with self._seen:
            self.emitted.append(event)
            self._seen.notify_all()

    def card_events(self) -> list[HubEvent]:
        with self._seen:
            return [e for e in self.emitted if e.kind in CARD_KINDS]

    def start(self) -> TableHub:
        self.hub.start()
        return self

    def gesture(self, inp: SensorInput) -> None:
        before = len(self.card_events())
        if inp.kind == "button":
            assert inp.button is not None
            self.hub.button_pressed(inp.button, inp.seat)
        else:
            self.lay_or_lift(inp)
        with self._seen:
            ok = self._seen.wait_for(
                lambda: sum(e.kind in CARD_KINDS for e in self.emitted) > before, 10)
        assert ok, f"{self.table}: the hub did not see {inp}"

    def lay_or_lift(self, inp: SensorInput) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self.hub.stop()


class SimHub(TableHub):
    """Simulated readers with dropped and misread polls; a reader flickers now and then."""

    def __init__(self, url: str, table: str, tmp: Path, seed: int) -> None:
        tagmap = virtual_box_tagmap()
        sim = SimulatedTable(tagmap=tagmap, seed=seed, drop_rate=0.08, misread_rate=0.04)
        super().__init__(url, table, tmp, sim)
        self.sim = sim
        self.rng = random.Random(seed)
        self.flickering: str | None = None
        self.flicker_rate = 0.1
        self.lying: dict[str, str] = {}

    def lay_or_lift(self, inp: SensorInput) -> None:
        where = cell_name(inp.cell) if inp.cell is not None else f"pad:{inp.pad}"
        if where == self.flickering:  # a flickering reader never confirms a change
            self.sim.repair(where)
            self.flickering = None
        if inp.kind == "placed":
            self.sim.place(where, card_id=inp.card)
            self.lying[where] = str(inp.card)
        else:
            self.sim.remove(where)
            self.lying.pop(where, None)
        if self.flickering is None and self.rng.random() < self.flicker_rate:
            cells = sorted(w for w in self.lying if w != where and not w.startswith("pad"))
            if cells:  # a card that lies still: its reader reads it every other poll
                self.flickering = self.rng.choice(cells)
                self.sim.flicker(self.flickering)


class SerialHub(TableHub):
    """The serial back-end over pyserial's loop://: the test writes the firmware's frames,
    with line garbage (bad checksums, binary noise, oversize lines) in between."""

    def __init__(self, url: str, table: str, tmp: Path, seed: int) -> None:
        self.port = serial.serial_for_url("loop://", timeout=0)
        self.layout = Layout()
        backend = SerialBackend(self.layout, lambda: self.port, port_name="loop")
        super().__init__(url, table, tmp, backend)
        self.sender = Sender()
        self.rng = random.Random(seed)
        self.garbage = 0
        self.lying: dict[int, str] = {}
        self._write_lock = threading.Lock()

    def start(self) -> SerialHub:
        super().start()
        with self._write_lock:
            for line in self.sender.full({}, self.layout.n_readers):
                self.port.write(line.encode())
        return self

    def _noise(self) -> bytes:
        roll = self.rng.randrange(5)
        if roll == 0:
            return self.rng.randbytes(self.rng.randrange(1, 40)).replace(b"\n", b"") + b"\n"
        if roll == 1:
            return b"x" * self.rng.randrange(300, 900) + b"\n"
        if roll == 2:  # a frame damaged on the wire: its checksum fails
            return f"{self.rng.randrange(65536)} P {self.rng.randrange(36)} 04AABB*12FF\n".encode()
        if roll == 3:
            return b"\r\n"
        return "P 4 ** \u00e9\u00e8 \x00\n".encode()

    def lay_or_lift(self, inp: SensorInput) -> None:
        where = cell_name(inp.cell) if inp.cell is not None else f"pad:{inp.pad}"
        reader = self.layout.reader_for(where)
        with self._write_lock:
            if self.rng.random() < 0.3:
                self.garbage += 1
                self.port.write(self._noise())
            if inp.kind == "placed":
                uid = self.tagmap.uid_for(str(inp.card))
                assert uid is not None
                self.lying[reader] = uid
                line = self.sender.frame("P", [str(reader), uid])
            else:
                line = self.sender.frame("R", [str(reader), self.lying.pop(reader)])
            self.port.write(line.encode())


class Engine:
    """`cauldron engine` in its own process, serving every table; killable."""

    def __init__(self, url: str, data: Path, name: str) -> None:
        self.url, self.data, self.name = url, data, name
        self.proc: subprocess.Popen[bytes] | None = None
        self.kills = 0
        self.log = data.parent / f"{name}.log"

    def log_tail(self, lines: int = 30) -> str:
        if not self.log.exists():
            return "(no log)"
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def start(self) -> None:
        with self.log.open("ab") as err:  # the child keeps its own copy of the fd
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "engine.app", "engine", "--mqtt", self.url,
                 "--data-dir", str(self.data), "--name", self.name],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.kills += 1

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class Watcher:
    """Follows the engine's online state and every table's public view; sends commands."""

    def __init__(self, url: str, engine_name: str) -> None:
        self.public: dict[str, dict[str, Any]] = {}
        self.online = 0
        self.engine_name = engine_name
        self.tables_online: set[str] = set()
        self._lock = threading.Lock()
        self.client = WireClient(url, client_id=f"w-{uuid.uuid4().hex[:8]}",
                                 reconnect_min=0.05, reconnect_max=0.3)
        self.client.subscribe(Topics("+").game_public, raw=self._public)
        self.client.subscribe(Topics("+").engine_state, raw=self._state)
        self.client.start(wait=10)

    def _public(self, topic: str, payload: bytes) -> None:
        with self._lock:
            self.public[topic.split("/")[1]] = json.loads(payload)

    def _state(self, topic: str, payload: bytes) -> None:
        if json.loads(payload)["state"] != "online":
            return
        table = topic.split("/")[1]
        with self._lock:
            if table == self.engine_name:
                self.online += 1
            else:
                self.tables_online.add(table)

    def inputs(self, table: str) -> int:
        with self._lock:
            view = self.public.get(table)
        return -1 if view is None else int(view["view"]["table"]["inputs"])


def cmd(fields: dict[str, Any]) -> bytes:
    return json.dumps({"schema_version": 1, **fields}).encode()


class Vandal:
    """Publishes what must change nothing: malformed payloads on hub/event and cmd/*, and
    copies (some altered) of events the engine already has."""

    def __init__(self, url: str, seed: int) -> None:
        self.rng = random.Random(seed)
        self.client = WireClient(url, client_id=f"v-{uuid.uuid4().hex[:8]}",
                                 reconnect_min=0.05, reconnect_max=0.3).start(wait=10)
        self.sent = 0

    def barrage(self, hub: TableHub, handled: int) -> None:
        """``handled``: how many of the hub's card events the engine has applied (forged
        copies are only sent under those seqs: an unsigned event first under a new seq
        would be a different story, the broker's ACLs keep such publishers out)."""
        topics = Topics(hub.table)
        rng = self.rng
        junk: list[tuple[str, bytes]] = [
            (topics.hub_event, b"{not json"),
            (topics.hub_event, b"\xff\xfe\x00"),
            (topics.hub_event, json.dumps({"schema_version": 1, "kind": "cell"}).encode()),
            (topics.hub_event, json.dumps([1, 2, 3]).encode()),
            (topics.hub_event, json.dumps({"schema_version": 99, "seq": 5}).encode()),
            (topics.cmd("new_game"), b"nope"),
            (topics.cmd("new_game"), b"{}"),
            (topics.cmd("new_game"), cmd({"args": {"colours": ["red"]}})),
            (topics.cmd("new_game"), cmd({"transaction": "t1", "args": {"colours": "yellow"}})),
            (topics.cmd("new_game"), cmd({"transaction": "t2", "args": {"colours": ["red"] * 2}})),
            (topics.cmd("new_game"), cmd({"transaction": "t5", "args": {"players": "x"}})),
            (topics.cmd("undo"), cmd({"transaction": "bad transaction id!"})),
            (topics.cmd("undo"), cmd({"transaction": "t3", "args": 7})),
            (topics.cmd("undo"), cmd({"transaction": "t4", "seat": 9})),
            (topics.cmd("keep"), cmd({"transaction": 5})),
            (f"cauldron/{hub.table}/cmd/frobnicate", cmd({"transaction": "t6"})),
            (topics.cmd("end"), cmd({"transaction": "t7", "args": {"force": "maybe"}, "x": 1})),
            (topics.cmd("confirm"), rng.randbytes(32)),
        ]
        # Old events again, as a broker or a hub might redeliver them, and forged copies
        # under a seq the engine already has: neither may be applied a second time.
        old = hub.card_events()[:max(0, handled - 1)]
        for event in rng.sample(old, min(6, len(old))):
            junk.append((topics.hub_event, encode(event)))
            forged = event.model_copy(update={"action": "removed" if event.action == "placed"
                                              else event.action})
            junk.append((topics.hub_event, encode(forged)))
        rng.shuffle(junk)
        for topic, payload in junk:
            self.client.publish_raw(topic, payload)
            self.sent += 1


@dataclass
class Play:
    script: ScriptedGame
    hub: TableHub
    done: int = 0
    error: BaseException | None = None
    thread: threading.Thread | None = None
    reference: TableInterpreter = field(init=False)

    def __post_init__(self) -> None:
        self.reference = TableInterpreter("ref")
        args = {k: v for k, v in self.script.new_game_args.items() if k != "game_id"}
        self.reference.command("new_game", {**args, "game_id": "ref"})
        for inp in all_inputs(self.script):
            self.reference.handle(inp)

    def run(self, pace: threading.Event) -> None:
        try:
            for inp in all_inputs(self.script):
                pace.wait(30)
                self.hub.gesture(inp)
                self.done += 1
        except BaseException as exc:  # reported by the main thread
            self.error = exc


def comparable(view: dict[str, Any]) -> dict[str, Any]:
    view = dict(view)
    view["table"] = {k: v for k, v in view["table"].items() if k != "game_id"}
    return view


def run_batch(broker: LocalBroker, engine: Engine, watcher: Watcher, vandal: Vandal,
              tmp: Path, seeds: list[int], players: list[int], serial_every: int,
              rng: random.Random) -> list[Play]:
    url = broker.url
    plays: list[Play] = []
    for k, seed in enumerate(seeds):
        table = f"soak-{seed}-{uuid.uuid4().hex[:4]}"
        script = scripted_game(players[k], seed, game_id=f"g{seed}")
        hub_cls = SerialHub if serial_every and k % serial_every == serial_every - 1 else SimHub
        hub = hub_cls(url, table, tmp, seed).start()

        def taken_up(t: str = table) -> bool:
            return t in watcher.tables_online

        # The engine takes up a table at the hub's first snapshot (a resync, which counts as
        # an input); the game starts after it, as a host starts it at a table already on.
        wait_for(taken_up, 15, f"the engine to take {table}")
        args = {k2: v for k2, v in script.new_game_args.items() if k2 != "game_id"}
        reply = watcher.client.request(Topics(table).cmd("new_game"), args, timeout=15)
        assert reply.status == "ok", reply.error
        plays.append(Play(script, hub))
    total = sum(len(all_inputs(p.script)) for p in plays)
    pace = threading.Event()
    pace.set()
    for play in plays:
        play.thread = threading.Thread(target=play.run, args=(pace,), daemon=True)
        play.thread.start()

    def progress() -> float:
        failed = [p.error for p in plays if p.error is not None]
        if failed:
            raise AssertionError(f"a game stopped: {failed[0]!r}")
        return sum(p.done for p in plays) / total

    def reach(fraction: float) -> None:
        wait_for(lambda: progress() >= fraction, 120, f"{fraction:.0%} of the gestures")

    # The faults, at points of the batch's progress (jittered by the seeded rng).
    reach(rng.uniform(0.1, 0.2))
    broker.stop()  # outage: the hubs keep every event in their outboxes
    mark = progress()
    reach(min(mark + 0.08, 0.3))
    broker.start()
    reach(rng.uniform(0.35, 0.45))
    online = watcher.online
    engine.kill()  # mid-game, events in flight
    mark = progress()
    reach(min(mark + 0.08, 0.55))
    engine.start()
    wait_for(lambda: watcher.online > online, 30, "the engine online again")
    reach(rng.uniform(0.6, 0.7))
    for play in plays:
        vandal.barrage(play.hub, watcher.inputs(play.hub.table))
    reach(rng.uniform(0.75, 0.85))
    broker.restart()  # a quick restart: retained messages and queued sessions are lost
    for play in plays:
        assert play.thread is not None
        play.thread.join(120)
        assert play.error is None, play.error
    for play in plays:
        table = play.hub.table

        def handled(t: str = table, p: Play = play) -> bool:
            return watcher.inputs(t) == p.reference.inputs

        try:
            wait_for(handled, 60, f"every event of {table} handled")
        except AssertionError:
            view = watcher.public.get(table, {}).get("view", {})
            raise AssertionError(
                f"{table}: the engine applied {watcher.inputs(table)} inputs of "
                f"{play.reference.inputs}; hub last seq {play.hub.hub.outbox.last_seq}; "
                f"table {view.get('table')}\nengine log:\n{engine.log_tail()}") from None
    return plays


def check_batch(plays: list[Play], watcher: Watcher, data: Path) -> None:
    for play in plays:
        table, script = play.hub.table, play.script
        inputs = all_inputs(script)
        # The hub: each gesture became exactly one event, in order, nothing invented.
        events = play.hub.card_events()
        assert [as_gesture(e) for e in events] == [input_gesture(i) for i in inputs], table
        assert play.hub.hub.counts["unknown_tags"] == 0
        assert play.hub.hub.outbox.last_seq == len(play.hub.emitted)
        # The engine's live view: the reference interpreter's, input for input.
        public = watcher.public[table]["view"]
        assert comparable(public) == comparable(play.reference.public_view().to_wire()), table
    for play in plays:  # the engine's stored log, rebuilt, is the pure engine's game
        table, ref = play.hub.table, play.script.reference
        assert ref is not None and ref.is_over()
        store = TableStore.open(data, table)
        try:
            rebuilt = glastonbury(store.rebuild())
        finally:
            store.close()
        game = rebuilt.game
        assert game is not None and rebuilt.status is Status.OVER, table
        assert rebuilt.inputs == play.reference.inputs, "inputs lost or applied twice"
        assert [a for a in game.actions if not isinstance(a, Refill)] == ref.actions, table
        assert game.grid == ref.grid and game.pawns == ref.pawns
        assert game.cauldrons == ref.cauldrons and game.spells == ref.spells
        assert game.discarded == ref.discarded and len(game.pile) == len(ref.pile)
        assert (game.end_reason, game.last_card_seat) == (ref.end_reason, ref.last_card_seat)
        assert game.scores().to_json() == ref.scores().to_json()
        assert play.reference.game is not None
        assert GameLog.of(game).to_wire() == GameLog.of(play.reference.game).to_wire()
        assert rebuilt.active_alerts == []


def soak(broker: LocalBroker, tmp: Path, batches: list[tuple[list[int], list[int]]],
         serial_every: int) -> dict[str, int]:
    data = tmp / "engine-data"
    name = f"eng-{uuid.uuid4().hex[:8]}"
    engine = Engine(broker.url, data, name)
    watcher = Watcher(broker.url, name)
    engine.start()
    vandal = Vandal(broker.url, 11)
    rng = random.Random(5)
    plays: list[Play] = []
    try:
        wait_for(lambda: watcher.online >= 1, 30, "the engine online")
        for seeds, players in batches:
            batch = run_batch(broker, engine, watcher, vandal, tmp, seeds, players,
                              serial_every, rng)
            plays += batch
            for play in batch:
                play.hub.stop()
        engine.stop()
        check_batch(plays, watcher, data)
    finally:
        engine.stop()
        for play in plays:
            play.hub.stop()
        watcher.client.stop()
        vandal.client.stop()
    serial_hubs = [p.hub for p in plays if isinstance(p.hub, SerialHub)]
    assert all(h.garbage > 0 for h in serial_hubs)
    for hub in serial_hubs:
        assert isinstance(hub.backend, SerialBackend) and sum(hub.backend.rejects.values()) > 0
    return {"games": len(plays), "kills": engine.kills, "junk": vandal.sent,
            "serial_garbage": sum(h.garbage for h in serial_hubs)}


def test_games_under_faults_end_as_the_pure_engine(restartable_broker: LocalBroker,
                                                  tmp_path: Path) -> None:
    stats = soak(restartable_broker, tmp_path, [([101, 102, 103, 104], [2, 2, 2, 2])],
                 serial_every=4)
    print(stats)
    assert stats["games"] == 4 and stats["kills"] == 1 and stats["junk"] > 40


@pytest.mark.soak
def test_soak_many_games_under_repeated_faults(restartable_broker: LocalBroker,
                                              tmp_path: Path) -> None:
    batches = []
    for b in range(8):
        seeds = [1000 + 4 * b + k for k in range(4)]
        batches.append((seeds, [2 + (s % 3) for s in seeds]))
    stats = soak(restartable_broker, tmp_path, batches, serial_every=3)
    assert stats["games"] == 32 and stats["kills"] == 8


def test_a_lost_replay_request_is_asked_again(mqtt_broker: str, tmp_path: Path,
                                              table_id: str) -> None:
    """An event acknowledged then lost by the engine (a crash between the two), and the
    hub's answer to the first replay request lost as well (the hub was reconnecting: its
    clean session keeps no request). The engine must ask again, not skip the events."""
    from engine.service.service import EngineService, ServiceConfig
    from engine.wire.mqtt import CommandRefused

    script = scripted_game(2, 5, max_decisions=10)
    inputs = all_inputs(script)
    config = ServiceConfig(mqtt=mqtt_broker, data_dir=tmp_path / "data",
                           tables=frozenset({table_id}), name=f"eng-{uuid.uuid4().hex[:8]}",
                           gap_timeout=1.0)
    service = EngineService(config)
    real_receive = service.receive
    lost = len(script.deal) + 3

    def lossy(table: str, event: HubEvent) -> Any:
        if event.seq == lost and not getattr(lossy, "done", False):
            lossy.done = True  # type: ignore[attr-defined]
            return []
        return real_receive(table, event)

    service.receive = lossy  # type: ignore[method-assign]
    service.start(wait=10)
    hub = SimHub(mqtt_broker, table_id, tmp_path, seed=2)
    hub.sim.drop_rate = hub.sim.misread_rate = 0.0
    hub.flicker_rate = 0.0  # no flicker either: only the lost event and request
    real_replay = hub.hub._replay
    refused: list[ReplayArgs] = []

    def replay_once_lost(_ctx: None, args: ReplayArgs) -> ReplayResult:
        if not refused:
            refused.append(args)
            raise CommandRefused("hub reconnecting")
        return real_replay(_ctx, args)

    hub.hub._replay = replay_once_lost  # type: ignore[method-assign]
    hub.hub._handlers = hub.hub._bind_handlers()  # the verb map binds its handlers once
    hub.start()
    play = Play(script, hub)
    try:
        wait_for(lambda: service.stats.get("resyncs", 0) == 1, 10, "the hub's snapshot")
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        service.command(table_id, "new_game", args)
        for inp in inputs[:lost + 5]:
            hub.gesture(inp)
        time.sleep(config.gap_timeout * 1.5)
        for inp in inputs[lost + 5:]:
            hub.gesture(inp)
        runtime = service.tables[table_id]
        wait_for(lambda: runtime.cursors[hub.hub.hub_id].last >= hub.hub.outbox.last_seq, 10,
                 "the engine at the hub's last event")
        assert refused, "the engine never asked for the lost event"
        assert service.stats["gaps_skipped"] == 0, "events skipped: lost for good"
        interp = glastonbury(runtime.interp)
        assert interp.inputs == play.reference.inputs
        assert interp.game is not None and play.reference.game is not None
        assert GameLog.of(interp.game).to_wire() == GameLog.of(play.reference.game).to_wire()
    finally:
        service.stop()
        hub.stop()


def test_a_replay_lost_before_a_broker_restart_is_asked_again(
        restartable_broker: LocalBroker, tmp_path: Path, table_id: str) -> None:
    """The soak found this: the engine asks for events it missed, the broker restarts before
    the answer reaches it, and the table has gone quiet (the game's last events): after the
    restart the hub's snapshot shows what is missing and the engine must ask again."""
    from engine.service.service import EngineService, ServiceConfig
    from engine.wire.mqtt import CommandRefused

    url = restartable_broker.url
    script = scripted_game(2, 6, max_decisions=4)
    inputs = all_inputs(script)
    config = ServiceConfig(mqtt=url, data_dir=tmp_path / "data", tables=frozenset({table_id}),
                           name=f"eng-{uuid.uuid4().hex[:8]}", gap_timeout=1.0)
    service = EngineService(config)
    service.client._client.reconnect_delay_set(0.05, 0.3)  # type: ignore[arg-type]
    real_receive = service.receive

    def lossy(table: str, event: HubEvent) -> Any:
        if event.seq == len(inputs):  # the last event: acknowledged, then lost
            return []
        return real_receive(table, event)

    service.receive = lossy  # type: ignore[method-assign]
    service.start(wait=10)
    hub = SimHub(url, table_id, tmp_path, seed=2)
    hub.sim.drop_rate = hub.sim.misread_rate = 0.0
    hub.flicker_rate = 0.0
    real_replay = hub.hub._replay
    asked: list[ReplayArgs] = []

    def replay_lost_until_restart(_ctx: None, args: ReplayArgs) -> ReplayResult:
        asked.append(args)
        if len(asked) == 1:  # the answer is lost in the broker restart below
            raise CommandRefused("lost")
        return real_replay(_ctx, args)

    hub.hub._replay = replay_lost_until_restart  # type: ignore[method-assign]
    hub.hub._handlers = hub.hub._bind_handlers()  # the verb map binds its handlers once
    hub.start()
    play = Play(script, hub)
    try:
        wait_for(lambda: service.stats.get("resyncs", 0) == 1, 10, "the hub's snapshot")
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        service.command(table_id, "new_game", args)
        for inp in inputs:
            hub.gesture(inp)
        wait_for(lambda: len(asked) == 1, 10, "the engine to ask for the lost event")
        service.receive = real_receive  # type: ignore[method-assign]
        restartable_broker.restart()
        runtime = service.tables[table_id]
        wait_for(lambda: runtime.cursors[hub.hub.hub_id].last >= len(inputs), 10,
                 "the lost event asked again after the restart")
        assert runtime.interp.inputs == play.reference.inputs
    finally:
        service.stop()
        hub.stop()

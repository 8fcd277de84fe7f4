"""Attacks on the engine over MQTT, each refused with nothing lost: against a real Mosquitto
with the shipped ACL (hardware/deploy/mosquitto/acl), the engine, a hub and a dashboard
logged in with their own accounts, and an attacker holding the dashboard's or the hub's
broker password (sniffed on shared Wi-Fi, say) but not the table's keys."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acl_broker import needs_mosquitto, secured_broker
from hub_events import hub_event, signed
from waiting import wait_for

from engine.games.glastonbury.table.table_driver import scripted_game
from engine.service.service import EngineService, ServiceConfig
from engine.wire.auth import ensure_key, keys_dir, sign_command, sign_hub
from engine.wire.contract import (
    CommandRequest,
    HubSnapshot,
    ReaderSeen,
    Topics,
    WireModel,
    encode,
)
from engine.wire.mqtt import WireClient

pytestmark = needs_mosquitto

TABLE = "table-1"  # the hub's broker account is its table id (the shipped ACL)
HUB_ID = "hub-table-1"
ENGINE, DASHBOARD = "cauldron.engine", "cauldron.dashboard"  # the services' broker accounts
ACCOUNTS = {ENGINE: "engine-pw", DASHBOARD: "dash-pw", TABLE: "hub1-pw", "table-2": "hub2-pw"}
TOPICS = Topics(TABLE)


class Client:
    """A broker session with one account that records what it receives."""

    def __init__(self, port: int, user: str, *, sign: bool = True) -> None:
        self.client = WireClient(f"mqtt://{user}:{ACCOUNTS[user]}@127.0.0.1:{port}",
                                 client_id=f"{user}-{uuid.uuid4().hex[:6]}", sign_commands=sign)
        self.received: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.client.start(wait=10)

    def watch(self, pattern: str) -> None:
        self.client.subscribe(pattern, raw=self._raw, wait=5)

    def _raw(self, topic: str, payload: bytes) -> None:
        with self.lock:
            self.received.append((topic, payload))

    def of(self, topic: str) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(p) for t, p in self.received if t == topic]

    def send(self, topic: str, payload: WireModel | bytes, retain: bool = False) -> None:
        done = threading.Event()
        data = payload if isinstance(payload, bytes) else encode(payload)
        self.client.publish_raw(topic, data, on_ack=done.set, retain=retain)
        assert done.wait(5), f"no PUBACK on {topic}"

    def answer(self, verb: str, request: CommandRequest | bytes, table: str = TABLE
               ) -> dict[str, Any]:
        """Publish a request and wait for the engine's answer to it."""
        topic = Topics(table).cmd(verb)
        transaction = (request.transaction if isinstance(request, CommandRequest)
                       else json.loads(request)["transaction"])

        def found() -> list[dict[str, Any]]:
            return [r for r in self.of(topic + "/response") if r["transaction"] == transaction]
        seen = len(found())
        self.send(topic, request)
        wait_for(lambda: len(found()) > seen, 10, f"the answer to {verb}")
        return found()[-1]

    def stop(self) -> None:
        self.client.stop()


@dataclass
class Scene:
    port: int
    data_dir: Path
    engine: EngineService
    hub: Client
    dashboard: Client
    attacker: Client  # the dashboard's broker account, without the table's keys
    seq: int = 0

    def start_engine(self, **config: Any) -> EngineService:
        self.engine = EngineService(ServiceConfig(
            mqtt=f"mqtt://{ENGINE}:engine-pw@127.0.0.1:{self.port}", data_dir=self.data_dir,
            name="engine-under-attack", gap_timeout=0.3, retry_interval=0.2, **config,
        )).start(wait=10)
        return self.engine

    @property
    def interp(self) -> Any:
        return self.engine.tables[TABLE].interp

    def hub_sends(self, inputs: list[Any]) -> None:
        """The real hub: signed events, in sequence."""
        for inp in inputs:
            self.seq += 1
            self.hub.send(TOPICS.hub_event, signed(hub_event(inp, self.seq, hub_id=HUB_ID), TABLE))

    def new_game(self, players: int = 2, seed: int = 5) -> Any:
        script = scripted_game(players, seed, max_decisions=4)
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        reply = self.dashboard.client.request(TOPICS.cmd("new_game"), args, timeout=10)
        assert reply.status == "ok", reply.error
        return script

    def deal(self, players: int = 2, seed: int = 5) -> Any:
        script = self.new_game(players, seed)
        self.hub_sends(script.deal)
        wait_for(lambda: self.interp.status.value == "playing", 15, "the deal")
        return script


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    ensure_key(keys_dir(), TABLE, "hub", HUB_ID)  # the hub's enrolment
    with secured_broker(tmp_path, ACCOUNTS) as port:
        hub = Client(port, TABLE)
        dashboard = Client(port, DASHBOARD)
        attacker = Client(port, DASHBOARD, sign=False)
        attacker.watch("cauldron/+/cmd/+/response")
        dashboard.watch(TOPICS.engine_state)
        hub.watch(TOPICS.hub_cmd("+"))
        scene = Scene(port, tmp_path / "engine", None, hub, dashboard, attacker)  # type: ignore[arg-type]
        scene.start_engine()
        try:
            yield scene
        finally:
            scene.engine.stop()
            for client in (hub, dashboard, attacker):
                client.stop()


def _state(scene: Scene) -> tuple[Any, ...]:
    """What an attack must not change: the game and its log (once the log holds every input
    the interpreter shows: it can show one a moment before the store has it)."""
    interp = scene.interp
    store = scene.engine.tables[TABLE].store
    wait_for(lambda: store.count_inputs() == interp.inputs, 15, "the log to catch up")
    return (interp.status.value, interp.inputs, repr(interp.public_view()),
            scene.engine.tables[TABLE].store.count_inputs())


def test_forged_command_is_refused_and_changes_nothing(scene: Scene) -> None:
    scene.deal()
    before = _state(scene)
    attacker = scene.attacker
    # The attack: `auth` is anything at all.
    raw = b'{"schema_version":1,"transaction":"x","auth":"wrong"}'
    assert attacker.answer("undo", raw)["code"] == "no_deadline"
    # A deadline and a made-up signature; one signed with a key that is not the table's.
    guess = CommandRequest(transaction="x2", deadline=time.time() + 30, auth="0" * 64)
    assert attacker.answer("undo", guess)["code"] == "unauthorised"
    own_key = sign_command(CommandRequest(transaction="x3", deadline=time.time() + 30),
                           TABLE, "undo", b"k" * 32)
    assert attacker.answer("undo", own_key)["code"] == "unauthorised"
    # A real signed command captured on the wire, replayed as another verb, with other
    # arguments, to another table, or as it is.
    key = scene.dashboard.client.command_key(TABLE)
    real = sign_command(CommandRequest(transaction="real-1", deadline=time.time() + 30,
                                       args={"seat": 0}, seat=0), TABLE, "keep", key)
    assert attacker.answer("end", real.model_copy(update={"transaction": "real-1"}))["code"] == (
        "unauthorised")
    altered = real.model_copy(update={"args": {"seat": 1}, "transaction": "real-2"})
    assert attacker.answer("keep", altered)["code"] == "unauthorised"
    first = attacker.answer("keep", real)
    assert first["status"] == "error" and first["code"] != "unauthorised"  # signed: it ran
    assert attacker.answer("keep", real)["code"] == "replayed"
    after = _state(scene)
    assert after[:3] == before[:3]  # keep did not fit the moment: nothing changed
    assert scene.engine.stats["forged"] >= 5
    # The dashboard's signed commands work.
    reply = scene.dashboard.client.request(TOPICS.cmd("end"), {}, timeout=10)
    assert reply.status == "ok" and scene.interp.status.value == "ended"


def test_forged_or_unsigned_event_is_refused(scene: Scene) -> None:
    script = scene.new_game()
    scene.hub_sends(script.deal[:10])
    wait_for(lambda: scene.interp.inputs == 11, 10, "ten real events")
    before = _state(scene)
    nxt = script.deal[10]
    unsigned = hub_event(nxt, scene.seq + 1, hub_id=HUB_ID)
    bad_mac = unsigned.model_copy(update={"mac": "f" * 64})
    other_key = sign_hub(unsigned, TABLE, b"x" * 32)
    other_table = signed(hub_event(nxt, scene.seq + 1, hub_id="hub-table-2"), "table-2")
    other_hub = hub_event(nxt, scene.seq + 1, hub_id="evil-hub")
    # With the hub's broker account (the ACL keeps it to its own table's topics).
    for forged in (unsigned, bad_mac, other_key, other_table, other_hub):
        scene.hub.send(TOPICS.hub_event, forged)
    wait_for(lambda: scene.engine.stats["forged"] >= 5, 10, "five refusals")
    assert _state(scene) == before
    # The real hub's event with that seq is not a duplicate of a forged one: it counts.
    scene.hub_sends(script.deal[10:])
    wait_for(lambda: scene.interp.status.value == "playing", 10, "the rest of the deal")
    assert scene.engine.stats["duplicates"] == 0


def test_seq_jump_is_never_skipped(scene: Scene) -> None:
    script = scene.new_game()
    scene.hub_sends(script.deal[:5])
    wait_for(lambda: scene.interp.inputs == 6, 10, "five events")
    cursor = scene.engine.tables[TABLE].cursors[HUB_ID]
    # One forged jump (the attack: real hub id and epoch, seq + 1,000,000).
    jump = hub_event(script.deal[5], scene.seq + 1_000_000, hub_id=HUB_ID)
    scene.attacker.send(TOPICS.hub_event, jump)  # the ACL refuses the dashboard account...
    scene.hub.send(TOPICS.hub_event, jump)  # ...and the engine an event with no MAC
    wait_for(lambda: scene.engine.stats["forged"] >= 1, 10, "the refusal")
    # Even a signed jump (a hub gone wrong) does not move the cursor: it is shown.
    scene.hub.send(TOPICS.hub_event, signed(jump, TABLE))
    wait_for(lambda: scene.engine.stats["gaps_refused"] == 1, 10, "the refused gap")
    assert cursor.last == 5 and not cursor.pending
    wait_for(lambda: any(m.get("degraded") and "lost" in m["degraded"]
                         for m in scene.dashboard.of(TOPICS.engine_state)), 10, "degraded")
    # A small gap is asked from the hub's outbox, and waited for, never skipped.
    late = script.deal[5:7]
    scene.seq += 2
    scene.hub_sends(script.deal[7:9])
    wait_for(lambda: any(m["args"].get("from_seq") == 6
                         for m in scene.hub.of(TOPICS.hub_cmd("replay"))), 10, "a replay request")
    # Asked again and again (the old engine skipped the gap after its timeout).
    wait_for(lambda: sum(m["args"].get("from_seq") == 6
                         for m in scene.hub.of(TOPICS.hub_cmd("replay"))) >= 3, 10, "asked again")
    assert cursor.last == 5 and sorted(cursor.pending) == [8, 9]
    scene.seq -= 4
    scene.hub_sends(late)  # the hub's replay
    scene.seq += 2
    scene.hub_sends(script.deal[9:])
    wait_for(lambda: scene.interp.status.value == "playing", 10, "the whole deal, in order")
    assert scene.engine.stats.get("gaps_skipped", 0) == 0


def test_seq_2_64_is_refused_and_nothing_is_lost(scene: Scene) -> None:
    script = scene.new_game()
    scene.hub_sends(script.deal[:3])
    wait_for(lambda: scene.interp.inputs == 4, 10, "three events")
    huge = json.loads(encode(signed(hub_event(script.deal[3], 4, hub_id=HUB_ID), TABLE)))
    for bad in ({**huge, "seq": 2**64}, {**huge, "seq": 2**63}, {**huge, "seq": "4"},
                {**huge, "seq": 4.0}, {**huge, "ts": "1000"}, {**huge, "seq": True}):
        scene.hub.send(TOPICS.hub_event, json.dumps(bad).encode())
    wait_for(lambda: scene.engine.client.stats["rejected"] >= 6, 10, "six rejections")
    assert scene.interp.inputs == 4
    # The next real event is stored: no transaction was left open to swallow it.
    scene.hub_sends(script.deal[3:])
    total = len(script.deal) + 1  # the command and every event, each stored once
    wait_for(lambda: scene.engine.tables[TABLE].store.count_inputs() == total, 10, "the deal")
    stored = scene.engine.tables[TABLE].store.count_inputs()
    scene.engine.stop()
    again = scene.start_engine()
    assert again.tables[TABLE].store.count_inputs() == stored == total
    assert again.tables[TABLE].interp.status.value == "playing"


def test_spoofed_snapshot_is_ignored(scene: Scene) -> None:
    scene.deal()
    before = _state(scene)
    empty = [ReaderSeen(reader=r, cell=f"{r // 6},{r % 6}") for r in range(36)]
    spoof = HubSnapshot(hub_id="spoofed-hub", epoch="new-epoch", last_seq=0, ts=time.time(),
                        backend="sim", readers=empty)
    scene.hub.send(TOPICS.hub_snapshot, spoof, retain=True)
    scene.hub.send(TOPICS.hub_snapshot, spoof.model_copy(update={"hub_id": HUB_ID}))
    scene.hub.send(TOPICS.hub_snapshot, sign_hub(spoof.model_copy(update={"hub_id": HUB_ID}),
                                                 TABLE, b"y" * 32))
    wait_for(lambda: scene.engine.stats["forged"] >= 3, 10, "three refusals")
    assert _state(scene) == before and scene.engine.stats.get("resyncs", 0) == 0
    assert not scene.interp.alerts
    # Retained: it comes again to a restarted engine, which ignores it again.
    scene.engine.stop()
    again = scene.start_engine()
    wait_for(lambda: again.stats["forged"] >= 1, 10, "the retained spoof refused")
    assert _state(scene)[:3] == before[:3] and not scene.interp.alerts


def test_table_id_flood_opens_no_log(scene: Scene, caplog: pytest.LogCaptureFixture) -> None:
    scene.deal()
    caplog.set_level(logging.WARNING, logger="cauldron.engine")
    for n in range(400):
        request = CommandRequest(transaction=f"f{n}", deadline=time.time() + 30)
        scene.attacker.send(Topics(f"junk-{n}").cmd("undo"), request)
    answer = scene.attacker.answer("undo", CommandRequest(transaction="last"), table="junk-last")
    assert answer["code"] == "unknown_table"
    wait_for(lambda: scene.engine.stats["ignored_tables"] >= 401, 20, "every junk id refused")
    assert list(scene.engine.tables) == [TABLE]
    assert [p.name for p in (scene.data_dir / "tables").iterdir()
            if p.suffix == ".sqlite"] == [f"{TABLE}.sqlite"]
    refusals = [r for r in caplog.records if "not a table this engine serves" in r.message]
    assert 1 <= len(refusals) <= 3  # logged at a bounded rate
    # The real table is still served.
    reply = scene.dashboard.client.request(TOPICS.cmd("end"), {}, timeout=10)
    assert reply.status == "ok"


def test_start_up_with_many_logs_keeps_few_open(tmp_path: Path) -> None:
    from engine.service.store import TableStore

    data_dir = tmp_path / "engine"
    for n in range(40):
        TableStore.open(data_dir, f"t{n}").close()
    service = EngineService(ServiceConfig(data_dir=data_dir, max_open_logs=8))
    service.load()
    try:
        assert len(service.tables) == 40 and not service.broken
        assert sum(rt.is_open for rt in service.tables.values()) <= 8
        service.command("t3", "new_game", {"colours": ["red", "blue"]})  # reopened on use
        assert service.tables["t3"].store.games()
    finally:
        for runtime in service.tables.values():
            runtime.close()


def test_expired_command_never_runs_later(scene: Scene) -> None:
    scene.deal()
    # The engine is stuck for a while (a slow disk, a long replay); the host presses "end";
    # the dashboard gives up after its timeout and says so.
    engine = scene.engine
    with engine._lock:
        with pytest.raises(Exception, match="no answer"):
            scene.dashboard.client.request(TOPICS.cmd("end"), {}, timeout=0.5)
        time.sleep(0.1)  # past the command's deadline
    # The engine gets to the command now: too late, dropped and said so, never run.
    wait_for(lambda: engine.stats["expired"] == 1, 10, "the expired command dropped")
    assert scene.interp.status.value == "playing"
    wait_for(lambda: bool(scene.attacker.of(TOPICS.cmd("end") + "/response")), 10, "the answer")
    answers = scene.attacker.of(TOPICS.cmd("end") + "/response")
    assert answers[-1]["code"] == "expired" and "expired" in answers[-1]["error"]
    # One held back on the network until after its deadline is dropped too.
    key = scene.dashboard.client.command_key(TABLE)
    late = sign_command(CommandRequest(transaction="late", deadline=time.time() - 1),
                        TABLE, "end", key)
    assert scene.attacker.answer("end", late)["code"] == "expired"
    assert scene.interp.status.value == "playing"


def test_a_new_hub_waits_for_the_host(scene: Scene) -> None:
    script = scene.new_game()
    scene.hub_sends(script.deal[:4])
    wait_for(lambda: scene.interp.inputs == 5, 10, "four events")
    # The table's Pi is replaced: the new hub is enrolled (a new key, a new hub id).
    new_id = "hub-table-1-new"
    ensure_key(keys_dir(), TABLE, "hub", new_id)
    try:
        event = signed(hub_event(script.deal[4], 1, epoch="e2", hub_id=new_id), TABLE)
        scene.hub.send(TOPICS.hub_event, event)
        wait_for(lambda: any(new_id in (m.get("degraded") or "")
                             for m in scene.dashboard.of(TOPICS.engine_state)), 10, "the ask")
        assert scene.interp.inputs == 5
        reply = scene.dashboard.client.request(TOPICS.cmd("confirm"), {"hub_id": new_id},
                                               timeout=10)
        assert reply.status == "ok", reply.error
        scene.hub.send(TOPICS.hub_event, event)
        wait_for(lambda: scene.interp.inputs == 6, 10, "the new hub's event")
    finally:
        ensure_key(keys_dir(), TABLE, "hub", HUB_ID)  # the next test's hub


def test_new_game_carries_no_recipe_cards_on_the_broker(scene: Scene) -> None:
    # What any client of an open broker sees (here: an account that may read commands).
    eavesdropper = Client(scene.port, ENGINE)
    try:
        eavesdropper.watch(TOPICS.cmd("new_game"))
        args = {"colours": ["red", "blue", "green"], "recipes": True}
        reply = scene.dashboard.client.request(TOPICS.cmd("new_game"), args, timeout=10)
        assert reply.status == "ok", reply.error
        wait_for(lambda: bool(eavesdropper.of(TOPICS.cmd("new_game"))), 10, "the command")
        seen = json.dumps(reply.data) + json.dumps(eavesdropper.of(TOPICS.cmd("new_game")))
    finally:
        eavesdropper.stop()
    dealt = scene.interp.recipe_cards  # dealt by the engine, one A and one B per seat
    assert len(dealt) == 3 and all(len(pair) == 2 for pair in dealt)
    assert not any(recipe in seen for pair in dealt for recipe in pair)

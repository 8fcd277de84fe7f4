"""Attacks on the hub's commands (``hub/cmd/<verb>``) over MQTT, each refused with a code
naming the problem and the table unchanged: against a real Mosquitto with the shipped ACL
(hardware/deploy/mosquitto/acl), a simulated hub logged in with its table's account, the
dashboard signing with the table's command key, and an attacker holding the dashboard's
broker password (the ACL lets it write ``hub/cmd/sim``) but not the table's keys."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acl_broker import needs_mosquitto, secured_broker
from waiting import wait_for

from engine.wire.api import SimResult
from engine.wire.auth import ensure_key, keys_dir, sign_command
from engine.wire.contract import CommandRequest, Topics, encode
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.outbox import Outbox
from hub.service import Hub

pytestmark = needs_mosquitto

TABLE, OTHER = "table-9", "table-8"  # a hub's broker account is its table id (the ACL)
DASHBOARD = "cauldron.dashboard"
ACCOUNTS = {DASHBOARD: "dash-pw", TABLE: "hub9-pw"}
SIM = Topics(TABLE).hub_cmd("sim")


@dataclass
class Scene:
    hub: Hub
    sim: SimulatedTable
    dashboard: WireClient  # signs with the table's command key
    attacker: WireClient  # the dashboard's broker password, no key
    answers: list[dict[str, Any]]
    lock: threading.Lock

    def attack(self, request: CommandRequest | bytes, topic: str = SIM) -> dict[str, Any]:
        """Publish a raw request as the attacker; its answer from the hub."""
        payload = request if isinstance(request, bytes) else encode(request)
        transaction = json.loads(payload)["transaction"]

        def found() -> list[dict[str, Any]]:
            with self.lock:
                return [a for a in self.answers if a["transaction"] == transaction]
        seen = len(found())
        acked = threading.Event()
        self.attacker.publish_raw(topic, payload, on_ack=acked.set)
        assert acked.wait(5), "no PUBACK"
        wait_for(lambda: len(found()) > seen, 10, f"the hub's answer to {transaction}")
        return found()[-1]

    def table(self) -> tuple[Any, ...]:
        """Everything that could change: the physical table (pile order, covered stacks,
        what lies on each reader) and the hub's event log."""
        return (self.sim.physical(), self.sim.truth(), self.hub.outbox.last_seq)


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    with secured_broker(tmp_path, ACCOUNTS) as port:
        url = f"mqtt://{{}}:{{}}@127.0.0.1:{port}"
        tagmap = virtual_box_tagmap()
        sim = SimulatedTable(tagmap=tagmap)
        hub_client = WireClient(url.format(TABLE, ACCOUNTS[TABLE]), client_id=TABLE,
                                state_topic=Topics(TABLE).hub_state)
        hub = Hub(table=TABLE, backend=sim, client=hub_client, tagmap=tagmap,
                  outbox=Outbox(tmp_path / "outbox.sqlite")).start()
        dashboard = WireClient(url.format(DASHBOARD, ACCOUNTS[DASHBOARD]),
                               client_id=f"dash-{uuid.uuid4().hex[:6]}")
        attacker = WireClient(url.format(DASHBOARD, ACCOUNTS[DASHBOARD]),
                              client_id=f"evil-{uuid.uuid4().hex[:6]}", sign_commands=False)
        answers: list[dict[str, Any]] = []
        lock = threading.Lock()

        def record(_topic: str, payload: bytes) -> None:
            with lock:
                answers.append(json.loads(payload))
        for client in (dashboard, attacker):
            client.start(wait=10)
        attacker.subscribe(SIM + "/response", raw=record, wait=5)
        assert hub_client.wait_ready(10)
        try:
            yield Scene(hub, sim, dashboard, attacker, answers, lock)
        finally:
            for client in (dashboard, attacker):
                client.stop()
            hub.stop()


def refused(answer: dict[str, Any], code: str, *words: str) -> bool:
    message = answer.get("error") or ""
    return (answer["status"] == "error" and answer.get("code") == code
            and all(w in message for w in words))


def test_sim_gestures_need_the_tables_command_key(scene: Scene) -> None:
    # The dashboard (the table's command key) deals; its gestures work.
    dealt = scene.dashboard.request(SIM, {"action": "deal", "seed": 3}, timeout=10)
    assert dealt.status == "ok", dealt.error
    before = scene.table()
    pile_top = scene.sim.physical()["pile"][0]
    now = time.time()

    # A forged draw: unsigned, a made-up signature, one made with a key of its own.
    unsigned = CommandRequest(transaction="a1", args={"action": "draw"}, deadline=now + 30)
    assert refused(scene.attack(unsigned), "unauthorised", "hub sim", TABLE,
                   "command key", "nothing was done")
    guessed = unsigned.model_copy(update={"transaction": "a2", "auth": "0" * 64})
    assert refused(scene.attack(guessed), "unauthorised")
    own = sign_command(unsigned.model_copy(update={"transaction": "a3"}), TABLE, "sim",
                       b"k" * 32, hub=True)
    assert refused(scene.attack(own), "unauthorised")
    no_deadline = b'{"schema_version":1,"transaction":"a4","args":{"action":"draw"}}'
    assert refused(scene.attack(no_deadline), "no_deadline", "no deadline")

    # An unsigned request for a seat's covered stack, and for the truth of the table.
    seat_view = CommandRequest(transaction="a5", args={"action": "seat", "seat": 0},
                               deadline=now + 30)
    answer = scene.attack(seat_view)
    assert refused(answer, "unauthorised") and answer.get("data") is None
    truth = CommandRequest(transaction="a6", args={"action": "state"}, deadline=now + 30)
    assert refused(scene.attack(truth), "unauthorised")
    restore = CommandRequest(transaction="a7", deadline=now + 30, args={
        "action": "restore", "layout": {"cells": {}, "stacks": [], "beside": [], "pile": []}})
    assert refused(scene.attack(restore), "unauthorised")

    key = ensure_key(keys_dir(), TABLE, "cmd").key
    # A real signed draw whose deadline passed (captured, sent later).
    expired = sign_command(CommandRequest(transaction="a8", args={"action": "draw"},
                                          deadline=now - 5), TABLE, "sim", key, hub=True)
    assert refused(scene.attack(expired), "expired", "expired", "nothing was done")
    # Signed for another table (with that table's key), sent to this one.
    other_key = ensure_key(keys_dir(), OTHER, "cmd").key
    elsewhere = sign_command(CommandRequest(transaction="a9", args={"action": "draw"},
                                            deadline=now + 30), OTHER, "sim", other_key,
                             hub=True)
    assert refused(scene.attack(elsewhere), "unauthorised")
    # This table's key, signed as a game command (cmd/sim is no hub command), or altered.
    as_game = sign_command(CommandRequest(transaction="a10", args={"action": "draw"},
                                          deadline=now + 30), TABLE, "sim", key)
    assert refused(scene.attack(as_game), "unauthorised")
    real = sign_command(CommandRequest(transaction="a11", args={"action": "view"},
                                       deadline=now + 30), TABLE, "sim", key, hub=True)
    altered = real.model_copy(update={"args": {"action": "draw"}})
    assert refused(scene.attack(altered), "unauthorised")

    assert scene.table() == before, "a refused command changed the table"
    assert pile_top not in json.dumps(scene.answers)  # the pile's top was never told
    assert scene.hub.counts["refused_commands"] == 11

    # The captured real request runs once (it is signed), never twice.
    assert scene.attack(real)["status"] == "ok"
    assert refused(scene.attack(real), "replayed", "already received")
    assert scene.table() == before


def test_a_signed_command_from_the_dashboard_still_plays(scene: Scene) -> None:
    """The other side: signed requests work, the seat's view included."""
    assert scene.dashboard.request(SIM, {"action": "deal", "seed": 1}, timeout=10).status == "ok"
    drawn = scene.dashboard.request(SIM, {"action": "draw"}, timeout=10)
    assert drawn.status == "ok", drawn.error
    assert SimResult.model_validate(drawn.data).card
    seat = scene.dashboard.request(SIM, {"action": "seat", "seat": 0}, timeout=10)
    assert seat.status == "ok" and SimResult.model_validate(seat.data).stack == []

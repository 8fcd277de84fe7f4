"""A signed hub command replayed after the hub restarts (issue 24 item 7): the seen
transactions lived in memory only, so a captured ``sim restore`` (valid for its deadline)
ran again once the hub came back. They are now kept in the hub's outbox database. Against
a real Mosquitto with the shipped ACL; the attacker holds the dashboard's broker password,
not the table's key."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from acl_broker import needs_mosquitto, secured_broker
from waiting import wait_for

from engine.wire.auth import ensure_key, keys_dir, sign_command
from engine.wire.contract import CommandRequest, Topics, encode
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.outbox import Outbox
from hub.service import Hub

pytestmark = needs_mosquitto

TABLE, DASHBOARD = "table-7", "cauldron.dashboard"
ACCOUNTS = {DASHBOARD: "dash-pw", TABLE: "hub7-pw"}
SIM = Topics(TABLE).hub_cmd("sim")


def test_a_signed_sim_command_replayed_after_a_hub_restart_is_refused(tmp_path: Path
                                                                      ) -> None:
    with secured_broker(tmp_path, ACCOUNTS) as port:
        url = f"mqtt://{{}}:{{}}@127.0.0.1:{port}"
        tagmap = virtual_box_tagmap()
        state = tmp_path / "sim.json"

        def start_hub() -> Hub:
            client = WireClient(url.format(TABLE, ACCOUNTS[TABLE]), client_id=TABLE,
                                state_topic=Topics(TABLE).hub_state)
            hub = Hub(table=TABLE, backend=SimulatedTable(tagmap=tagmap, state_path=state),
                      client=client, tagmap=tagmap,
                      outbox=Outbox(tmp_path / "outbox.sqlite")).start()
            assert client.wait_ready(10)
            return hub

        attacker = WireClient(url.format(DASHBOARD, ACCOUNTS[DASHBOARD]),
                              client_id=f"evil-{uuid.uuid4().hex[:6]}", sign_commands=False)
        answers: list[dict[str, Any]] = []
        lock = threading.Lock()

        def record(_topic: str, payload: bytes) -> None:
            with lock:
                answers.append(json.loads(payload))

        def send(request: CommandRequest) -> dict[str, Any]:
            seen = len(answers)
            acked = threading.Event()
            attacker.publish_raw(SIM, encode(request), on_ack=acked.set)
            assert acked.wait(5)
            wait_for(lambda: len(answers) > seen, 10, "the hub's answer")
            with lock:
                return answers[-1]

        attacker.start(wait=10)
        attacker.subscribe(SIM + "/response", raw=record, wait=5)
        hub = start_hub()
        try:
            # The dashboard's signed deal, captured on the wire (valid 30 s).
            key = ensure_key(keys_dir(), TABLE, "cmd").key
            deal = sign_command(CommandRequest(transaction=uuid.uuid4().hex,
                                               args={"action": "deal", "seed": 4},
                                               deadline=time.time() + 30), TABLE, "sim", key,
                                hub=True)
            assert send(deal)["status"] == "ok"
            assert send(deal)["code"] == "replayed"
            hub.stop()
            hub = start_hub()  # the hub restarts within the deadline
            again = send(deal)
            assert again["status"] == "error" and again["code"] == "replayed", again
        finally:
            hub.stop()
            attacker.stop()

"""An open broker (issue 24 item 8): on one, a retained ``hub/health`` froze the demo, a
forged ``game/public`` replaced the big screen and disconnected every phone, and the seat
views were readable by anyone. An anonymous broker is unsupported (README): the demo's
``--mqtt`` refuses it; with accounts, the shipped ACL keeps the seat views to the engine and
the dashboard. Against real Mosquittos."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from acl_broker import needs_mosquitto, secured_broker
from paho.mqtt.enums import CallbackAPIVersion
from waiting import wait_for

from engine.app.cli import main as cauldron
from engine.wire.broker import free_port
from engine.wire.contract import Topics
from engine.wire.mqtt import accepts_anonymous

ACCOUNTS = {"cauldron.engine": "engine-pw", "cauldron.dashboard": "dash-pw",
            "table-1": "hub1-pw"}
SEAT = Topics("table-1").game_seat(0)


def test_the_demo_refuses_an_anonymous_broker(mqtt_broker: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert accepts_anonymous(mqtt_broker) is True
    assert cauldron(["demo", "--port", "0", "--mqtt", mqtt_broker, "--no-qr"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "without an account" in err[0] and "not supported" in err[0], err
    assert accepts_anonymous(f"mqtt://127.0.0.1:{free_port()}", timeout=2) is None


@needs_mosquitto
def test_private_seat_views_are_read_only_by_the_engine_and_the_dashboard(
        tmp_path: Path) -> None:
    with secured_broker(tmp_path, ACCOUNTS) as port:
        assert accepts_anonymous(f"mqtt://127.0.0.1:{port}") is False
        got: dict[str, list[bytes]] = {user: [] for user in ACCOUNTS}
        clients = []
        for user in ACCOUNTS:
            client = paho.Client(CallbackAPIVersion.VERSION2,
                                 client_id=f"{user}-{uuid.uuid4().hex[:6]}")
            client.username_pw_set(user, ACCOUNTS[user])
            subscribed = threading.Event()
            client.on_subscribe = lambda *_a, s=subscribed: s.set()
            client.on_message = lambda _c, _u, m, u=user: got[u].append(m.payload)
            client.connect("127.0.0.1", port)
            client.loop_start()
            client.subscribe("cauldron/#", qos=1)
            assert subscribed.wait(5)
            clients.append(client)
        try:
            engine = clients[0]
            engine.publish(SEAT, b'{"stack": ["covered"]}', qos=1, retain=True).wait_for_publish(5)
            wait_for(lambda: got["cauldron.dashboard"] and got["cauldron.engine"], 10,
                     "the seat view at the engine and the dashboard")
            late = paho.Client(CallbackAPIVersion.VERSION2, client_id="late-hub")
            late.username_pw_set("table-1", ACCOUNTS["table-1"])
            seen: list[bytes] = []
            late.on_message = lambda _c, _u, m: seen.append(bytes(m.payload))
            late.connect("127.0.0.1", port)
            late.loop_start()
            late.subscribe(SEAT, qos=1)  # retained too
            engine.publish(SEAT, b'{"stack": ["again"]}', qos=1).wait_for_publish(5)
            wait_for(lambda: len(got["cauldron.dashboard"]) >= 2, 10, "the second view")
            late.disconnect()
            late.loop_stop()
            assert got["table-1"] == [] and seen == []  # a hub's account reads none of it
        finally:
            for client in clients:
                client.disconnect()
                client.loop_stop()

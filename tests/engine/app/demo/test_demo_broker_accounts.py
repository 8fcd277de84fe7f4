"""The demo's embedded broker (issue 24, smaller item and item 8): it took anonymous local
users, so anyone on the machine could freeze the demo with a retained ``hub/health``,
replace the big screen with a ``game/public`` or read the seat views. Now each service has
its own account with a fresh random password and the shipped ACL applies (the whole demo
stack in-process, its real amqtt broker)."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import paho.mqtt.client as paho
import pytest
from demo_stacks import running_demo
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode
from waiting import wait_for

from engine.app.demo.stack import DemoStack
from engine.wire.contract import Topics
from engine.wire.mqtt import BrokerUrl, accepts_anonymous

pytestmark = pytest.mark.e2e  # the whole table in one process

TABLE = "demo"
T = Topics(TABLE)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    with running_demo(tmp_path_factory.mktemp("demo"), seed=5, pin="650021") as stack:
        yield stack


class Client:
    """A paho client logged in as ``url``'s account (or anonymous), collecting messages."""

    def __init__(self, url: str) -> None:
        broker = BrokerUrl.parse(url)
        self.got: list[tuple[str, bytes, bool]] = []
        self.granted: list[bool] = []
        self._subscribed = threading.Event()
        self.client = paho.Client(CallbackAPIVersion.VERSION2,
                                  client_id=f"attacker-{uuid.uuid4().hex[:8]}")
        if broker.username:
            self.client.username_pw_set(broker.username, broker.password)
        self.client.on_message = lambda _c, _u, m: self.got.append(
            (m.topic, bytes(m.payload), bool(m.retain)))

        def on_subscribe(_c: Any, _u: Any, _mid: Any, codes: Any, _p: Any) -> None:
            self.granted.extend(not code.is_failure for code in codes)
            self._subscribed.set()

        self.client.on_subscribe = on_subscribe
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def subscribe(self, topic: str) -> bool:
        self._subscribed.clear()
        self.client.subscribe(topic, qos=1)
        assert self._subscribed.wait(10), f"no SUBACK for {topic}"
        return self.granted[-1]

    def publish(self, topic: str, payload: bytes, retain: bool = True) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _retained(url: str, topic: str) -> bytes:
    """The retained message on ``topic`` as a fresh client of ``url``'s account sees it."""
    reader = Client(url)
    try:
        assert reader.subscribe(topic)
        wait_for(lambda: any(t == topic for t, _, _ in reader.got), 10, f"retained {topic}")
        return next(p for t, p, _ in reader.got if t == topic)
    finally:
        reader.close()


def _table(demo: DemoStack) -> dict[str, Any]:
    data: dict[str, Any] = httpx.get(demo.url + "api/table", timeout=10).json()
    return data


def test_an_anonymous_local_client_cannot_connect_to_the_demos_broker(
        demo: DemoStack) -> None:
    assert accepts_anonymous(demo.mqtt_url) is False
    broker = BrokerUrl.parse(demo.url_for("dashboard"))
    wrong = f"mqtt://{broker.username}:guess@{broker.host}:{broker.port}"
    refused: list[bool] = []
    done = threading.Event()
    guesser = paho.Client(CallbackAPIVersion.VERSION2, client_id="guesser")
    guesser.username_pw_set("cauldron.dashboard", "guess")

    def connected(_c: object, _u: object, _f: object, reason: ReasonCode, _p: object) -> None:
        refused.append(reason.is_failure)
        done.set()

    guesser.on_connect = connected
    guesser.connect(broker.host, broker.port)
    guesser.loop_start()
    try:
        assert done.wait(10) and refused == [True], wrong
    finally:
        guesser.loop_stop()
    # every service has its own account, and no password is in the URL the demo prints
    users = {BrokerUrl.parse(demo.url_for(s)).username
             for s in ("hub", "engine", "dashboard", "bots")}
    assert users == {TABLE, "cauldron.engine", "cauldron.dashboard", "cauldron.bots"}
    assert BrokerUrl.parse(demo.mqtt_url).password is None


def test_a_client_with_the_dashboards_account_cannot_publish_game_public(
        demo: DemoStack) -> None:
    wait_for(lambda: _table(demo).get("game") is not None, 120, "the bots' game on screen")
    forged = json.dumps({"game_id": "forged", "seq": 10**9}).encode()
    for service in ("dashboard", "bots", "hub"):
        attacker = Client(demo.url_for(service))
        try:
            attacker.publish(T.game_public, forged)
            attacker.publish(T.engine_state, b"offline")
        finally:
            attacker.close()
    assert _retained(demo.url_for("dashboard"), T.game_public) != forged
    assert _retained(demo.url_for("dashboard"), T.engine_state) != b"offline"
    game = _table(demo)["game"]
    assert game is not None and game.get("game_id") != "forged"


def test_a_forged_retained_hub_health_cannot_freeze_the_demo(demo: DemoStack) -> None:
    genuine = json.loads(_retained(demo.url_for("dashboard"), T.hub_health))
    assert genuine["backend"] == "sim"
    forged = json.dumps({**genuine, "backend": "spi", "ts": genuine["ts"] + 1}).encode()
    for service in ("dashboard", "bots", "engine"):
        attacker = Client(demo.url_for(service))
        try:
            attacker.publish(T.hub_health, forged)
        finally:
            attacker.close()
    assert json.loads(_retained(demo.url_for("dashboard"), T.hub_health))["backend"] == "sim"
    # the table keeps playing: the virtual table is still there and the game moves on
    before = _table(demo)
    assert before["status"]["hub_backend"] == "sim"
    wait_for(lambda: _table(demo)["game"] != before["game"], 120, "the game moving on")
    assert _table(demo)["status"]["hub_backend"] == "sim"


def test_seat_views_are_readable_only_by_the_engine_and_the_dashboard(
        demo: DemoStack) -> None:
    seat = T.game_seat(0)
    for service in ("bots", "hub"):
        spy = Client(demo.url_for(service))
        try:
            assert spy.subscribe(seat) is False
            assert spy.subscribe(T.prefix + "#") is False
            assert not any(t.startswith(T.prefix + "game/seat") for t, _, _ in spy.got), (
                service, [(t, r) for t, _, r in spy.got])
        finally:
            spy.close()
    for service in ("dashboard", "engine"):
        assert json.loads(_retained(demo.url_for(service), seat))


def test_the_brokers_passwords_appear_in_no_log_and_no_output(
        tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture) -> None:
    said: list[str] = []
    caplog.set_level(logging.DEBUG)
    with running_demo(tmp_path_factory.mktemp("demo"), say=said.append, seed=6,
                      pin="650022") as stack:
        wait_for(lambda: _table(stack).get("game") is not None, 120, "the bots' game on screen")
        passwords = {BrokerUrl.parse(stack.url_for(s)).password
                     for s in ("hub", "engine", "dashboard", "bots")}
        assert None not in passwords and len(passwords) == 4
    text = caplog.text + "\n".join(said)
    assert "demo" in text  # the logs were captured
    assert not [p for p in passwords if p and p in text]
    assert not any(p and p in path.read_bytes().decode("utf-8", "replace")
                   for p in passwords for path in stack.data_dir.rglob("*") if path.is_file())

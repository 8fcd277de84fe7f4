"""The shipped Mosquitto ACL (hardware/deploy/mosquitto/acl) against a real Mosquitto.

A hub may publish only its own table's hub/*; only the engine publishes game/*; the
dashboard cannot read raw hub/event (it reveals cards laid on pads).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import paho.mqtt.client as mqtt
import pytest
from acl_broker import needs_mosquitto, secured_broker
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

ACCOUNTS = {
    "cauldron.engine": "engine-pw",
    "cauldron.dashboard": "dash-pw",
    "table-1": "hub1-pw",
    "table-2": "hub2-pw",
}

pytestmark = needs_mosquitto


@pytest.fixture(scope="module", name="secured_broker")
def secured_broker_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with secured_broker(tmp_path_factory.mktemp("acl-broker"), ACCOUNTS) as port:
        yield port


class Session:
    """A connected client that records what it receives."""

    def __init__(self, port: int, user: str) -> None:
        self.received: list[tuple[str, bytes]] = []
        self.granted: list[int] = []
        self._subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"acl-test-{user}")
        self.client.username_pw_set(user, ACCOUNTS[user])
        self.client.on_message = lambda _c, _u, msg: self.received.append(
            (msg.topic, bytes(msg.payload)))
        self.client.on_subscribe = self._on_subscribe
        result = self.client.connect("127.0.0.1", port)
        assert result == mqtt.MQTT_ERR_SUCCESS
        self.client.loop_start()

    def _on_subscribe(self, _c: object, _u: object, _mid: int, codes: list[ReasonCode],
                      _p: object) -> None:
        self.granted = [code.value for code in codes]
        self._subscribed.set()

    def subscribe(self, topic: str) -> list[int]:
        self._subscribed.clear()
        self.client.subscribe(topic, qos=1)
        assert self._subscribed.wait(5), f"no SUBACK for {topic}"
        return self.granted

    def publish(self, topic: str, payload: bytes = b"{}") -> None:
        self.client.publish(topic, payload, qos=1).wait_for_publish(5)

    def close(self) -> None:
        self.client.disconnect()  # first: the network thread then ends at once
        self.client.loop_stop()


@pytest.fixture
def sessions(secured_broker: int) -> Iterator[dict[str, Session]]:
    opened = {user.removeprefix("cauldron."): Session(secured_broker, user) for user in ACCOUNTS}
    yield opened
    for session in opened.values():
        session.close()


def settle() -> None:
    time.sleep(0.3)


def test_hub_cannot_publish_game_public_but_engine_can(sessions: dict[str, Session]) -> None:
    watcher = sessions["dashboard"]
    watcher.subscribe("cauldron/table-1/game/public")
    sessions["table-1"].publish("cauldron/table-1/game/public", b'{"forged": true}')
    settle()
    assert watcher.received == []
    sessions["engine"].publish("cauldron/table-1/game/public", b'{"view": 1}')
    settle()
    assert watcher.received == [("cauldron/table-1/game/public", b'{"view": 1}')]


def test_hub_publishes_only_its_own_tables_events(sessions: dict[str, Session]) -> None:
    engine = sessions["engine"]
    engine.subscribe("cauldron/+/hub/event")
    sessions["table-1"].publish("cauldron/table-1/hub/event", b"own")
    sessions["table-1"].publish("cauldron/table-2/hub/event", b"forged")
    settle()
    assert engine.received == [("cauldron/table-1/hub/event", b"own")]


def test_dashboard_cannot_subscribe_to_raw_hub_events(sessions: dict[str, Session]) -> None:
    dashboard = sessions["dashboard"]
    # Mosquitto 2.0 may grant the SUBACK; what matters is that nothing is delivered.
    dashboard.subscribe("cauldron/table-1/hub/event")
    sessions["table-1"].publish("cauldron/table-1/hub/event", b"pad card")
    settle()
    assert dashboard.received == []
    sessions["engine"].subscribe("cauldron/table-1/hub/event")
    sessions["table-1"].publish("cauldron/table-1/hub/event", b"seen by the engine")
    settle()
    assert sessions["engine"].received == [("cauldron/table-1/hub/event", b"seen by the engine")]


def test_dashboard_reads_card_free_health_but_not_the_snapshot(
    sessions: dict[str, Session]
) -> None:
    dashboard = sessions["dashboard"]
    dashboard.subscribe("cauldron/table-1/hub/snapshot")
    dashboard.subscribe("cauldron/table-1/hub/health")
    sessions["table-1"].publish("cauldron/table-1/hub/snapshot", b"pad 0: vanesco-1")
    sessions["table-1"].publish("cauldron/table-1/hub/health", b"pad 0: occupied")
    settle()
    assert dashboard.received == [("cauldron/table-1/hub/health", b"pad 0: occupied")]


def test_dashboard_cannot_publish_game_topics(sessions: dict[str, Session]) -> None:
    engine = sessions["engine"]
    engine.subscribe("cauldron/table-1/game/#")
    sessions["dashboard"].publish("cauldron/table-1/game/seat/0", b"forged")
    settle()
    assert engine.received == []


def test_service_accounts_get_no_table_of_their_own(sessions: dict[str, Session]) -> None:
    """The hub patterns (%u) apply to every account: a service account's name must not
    make it a table's hub (the review's "dashboard" table)."""
    engine = sessions["engine"]
    engine.subscribe("cauldron/+/hub/event")
    engine.subscribe("cauldron/+/hub/snapshot")
    for name in ("dashboard", "engine", "cauldron.dashboard"):
        sessions["dashboard"].publish(f"cauldron/{name}/hub/event", b"forged")
        sessions["dashboard"].publish(f"cauldron/{name}/hub/snapshot", b"forged")
    settle()
    from engine.wire.contract import TopicError, parse_topic

    for topic, _ in engine.received:  # what got through is no table's topic at all
        with pytest.raises(TopicError):
            parse_topic(topic)
    assert not any(t.startswith(("cauldron/dashboard/", "cauldron/engine/"))
                   for t, _ in engine.received)


def test_dashboard_cannot_forge_a_command_answer(sessions: dict[str, Session]) -> None:
    """Only the engine answers host commands: a dashboard account that wrote
    cmd/<verb>/response could tell the host a refused command was done (issue 24)."""
    watcher = sessions["dashboard"]
    watcher.subscribe("cauldron/table-1/cmd/+/response")
    sessions["dashboard"].publish("cauldron/table-1/cmd/new_game/response", b"forged ok")
    settle()
    assert watcher.received == []
    sessions["engine"].publish("cauldron/table-1/cmd/new_game/response", b"the engine's")
    settle()
    assert watcher.received == [("cauldron/table-1/cmd/new_game/response", b"the engine's")]


def test_dashboard_may_send_every_host_command(sessions: dict[str, Session]) -> None:
    from engine.wire.contract import GAME_VERBS

    engine = sessions["engine"]
    engine.subscribe("cauldron/table-1/cmd/+")
    for verb in GAME_VERBS:
        sessions["dashboard"].publish(f"cauldron/table-1/cmd/{verb}", verb.encode())
    settle()
    assert sorted(t.rsplit("/", 1)[1] for t, _ in engine.received) == sorted(GAME_VERBS)

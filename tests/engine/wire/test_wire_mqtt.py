"""WireClient against a real broker: presence, typed pub/sub, rejects, request/response,
reconnect with resubscription."""

from __future__ import annotations

import threading
import time
from typing import Any

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from pydantic import JsonValue
from waiting import wait_for

from engine.wire.broker import BrokerKind, LocalBroker, find_mosquitto
from engine.wire.contract import (
    CommandRequest,
    GamePublic,
    ServiceState,
    TopicInfo,
    Topics,
    WireError,
    WireModel,
    doctor_probe,
)
from engine.wire.mqtt import (
    BrokerUrl,
    BrokerUrlError,
    CommandRefused,
    MqttError,
    RequestTimeout,
    WireClient,
)


def test_broker_url_parsing() -> None:
    assert BrokerUrl.parse("mqtt://127.0.0.1") == BrokerUrl("127.0.0.1", 1883)
    assert BrokerUrl.parse("localhost:1884") == BrokerUrl("localhost", 1884)
    tls = BrokerUrl.parse("mqtts://hub%40t1:p%3Ass@localhost")
    assert (tls.port, tls.tls, tls.username, tls.password) == (8883, True, "hub@t1", "p:ss")
    assert tls.redacted() == "mqtts://hub@t1:***@localhost:8883"
    for bad, reason in [("http://x", "scheme"), ("mqtt://", "no host"),
                        ("mqtt://h:99999", "Port out of range"), ("mqtt://h/topic", "no path")]:
        with pytest.raises(BrokerUrlError, match=reason):
            BrokerUrl.parse(bad)


def test_unreachable_broker_gives_a_clear_error() -> None:
    from engine.wire.broker import free_port

    client = WireClient(f"mqtt://127.0.0.1:{free_port()}")
    try:
        with pytest.raises(MqttError, match="could not connect to the MQTT broker"):
            client.start(wait=0.5)
    finally:
        client.stop()


def raw_subscriber(url: str, pattern: str) -> tuple[paho.Client, list[paho.MQTTMessage]]:
    got: list[paho.MQTTMessage] = []
    broker = BrokerUrl.parse(url)
    client = paho.Client(CallbackAPIVersion.VERSION2)
    client.on_message = lambda c, u, m: got.append(m)
    client.connect(broker.host, broker.port)
    client.subscribe(pattern, 1)
    client.loop_start()
    return client, got


def test_presence_online_then_offline_and_last_will(mqtt_broker: str, table_id: str) -> None:
    topics = Topics(table_id)
    watcher, got = raw_subscriber(mqtt_broker, topics.hub_state)
    hub = WireClient(mqtt_broker, state_topic=topics.hub_state, client_id=f"hub-{table_id}")
    hub.start(wait=5)
    wait_for(lambda: any(b'"online"' in m.payload for m in got))
    hub.stop()
    wait_for(lambda: b'"offline"' in got[-1].payload)
    # An unclean end (process killed): the broker publishes the retained last will.
    dying = WireClient(mqtt_broker, state_topic=topics.engine_state)
    dying.start(wait=5)
    dying._client._sock_close()  # simulate a dead connection (no DISCONNECT sent)
    dying._client.loop_stop()
    watcher2, got2 = raw_subscriber(mqtt_broker, topics.engine_state)
    wait_for(lambda: any(b'"offline"' in m.payload and m.retain for m in got2), timeout=30)
    watcher.loop_stop()
    watcher2.loop_stop()


def test_typed_subscribe_delivers_models_and_rejects_garbage(mqtt_broker: str,
                                                             table_id: str) -> None:
    topics = Topics(table_id)
    rejects: list[WireError] = []
    got: list[WireModel] = []
    with WireClient(mqtt_broker, on_reject=lambda t, p, e: rejects.append(e)) as sub, \
            WireClient(mqtt_broker) as pub:
        sub.subscribe(topics.game_public, lambda topic, model: got.append(model), wait=5)
        pub.publish_raw(topics.game_public, b"{not json")
        pub.publish_raw(topics.game_public, b'{"schema_version": 1}')
        public = GamePublic.model_validate({"view": {"grid": [], "turn": 1}, "turn": 1})
        pub.publish(topics.game_public, public, retain=True)
        wait_for(lambda: len(got) == 1 and len(rejects) == 2)
        assert got[0] == public
        assert "not JSON" in str(rejects[0]) and "view" in str(rejects[1])
        assert sub.stats["rejected"] == 2


def test_request_response_and_refusal(mqtt_broker: str, table_id: str) -> None:
    topics = Topics(table_id)

    def handle(info: TopicInfo, request: CommandRequest) -> JsonValue:
        if info.verb == "undo":
            raise CommandRefused("G4: nothing to undo yet")
        if info.verb == "end":
            raise RuntimeError("boom")
        return {"verb": info.verb, "args": request.args, "table": info.table}

    with WireClient(mqtt_broker) as engine, WireClient(mqtt_broker) as dash:
        engine.serve(Topics("+").cmd("+"), handle, wait=5)
        ok = dash.request(topics.cmd("keep"), {"seat": 1}, timeout=5)
        assert ok.status == "ok" and ok.data == {"verb": "keep", "args": {"seat": 1},
                                                 "table": table_id}
        refused = dash.request(topics.cmd("undo"), timeout=5)
        assert (refused.status, refused.error) == ("error", "G4: nothing to undo yet")
        crashed = dash.request(topics.cmd("end"), timeout=5)
        assert crashed.status == "error" and "internal error" in (crashed.error or "")
        # A malformed request with a readable transaction id gets an error answer.
        answers: list[WireModel] = []
        dash.subscribe(topics.cmd("confirm") + "/response", lambda t, m: answers.append(m),
                       wait=5)
        dash.publish_raw(topics.cmd("confirm"), b'{"schema_version":1,"transaction":"tx9",'
                         b'"args":"not-an-object"}')
        wait_for(lambda: len(answers) == 1)
        assert answers[0].status == "error" and "args" in (answers[0].error or "")  # type: ignore[attr-defined]
        with pytest.raises(RequestTimeout, match="no answer"):
            dash.request(topics.hub_cmd("snapshot"), timeout=0.3)


def test_a_batch_s_packets_leave_together_and_a_request_inside_it_is_answered(
        mqtt_broker: str, table_id: str) -> None:
    """With batches (`set_batch`, the engine's group commit), what a batch publishes is
    queued without waking paho's network thread for each packet (`cork`), and all of it
    reaches the broker once the batch ends; a handler that waits for an answer inside a
    batch has its request sent at once."""
    topics = Topics(table_id)
    seen: list[bytes] = []
    answers: list[str] = []
    with WireClient(mqtt_broker) as engine, WireClient(mqtt_broker) as other:
        other.serve(topics.hub_cmd("turn"), lambda info, request: {"ok": True}, wait=5)
        other.subscribe(topics.game_public, raw=lambda t, p: seen.append(p), wait=5)
        woken: list[int] = []
        real_wake = engine._client._wake

        def wake() -> None:
            woken.append(1)
            real_wake()
        engine._client._wake = wake  # type: ignore[method-assign]

        def handle(topic: str, model: WireModel) -> None:
            for n in range(5):
                engine.publish_raw(topics.game_public, b"view %d" % n, qos=0)
            answers.append(engine.request(topics.hub_cmd("turn"), {"seat": 1},
                                          timeout=5).status)

        engine.set_batch(lambda: None, lambda: None)
        engine.subscribe(topics.hub_state, handle, wait=5)
        other.publish(topics.hub_state, ServiceState(state="online"))
        wait_for(lambda: len(seen) == 5 and answers == ["ok"], 10, "the batch's packets")
        assert seen == [b"view %d" % n for n in range(5)]
        assert 1 <= len(woken) <= 3  # (the request, its subscription, the batch's end)


def test_reconnects_resubscribes_and_sends_queued_messages(restartable_broker: LocalBroker,
                                                           table_id: str) -> None:
    topics = Topics(table_id)
    got: list[WireModel] = []
    acks = threading.Semaphore(0)
    sub = WireClient(restartable_broker.url, reconnect_min=0.05, reconnect_max=0.2).start(wait=5)
    pub = WireClient(restartable_broker.url, reconnect_min=0.05, reconnect_max=0.2,
                     state_topic=topics.hub_state).start(wait=5)
    try:
        sub.subscribe(topics.game_alert, lambda t, m: got.append(m), wait=5)
        restartable_broker.stop()
        wait_for(lambda: not sub.connected and not pub.connected)
        restartable_broker.start()
        wait_for(lambda: sub.connected and pub.connected, timeout=10)
        wait_for(lambda: sub.stats["connects"] == 2)
        from engine.wire.contract import GameAlert

        # Resubscribed once a probe gets through (probes every 0.1 s; no fixed wait).
        probe = GameAlert(alert_id="probe", rule="G4", message="m", instruction="i")
        sent = [0.0]

        def through() -> bool:
            if probe in got:
                return True
            if time.monotonic() - sent[0] > 0.1:
                pub.publish(topics.game_alert, probe)
                sent[0] = time.monotonic()
            return False

        wait_for(through, timeout=10)
        alert = GameAlert(alert_id="a", rule="G4", message="m", instruction="i")
        pub.publish(topics.game_alert, alert, on_ack=acks.release)
        assert acks.acquire(timeout=5)
        wait_for(lambda: [m for m in got if m != probe] == [alert])
        states: list[WireModel] = []
        sub.subscribe(topics.hub_state, lambda t, m: states.append(m), wait=5)
        wait_for(lambda: bool(states))
        assert isinstance(states[-1], ServiceState) and states[-1].state == "online"
    finally:
        sub.stop()
        pub.stop()


def test_wait_ready_means_subscriptions_are_live(mqtt_broker: str, table_id: str) -> None:
    topics = Topics(table_id)
    got: list[WireModel] = []
    client = WireClient(mqtt_broker)
    client.subscribe(topics.game_public, lambda t, m: got.append(m))
    client.start()
    try:
        assert client.wait_ready(10)
        with WireClient(mqtt_broker) as other:
            other.publish(topics.game_public, GamePublic.model_validate({"view": {"grid": []}}))
            wait_for(lambda: len(got) == 1)
    finally:
        client.stop()


@pytest.mark.parametrize("kind", ["amqtt", "mosquitto"])
def test_a_publish_while_the_client_connects_waits_for_its_connack(
        kind: BrokerKind, table_id: str) -> None:
    """Another thread's publish while paho opens its socket (after the socket, before the
    CONNECT: where paho's socket-open hook runs, so the hook publishes) goes out after the
    CONNACK, and is not lost. Sent first, amqtt parsed the PUBLISH as the CONNECT (a long
    payload: it waited for bytes that never came; a short one: it refused it) and left the
    socket open: the client had no session and no subscription until its keepalive ran out
    (the demo's hub, whose poll thread publishes its snapshot at once: a gesture right after
    a restart got "no answer" for 10 s). Mosquitto closes such a connection instead."""
    if kind == "mosquitto" and find_mosquitto() is None:
        pytest.skip("mosquitto is not installed")
    topics = Topics(table_id)
    with LocalBroker(kind=kind) as broker, WireClient(broker.url) as dash:
        early: list[bytes] = []
        dash.subscribe(topics.hub_snapshot, raw=lambda _t, payload: early.append(payload),
                       wait=5)
        hub = WireClient(broker.url, reconnect_min=0.05, reconnect_max=0.2)
        hub.serve(topics.hub_cmd("+"), lambda info, request: {"verb": info.verb})
        opened = hub._client.on_socket_open

        def publish_in_the_gap(client: paho.Client, userdata: object, sock: Any) -> None:
            if opened is not None:
                opened(client, userdata, sock)
            if not early and not hub.stats["published"]:  # the first connection only
                hub.publish_raw(topics.hub_snapshot, b"{}", retain=True)

        hub._client.on_socket_open = publish_in_the_gap
        hub.start()
        try:
            assert hub.wait_ready(5), "the hub's client is not connected and subscribed"
            answer = dash.request(topics.hub_cmd("sim"), timeout=5)
            assert (answer.status, answer.data) == ("ok", {"verb": "sim"})
            wait_for(lambda: early == [b"{}"], timeout=5)  # the early message is not lost
            assert hub.stats["connects"] == 1
        finally:
            hub.stop()


def test_tls_with_a_missing_ca_file_is_a_clear_error() -> None:
    with pytest.raises(MqttError, match=r"TLS set-up .* failed"):
        WireClient("mqtts://localhost", tls_ca="/nonexistent/ca.pem")


def test_doctors_probes_leave_nothing_in_a_services_log(mqtt_broker: str, table_id: str,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """`cauldron doctor` checks the broker's rights with real messages: a service drops them
    unlogged and counts them, and anything else that is malformed is still refused."""
    topics = Topics(table_id)
    rejects: list[WireError] = []
    got: list[tuple[str, bytes]] = []
    with WireClient(mqtt_broker, on_reject=lambda t, p, e: rejects.append(e)) as sub, \
            WireClient(mqtt_broker) as pub:
        sub.subscribe(topics.game_public, lambda topic, model: None, wait=5)
        sub.subscribe(topics.hub_event, raw=lambda t, p: got.append((t, p)), wait=5)
        caplog.clear()
        pub.publish_raw(topics.game_public, doctor_probe("a1b2c3"))
        pub.publish_raw(topics.hub_event, doctor_probe("d4e5f6"))
        pub.publish_raw(topics.game_public, b'{"doctor": "x", "view": 1}')  # not a probe
        wait_for(lambda: sub.stats["doctor_probes"] == 2 and len(rejects) == 1)
        assert got == [] and sub.stats["rejected"] == 1
        logged = " ".join(r.getMessage() for r in caplog.records)
        assert "a1b2c3" not in logged and "d4e5f6" not in logged
    with pytest.raises(ValueError):
        doctor_probe("no spaces allowed")

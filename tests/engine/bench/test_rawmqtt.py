"""The bench's lean MQTT client (`engine.bench.rawmqtt`): what it sends reaches a real
broker's other clients, what the broker sends it reaches its handlers, whatever way the
stream is cut into reads."""

from __future__ import annotations

import struct
import threading
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st
from waiting import wait_for

from engine.bench.rawmqtt import RawMqtt, _length, _text
from engine.wire.mqtt import WireClient


def test_a_publish_at_qos_1_reaches_a_subscriber_and_is_acknowledged(
        mqtt_broker: str, table_id: str) -> None:
    got: list[bytes] = []
    other = WireClient(mqtt_broker, client_id=f"raw-test-{uuid.uuid4().hex[:6]}")
    other.start(wait=10)
    load = RawMqtt(mqtt_broker, client_id=f"raw-load-{uuid.uuid4().hex[:6]}").connect()
    try:
        topic = f"bench/{table_id}/in"
        other.subscribe(topic, raw=lambda _t, payload: got.append(payload), wait=5)
        for k in range(50):
            load.publish(topic, b"x" * k + b"!")
        wait_for(lambda: len(got) == 50 and load.acked == 50, 20, "50 messages and PUBACKs")
        assert got == [b"x" * k + b"!" for k in range(50)]  # in order, intact
    finally:
        load.close()
        other.stop()


def test_a_subscription_gets_the_retained_message_then_new_ones_until_unsubscribed(
        mqtt_broker: str, table_id: str) -> None:
    topic = f"bench/{table_id}/view"
    other = WireClient(mqtt_broker, client_id=f"raw-test-{uuid.uuid4().hex[:6]}")
    other.start(wait=10)
    load = RawMqtt(mqtt_broker, client_id=f"raw-load-{uuid.uuid4().hex[:6]}").connect()
    seen: list[tuple[str, bytes]] = []
    lock = threading.Lock()

    def take(t: str, payload: bytes) -> None:
        with lock:
            seen.append((t, payload))

    try:
        big = b"v" * 70_000  # a remaining length of three bytes, over several reads
        other.publish_raw(topic, b"retained", retain=True, qos=1)
        wait_for(lambda: other.connected, 10, "connected")
        load.subscribe(topic, take)
        wait_for(lambda: seen == [(topic, b"retained")], 10, "the retained message")
        other.publish_raw(topic, big, qos=1)  # delivered at QoS 0 (subscribed at 0)
        wait_for(lambda: len(seen) == 2, 10, "the large message")
        assert seen[1] == (topic, big)
        load.unsubscribe(topic)
        other.publish_raw(topic, b"after", qos=1)
        marker = f"bench/{table_id}/marker"
        load.subscribe(marker, take)
        other.publish_raw(marker, b"m", qos=1)
        wait_for(lambda: seen[-1] == (marker, b"m"), 10, "the marker")
        assert (topic, b"after") not in seen
        assert load.error is None
    finally:
        other.publish_raw(topic, b"", retain=True, qos=1)
        load.close()
        other.stop()


def test_a_refused_connection_says_so() -> None:
    with pytest.raises(OSError):
        RawMqtt("mqtt://127.0.0.1:1", client_id="nobody").connect(timeout=2)


def _publish(topic: str, payload: bytes, mid: int | None) -> bytes:
    body = _text(topic) + (struct.pack("!H", mid) if mid is not None else b"") + payload
    return bytes([0x30 | (0x02 if mid is not None else 0)]) + _length(len(body)) + body


@given(payloads=st.lists(st.binary(max_size=300), min_size=1, max_size=8),
       cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=20))
def test_every_message_is_parsed_whatever_the_reads(payloads: list[bytes],
                                                    cuts: list[int]) -> None:
    client = RawMqtt("mqtt://127.0.0.1:1", client_id="parse")
    got: list[bytes] = []
    sent: list[bytes] = []
    client._handlers["t/x"] = lambda _t, payload: got.append(payload)
    client._send = sent.append  # type: ignore[method-assign, assignment]
    stream = b"".join(_publish("t/x", p, k + 1 if k % 2 else None)
                      for k, p in enumerate(payloads)) + bytes([0x40, 2, 0, 7])  # a PUBACK
    buffer = bytearray()
    position = 0
    for cut in [*cuts, len(stream)]:
        buffer += stream[position:position + cut]
        position += cut
        client._parse(buffer)
    assert got == payloads
    assert client.acked == 1 and not buffer
    # each QoS 1 message acknowledged with its packet id
    acks = b"".join(sent)
    assert acks == b"".join(bytes([0x40, 2, 0, k + 1]) for k in range(len(payloads)) if k % 2)


def test_the_remaining_length_is_mqtts() -> None:
    assert _length(0) == b"\x00"
    assert _length(127) == b"\x7f"
    assert _length(128) == b"\x80\x01"
    assert _length(16_383) == b"\xff\x7f"
    assert _length(2_097_152) == b"\x80\x80\x80\x01"
    with pytest.raises(ValueError, match="malformed"):
        RawMqtt("mqtt://127.0.0.1:1", client_id="p")._parse(bytearray(b"\x30\xff\xff\xff\xff\x01"))

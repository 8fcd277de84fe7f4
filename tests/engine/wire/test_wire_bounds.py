"""What a WireClient lets in, against a real Mosquitto: an oversize message is never held
(issue 24 item 9: one 200 MB message pushed each service to ~640 MB), a QoS 0 flood waits
in a bounded lane behind QoS 1 traffic, and refusals are logged at a limited rate with
counts (issue 21 item 7: 30,000 warning lines from one burst)."""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from waiting import wait_for

from engine.wire.contract import Topics
from engine.wire.intake import Inbox
from engine.wire.mqtt import MAX_PACKET, BrokerUrl, WireClient
from engine.wire.ratelog import RateLimitedLog

TOPICS = Topics("bounds")


def test_a_message_of_8_mb_is_refused_without_ever_being_held(mqtt_broker: str,
                                                               tmp_path: Path) -> None:
    if shutil.which("mosquitto_pub") is None:
        pytest.skip("needs mosquitto_pub (apt-get install mosquitto-clients)")
    got: list[tuple[str, int]] = []
    client = WireClient(mqtt_broker, client_id="bounds-sub")
    client.subscribe(TOPICS.game_public, raw=lambda t, p: got.append((t, len(p))))
    client.start(wait=10)
    assert client.wait_ready(10)
    big = tmp_path / "big"
    size = 8 * 1024 * 1024 + MAX_PACKET  # "a few MB over the limit"
    big.write_bytes(b"x" * size)
    broker = BrokerUrl.parse(mqtt_broker)
    pub = ["mosquitto_pub", "-h", broker.host, "-p", str(broker.port), "-t",
           TOPICS.game_public, "-q", "1"]
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        subprocess.run([*pub, "-f", str(big)], check=True, timeout=60)
        subprocess.run([*pub, "-m", "small"], check=True, timeout=60)  # the link still works
        wait_for(lambda: got, 30, "the small message after the big one")
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
        client.stop()
    assert got == [(TOPICS.game_public, 5)]  # the big one reached no handler
    assert client.stats["oversize"] == 1
    assert peak < 2 * 1024 * 1024, f"{peak} bytes held for an {size}-byte message"


def test_a_qos0_flood_is_dropped_and_counted_while_qos1_goes_first(mqtt_broker: str) -> None:
    """A flood of QoS 0 messages while the handler is slow: the lane holds at most its
    bound, the rest is dropped and counted, and a QoS 1 message sent after the flood is
    handled before the queued flood."""
    order: list[str] = []
    release = threading.Event()

    def handler(topic: str, payload: bytes) -> None:
        release.wait(30)
        order.append(payload.decode()[:5])

    client = WireClient(mqtt_broker, client_id="bounds-flood", bulk_items=100)
    client.subscribe(TOPICS.game_public, raw=handler)
    client.start(wait=10)
    assert client.wait_ready(10)
    flood = paho.Client(CallbackAPIVersion.VERSION2, client_id="bounds-flooder")
    broker = BrokerUrl.parse(mqtt_broker)
    flood.connect(broker.host, broker.port)
    flood.loop_start()
    try:
        for n in range(5000):
            flood.publish(TOPICS.game_public, f"flood{n}".encode(), qos=0)
        # A loaded broker may itself drop some of a QoS 0 flood (Mosquitto's queue bound):
        # wait until no more comes, not for all 5,000.
        arrived = _settled(lambda: client.stats["received"] + client.stats["dropped"], 30,
                           "the flood to arrive")
        assert arrived > 1000, f"only {arrived} of the flood arrived"
        done = flood.publish(TOPICS.game_public, b"real!", qos=1)
        done.wait_for_publish(10)
        wait_for(lambda: client.stats["received"] + client.stats["dropped"] > arrived, 10,
                 "the QoS 1 message")
        release.set()
        wait_for(lambda: "real!" in order, 10, "the QoS 1 message handled")
    finally:
        release.set()
        flood.loop_stop()
        flood.disconnect()
        client.stop()
    assert order.index("real!") <= 1  # at most the one being handled went before it
    # Handled: the lane's 100, the one in the handler when it filled, and a retained message
    # of the topic if an earlier test left one; every other message of the flood dropped.
    assert arrived - client.stats["dropped"] <= 102 and len(order) <= 102


def _settled(count: Callable[[], int], timeout: float, what: str) -> int:
    """`count()` once it has stood still for half a second (a flood has ended)."""
    deadline = time.monotonic() + timeout
    last, since = count(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = count()
        if now != last:
            last, since = now, time.monotonic()
        elif now and time.monotonic() - since >= 0.5:
            return now
    raise AssertionError(f"{what}: still coming after {timeout} s ({last} so far)")


def test_a_burst_of_30000_refusals_writes_a_few_lines_with_counts(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    logger = logging.getLogger("cauldron.test.ratelog")
    refusals = RateLimitedLog(logger, burst=5, window=60.0, clock=lambda: now[0])
    caplog.set_level(logging.WARNING, logger=logger.name)
    for n in range(30_000):
        refusals.warning("rejected", "rejected message %d", n)
    refusals.warning("other", "another kind is logged on its own")
    assert len(caplog.records) == 6 and refusals.counts["rejected"] == 30_000
    assert refusals.left_out() == 30_000 - 5
    now[0] = 61.0
    refusals.warning("rejected", "rejected message %d", 30_000)
    assert "29995 more like it left out" in caplog.records[-1].getMessage()


def test_the_inbox_bounds_its_bulk_lane_in_bytes_too() -> None:
    inbox = Inbox(bulk_items=1000, bulk_bytes=1000)
    assert inbox.put("a", bulk=True, size=600) and not inbox.put("b", bulk=True, size=600)
    assert inbox.put("first") and inbox.get() == "first" and inbox.get() == "a"
    assert inbox.dropped == 1 and len(inbox) == 0

"""MQTT exhaustion (issue 24 item 9): 300,000 unsigned QoS 0 events in a few seconds
deafened the engine for about 30 s (one unbounded queue on one thread). Against a real
Mosquitto with the shipped ACL; the attacker holds the hub's broker password (sniffed on
shared Wi-Fi) but not the table's key."""

from __future__ import annotations

import logging
import shutil
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from acl_broker import needs_mosquitto, secured_broker
from hub_events import hub_event, signed
from waiting import wait_for

from engine.games.glastonbury.table.table_driver import scripted_game
from engine.service.service import EngineService, ServiceConfig
from engine.wire.auth import ensure_key, keys_dir
from engine.wire.contract import Topics, encode
from engine.wire.mqtt import WireClient

pytestmark = needs_mosquitto

TABLE, HUB_ID = "table-1", "hub-table-1"
ACCOUNTS = {"cauldron.engine": "engine-pw", "cauldron.dashboard": "dash-pw", TABLE: "hub1-pw"}
TOPICS = Topics(TABLE)
FLOOD = 300_000


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    ensure_key(keys_dir(), TABLE, "hub", HUB_ID)
    with secured_broker(tmp_path, ACCOUNTS) as port:
        yield port


def test_a_qos0_flood_of_unsigned_events_does_not_deafen_the_engine(port: int,
                                                                     tmp_path: Path) -> None:
    engine = EngineService(ServiceConfig(
        mqtt=f"mqtt://cauldron.engine:engine-pw@127.0.0.1:{port}", data_dir=tmp_path / "e",
        name="engine-under-flood", gap_timeout=0.3, retry_interval=0.2)).start(wait=10)
    hub = WireClient(f"mqtt://{TABLE}:hub1-pw@127.0.0.1:{port}", client_id="the-hub")
    dashboard = WireClient(f"mqtt://cauldron.dashboard:dash-pw@127.0.0.1:{port}",
                           client_id="the-dashboard")
    if shutil.which("mosquitto_pub") is None:
        pytest.skip("needs mosquitto_pub (apt-get install mosquitto-clients)")
    flooder: subprocess.Popen[bytes] | None = None
    try:
        hub.start(wait=10)
        dashboard.start(wait=10)
        script = scripted_game(2, 5, max_decisions=4)
        args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
        assert dashboard.request(TOPICS.cmd("new_game"), args, timeout=10).status == "ok"
        interp = engine.tables[TABLE].interp
        junk = encode(hub_event(script.deal[0], 1, hub_id=HUB_ID))  # unsigned
        lines = tmp_path / "flood"
        lines.write_bytes((junk + b"\n") * FLOOD)
        started = time.monotonic()
        # Another process (an attacker's machine), with the hub's password but not its key.
        flooder = subprocess.Popen(
            ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-u", TABLE, "-P",
             "hub1-pw", "-t", TOPICS.hub_event, "-q", "0", "-l"],
            stdin=lines.open("rb"))

        def seen() -> int:  # flood messages read by the engine: let in or dropped
            return engine.client.stats["received"] + engine.client.stats["dropped"]

        wait_for(lambda: seen() > 20_000, 60, "the flood to begin")
        latencies: list[float] = []
        for seq, inp in enumerate(script.deal, 1):  # the real hub, during the flood
            before = interp.inputs
            at = time.monotonic()
            done = threading.Event()
            hub.publish(TOPICS.hub_event, signed(hub_event(inp, seq, hub_id=HUB_ID), TABLE),
                        on_ack=done.set)
            assert done.wait(10)
            wait_for(lambda b=before: interp.inputs > b, 10, f"hub event {seq} in the flood")
            latencies.append(time.monotonic() - at)
        during = seen()
        reply = dashboard.request(TOPICS.cmd("confirm"), {}, timeout=10)  # commands answered
        assert reply.status in ("ok", "error") and reply.code != "expired"
        assert flooder.wait(120) == 0
        wait_for(lambda: seen() >= FLOOD, 120, "the whole flood read by the engine")
        took = time.monotonic() - started
        assert interp.status.value == "playing"
        assert max(latencies) < 5.0, latencies  # the old engine: none within 10 s
        stats = engine.client.stats
        print(f"flood: {FLOOD} sent, read by the engine in {took:.1f} s ({seen() / took:,.0f}"
              f"/s): {stats['received']} let in, {stats['dropped']} dropped unread; "
              f"{len(latencies)} hub events during it ({during} flood messages in by then): "
              f"median {statistics.median(latencies) * 1000:.0f} ms, max "
              f"{max(latencies) * 1000:.0f} ms")
        assert stats["dropped"] > 0  # the flood overflowed its lane, and that was counted
    finally:
        if flooder is not None and flooder.poll() is None:
            flooder.kill()
            flooder.wait()
        hub.stop()
        dashboard.stop()
        engine.stop()


def test_a_burst_of_malformed_commands_writes_a_few_log_lines_with_counts(
        port: int, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 21 item 7: one burst of malformed messages wrote 30,000 warning lines per
    engine. Now each kind of refusal writes a few lines a minute, and all are counted."""
    if shutil.which("mosquitto_pub") is None:
        pytest.skip("needs mosquitto_pub (apt-get install mosquitto-clients)")
    caplog.set_level(logging.WARNING)
    engine = EngineService(ServiceConfig(
        mqtt=f"mqtt://cauldron.engine:engine-pw@127.0.0.1:{port}", data_dir=tmp_path / "e",
        name="engine-under-junk")).start(wait=10)
    try:
        lines = tmp_path / "junk"
        lines.write_bytes(b"{not json\n" * 3000)
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-u",
                        "cauldron.dashboard", "-P", "dash-pw", "-t", TOPICS.cmd("undo"), "-q",
                        "1", "-l"], stdin=lines.open("rb"), check=True, timeout=120)
        wait_for(lambda: engine.client.stats["rejected"] >= 3000, 60, "every message refused")
    finally:
        engine.stop()
    written = [r for r in caplog.records if "rejected message" in r.getMessage()]
    assert 1 <= len(written) <= 10, len(written)
    assert engine.client.refusals.counts["rejected"] == 3000

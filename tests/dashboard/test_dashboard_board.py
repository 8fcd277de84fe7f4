"""A hung scan board (hub/health ``board``) and the sensed pawns reach the host page's data."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashkit import PIN, Dash, wait_until
from fastapi.testclient import TestClient

from engine.wire.contract import BoardHealth, HubHealth, ReaderHealthSeen

HOST = {"X-Host-Pin": PIN}


@pytest.fixture
def client(dash_app: Dash) -> Iterator[TestClient]:
    with TestClient(dash_app.app) as test_client:
        wait_until(lambda: dash_app.bridge.connected, 10, "broker connection")
        yield test_client


def test_hung_board_and_sensed_pawns_in_the_readers_panel(client: TestClient,
                                                          dash_app: Dash) -> None:
    health = HubHealth(
        hub_id="h", ts=time.time(), backend="serial",
        readers=[ReaderHealthSeen(reader=0, cell="0,1", health="ok")],
        board=BoardHealth(state="hung", resets=2, firmware="1.1.0"), pawns=[0, 7],
    )
    dash_app.publisher.publish(dash_app.topics.hub_health, health, retain=True)
    wait_until(lambda: dash_app.bridge.health is not None, 5, "hub health")
    body = client.get("/api/host/readers", headers=HOST).json()
    board = body["board"]
    assert (board["state"], board["resets"], board["firmware"]) == ("hung", 2, "1.1.0")
    assert body["pawns"] == [0, 7]


def test_virtual_table_moves_a_pawn_on_a_table_with_pawn_sensors(
        client: TestClient, dash_app: Dash, mqtt_broker: str, table_id: str,
        tmp_path: Path) -> None:
    from engine.wire.contract import Topics
    from engine.wire.mqtt import WireClient
    from hub.backends.sim import SimulatedTable
    from hub.layout import Layout
    from hub.outbox import Outbox
    from hub.service import Hub
    from hub.tagmap import TagMap

    sim = SimulatedTable(Layout(perimeter=True))
    assert sim.pawn_switches is not None
    sim.pawn_switches.set([2, 7])
    hub = Hub(table=table_id, backend=sim, tagmap=TagMap(), outbox=Outbox(tmp_path / "o.db"),
              client=WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                                state_topic=Topics(table_id).hub_state)).start()
    try:
        wait_until(lambda: dash_app.bridge.health is not None
                   and dash_app.bridge.health.pawns == [2, 7], 10, "the sensed pawns")
        reply = client.post("/api/virtual/pawn", json={"from": 2, "to": 4}, headers=HOST)
        assert reply.status_code == 200, reply.text
        assert reply.json()["data"]["pawns"] == [4, 7]
        wait_until(lambda: dash_app.bridge.health is not None
                   and dash_app.bridge.health.pawns == [4, 7], 10, "the moved pawn")
        refused = client.post("/api/virtual/pawn", json={"from": 9, "to": 10}, headers=HOST)
        assert refused.status_code == 409 and "no pawn stands" in refused.json()["detail"]
        bad = client.post("/api/virtual/pawn", json={"from": 25, "to": 1}, headers=HOST)
        assert bad.status_code == 422
        anonymous = client.post("/api/virtual/pawn", json={"from": 4, "to": 5})
        assert anonymous.status_code in (401, 403)
    finally:
        hub.stop()

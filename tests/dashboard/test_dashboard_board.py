"""A hung scan board (hub/health ``board``) and the sensed pawns reach the host page's data."""

from __future__ import annotations

import time
from collections.abc import Iterator

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

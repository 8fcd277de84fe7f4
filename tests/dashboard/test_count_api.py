"""Score-only mode inside the whole dashboard (`cauldron dashboard`, the demo): `/count` from
the host page, manual entry only (no reader in this process), the host PIN for every change,
bad input refused with a message, the live socket."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from dashkit import PIN, Dash
from fastapi.testclient import TestClient

HOST = {"X-Host-Pin": PIN}


@pytest.fixture
def client(dash_app: Dash) -> Iterator[TestClient]:
    with TestClient(dash_app.app) as test_client:
        yield test_client


def test_the_host_page_links_to_the_count_page(client: TestClient) -> None:
    assert 'href="/count"' in client.get("/host?lang=en").text
    page = client.get("/count?lang=en")
    assert page.status_code == 200 and "/static/count/count.js" in page.text
    assert 'href="/host"' in page.text  # inside the dashboard: its navigation
    assert client.get("/count/seat/2").status_code == 200
    assert client.get("/api/count").json()["count"] is None


def test_every_change_needs_the_host_pin(client: TestClient) -> None:
    body = {"colours": ["yellow", "red"]}
    assert client.post("/api/count/setup", json=body).status_code == 401
    assert client.post("/api/count/setup", json=body,
                       headers={"X-Host-Pin": "0000"}).status_code == 403
    assert client.post("/api/count/login", headers=HOST).status_code == 204
    for method, path in (("POST", "/api/count/seats/0/cards"), ("POST", "/api/count/seats/0/undo"),
                         ("DELETE", "/api/count/seats/0/cards/red-a-1"),
                         ("POST", "/api/count/seats/0/done"), ("POST", "/api/count/last-card")):
        assert client.request(method, path, json={"card": "red-a-1"}).status_code == 401, path


def test_manual_entry_refusals_and_the_live_socket(client: TestClient) -> None:
    with client.websocket_connect("/ws/count") as socket:
        assert socket.receive_json()["count"] is None
        state = client.post("/api/count/setup", headers=HOST,
                            json={"colours": ["yellow", "red", "blue"]}).json()
        assert [s["name"] for s in state["count"]["seats"]] == [
            "Seat 1 (yellow)", "Seat 2 (red)", "Seat 3 (blue)"]
        assert socket.receive_json()["count"]["setup"]["colours"] == ["yellow", "red", "blue"]
        client.post("/api/count/seats/2/cards", headers=HOST, json={"card": "blue-a-4"})
        pushed = socket.receive_json()
        assert pushed["count"]["seats"][2]["taps"] == [
            {"card": "blue-a-4", "source": "manual", "uid": None}]
        assert pushed["count"]["scores"]["seats"][2]["total"] == -8
    twice = client.post("/api/count/seats/0/cards", headers=HOST, json={"card": "blue-a-4"})
    assert twice.status_code == 409
    assert twice.json()["detail"] == {
        "code": "duplicate", "seat": 2,
        "message": "Pumpkins 4 (blue) is already counted for Seat 3 (blue): every card exists "
                   "once. Remove it there first if it was tapped for the wrong seat."}
    assert client.post("/api/count/seats/3/cards", headers=HOST,
                       json={"card": "red-a-1"}).status_code == 409  # no Seat 4 here
    assert client.post("/api/count/seats/0/cards", headers=HOST,
                       json={"card": "A-orange"}).json()["detail"]["code"] == "impossible"
    assert client.post("/api/count/seats/1/undo", headers=HOST).status_code == 409
    undone = client.post("/api/count/seats/2/undo", headers=HOST).json()
    assert undone["count"]["seats"][2]["taps"] == []
    nothing = client.post("/api/count/reader/tap", headers=HOST, json={"card": "red-a-1"})
    assert nothing.status_code == 404 and "no simulated reader" in nothing.json()["detail"]
    assert client.post("/api/count/enrol", headers=HOST,
                       json={"uid": "04AABBCCDDEEFF", "card": "red-a-1"}).status_code == 404


@pytest.mark.parametrize("body", [
    {"colours": ["yellow"]}, {"colours": ["yellow", "grey"]}, {"colours": ["red", "red"]},
    {"colours": ["red", "blue"], "last_card_seat": 3}, {"colours": ["red", "blue"], "x": 1},
    {"colours": ["red", "blue", "green"], "removed_colour": "yellow"}, {"colours": "red"},
])
def test_a_bad_setup_is_refused_with_a_message(client: TestClient, body: dict[str, Any]) -> None:
    answer = client.post("/api/count/setup", headers=HOST, json=body)
    assert answer.status_code == 422
    assert client.get("/api/count").json()["count"] is None


def test_bad_card_ids_are_refused_before_the_count(client: TestClient) -> None:
    client.post("/api/count/setup", headers=HOST, json={"colours": ["yellow", "red"]})
    for card in ("", "x" * 41, "<script>", "red a 1"):
        assert client.post("/api/count/seats/0/cards", headers=HOST,
                           json={"card": card}).status_code == 422, card
    unknown = client.post("/api/count/seats/0/cards", headers=HOST, json={"card": "red-z-9"})
    assert unknown.status_code == 409 and "not a card of the box" in unknown.text

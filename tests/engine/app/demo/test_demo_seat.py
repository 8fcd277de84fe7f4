"""A visitor takes a seat: the bots leave it alone, the person plays it on the virtual table,
and the bots carry on with the other seats (the whole demo stack, in-process)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from dashboard.deps import SEAT_HEADER
from engine.app.demo.stack import DemoOptions, DemoStack

pytestmark = pytest.mark.e2e  # the whole table, as processes

PIN = "432198"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoStack]:
    stack = DemoStack(DemoOptions(port=0, pace=0, players=2, seed=8, linger=30, pin=PIN,
                                  data_dir=tmp_path / "demo"), say=lambda _: None)
    try:
        yield stack.start()
    finally:
        stack.stop()


def _state(http: httpx.Client) -> dict[str, Any]:
    data: dict[str, Any] = http.get("/api/table").json()
    return data


def _person_step(http: httpx.Client, state: dict[str, Any], seat: int, secret: str) -> None:
    """What a person at `seat` does next, following the table screen."""
    view = state["game"]["view"]
    virtual = state["virtual"]
    expected = view["expected"]

    def gesture(**body: Any) -> None:
        reply = http.post("/api/virtual/gesture", json=body, params=creds, headers=auth)
        assert reply.status_code == 200, (body, reply.text, state["virtual"])

    creds, auth = {"seat": seat}, {SEAT_HEADER: secret}
    mine = (virtual.get("hands") or {}).get(str(seat))
    if mine is not None:
        if mine["origin"] == "pile":
            gesture(action="lay", where=expected["refill_cell"])
        else:
            gesture(action="lay", where=f"pad:{seat}")
    elif str(seat) in virtual["pads"]:
        gesture(action="slide", seat=seat)
    elif view["table"]["vanesco_wait"]:
        gesture(action="tap", seat=view["table"]["vanesco_wait"][0]["seat"])
    elif expected["phase"] == "refill":
        gesture(action="draw")
    elif expected["can_pass"]:
        http.post("/api/virtual/pass", params=creds, headers=auth).raise_for_status()
    elif expected["take"] or expected["accio"]:
        gesture(action="lift", where=(expected["take"] or expected["accio"])[0])


@pytest.mark.timeout(90)
def test_a_joined_seat_is_left_to_the_person(demo: DemoStack) -> None:
    http = httpx.Client(base_url=demo.url, timeout=10, headers={"X-Host-Pin": PIN})
    deadline = time.monotonic() + 20
    state = _state(http)
    while time.monotonic() < deadline:
        state = _state(http)
        game = state["game"]
        if game and (game["view"].get("table") or {}).get("status") == "playing":
            break
        time.sleep(0.05)
    links = http.get("/api/host/seats").json()
    seat0 = next(link for link in links if link["seat"] == 0)
    # The QR code's one-time code is traded for the seat's secret (the phone's scan), which
    # comes in a cookie; this phone is no browser and sends it as a header.
    joined = http.get(seat0["url"], follow_redirects=False)
    assert joined.status_code == 303, joined.text
    assert "secret" not in joined.headers["location"]
    ws_url = demo.url.rstrip("/").replace("http://", "ws://") + "/ws/seat/0"
    secret = re.findall(r"cauldron-seat-0=([^;]+);", joined.headers["set-cookie"])[0]
    # A phone reads every frame; this one reads only the first, so it keeps them all
    # (a full queue would stop it reading the server's close frame: a 10 s close).
    with connect(ws_url, max_queue=None, additional_headers={SEAT_HEADER: secret}) as phone:
        phone.recv(timeout=5)
        deadline = time.monotonic() + 10
        while not _state(http)["joined"][0] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(http)["joined"][0]
        # Wait for seat 0's turn to come with nothing in hand: the bots then do nothing.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = _state(http)
            view = state["game"]["view"]
            if view.get("over"):
                pytest.skip("the game ended before seat 0's turn came")
            if view["turn"] == 0 and view["expected"]["phase"] in ("take", "refill"):
                break
            if view["turn"] == 0:
                _person_step(http, state, 0, secret)  # the person finishes a turn the bot began
            time.sleep(0.05)
        # A gesture a bot began before it saw the join may still land: let it settle.
        inputs = -1
        while inputs != state["game"]["view"]["table"]["inputs"]:
            inputs = state["game"]["view"]["table"]["inputs"]
            time.sleep(0.5)
            state = _state(http)
        time.sleep(1.5)
        still = _state(http)
        assert still["game"]["view"]["table"]["inputs"] == inputs, "a bot played the person's seat"
        assert still["game"]["view"]["turn"] == 0
        # The person plays seat 0's turn; then the bot plays seat 1's.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            state = _state(http)
            if state["game"]["view"]["turn"] != 0 or state["game"]["view"].get("over"):
                break
            _person_step(http, state, 0, secret)
            time.sleep(0.05)
        assert state["game"]["view"]["turn"] == 1 or state["game"]["view"].get("over")
        assert not state["alerts"], state["alerts"]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            view = _state(http)["game"]["view"]
            if view["turn"] == 0 or view.get("over"):
                break
            time.sleep(0.05)
        assert view["turn"] == 0 or view.get("over"), "the bot did not play seat 1"
    http.close()


def test_stop_leaves_no_thread_behind(tmp_path: Path) -> None:
    import threading

    before = set(threading.enumerate())
    stack = DemoStack(DemoOptions(port=0, pace=0, players=2, seed=1, pin=PIN,
                                  data_dir=tmp_path / "demo"), say=lambda _: None)
    stack.start()
    assert httpx.get(stack.url, timeout=5).status_code == 200
    stack.stop()
    deadline = time.monotonic() + 10
    left: list[threading.Thread] = []
    while time.monotonic() < deadline:
        left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left:
            break
        time.sleep(0.1)
    assert not left, [t.name for t in left]


@pytest.mark.timeout(60)
def test_a_game_the_host_deals_is_played_by_the_bots(tmp_path: Path) -> None:
    said: list[str] = []
    stack = DemoStack(DemoOptions(port=0, pace=0, players=2, seed=2, linger=60, pin=PIN,
                                  data_dir=tmp_path / "demo"), say=said.append)
    stack.start()
    try:
        http = httpx.Client(base_url=stack.url, timeout=10, headers={"X-Host-Pin": PIN})
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any("started" in s for s in said):
            time.sleep(0.05)
        assert http.post("/api/host/end").status_code == 200
        answer = http.post("/api/host/new_game", json={
            "colours": ["yellow", "red", "green"], "deal": "virtual", "seed": 5})
        assert answer.status_code == 200, answer.text
        game_id = answer.json()["data"]["game_id"]
        deadline = time.monotonic() + 20
        inputs = 0
        while time.monotonic() < deadline:
            game = _state(http)["game"]
            if game and game["game_id"] == game_id:
                inputs = game["view"]["table"]["inputs"]
                if inputs >= 10:
                    break
            time.sleep(0.1)
        assert inputs >= 10, said  # the bots play the host's 3-player game
        assert any(f"game {game_id} started from the host page" in s for s in said), said
        assert not any("left over" in s for s in said), said
        http.close()
    finally:
        stack.stop()


def test_live_updates_go_uncompressed(demo: DemoStack) -> None:
    """The demo serves the dashboard as `cauldron dashboard` does: it declines the
    per-message deflate that browsers offer (deflate costs CPU per viewer per update)."""
    url = demo.url.replace("http://", "ws://").rstrip("/") + "/ws/table"
    with connect(url) as viewer:  # offers permessage-deflate, as browsers do
        assert viewer.response is not None
        assert "Sec-WebSocket-Extensions" not in viewer.response.headers
        assert viewer.recv(timeout=10)

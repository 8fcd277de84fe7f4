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
from demo_stacks import running_demo
from waiting import wait_until
from websockets.sync.client import connect

from dashboard.deps import SEAT_HEADER
from engine.app.demo.stack import DemoOptions, DemoStack
from hub.backends.sim import GESTURE_INPUTS

pytestmark = pytest.mark.e2e  # the whole table, as processes

PIN = "432198"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoStack]:
    with running_demo(tmp_path / "demo", seed=8, pin=PIN) as stack:
        yield stack


def _state(http: httpx.Client) -> dict[str, Any]:
    data: dict[str, Any] = http.get("/api/table").json()
    return data


def _person_step(http: httpx.Client, state: dict[str, Any], seat: int, secret: str) -> None:
    """What a person at `seat` does next, following the table screen."""
    view = state["game"]["view"]
    virtual = state["virtual"]
    expected = view["expected"]

    before = int(view["table"]["inputs"])

    def seen(count: int) -> None:  # the next step is read from a table that shows this one
        wait_until(lambda: _state(http)["game"]["view"]["table"]["inputs"] >= before + count,
                   30, "the engine to see the person's step")

    def gesture(**body: Any) -> None:
        reply = http.post("/api/virtual/gesture", json=body, params=creds, headers=auth)
        assert reply.status_code == 200, (body, reply.text, state["virtual"])
        seen(GESTURE_INPUTS[body["action"]])

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
        if any(w["seat"] == seat for w in view["table"]["vanesco_wait"]):
            gesture(action="tap", seat=seat)  # the other seats' cards are their bots' to tap
    elif expected["phase"] == "refill":
        gesture(action="draw")
    elif expected["can_pass"]:
        http.post("/api/virtual/pass", params=creds, headers=auth).raise_for_status()
        seen(1)
    elif expected["take"] or expected["accio"]:
        gesture(action="lift", where=(expected["take"] or expected["accio"])[0])


def _counting_ticks(demo: DemoStack) -> list[int]:
    """The bot driver's looks at the table, counted: each tick is a chance to play."""
    driver = demo.driver
    ticks = [0]
    tick = driver.tick

    def counted() -> None:
        tick()
        ticks[0] += 1

    driver.tick = counted
    return ticks


@pytest.mark.timeout(300)
def test_a_joined_seat_is_left_to_the_person(demo: DemoStack) -> None:
    """The bots are held while the visitor joins seat 0 (no game can end meanwhile, so
    seat 0's turn comes by construction: at most one bot turn away). At seat 0's turn the
    bots look at the table again and again and do nothing; the person plays the turn, then
    the bot plays seat 1's."""
    http = httpx.Client(base_url=demo.url, timeout=20, headers={"X-Host-Pin": PIN})
    wait_until(lambda: ((_state(http)["game"] or {}).get("view") or {}).get("table", {})
               .get("status") == "playing", 60, "the bots' game")
    demo.driver.pause()
    wait_until(demo.driver.idle.is_set, 30, "the bots to hold")
    links = http.get("/api/host/seats").json()
    seat0 = next(link for link in links if link["seat"] == 0)
    # The QR code's one-time code is traded for the seat's secret (the phone's scan), which
    # comes in a cookie; this phone is no browser and sends it as a header.
    joined = http.get(seat0["url"], follow_redirects=False)
    assert joined.status_code == 303, joined.text
    assert "secret" not in joined.headers["location"]
    ws_url = demo.url.rstrip("/").replace("http://", "ws://") + "/ws/seat/0"
    secret = re.findall(r"cauldron-seat-0=([^;]+);", joined.headers["set-cookie"])[0]
    ticks = _counting_ticks(demo)
    # A phone reads every frame; this one reads only the first, so it keeps them all
    # (a full queue would stop it reading the server's close frame: a 10 s close).
    with connect(ws_url, max_queue=None, additional_headers={SEAT_HEADER: secret}) as phone:
        phone.recv(timeout=30)
        wait_until(lambda: _state(http)["joined"][0], 30, "seat 0 joined")
        demo.driver.pause(False)

        def seat0_to_take() -> bool:
            """Seat 0's turn with a card to take; a turn the bot began before the join
            (a card in seat 0's hand or on its pad) is finished by the person."""
            state = _state(http)
            view = state["game"]["view"]
            assert not view.get("over"), "the game ended: it was two turns from its start"
            if view["turn"] != 0:
                return False
            virtual = state["virtual"] or {}
            if view["expected"]["phase"] == "take" and not virtual.get("hands") \
                    and not virtual.get("pads") and not view["table"]["vanesco_wait"]:
                return True
            _person_step(http, state, 0, secret)
            return False

        wait_until(seat0_to_take, 120, "seat 0's turn, a card to take",
                   report=lambda: str(_state(http)["game"]["view"]["expected"]))
        inputs = _state(http)["game"]["view"]["table"]["inputs"]
        looked = ticks[0]
        wait_until(lambda: ticks[0] >= looked + 20, 60, "the bots to look at the table 20 times")
        still = _state(http)
        assert still["game"]["view"]["table"]["inputs"] == inputs, "a bot played the person's seat"
        assert still["game"]["view"]["turn"] == 0
        # The person plays seat 0's turn; then the bot plays seat 1's.

        def person_turn_done() -> bool:
            state = _state(http)
            if state["game"]["view"]["turn"] != 0 or state["game"]["view"].get("over"):
                return True
            _person_step(http, state, 0, secret)
            return False

        wait_until(person_turn_done, 120, "the person's turn to end")
        state = _state(http)
        assert not state["alerts"], state["alerts"]
        wait_until(lambda: (v := _state(http)["game"]["view"])["turn"] == 0 or v.get("over"),
                   120, "the bot to play seat 1")
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


@pytest.mark.timeout(300)
def test_a_game_the_host_deals_is_played_by_the_bots(tmp_path: Path) -> None:
    said: list[str] = []
    with running_demo(tmp_path / "demo", say=said.append, seed=2, linger=60,
                      pin=PIN) as stack:
        http = httpx.Client(base_url=stack.url, timeout=20, headers={"X-Host-Pin": PIN})
        wait_until(lambda: any("started" in s for s in said), 60, "the demo's own game")
        assert http.post("/api/host/end").status_code == 200
        answer = http.post("/api/host/new_game", json={
            "colours": ["yellow", "red", "green"], "deal": "virtual", "seed": 5})
        assert answer.status_code == 200, answer.text
        game_id = answer.json()["data"]["game_id"]

        def played() -> bool:  # the bots play the host's 3-player game
            game = _state(http)["game"]
            return bool(game) and game["game_id"] == game_id and int(
                game["view"]["table"]["inputs"]) >= 10

        def stood() -> str:
            game = _state(http)["game"] or {}
            driver = stack.driver
            return (f"table: game {game.get('game_id')} "
                    f"{((game.get('view') or {}).get('table') or {}).get('status')}, turn "
                    f"{(game.get('view') or {}).get('turn')}; bots: game {driver._game_id}, "
                    f"awaiting {driver._awaiting}, over at {driver._over_at}, refused "
                    f"{driver._refused}, held {not driver.resumed.is_set()}; said {said}")

        wait_until(played, 120, "ten inputs of the host's game", report=stood)
        assert any(f"game {game_id} started from the host page" in s for s in said), said
        assert not any("left over" in s for s in said), said
        http.close()


def test_live_updates_go_uncompressed(demo: DemoStack) -> None:
    """The demo serves the dashboard as `cauldron dashboard` does: it declines the
    per-message deflate that browsers offer (deflate costs CPU per viewer per update)."""
    url = demo.url.replace("http://", "ws://").rstrip("/") + "/ws/table"
    with connect(url) as viewer:  # offers permessage-deflate, as browsers do
        assert viewer.response is not None
        assert "Sec-WebSocket-Extensions" not in viewer.response.headers
        assert viewer.recv(timeout=10)

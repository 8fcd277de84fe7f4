"""Attacks on the seats (issue 24, items 3 and 4; issue 18's seats): a stranger on the
network taking every seat with the join API, re-taking a freed seat, a freed phone's socket
still streaming its private view; and the honest paths: one code one phone, a used link
answered in the phone's language, phones kept seated from one game to the next."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from dashkit import PIN, Dash, new_game, seat_auth, wait_until
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from dashboard import seats as seats_module
from dashboard.deps import PIN_HEADER, SCREEN_COOKIE

HOST = {PIN_HEADER: PIN}
STRANGER = "192.168.1.66"  # a phone on the hall's Wi-Fi that never saw the table's screen


@pytest.fixture
def served(dash_app: Dash) -> Iterator[Dash]:
    with TestClient(dash_app.app):
        dash_app.answer_commands()
        yield dash_app


def as_client(dash: Dash, address: str) -> TestClient:
    return TestClient(dash.app, client=(address, 4000))


def _game(dash: Dash, players: int = 4, game_id: str = "g1", seed: int = 1) -> None:
    dash.publish_game(new_game(players=players, seed=seed), game_id=game_id)
    wait_until(lambda: dash.bridge.game_id == game_id, 10, f"the dashboard to see {game_id}")


def _take(client: TestClient, url: str) -> str | None:
    """Open a join link as a phone: the seat's secret (from its cookie), or None when
    refused."""
    reply = client.get(url[url.index("/join/"):], follow_redirects=False)
    if reply.status_code != 303:
        return None
    return re.findall(r"cauldron-seat-\d=([^;]+);", reply.headers["set-cookie"])[0]


def test_a_stranger_cannot_take_any_seat(served: Dash) -> None:
    """Issue 24 #3: ``GET /api/seats/N/join`` gave anyone every seat's link (4 seats in
    0.61 s). Now no route gives a stranger a join code: 0 seats taken."""
    _game(served)
    stranger = as_client(served, STRANGER)
    stranger.cookies.set(SCREEN_COOKIE, "guessed")
    said = []
    for seat in range(4):
        for path in (f"/api/seats/{seat}/join", f"/api/seats/{seat}/qr.svg", "/api/host/seats"):
            reply = stranger.get(path)
            assert reply.status_code in (401, 403), (path, reply.status_code)
            said.append(reply.text)
        # guessing a code: nothing opens
        assert _take(stranger, f"/join/{seat}?token=x{seat}") is None
    said += [stranger.get("/api/table").text, stranger.get("/").text]
    with stranger.websocket_connect("/ws/table") as ws:
        said.append(ws.receive_text())
    live = [code for codes in served.bridge.secrets._tokens.values() for code, _ in codes]
    assert not any(code in text for code in live for text in said)
    assert served.bridge.table_state().joined == [False] * 4  # 0 of 4 seats taken
    assert stranger.get("/").text.count('"screen": false') == 1  # the page says why


def test_the_table_screen_and_the_host_get_the_codes(served: Dash) -> None:
    _game(served)
    # A browser on the table's machine is its screen ...
    assert as_client(served, "127.0.0.1").get("/api/seats/0/qr.svg").status_code == 200
    # ... and so is one where the host unlocked the host page (the big screen elsewhere).
    screen = as_client(served, "192.168.1.20")
    assert screen.get("/api/seats/0/join").status_code == 403
    assert screen.post("/api/host/login", headers=HOST).status_code == 204
    assert screen.cookies.get(SCREEN_COOKIE)
    assert screen.get("/api/seats/0/join").status_code == 200
    assert '"screen": true' in screen.get("/").text
    # Another dashboard run's cookie opens nothing.
    other = as_client(served, "192.168.1.21")
    other.cookies.set(SCREEN_COOKIE, "x" * 43)
    assert other.get("/api/seats/0/join").status_code == 403


def test_through_a_local_proxy_a_visitor_is_not_the_screen(dash: Dash) -> None:
    """A proxy on this machine forwards a stranger: seen by the address it names, not as
    local (uvicorn reads ``X-Forwarded-For`` from loopback only)."""
    _game(dash)
    forwarded = {"X-Forwarded-For": STRANGER}
    assert httpx.get(dash.url + "/api/seats/0/join", headers=forwarded).status_code == 403
    assert httpx.get(dash.url + "/api/seats/0/join").status_code == 200  # the screen itself


def test_a_join_code_is_single_use_and_short_lived(served: Dash,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _game(served)
    screen = as_client(served, "127.0.0.1")
    phone, thief = as_client(served, "192.168.1.30"), as_client(served, STRANGER)
    url = screen.get("/api/seats/1/join").json()["url"]
    assert _take(phone, url) is not None
    assert _take(thief, url) is None  # a photo of the screen, used later: nothing
    # An unused code dies after JOIN_TOKEN_TTL; the screen has had a newer one since.
    clock = [1000.0]
    monkeypatch.setattr(seats_module.time, "monotonic", lambda: clock[0])
    old = screen.get("/api/seats/2/join").json()["url"]
    clock[0] += seats_module.JOIN_TOKEN_FRESH
    newer = screen.get("/api/seats/2/join").json()["url"]
    assert newer != old  # rotated: the table view fetches a new one every minute
    clock[0] += seats_module.JOIN_TOKEN_TTL - seats_module.JOIN_TOKEN_FRESH
    assert _take(thief, old) is None
    # Using one code of a seat kills the others.
    assert _take(phone, newer) is not None
    late = screen.get("/api/seats/2/join")
    assert late.status_code == 403  # joined: its code is the host's only now


def test_taking_a_seat_shows_on_the_table_view(served: Dash) -> None:
    _game(served)
    screen = as_client(served, "127.0.0.1")
    url = screen.get("/api/seats/3/join").json()["url"]
    with screen.websocket_connect("/ws/table") as ws:
        assert json.loads(ws.receive_text())["joined"][3] is False
        assert _take(as_client(served, "192.168.1.31"), url) is not None
        while not json.loads(ws.receive_text())["joined"][3]:
            pass


@pytest.mark.timeout(60)  # the old code never closed it: the test would wait for ever
@pytest.mark.parametrize("how", ["free", "reissue"])
def test_a_freed_seat_socket_is_closed(served: Dash, how: str) -> None:
    """Issue 24 #4: a freed seat's socket kept streaming its private view (404 frames in
    40 s). Now the host's free/reissue sends it one last message and closes it: 0 frames of
    its view after, and its secret opens nothing on any route."""
    game = new_game(players=2)
    _game(served, players=2)
    client = as_client(served, "192.168.1.32")
    old = served.bridge.secrets.secret("g1", 0)
    with client.websocket_connect("/ws/seat/0", headers=seat_auth(old)) as ws:
        assert json.loads(ws.receive_text())["type"] == "seat"
        assert client.post(f"/api/host/seats/0/{how}", headers=HOST).status_code == 200
        last = json.loads(ws.receive_text())
        while last.get("type") == "seat":  # a state sent before the host's click
            last = json.loads(ws.receive_text())
        assert last == {"type": "expired", "code": "seat_freed",
                        "reason": "the host freed this seat: scan its new QR code"}
        for _ in range(10):  # the seat's private view keeps changing ...
            served.publish_seat(game, 0)
        with pytest.raises(WebSocketDisconnect):  # ... and reaches it no more
            ws.receive_text()
    assert served.bridge.phones()[0] is False or wait_until(
        lambda: not served.bridge.phones()[0], 10, "the socket to count as gone")
    assert client.get("/api/seats/0", headers=seat_auth(old)).status_code == 403
    assert client.post("/api/seats/0/play", headers=seat_auth(old),
                       json={"action": "pass"}).status_code == 403
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(
            "/ws/seat/0", headers=seat_auth(old)) as ws:
        ws.receive_text()
    assert refused.value.code == 4403


@pytest.mark.parametrize("lang,words", [("fr", "déjà servi"), ("de", "schon benutzt"),
                                        ("en", "used already")])
def test_a_used_join_link_shows_a_translated_page(served: Dash, lang: str, words: str) -> None:
    _game(served)
    screen = as_client(served, "127.0.0.1")
    url = screen.get("/api/seats/0/join").json()["url"]
    phone = as_client(served, "192.168.1.33")
    assert _take(phone, url) is not None
    again = phone.get(url[url.index("/join/"):], headers={"Accept-Language": lang},
                      follow_redirects=False)
    assert again.status_code == 403 and again.headers["content-type"].startswith("text/html")
    assert words in again.text and '"detail"' not in again.text


def test_phones_keep_their_seat_across_games(served: Dash) -> None:
    """Issue 18: a phone stays seated game after game; a seat the host freed, or whose
    phone left, needs a new code."""
    _game(served, players=2)
    screen = as_client(served, "127.0.0.1")
    phones = [as_client(served, f"192.168.1.4{n}") for n in range(2)]
    kept = [_take(phones[n], screen.get(f"/api/seats/{n}/join").json()["url"])
            for n in range(2)]
    assert all(kept)
    with phones[0].websocket_connect("/ws/seat/0", headers=seat_auth(kept[0])) as ws0, \
            phones[1].websocket_connect("/ws/seat/1", headers=seat_auth(kept[1])) as ws1:
        assert json.loads(ws0.receive_text())["game_id"] == "g1"
        json.loads(ws1.receive_text())
        assert screen.post("/api/host/seats/1/free", headers=HOST).status_code == 200
        _game(served, players=2, game_id="g2", seed=5)
        state = json.loads(ws0.receive_text())
        while state.get("game_id") != "g2":
            state = json.loads(ws0.receive_text())
        assert state["type"] == "seat"
        assert phones[0].get("/api/seats/0", headers=seat_auth(kept[0])).status_code == 200
        assert phones[1].get("/api/seats/1", headers=seat_auth(kept[1])).status_code == 403
        assert served.bridge.table_state().joined[:2] == [True, False]


def _at_a_pass(players: int = 2) -> Any:
    """A rules game whose seat to move may pass (G4/G7)."""
    import random

    from engine.games.glastonbury.rules.actions import PASS

    for seed in range(200):
        game, rng = new_game(players=players, seed=seed), random.Random(seed)
        while not game.is_over():
            if PASS in game.legal_actions():
                return game
            game.apply(rng.choice(game.legal_actions()))
    raise AssertionError("no game reached a pass")


def test_a_seats_pass_is_its_own_command(served: Dash) -> None:
    """A seat's "pass" went out as the host's bare confirm (which also ends a Vanesco wait
    or starts a dealt game). Now it is a confirm from that seat, on every route."""
    game = _at_a_pass()
    served.publish_game(game)
    wait_until(lambda: served.bridge.game_id == "g1", 10, "the game")
    seat = game.seat
    own = served.bridge.secrets.secret("g1", seat)
    phone = as_client(served, "192.168.1.50")
    for path in (f"/api/seats/{seat}/play", f"/api/virtual/pass?seat={seat}"):
        body = {"action": "pass"} if "/play" in path else None
        reply = phone.post(path, json=body, headers=seat_auth(own))
        assert reply.status_code == 200, (path, reply.text)
        verb, request = served.requests[-1]
        assert verb == "confirm" and request.seat == seat, (path, request)
    # The other seat cannot pass for it.
    other = served.bridge.secrets.secret("g1", 1 - seat)
    refused = phone.post(f"/api/seats/{1 - seat}/play", headers=seat_auth(other),
                         json={"action": "pass"})
    assert refused.status_code == 409


@pytest.fixture
def lan_dash(mqtt_broker: str, table_id: str, tmp_path: Any) -> Iterator[Dash]:
    """A served dashboard whose public address phones can open (so codes are shown)."""
    from dashkit import make_dash

    yield from make_dash(mqtt_broker, table_id, tmp_path, serve=True,
                         public_url="http://192.168.1.20:8000/")


def test_a_browser_shows_the_codes_only_once_the_host_unlocks_it(lan_dash: Dash,
                                                                 page: Any) -> None:
    """In Chromium: the table view of a browser that is not the table's screen shows no
    code (it says how to unlock); the host unlocks the host page in that browser, and the
    table view then shows every seat's code, fetched anew each minute. (The browser is
    another device on the network: a local proxy says so.)"""
    proxied = lan_dash
    page.set_extra_http_headers({"X-Forwarded-For": "192.168.1.70"})
    _game(proxied, players=2)
    page.goto(proxied.url + "/?lang=en")
    page.wait_for_selector("#join .codes-locked")
    assert page.locator("#join img").count() == 0
    page.goto(proxied.url + "/host?lang=en")
    page.fill("#pin", PIN)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#new-game", state="visible")
    page.goto(proxied.url + "/?lang=en")
    page.wait_for_function("document.querySelectorAll('#join img').length === 2 && "
                           "[...document.querySelectorAll('#join img')].every("
                           "i => i.complete && i.naturalWidth > 0)")
    assert page.locator("#join .codes-locked").count() == 0


def test_a_seat_page_never_passes_its_secret_on(served: Dash) -> None:
    """No page sends its URL on as a Referer (a second guard: no URL holds a secret)."""
    _game(served)
    phone = as_client(served, "192.168.1.60")
    for path in ("/seat/0", "/", "/host", "/virtual", "/scores"):
        assert phone.get(path).headers["Referrer-Policy"] == "no-referrer", path


def test_a_seat_secret_leaked_through_a_url_opens_nothing(served: Dash) -> None:
    """Issue 24 ("no credential is ever read from a query string"): the join redirect put
    the seat's secret in the seat page's URL, and every seat route read it from there, so
    a browser's history, a log line or a Referer handed the seat to whoever saw it. Now
    /join gives it in an HttpOnly, SameSite=Strict cookie scoped to the seat's paths, the
    URL carries none, and no route takes ``?secret=``: tried on every seat route."""
    _game(served, players=2)
    url = served.bridge.join_info(0, "http://testserver/")
    assert url is not None
    phone = as_client(served, "192.168.1.61")
    joined = phone.get(url.url[url.url.index("/join/"):] + "&lang=de", follow_redirects=False)
    secret = served.bridge.secrets.secret("g1", 0)
    assert joined.status_code == 303 and joined.headers["location"] == "/seat/0?lang=de"
    cookies = joined.headers.get_list("set-cookie")
    assert sorted(re.findall(r"Path=([^;]+)", c)[0] for c in cookies) == [
        "/api/seats/0", "/api/virtual", "/ws/seat/0"]
    for cookie in cookies:
        assert cookie.startswith(f"cauldron-seat-0={secret};"), cookie
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie, cookie
    # The phone's cookie alone opens its view, its buttons and its socket.
    assert phone.get("/api/seats/0").status_code == 200
    assert phone.post("/api/seats/0/play", json={"action": "pass"}).status_code != 403
    with phone.websocket_connect("/ws/seat/0") as ws:
        assert json.loads(ws.receive_text())["type"] == "seat"
    # Whoever saw the secret in a URL gets nothing with it, on any seat route.
    thief = as_client(served, STRANGER)
    routes = [(method.upper(), path) for path, item in served.app.openapi()["paths"].items()
              if path.startswith("/api/seats/{seat}") and not path.endswith(("/join", "/qr.svg"))
              for method in item]
    assert len(routes) >= 7, routes
    for method, path in routes:
        leaked = path.replace("{seat}", "0") + f"?secret={secret}&seat=0"
        reply = thief.request(method, leaked, json={"action": "pass"})
        assert reply.status_code == 403, (method, path, reply.status_code)
    for path in ("/api/virtual/pass", "/api/virtual/keep", "/api/virtual/declinatio"):
        reply = thief.post(f"{path}?seat=0&secret={secret}")
        assert reply.status_code == 401, (path, reply.status_code)
    with pytest.raises(WebSocketDisconnect) as refused, thief.websocket_connect(
            f"/ws/seat/0?secret={secret}") as ws:
        ws.receive_text()
    assert refused.value.code == 4403
    assert served.bridge.phones()[0] is False or wait_until(
        lambda: not served.bridge.phones()[0], 10, "the phone's socket to count as gone")


def test_a_seat_secret_is_read_in_one_place_and_never_from_a_url(served: Dash) -> None:
    """`deps.given_seat_secret` is the only reader of a seat credential and the only caller
    of the secrets' check; no route declares a ``secret`` query parameter."""
    from pathlib import Path

    import dashboard

    root = Path(dashboard.__file__).parent
    for path in [*root.glob("*.py"), *(root / "routers").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        if path.name != "deps.py":
            assert "secrets.check(" not in text, path
            assert not re.search(r"(?<!set_)seat_cookie\(|SEAT_HEADER|cookies\.get\(.*seat",
                                 text), path
    for path, item in served.app.openapi()["paths"].items():
        for method, operation in item.items():
            names = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
            assert "secret" not in names, (method, path)

"""Attacks on the dashboard over HTTP, each refused: a cross-site POST, a cross-site
WebSocket, a PIN brute force, an oversized body, harvesting the seats' join links; and the
host's word before a new hub may serve the table."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from dashkit import PIN, Dash, join_in_browser, new_game, seat_auth, wait_page_events, wait_until
from fastapi.testclient import TestClient
from hub_events import signed

from dashboard.guard import MAX_BODY, PinGuard
from engine.wire.contract import HubSnapshot, ReaderSeen, Topics

HOST = {"X-Host-Pin": PIN}


@pytest.fixture
def client(dash_app: Dash) -> Iterator[TestClient]:
    with TestClient(dash_app.app) as test_client:
        dash_app.answer_commands()
        yield test_client


def _game(dash: Dash, players: int = 3) -> None:
    dash.publish_game(new_game(players=players))
    deadline = time.monotonic() + 10
    while dash.bridge.game_id != "g1":
        assert time.monotonic() < deadline, "the dashboard never saw the game"
        time.sleep(0.01)


def test_cross_site_post_is_refused(client: TestClient, dash_app: Dash) -> None:
    _game(dash_app)
    secret = dash_app.bridge.secrets.secret("g1", 0)
    evil = [{"Origin": "http://evil.example"}, {"Origin": "null"},
            {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
            {"Origin": "http://testserver.evil.example"}]
    for headers in evil:
        for path in ("/api/host/end", "/api/seats/0/keep", "/api/host/seats/0/free"):
            reply = client.post(path, headers={**HOST, **seat_auth(secret), **headers},
                                content=b"a=1", )
            assert reply.status_code == 403, (path, headers)
            assert "cross-site" in reply.json()["detail"]
    assert dash_app.requests == []  # nothing reached the engine
    # The dashboard's own pages (same origin), and programs that are no browser, get in.
    same = client.post("/api/host/end", headers={**HOST, "Origin": "http://testserver",
                                                  "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200 and dash_app.requests[-1][0] == "end"
    assert client.post("/api/host/undo", headers=HOST).status_code == 200
    # Reading stays open to any page (the public table view).
    assert client.get("/api/table", headers={"Origin": "http://evil.example"}).status_code == 200


def test_cross_site_form_post_from_a_real_browser_is_refused(dash: Dash, page: object) -> None:
    """A page elsewhere makes a seated phone's Chromium post a form to the dashboard."""
    _game(dash)
    join_in_browser(page, dash.url, dash.bridge, 0)  # the phone holds seat 0's cookie
    dash.answer_commands()
    page.set_content(  # type: ignore[attr-defined]
        f'<form method="post" action="{dash.url}/api/seats/0/declinatio">'
        '<input name="x" value="1"></form>')
    with page.expect_navigation():  # type: ignore[attr-defined]
        page.evaluate("document.forms[0].submit()")  # type: ignore[attr-defined]
    assert "cross-site request refused" in page.content()  # type: ignore[attr-defined]
    assert dash.requests == []


def test_pin_brute_force_is_locked_out(dash_app: Dash, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="cauldron.dashboard")
    with TestClient(dash_app.app, client=("10.0.0.66", 4000)) as attacker:
        host = TestClient(dash_app.app, client=("10.0.0.7", 4000))
        codes = [attacker.post("/api/host/login", headers={"X-Host-Pin": f"{n:06d}"}).status_code
                 for n in range(PinGuard.FREE_TRIES)]
        assert codes == [403] * PinGuard.FREE_TRIES
        # Locked out: even the right PIN is refused now, and told when to come back.
        locked = attacker.post("/api/host/login", headers=HOST)
        assert locked.status_code == 429 and int(locked.headers["Retry-After"]) >= 29
        assert "too many wrong host PINs" in locked.json()["detail"]
        # Every failure is logged (never the PIN itself).
        failures = [r for r in caplog.records if "wrong host PIN" in r.message]
        assert len(failures) == PinGuard.FREE_TRIES
        assert all("000001" not in r.message for r in failures)
        # Another client is not locked out by one attacker (test_dashboard_trust_pin: nor
        # by many).
        assert host.post("/api/host/login", headers=HOST).status_code == 204


def test_oversized_body_is_refused_before_it_is_read(client: TestClient, dash: Dash) -> None:
    big = b'{"colours": ["red", "blue"], "x": "' + b"a" * MAX_BODY + b'"}'
    reply = client.post("/api/host/new_game", headers={**HOST, "Content-Type":
                                                         "application/json"}, content=big)
    assert reply.status_code == 413 and "64 KB" in reply.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: a chunked body
        for _ in range(40):
            yield b"a" * 4096
    reply = client.post("/api/host/new_game", headers=HOST, content=chunks())
    assert reply.status_code == 413
    # On the real server: a body announced at 500 MB is refused before a byte of it is sent.
    host, port = dash.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"POST /api/host/new_game HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 500000000\r\n\r\n")
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413")
    assert httpx.get(dash.url + "/api/table").status_code == 200  # still serving


def test_seat_join_links_cannot_be_harvested(client: TestClient, dash_app: Dash) -> None:
    _game(dash_app, players=4)
    secrets = [dash_app.bridge.secrets.secret("g1", seat) for seat in range(4)]
    # What the host fetches names no seat's secret: only one-time codes.
    for seat in range(4):
        body = client.get(f"/api/seats/{seat}/join", headers=HOST).text
        assert not any(s in body for s in secrets)
    # A code is traded once; the phone that scanned it is the seat's.
    url = client.get("/api/seats/2/join", headers=HOST).json()["url"]
    code = url[url.index("/join/"):]
    first = client.get(code, follow_redirects=False)
    assert first.status_code == 303 and secrets[2] in first.headers["set-cookie"]
    assert client.get(code, follow_redirects=False).status_code == 403
    # A seat taken by someone else: the host frees it, their secret opens nothing now.
    freed = client.post("/api/host/seats/2/free", headers=HOST)
    assert freed.status_code == 200
    assert client.get("/api/seats/2", headers=seat_auth(secrets[2])).status_code == 403
    fresh = freed.json()["url"]
    again = client.get(fresh[fresh.index("/join/"):], follow_redirects=False)
    assert again.status_code == 303 and secrets[2] not in again.headers["set-cookie"]


def test_cross_site_websocket_is_refused(client: TestClient, dash_app: Dash) -> None:
    """A page elsewhere cannot open a socket here (a seat's, the table's, the count's): the
    handshake is refused before the socket opens; the dashboard's own pages and programs
    that are no browser (no Origin) still get in."""
    from starlette.websockets import WebSocketDisconnect

    _game(dash_app)
    secret = dash_app.bridge.secrets.secret("g1", 0)
    sockets = ("/ws/seat/0", "/ws/table", "/ws/count")
    for path in sockets:
        for origin in ("http://evil.example", "null", "http://testserver.evil.example",
                       "https://testserver:8443", "ws://testserver"):
            with pytest.raises(WebSocketDisconnect) as refused, \
                    client.websocket_connect(path, headers={"Origin": origin,
                                                            **seat_auth(secret)}):
                pass
            assert refused.value.code == 1008, (path, origin)
    assert not dash_app.bridge.secrets.joined("g1")[0]  # a refused socket joined nothing
    for headers in ({"Origin": "http://testserver"}, {}):
        with client.websocket_connect(sockets[0],
                                      headers={**headers, **seat_auth(secret)}) as socket_:
            assert socket_.receive_json()["seat"] == 0


def test_a_configured_public_address_is_same_origin() -> None:
    """Behind a proxy the browser's Origin is the public_url, not the Host the dashboard
    sees: that one origin is trusted too, nothing else."""
    from dashboard.config import Settings
    from dashboard.guard import SameOrigin, cross_site, origin_of
    from dashboard.main import create_app

    trusted = frozenset({origin_of("https://table.example/")})
    headers = {b"host": b"127.0.0.1:8000", b"origin": b"https://table.example"}
    assert cross_site(headers, trusted, fetch_site=False) is None
    assert cross_site(headers, frozenset(), fetch_site=False) is not None
    evil = {**headers, b"origin": b"https://table.example.evil.example"}
    assert cross_site(evil, trusted, fetch_site=False) is not None
    app = create_app(Settings(public_url="https://table.example/", pin="123456"))
    guards = [m for m in app.user_middleware if m.cls is SameOrigin]  # type: ignore[comparison-overlap]
    assert [g.kwargs["trusted"] for g in guards] == [trusted]


def test_cross_site_websocket_from_a_real_browser_is_refused(dash: Dash, page: object) -> None:
    """A page on another site makes a seated phone's Chromium open the seat's socket:
    refused, no message; the dashboard's own page opens it with the seat's cookie alone."""
    _game(dash)
    join_in_browser(page, dash.url, dash.bridge, 0)
    url = dash.url.replace("http://", "ws://") + "/ws/seat/0"
    listen = """url => new Promise(done => {
        const ws = new WebSocket(url); let opened = false; const got = [];
        ws.onopen = () => { opened = true; };
        ws.onmessage = m => { got.push(m.data); ws.close(); };
        ws.onclose = () => done({opened, got});
    })"""
    page.route("http://evil.example/", lambda route: route.fulfill(  # type: ignore[attr-defined]
        status=200, content_type="text/html", body="<p>cheap potions</p>"))
    page.goto("http://evil.example/")  # type: ignore[attr-defined]
    evil = page.evaluate(listen, url)  # type: ignore[attr-defined]
    assert evil == {"opened": False, "got": []}
    page.goto(dash.url + "/")  # type: ignore[attr-defined]
    own = page.evaluate(listen, url)  # type: ignore[attr-defined]
    assert own["opened"] and '"seat":0' in own["got"][0].replace(" ", "")


def test_host_accepts_a_replaced_hub_from_the_host_page(dash: Dash, engine_service: Any,
                                                        page: Any) -> None:
    """A new hub id for the table (its key replaced the old hub's) waits: the engine ignores
    it and the host page shows both ids, with the warning, behind the PIN; pressing the
    button registers it and the notice goes away."""
    table, engine = dash.table, engine_service
    topic = Topics(table).hub_snapshot

    def snapshot(hub_id: str) -> HubSnapshot:
        readers = [ReaderSeen(reader=r, cell=f"{r // 6},{r % 6}") for r in range(36)]
        model = signed(HubSnapshot(hub_id=hub_id, epoch=f"e-{hub_id}", last_seq=0,
                                   ts=time.time(), backend="sim", readers=readers), table)
        assert isinstance(model, HubSnapshot)
        return model

    dash.publisher.publish(topic, snapshot("hub-old-pi"))  # the first hub: registered
    wait_until(lambda: table in engine.tables
               and engine.tables[table].registered_hub == "hub-old-pi", 10,
               "the first hub registered")
    page.goto(dash.url + "/host?lang=en")
    page.fill("#pin", PIN)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#game-panel", state="visible")
    assert page.is_hidden("#hub-change")  # nothing waits: no button

    dash.publisher.publish(topic, snapshot("hub-new-pi"))  # a replaced Pi, enrolled anew
    page.wait_for_selector("#accept-hub", state="visible")
    notice = page.inner_text("#hub-change")
    assert "hub-new-pi" in notice and "hub-old-pi" in notice
    assert "Accept only if you replaced the hub" in notice
    assert engine.tables[table].registered_hub == "hub-old-pi"  # refused until then

    page.click("#accept-hub")
    page.wait_for_selector("#hub-change", state="hidden")
    assert engine.tables[table].registered_hub == "hub-new-pi"
    assert engine.tables[table].pending_hub is None
    # (the notice hides on the table's update, which may come before the command's answer)
    page.wait_for_function(
        "() => document.getElementById('host-msg').textContent.includes('hub-new-pi')")
    wait_until(lambda: dash.bridge.status().engine_degraded is None, 10, "the table healed")


def test_the_pin_cannot_be_sent_before_the_host_page_is_ready(dash: Dash, page: Any) -> None:
    """The host page loads every game's fragments before it listens to its login form: a
    press in that time once sent the form natively (the PIN in the address, the page
    reloaded, the login lost). The button waits, disabled, until the page listens."""
    held: list[Any] = []
    released: list[bool] = []

    def hold(route: Any) -> None:
        route.continue_() if released else held.append(route)

    page.route("**/games/*/static/*.js", hold)
    page.goto(dash.url + "/host?lang=en", wait_until="domcontentloaded")
    wait_page_events(page, lambda: held, 10, "the game fragments requested")
    page.fill("#pin", PIN)
    assert page.is_disabled("#login-button")
    page.press("#pin", "Enter")  # implicit submission: nothing while the button is disabled
    assert "pin" not in page.url.split("?", 1)[-1]
    released.append(True)
    for route in held:
        route.continue_()
    page.click("#login-button")  # waits until enabled
    page.wait_for_selector("#game-panel", state="visible")
    assert PIN not in page.url

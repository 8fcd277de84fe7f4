"""Attacks on the host PIN (issue 24, items 1 and 5): guessing through any route that takes
a PIN, guessing from many addresses to lock the host out, and a PIN in a URL (a page
elsewhere with ``<img src=".../qr.svg?pin=wrong">``)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import PIN, Dash, new_game, wait_page_events, wait_until
from fastapi.testclient import TestClient

from dashboard.deps import PIN_HEADER
from dashboard.guard import PinGuard, PinLocked, client_key

HOST = {PIN_HEADER: PIN}
DASHBOARD = Path(__file__).resolve().parents[2] / "dashboard"


@pytest.fixture
def served(dash_app: Dash) -> Iterator[Dash]:
    """`dash_app` with its lifespan running (the bridge on the broker); other clients are
    made with `as_client` (no lifespan of their own)."""
    with TestClient(dash_app.app):
        dash_app.answer_commands()
        yield dash_app


def as_client(dash: Dash, address: str) -> TestClient:
    return TestClient(dash.app, client=(address, 4000))


def _game(dash: Dash, players: int = 4) -> None:
    dash.publish_game(new_game(players=players))
    wait_until(lambda: dash.bridge.game_id == "g1", 10, "the dashboard to see the game")


def route_params(app: Any) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(method, path, parameters) of every HTTP route (the OpenAPI schema: dependencies'
    parameters included)."""
    found = []
    for path, item in app.openapi()["paths"].items():
        for method, op in item.items():
            found.append((method.upper(), path.replace("{seat}", "0"), op.get("parameters", [])))
    return found


def pin_routes(app: Any) -> list[tuple[str, str]]:
    """(method, path) of every HTTP route that reads the host PIN header."""
    return [(method, path) for method, path, ps in route_params(app)
            if any(p["in"] == "header" and p["name"] == PIN_HEADER for p in ps)]


def test_pin_guessing_is_slowed_on_every_route(served: Dash,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """Issue 24 #1: /api/virtual/waiting, /gesture and /api/seats/N/play compared the PIN
    without the guard (787 guesses/s, no 429, no log line). Now every route that reads the
    PIN gives a client `FREE_TRIES` wrong guesses, then 429 even for the right PIN, and logs
    each failure."""
    caplog.set_level(logging.WARNING, logger="cauldron.dashboard")
    dash_app = served
    _game(dash_app)
    routes = pin_routes(dash_app.app)
    paths = {p for _, p in routes}
    for known in ("/api/virtual/waiting", "/api/virtual/gesture", "/api/seats/0/play",
                  "/api/host/login", "/api/seats/0/qr.svg", "/api/seats/0/join",
                  "/api/host/seats", "/api/host/enrol", "/api/count/seats/0/cards"):
        assert known in paths, known
    guard: PinGuard = dash_app.app.state.pin_guard
    for n, (method, path) in enumerate(routes):
        guard.reset()
        caplog.clear()
        guesser = as_client(dash_app, f"10.9.{n}.1")
        codes = [guesser.request(method, path, headers={PIN_HEADER: f"{g:06d}"},
                                 json={}).status_code for g in range(PinGuard.FREE_TRIES)]
        assert all(c in (401, 403) for c in codes), (method, path, codes)
        right = guesser.request(method, path, headers=HOST, json={})
        assert right.status_code == 429, (method, path, right.status_code)
        assert int(right.headers["Retry-After"]) >= 29
        failures = [r for r in caplog.records if "wrong host PIN from" in r.message]
        assert len(failures) == PinGuard.FREE_TRIES, (method, path)
        assert all("000003" not in r.message for r in failures)  # never the PIN itself


def test_no_route_compares_a_pin_itself() -> None:
    """The guard holds the PIN and is the only comparison: no bare `pin_ok` to call, and no
    router reads `settings.pin` or compares secrets on its own."""
    import dashboard.deps as deps

    assert not hasattr(deps, "pin_ok")
    for path in [*(DASHBOARD / "routers").glob("*.py"), DASHBOARD / "deps.py"]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"settings\.pin\b|\.pin\.encode", text), path


def test_failures_fade_and_locks_double() -> None:
    now = [0.0]
    guard = PinGuard(PIN, clock=lambda: now[0])
    for n in range(PinGuard.FREE_TRIES):
        assert guard.check("a", f"{n:06d}") is False
    assert guard.wait("a") == PinGuard.FIRST_LOCK
    with pytest.raises(PinLocked):
        guard.check("a", PIN)  # even the right PIN waits
    now[0] += PinGuard.FIRST_LOCK
    assert guard.check("a", "999999") is False and guard.wait("a") == 2 * PinGuard.FIRST_LOCK
    for _ in range(20):
        now[0] += PinGuard.MAX_LOCK
        guard.check("a", "999999")
    assert guard.wait("a") == PinGuard.MAX_LOCK  # capped
    # Failures fade: a client left alone long enough has its free tries again.
    now[0] += PinGuard.FORGIVE * 40
    assert guard.wait("a") == 0
    for n in range(PinGuard.FREE_TRIES - 1):
        assert guard.check("a", f"{n:06d}") is False
    assert guard.wait("a") == 0
    assert guard.check("a", PIN) is True and guard.wait("a") == 0


def test_one_machine_counts_once_across_its_ipv6_addresses() -> None:
    assert client_key("2001:db8:1:2::5") == client_key("2001:db8:1:2:ffff::9")
    assert client_key("2001:db8:1:3::5") != client_key("2001:db8:1:2::5")
    assert client_key("::ffff:10.0.0.5") == "10.0.0.5"
    assert client_key("10.0.0.5") != client_key("10.0.0.6")


def test_many_addresses_guessing_do_not_lock_the_host_out(served: Dash,
                                                          caplog: pytest.LogCaptureFixture
                                                          ) -> None:
    """Issue 24 #5: 35 wrong PINs from 7 addresses made the right PIN get 429. Now the
    throttle is per client: 100 addresses x 5 guesses, and the host (its own address)
    gets in every time, while each guessing address is held back."""
    caplog.set_level(logging.WARNING, logger="cauldron.dashboard")
    tried = 0
    host = as_client(served, "10.0.0.7")
    for n in range(100):
        bot = as_client(served, f"10.1.{n}.1")
        answers = [bot.post("/api/host/login", headers={PIN_HEADER: f"{n:04d}{g:02d}"})
                   .status_code for g in range(PinGuard.FREE_TRIES)]
        tried += answers.count(403)
        # The guesser's own next try waits, whatever it sends.
        assert bot.post("/api/host/login", headers=HOST).status_code == 429
        if n % 10 == 9:
            assert host.post("/api/host/login", headers=HOST).status_code == 204
    # Many addresses at once raise the alarm: from then on each gets one guess only.
    assert tried < 100 + 2 * PinGuard.ALARM_FAILURES
    assert any("many clients" in r.message for r in caplog.records)
    # Logging is bounded, and says how many it did not write one by one.
    lines = [r for r in caplog.records if "wrong host PIN from" in r.message]
    assert len(lines) < tried
    guard: PinGuard = served.app.state.pin_guard
    later = guard.clock() + PinGuard.LOG_WINDOW
    guard.clock = lambda: later
    as_client(served, "10.2.0.1").post("/api/host/login", headers={PIN_HEADER: "000000"})
    assert "not logged one by one" in caplog.records[-1].message


def test_a_pin_in_a_url_is_never_read(served: Dash) -> None:
    """Issue 24 #5: ``qr.svg?pin=`` was read, so a page elsewhere with 12
    ``<img src=".../qr.svg?pin=wrong">`` locked the host's own browser out. No route reads
    a PIN from the query string: the right one there opens nothing, wrong ones count for
    nothing."""
    _game(served)
    for method, path, ps in route_params(served.app):
        names = {p["name"].lower() for p in ps if p["in"] == "query"}
        assert not names & {"pin", "host_pin", "x-host-pin"}, (method, path)
    host = as_client(served, "10.0.0.7")
    for _ in range(12):
        assert host.get("/api/seats/0/qr.svg?pin=wrong").status_code == 403
    assert host.get(f"/api/seats/0/qr.svg?pin={PIN}").status_code == 403
    assert host.post("/api/host/login", headers=HOST).status_code == 204
    assert host.get("/api/seats/0/qr.svg", headers=HOST).status_code == 200


def test_a_page_elsewhere_with_pin_images_does_not_lock_the_host_out(dash: Dash,
                                                                     page: Any) -> None:
    """The same attack in a real Chromium: another site's page (another origin, served for
    real) loads 12 images from the dashboard with a wrong PIN; the host, on the same
    machine, then logs in."""
    _game(dash)
    images = "".join(f'<img src="{dash.url}/api/seats/0/qr.svg?pin=wrong{n}">'
                     for n in range(12)).encode()

    class Evil(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html><body>" + images + b"</body></html>")

        def log_message(self, *args: Any) -> None:
            pass

    evil = ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    seen: list[str] = []
    page.on("response", lambda response: seen.append(response.url))
    try:
        page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
        # (enough answered to have locked the host's machine out when a URL's PIN counted)
        wait_page_events(page, lambda: sum("qr.svg?pin=" in u for u in seen)
                         >= PinGuard.FREE_TRIES, 20, "the images to be answered")
    finally:
        evil.shutdown()
    assert dash.app.state.pin_guard.wait(client_key("127.0.0.1")) == 0
    assert httpx.post(dash.url + "/api/host/login", headers=HOST).status_code == 204

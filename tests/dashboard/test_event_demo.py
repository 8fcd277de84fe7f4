"""The event demo as a person starts it (issue 18, items 1-3): `make event` opens it to phones,
a loopback demo says so in the terminal and on the host page, and the big screen never shows
command-line flags; a standing alert survives the whole demo being killed and started again.

Each test runs the real `cauldron demo` in its own process group (as a terminal would), on a
free port with its data under the test's directory, and looks at it with real Chromium."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import PIN
from waiting import wait_until

from engine.wire.broker import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
FLAG = re.compile(r"(^|\s)--[a-z]")  # a command-line option, as a terminal shows it


class DemoProcess:
    """`cauldron demo` in a new process group; `kill()` kills the whole group (-9)."""

    def __init__(self, tmp_path: Path, name: str, *args: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / f"{name}.log"
        self.log = self.log_path.open("w+")
        env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.app", "demo", "--port", str(self.port), "--no-qr",
             "--pin", PIN, "--host", "127.0.0.1", *args],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text()

    def table(self) -> dict[str, Any]:
        assert self.proc.poll() is None, self.output()
        try:
            state: dict[str, Any] = httpx.get(self.url + "/api/table", timeout=5).json()
        except httpx.HTTPError:
            return {}
        return state

    def wait_table(self, until: Any, timeout: float, what: str) -> dict[str, Any]:
        state: dict[str, Any] = wait_until(lambda: (lambda s: s if s and until(s) else None)(
            self.table()), timeout, what)
        return state

    def kill(self) -> None:
        """The whole demo at once, as `kill -9 -<pgid>` would."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def close(self) -> None:
        self.kill()
        self.log.close()


def show_output(*demos: DemoProcess | None) -> None:
    """The demos' terminal output, for pytest to show with a failure (what each part said
    before it went wrong)."""
    for demo in demos:
        if demo is not None:
            print(f"----- {demo.log_path.name} -----\n{demo.output()}")


def playing(state: dict[str, Any]) -> bool:
    game = state.get("game")
    view = game["view"] if game else {}
    table = view.get("table") or {}
    return bool(game and not view.get("over") and table.get("status") == "playing"
                and view.get("seats"))


def test_make_event_opens_the_demo_to_phones() -> None:
    """`make event` and `make demo HOST=0.0.0.0` both start the demo on every interface;
    `make demo` stays on this machine only."""
    def dry(*args: str) -> str:
        return subprocess.run(["make", "-n", "-o", ".venv/.installed", *args], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout

    assert "cauldron demo --host 0.0.0.0" in dry("event")
    assert "cauldron demo --host 0.0.0.0" in dry("demo", "HOST=0.0.0.0")
    assert "cauldron demo --host 127.0.0.1" in dry("demo")
    assert "--players 2" in dry("event", "DEMO_ARGS=--players 2")


@pytest.mark.timeout(180)
def test_loopback_demo_says_make_event_and_the_big_screen_shows_no_flags(
        tmp_path: Path, browser: Any) -> None:
    """Item 1: on loopback the terminal names `make event`; the big screen tells the audience
    only what they can do (no command-line flag, in any language); the host page marks each
    seat's link and QR code as unusable from a phone."""
    demo = DemoProcess(tmp_path, "demo", "--players", "2", "--pace", "3", "--seed", "3")
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        demo.wait_table(playing, 90, "the demo's first game")
        assert "make event" in demo.output()
        assert "HOST=0.0.0.0" in demo.output()
        page = context.new_page()
        for lang in ("en", "fr", "de"):
            page.goto(f"{demo.url}/?lang={lang}")
            page.wait_for_selector("#join .no-phones")
            text = page.inner_text("body")
            assert not FLAG.search(text), (lang, text)
            assert "0.0.0.0" not in text, (lang, text)
        host = context.new_page()
        host.goto(f"{demo.url}/host?lang=en")
        host.fill("#pin", PIN)
        host.click("#login-form button[type=submit]")
        host.wait_for_selector("#links .links-loopback")
        assert host.locator("#links .qr[data-unusable='loopback']").count() == 2
        note = host.inner_text("#links .links-loopback")
        assert "127.0.0.1" in note and "make event" in note, note
    except BaseException:
        show_output(demo)
        raise
    finally:
        context.close()
        demo.close()


def standing(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in state.get("alerts") or [] if a.get("kind") != "notice"]


@pytest.mark.timeout(300)
def test_a_standing_alert_survives_the_whole_demo_killed_and_started_again(
        tmp_path: Path, browser: Any) -> None:
    """Items 2-3: the host lifts a card no take allows; the whole demo (its process group) is
    killed with SIGKILL and started again on the same data: the same alert stands, in the same
    words, the card is still in the host's hand (not drawn on the square), and laying it back
    clears the alert."""
    # -v: a failure shows each part's log (e.g. which MQTT clients the broker connected).
    args = ("--players", "2", "--pace", "1.5", "--seed", "4", "-v")
    demo = DemoProcess(tmp_path, "demo-0", *args)
    again: DemoProcess | None = None
    http = httpx.Client(timeout=20, headers={"X-Host-Pin": PIN})
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        state = demo.wait_table(lambda s: playing(s) and s["game"]["view"]["phase"] == "take"
                                and not standing(s), 90, "a turn to take")
        ex = state["game"]["view"]["expected"]
        allowed = set(ex.get("take") or []) | set(ex.get("accio") or []) | set(
            ex.get("declinatio_take") or [])
        where = next(f"{r},{c}" for r in range(1, 5) for c in range(1, 5)
                     if f"{r},{c}" not in allowed)
        lifted = http.post(demo.url + "/api/virtual/gesture",
                           json={"action": "lift", "where": where})
        assert lifted.status_code == 200, lifted.text
        before = demo.wait_table(lambda s: any(a["params"].get("cell") == where
                                               for a in standing(s)), 30, "the alert")
        alert = next(a for a in standing(before) if a["params"].get("cell") == where)
        demo.kill()
        again = DemoProcess(tmp_path, "demo-1", *args, port=demo.port)
        after = again.wait_table(lambda s: playing(s) and standing(s), 120,
                                 "the demo back with its alert")
        assert after["game"]["game_id"] == before["game"]["game_id"]
        words = [(a["rule"], a["message"], a["instruction"]) for a in standing(after)]
        assert (alert["rule"], alert["message"], alert["instruction"]) in words, words
        # The square shows no card where there is none: the card is still in the host's hand.
        virtual = after["virtual"] or {}
        assert where not in (virtual.get("cells") or {}), virtual.get("cells")
        page = context.new_page()
        page.goto(again.url + "/?lang=en")
        page.wait_for_selector(f"#alerts .alert[data-rule='{alert['rule']}']")
        back = http.post(again.url + "/api/virtual/gesture", json={"action": "lay", "where": where})
        assert back.status_code == 200, back.text
        again.wait_table(lambda s: not any(a["params"].get("cell") == where
                                           for a in standing(s)), 30, "the alert to clear")
    except BaseException:
        show_output(demo, again)
        raise
    finally:
        context.close()
        http.close()
        demo.close()
        if again is not None:
            again.close()

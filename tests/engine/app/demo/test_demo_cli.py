"""`cauldron demo` as a person starts it: a subprocess serving the table view, bots finishing
a game through the virtual table, and Ctrl-C (SIGINT) stopping everything cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from waiting import EXIT_WITHIN

from engine.app.cli import main as cauldron
from engine.app.demo.cli import game_options
from engine.app.demo.stack import seats_option
from engine.wire.broker import free_port

pytestmark = pytest.mark.e2e  # the whole table, as processes

ROOT = Path(__file__).resolve().parents[4]


def _children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            found.append(int(entry.name))
    return found


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Demo:
    """`cauldron demo` in a subprocess on a free port (2 players, one game, no pace), its
    output in a log file, with `XDG_DATA_HOME` under the test's directory."""

    def __init__(self, tmp_path: Path, seed: int, name: str = "demo") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / f"{name}.log"
        self.log = self.log_path.open("w+")
        env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.app", "demo", "--port", str(self.port), "--pace",
             "0", "--games", "1", "--players", "2", "--linger", "30", "--seed", str(seed),
             "--no-qr"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text()

    def table(self, until: Callable[[dict[str, Any]], Any], timeout: float) -> dict[str, Any]:
        """``/api/table`` once `until` holds (the demo must keep running meanwhile)."""
        deadline = time.monotonic() + timeout
        state: dict[str, Any] = {}
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.output()
            try:
                state = httpx.get(self.url + "/api/table", timeout=5).json()
            except httpx.HTTPError:
                time.sleep(0.1)
                continue
            if until(state):
                return state
            time.sleep(0.05)
        raise AssertionError(f"not reached in {timeout} s: {state}\n{self.output()}")

    def interrupt(self) -> None:
        """Ctrl-C: the demo must stop cleanly (exit 0)."""
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(EXIT_WITHIN) == 0, self.output()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(EXIT_WITHIN)
        self.log.close()


def over(state: dict[str, Any]) -> bool:
    return bool(state.get("game") and state["game"]["view"].get("over"))


@pytest.mark.timeout(300)
def test_demo_serves_plays_a_game_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    demo = Demo(tmp_path, seed=3)
    try:
        start = time.monotonic()
        page = None
        while time.monotonic() - start < 60:  # start-up, on a busy machine
            assert demo.proc.poll() is None, demo.output()
            try:
                page = httpx.get(demo.url + "/", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert page is not None and page.status_code == 200, demo.output()
        assert "<html" in page.text.lower()

        state = demo.table(over, 180)  # a whole game; a busy 2-core machine is slow
        game = state["game"]
        assert game and game["view"]["over"], demo.output()
        scores = game["view"]["end"]["scores"]
        assert len(scores["seats"]) == 2 and scores["winners"]
        assert not state["alerts"], state["alerts"]  # the bots played only legal gestures
        # The score screen shows the result while the demo lingers.
        deadline = time.monotonic() + 10
        while "over: won by" not in demo.output() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "over: won by" in demo.output()

        children_before = _children(demo.proc.pid)
        demo.interrupt()
    finally:
        demo.close()
    text = demo.log_path.read_text()
    assert "Traceback" not in text, text
    assert "stopped." in text
    assert not [p for p in children_before if Path(f"/proc/{p}").exists()]
    assert not _children(demo.proc.pid)
    assert _port_free(demo.port)
    # Data went to the per-user data directory, not the source tree.
    assert (tmp_path / "data" / "cauldron" / "demo" / "engine").is_dir()


def test_a_taken_port_is_one_clear_line(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert cauldron(["demo", "--port", str(port), "--no-qr"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"port {port}" in err[0] and "--port 0" in err[0], err


def test_an_unreachable_broker_is_one_clear_line(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    dead = free_port()
    code = cauldron(["demo", "--port", "0", "--mqtt", f"mqtt://127.0.0.1:{dead}", "--no-qr"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "MQTT broker" in err[0] and "--mqtt" in err[0], err


@pytest.mark.parametrize(("argv", "message"), [
    (["--bot", "clever"], "--bot"),
    (["--games", "0"], "--games"),
    (["--mqtt", "http://x"], "mqtt://"),
    (["--pin", "a b"], "--pin"),
    (["--table", "a/b"], "--table"),
    (["--game", "chess"], "--game"),
    (["--option", "lantern=1"], "--option 'lantern=1': glastonbury has the options"),
    (["--option", "recipes=maybe"], "--option 'recipes=maybe': boolean expected"),
    (["--option", "colours=red,red"], "G2"),
    (["--players", "2", "--option", "first_seat=3"], "--option"),
    (["--game", "quacks", "--bot", "search"], "the bots of quacks: random, greedy, push"),
    (["--game", "quacks", "--option", "players=9"], "--option players: Input should be"),
])
def test_bad_flags_are_one_clear_line(argv: list[str], message: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert cauldron(["demo", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.timeout(150)
def test_demo_killed_mid_game_goes_on_with_the_same_game(tmp_path: Path) -> None:
    """SIGKILL in the middle of a game, then `cauldron demo` again on the same data: the
    engine replays its log, the virtual table comes back from its file, the bots catch up
    from the engine's history, and the same game is played to its end without an alert."""
    demo = Demo(tmp_path, seed=5, name="demo-0")
    again: Demo | None = None
    try:
        state = demo.table(lambda s: s.get("game") and s["game"]["view"].get("turns", 0)
                           >= 6 and not s["game"]["view"].get("over"), 60)
        game_id = state["game"]["game_id"]
        demo.proc.send_signal(signal.SIGKILL)
        demo.proc.wait(EXIT_WITHIN)
        again = Demo(tmp_path, seed=5, name="demo-1")
        state = again.table(over, 90)
        output = demo.output() + again.output()
        assert state["game"]["game_id"] == game_id, output  # the same game, finished
        assert not state["alerts"], state["alerts"]
        assert "lost track" not in output
        again.interrupt()
    finally:
        demo.close()
        if again is not None:
            again.close()


def test_options_are_typed_by_the_games_options_model() -> None:
    assert game_options("quacks", ["ingredient_set=1", "show_odds=false",
                                   "explosion_limit=none", "players=3"]) == {
        "ingredient_set": 1, "show_odds": False, "explosion_limit": None, "players": 3}
    assert game_options("glastonbury", ["recipes=yes", "colours=red,blue"], players=2) == {
        "recipes": True, "colours": ["red", "blue"]}
    assert seats_option("glastonbury", 3) == {"colours": ["yellow", "red", "green"]}
    assert seats_option("quacks", 3) == {"players": 3}

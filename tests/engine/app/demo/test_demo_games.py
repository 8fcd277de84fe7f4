"""The host switches the demo table to another game from the host page while bots play, and
back: the bots of the table's game play it (one driver per game, `driver.TableGame`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from demo_stacks import running_demo
from waiting import wait_until

from engine.app.demo.stack import DemoStack

pytestmark = pytest.mark.e2e  # the whole table, as processes

PIN = "432177"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoStack]:
    with running_demo(tmp_path / "demo", seed=5, pin=PIN) as stack:
        yield stack


def _game(http: httpx.Client) -> dict[str, Any]:
    game: dict[str, Any] = http.get("/api/table").json().get("game") or {}
    return game


def _switch(http: httpx.Client, body: dict[str, Any]) -> str:
    """What the host page's "End and start" does: end the running game, start another."""
    ended = http.post("/api/host/end")  # (the bots may have just finished it: no_game)
    assert ended.status_code == 200 or "no_game" in ended.text, ended.text
    # As the page does: the ended game seen (by the dashboard too) before the next is started.
    wait_until(lambda: _status(http) not in ("playing", "dealing"), 60, "the game ended")
    # As the page does too: the dashboard may not have seen the end yet (game_in_progress).
    last: list[httpx.Response] = []

    def accepted() -> httpx.Response | None:
        last[:] = [http.post("/api/host/new_game", json=body)]
        return last[0] if last[0].status_code == 200 else None

    reply = wait_until(accepted, 60, "the new game accepted",
                       report=lambda: last[0].text if last else "no answer")
    game_id: str = reply.json()["data"]["game_id"]
    wait_until(lambda: _game(http).get("game_id") == game_id, 60, "the new game on the table")
    return game_id


def _status(http: httpx.Client) -> str:
    view = _game(http).get("view") or {}
    return str((view.get("table") or {}).get("status") or view.get("status") or "idle")


def _inputs(http: httpx.Client) -> int:
    """How far the table's game has gone: Glastonbury's inputs, Quacks' chips in the pots."""
    view = _game(http).get("view") or {}
    if "seats" in view and "table" not in view:  # Quacks
        return sum(len(s.get("pot") or []) for s in view["seats"])
    return int((view.get("table") or {}).get("inputs") or 0)


def test_the_bots_follow_the_game_the_host_starts(demo: DemoStack) -> None:
    http = httpx.Client(base_url=demo.url, headers={"X-Host-Pin": PIN}, timeout=10)
    wait_until(lambda: _game(http).get("game") == "glastonbury" and _inputs(http) > 3
               and _status(http) == "playing", 120, "the demo's Glastonbury game under way")

    quacks = _switch(http, {"game": "quacks", "players": 2})
    wait_until(lambda: _inputs(http) >= 4, 120, "the bots drawing chips in the host's Quacks game",
               report=lambda: str(_game(http).get("view"))[:600])
    assert _game(http)["game_id"] == quacks  # played, not replaced by a game of the demo's

    glastonbury = _switch(http, {"game": "glastonbury", "colours": ["yellow", "red"]})
    wait_until(lambda: _inputs(http) > 3, 120, "the bots playing the host's Glastonbury game",
               report=lambda: str(_game(http).get("view"))[:600])
    assert _game(http)["game_id"] == glastonbury

"""The demo with pawn sensors (``--pawns``, hardware issue 13): the simulated table lays the
pawns where the first turn starts, each bot moves its pawn before it takes, and the engine,
checking every pawn move as it happens, never finds one out of place for long."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from demo_stacks import running_demo
from waiting import wait_until

from engine.games.glastonbury.table.pawn_check import pawn_problems

pytestmark = pytest.mark.e2e  # the whole table, as processes

PIN = "432198"


@pytest.mark.timeout(400)
def test_bots_move_their_sensed_pawns_and_the_game_goes_on(tmp_path: Path) -> None:
    with running_demo(tmp_path / "demo", seed=8, pin=PIN, pawns=True) as stack:
        # The engine serves a table once its ownership loop has claimed it (issue 21).
        runtime = wait_until(lambda: stack.engine.tables.get("demo"), 60,
                             "the engine to serve the demo's table")
        interp = runtime.interp
        wait_until(lambda: interp.game is not None and len(interp.game.actions) >= 8, 240,
                   "eight actions of the bots' game", report=lambda: str(stack.driver.state()))
        # Sensed, not inferred: the pawn sensors reported every move the bots made.
        assert interp.pawn_sensing.sensed is not None
        with httpx.Client(base_url=stack.url, timeout=10) as http:
            state = http.get("/api/table").json()
        assert state["game"]["view"]["table"]["pawns_sensed"] is not None
        stack.driver.pause()
        wait_until(stack.driver.idle.is_set, 60, "the bots to hold")
        # a bot's pawn move may be on its way
        wait_until(lambda: pawn_problems(interp.game, interp.pawn_sensing.sensed) == [], 60,
                   "the pawns sensed where the game puts them",
                   report=lambda: str(pawn_problems(interp.game, interp.pawn_sensing.sensed)))

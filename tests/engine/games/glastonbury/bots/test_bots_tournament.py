"""Glastonbury's tournament through `cauldron tournament` (the rotation and the Wilson
interval are every game's: tests/engine/games/test_tournament.py)."""

from __future__ import annotations

import json

import pytest

from engine.app.cli import main
from engine.games.glastonbury.bots.tournament import colours_for


def test_colours_rotate() -> None:
    assert {colours_for(g, 2)[0] for g in range(4)} == {"yellow", "red", "green", "blue"}


def test_tiny_tournament_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tournament", "--bots", "random,greedy", "--games", "4", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    standings = data["standings"]
    assert [s["bot"] for s in standings] == ["random", "greedy"]
    assert sum(s["wins"] for s in standings) == pytest.approx(4)
    assert sum(s["win_rate"] * s["seat_games"] for s in standings) == pytest.approx(4)
    for s in standings:
        low, high = s["ci95"]
        assert 0 <= low <= s["win_rate"] <= high <= 1
        assert s["seat_games"] == 4


def test_tiny_tournament_table_three_players(capsys: pytest.CaptureFixture[str]) -> None:
    bots = "random,greedy,search:simulations=4:depth=4"
    code = main(["tournament", "--bots", bots, "--games", "3", "--players", "3"])
    assert code == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "95% CI" in out
    rows = [line.split() for line in out.splitlines()[2:]]
    assert [r[0] for r in rows] == ["random", "greedy", "search:simulations=4:depth=4"]
    assert sum(float(r[2]) for r in rows) == pytest.approx(3, abs=0.02)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bots", "clever"], "unknown bot 'clever'"),
        (["--games", "0"], "--games must be at least 1"),
        (["--players", "5"], "--players must be 2, 3 or 4"),
        (["--bots", "search:fast=1"], "unknown search option 'fast'"),
        (["--set", "memory=none"], "memory must be perfect or own"),
        (["--set", "memory"], "--set takes NAME=VALUE"),
        (["--set", "depth=3"], "has no setting 'depth'"),
    ],
)
def test_tournament_bad_input(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tournament", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err

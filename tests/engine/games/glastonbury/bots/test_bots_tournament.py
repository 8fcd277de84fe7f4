"""The tournament command and the Wilson interval."""

from __future__ import annotations

import json

import pytest

from engine.app.cli import main
from engine.games.glastonbury.bots.tournament import colours_for, lineup_for, wilson_interval


def test_wilson_interval_known_values() -> None:
    # Reference values: R prop.test(x, n, correct = FALSE)$conf.int.
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2365931, abs=1e-6)
    assert high == pytest.approx(0.7634069, abs=1e-6)
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.2775328, abs=1e-6)
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.7224672, abs=1e-6)
    assert high == 1.0
    # The bounds are the roots of (p - x)^2 = z^2 x (1 - x) / n: check 81/100 that way.
    low, high = wilson_interval(81, 100)
    z2, n, p = 1.959963984540054**2, 100, 0.81
    for root in (low, high):
        assert (p - root) ** 2 == pytest.approx(z2 * root * (1 - root) / n, rel=1e-9)
    assert low == pytest.approx(0.72221, abs=1e-5) and high == pytest.approx(0.87485, abs=1e-5)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_seats_and_colours_rotate() -> None:
    assert [lineup_for(g, ["a", "b"], 2) for g in range(2)] == [(0, 1), (1, 0)]
    assert lineup_for(1, ["a", "b", "c"], 2) == (1, 2)
    # More bots than seats: every ordered pair meets, each bot moves first in turn.
    pairs = {lineup_for(g, ["a", "b", "c"], 2) for g in range(6)}
    assert pairs == {(a, b) for a in range(3) for b in range(3) if a != b}
    firsts = [lineup_for(g, ["a", "b", "c", "d"], 3)[0] for g in range(12)]
    assert sorted(firsts) == sorted([0, 1, 2, 3] * 3)
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
        (["--memory", "none"], "--memory must be perfect or own"),
    ],
)
def test_tournament_bad_input(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tournament", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err

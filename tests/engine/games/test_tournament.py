"""What every game's tournament shares (`engine.games.tournament`): the Wilson interval,
the seat rotation, the names, and `cauldron tournament` finding the game in the registry."""

from __future__ import annotations

import pytest

from engine import games
from engine.app.cli import main
from engine.games.tournament import WinTally, lineup_for, unique_names, wilson_interval


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


def test_seats_rotate() -> None:
    assert [lineup_for(g, 2, 2) for g in range(2)] == [(0, 1), (1, 0)]
    assert lineup_for(1, 3, 2) == (1, 2)
    # More bots than seats: every ordered pair meets, each bot moves first in turn.
    pairs = {lineup_for(g, 3, 2) for g in range(6)}
    assert pairs == {(a, b) for a in range(3) for b in range(3) if a != b}
    firsts = [lineup_for(g, 4, 3)[0] for g in range(12)]
    assert sorted(firsts) == sorted([0, 1, 2, 3] * 3)


def test_a_tie_shares_the_win_and_names_stay_apart() -> None:
    tally = WinTally("greedy")
    tally.count(0, (0, 1), 0.5)
    tally.count(1, (0,), 0.25)
    assert (tally.seats, tally.wins, tally.seconds) == (2, 0.5, 0.75)
    assert tally.tally_json()["win_rate"] == 0.25
    assert unique_names(["greedy", "greedy", "push", "greedy"]) == [
        "greedy", "greedy#2", "push", "greedy#3"]


@pytest.mark.parametrize("game_id", games.game_ids())
def test_every_game_of_the_registry_has_a_tournament(
        game_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    bots = games.get(game_id).bot_names()[:2]
    assert main(["tournament", "--game", game_id, "--bots", ",".join(bots), "--games", "2",
                 "--players", "2"]) == 0
    out = capsys.readouterr().out
    assert all(b in out for b in bots) and "95% CI" in out


def test_a_setting_a_game_does_not_have_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "--game", "quacks", "--set", "memory=own"]) == 2
    err = capsys.readouterr().err
    assert "no setting 'memory'" in err and "Traceback" not in err

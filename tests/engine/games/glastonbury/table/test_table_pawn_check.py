"""Sensed pawns against the game (engine.games.glastonbury.table.pawn_check): G3/G4, the way
back."""

from __future__ import annotations

import random

import pytest

from engine.games.glastonbury.rules import Game, GameConfig, Phase
from engine.games.glastonbury.table.pawn_check import PawnSensing, pawn_problems


def game() -> Game:
    g = Game.new(GameConfig(colours=("yellow", "red", "green")), random.Random(3))
    assert g.phase is Phase.TAKE
    return g


def positions(g: Game) -> frozenset[int]:
    return frozenset(g.pawns)


def test_no_sensors_nothing_to_check() -> None:
    assert pawn_problems(game(), None) == []


def test_pawns_where_the_game_has_them_or_not_moved_yet() -> None:
    g = game()
    assert pawn_problems(g, positions(g)) == []
    start = (g.pawns[g.seat] - g.move_value) % 20
    not_moved = (positions(g) - {g.pawns[g.seat]}) | {start}
    assert pawn_problems(g, frozenset(not_moved)) == []


def test_active_pawn_moved_too_far_is_a_g4_alert_with_the_way_back() -> None:
    g = game()
    target = g.pawns[g.seat]
    wrong = (target + 1) % 20
    assert wrong not in positions(g)
    sensed = (positions(g) - {target}) | {wrong}
    (problem,) = pawn_problems(g, frozenset(sensed))
    assert (problem.rule, problem.code, problem.seat) == ("G4", "pawn_wrong_position", g.seat)
    assert f"position {wrong + 1}" in problem.message
    assert f"from position {wrong + 1} to position {target + 1}" in problem.instruction
    assert "Seat 1 (Yellow)" in problem.message or "Seat 1" in problem.message


def test_another_seats_pawn_moved_is_g3() -> None:
    g = game()
    other = (g.seat + 1) % 3
    at = g.pawns[other]
    free = next(p for p in range(20) if p not in positions(g) and p != (at + 1) % 20)
    sensed = (positions(g) - {at}) | {free}
    problems = pawn_problems(g, frozenset(sensed))
    assert [(p.rule, p.code, p.seat) for p in problems] == [("G3", "pawn_missing", other)]
    assert f"back on position {at + 1}" in problems[0].instruction


def test_an_extra_pawn_on_the_track() -> None:
    g = game()
    free = next(p for p in range(20) if p not in positions(g)
                and p != (g.pawns[g.seat] - g.move_value) % 20)
    problems = pawn_problems(g, positions(g) | {free})
    assert [(p.rule, p.code) for p in problems] == [("G3", "pawn_unexpected")]


def test_sensing_follows_events() -> None:
    sensing = PawnSensing()
    assert sensing.to_wire() is None
    sensing.update(4, True)
    sensing.update(9, True)
    sensing.update(4, False)
    assert sensing.to_wire() == [9]
    with pytest.raises(ValueError):
        sensing.update(20, True)


def test_interpreter_takes_the_pawns_from_a_hub_snapshot() -> None:
    """An engine that starts after the pawns were placed reads them from the hub's
    snapshot (resync); a table without sensors (pawns None) checks nothing."""
    from glastonbury_table import start

    interp = start()
    game = interp.game
    assert game is not None
    target = game.pawns[game.seat]
    others = [game.pawns[s] for s in range(game.players) if s != game.seat]
    wrong = next(p for p in ((target + k) % 20 for k in (1, 2, 3)) if p not in others)
    interp.resync(interp.seen(), pawns=[wrong, *others])
    assert [(a.rule, a.code) for a in interp.active_alerts] == [("G4", "pawn_wrong_position")]
    interp.resync(interp.seen(), pawns=[target, *others])
    assert interp.active_alerts == []
    interp.resync(interp.seen())
    assert interp.pawn_sensing.sensed is None and interp.active_alerts == []

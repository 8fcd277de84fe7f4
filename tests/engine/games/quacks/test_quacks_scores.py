"""The breakdown per round (issue 23, "Scores and history"): `scoring.breakdown`, the typed
`QuacksScores` every public view carries as ``scores`` (`GameViews.scores`), on situations
built by hand: golden game 3 (a tie on VP broken by round 9's pot, Q25 D21), an exploded pot
that chose buying (Q20), a tie on VP and on the pot (shared)."""

from __future__ import annotations

import random

from golden_runner import play_round
from quacks_helpers import draw, new_game, run_to_round, stop_all
from test_quacks_golden import GAME_3

from engine.games import get
from engine.games.base import final_scores
from engine.games.quacks.rules import Buy, Choose, Game, RollDie, Spend, Stop
from engine.games.quacks.scoring import QuacksScores, breakdown
from engine.games.quacks.table import QuacksPublicView, QuacksSeatView, QuacksTable


def golden_3() -> Game:
    game = new_game(4)
    for number, r in enumerate(GAME_3, start=1):
        play_round(game, r, number)
    return game


def test_Q25_D21_the_ranking_is_most_vp_then_the_furthest_pot_of_round_9() -> None:
    out = breakdown(golden_3())
    assert out.over and out.winners == [1]
    assert out.tie_break and out.tied == [0, 1]  # 29 VP each; seat 1's pot went further
    assert [s.vp for s in out.seats] == [29, 29, 7, 7]
    assert [s.final_space for s in out.seats] == [10, 11, 11, 11]
    assert {s.seat: s.rank for s in out.seats} == {1: 1, 0: 2, 2: 3, 3: 3}  # 2, 3: all equal


def test_Q25_D21_seats_equal_on_vp_and_on_the_pot_share_the_first_rank() -> None:
    game = new_game(2)
    game.round = 9
    stop_all(game)
    game.apply(RollDie(0, 4))
    game.apply(RollDie(1, 4))
    game.apply(Spend(0, vp=1))
    game.apply(Spend(1, vp=1))
    out = breakdown(game)
    assert out.over and out.winners == [0, 1] and out.tie_break and out.tied == [0, 1]
    assert [s.rank for s in out.seats] == [1, 1]


def test_Q16_Q17_Q11_each_round_records_its_space_bonus_die_rat_tails_and_totals() -> None:
    out = breakdown(golden_3())
    first = out.seats[0].rounds[0]  # r1: space 6 (6 coins, 1 VP), the die's face 3: 2 VP
    assert (first.round, first.space, first.coins, first.space_vp) == (1, 6, 6, 1)
    assert first.bonus == ["vp2"] and first.card is None and not first.exploded
    assert (first.vp_gained, first.vp, first.rubies, first.droplet) == (3, 3, 1, 0)
    lagging = out.seats[2].rounds[1]  # r2: 0 VP against 3, one rat tail, no die
    assert lagging.rat_tails == 1 and lagging.bonus == []
    ninth = out.seats[1].rounds[8]  # r9: 2 VP for 10 coins, 1 for 2 rubies, die droplet
    assert ninth.bonus == ["droplet"] and ninth.vp == 29 and ninth.space == 11
    assert [len(s.rounds) for s in out.seats] == [9, 9, 9, 9]


def test_Q20_an_exploded_round_records_the_choice_of_buying_and_no_space_vp() -> None:
    game = new_game(2)
    for kind in ("white-3", "white-2", "white-2", "white-1"):  # space 9, a ruby
        draw(game, 0, kind)
    game.apply(Stop(1))
    game.apply(RollDie(1, 4))
    game.apply(Choose(0, "buy"))
    game.apply(Buy(0, ("orange-1",)))
    run_to_round(game, 2)
    row = breakdown(game).seats[0].rounds[0]
    assert row.exploded and row.reward == "buy" and row.ruby and row.vp_gained == 0
    assert breakdown(game).seats[1].rounds[0].bonus == ["ruby"]  # face 4 (Q7)


def test_the_views_carry_the_breakdown_typed_and_final_only_once_over() -> None:
    quacks = get("quacks")
    game = golden_3()
    table = QuacksTable(game.config, random.Random(0), game=game)
    view = table.public_view()
    typed = QuacksPublicView.model_validate(view)
    assert typed.over and typed.scores == breakdown(game)
    assert QuacksSeatView.model_validate({**table.seat_view(2), "seat": 2}).scores.over
    assert final_scores(quacks.views, view) == breakdown(game)
    assert isinstance(final_scores(quacks.views, typed), QuacksScores)
    running = QuacksTable(game.config, random.Random(0), game=new_game(4))
    assert running.public_view()["scores"]["over"] is False
    assert final_scores(quacks.views, running.public_view()) is None  # not over: no final
    assert quacks.to_wire(quacks.scores(game)) == view["scores"]

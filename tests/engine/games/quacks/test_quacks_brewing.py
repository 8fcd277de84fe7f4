"""Q9–Q16 and their Decisions: rounds, rats, drawing, explosion, the flask, Set 1 chips
when drawn, the scoring space (D8–D13, D27, N1, N2, N4, N17, N24, N27, N28)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from quacks_helpers import bag_only, chip_in, draw, give, new_game, run_until

from engine.games.quacks.rules import (
    Answer,
    ChooseOffer,
    Draw,
    Game,
    IllegalAction,
    Phase,
    Stop,
    UseFlask,
)
from engine.games.quacks.rules.catalogue import kind_of


def pot(game: Game, seat: int = 0) -> list[tuple[str, int]]:
    return [(kind_of(c), i) for c, i in game.players[seat].pot]


def test_Q9_nine_rounds_and_the_steps_in_rulebook_order() -> None:
    game = new_game(2)
    run_until(game, Phase.OVER, 9)
    assert game.round == 9 and game.winners
    assert [[h["round"] for h in p.history] for p in game.players] == [list(range(1, 10))] * 2


def test_Q9_D14_steps_are_A_to_F_then_G_H() -> None:
    names = [p.value for p in Phase]
    assert names.index("die") < names.index("chips") < names.index("rubies") < names.index("vp")
    assert names.index("vp") < names.index("buy") < names.index("spend") < names.index("cleanup")


def test_Q9_N24_round_6_adds_a_white_1_from_the_start_player() -> None:
    game = new_game(2)
    run_until(game, Phase.BREW, 6, face=4)
    assert game.start_player == 1
    assert "white-1-09" in game.players[1].bag and "white-1-10" in game.players[0].bag
    assert all(len(p.bag) == 10 for p in game.players)


def test_Q24_N28_the_start_player_passes_clockwise() -> None:
    game = new_game(3)
    seen = [game.start_player]
    for r in (2, 3, 4):
        run_until(game, Phase.BREW, r, face=4)
        seen.append(game.start_player)
    assert seen == [0, 1, 2, 0]


def test_Q10_D8_a_purple_card_acts_before_the_rats() -> None:
    game = new_game(2, deck=["FP2"])
    assert [p.droplet for p in game.players] == [1, 1] and game.players[0].start == 1
    draw(game, 0, "white-1")
    assert pot(game) == [("white-1", 2)]


def test_Q10_nine_rounds_use_nine_cards_never_reshuffled() -> None:
    game = new_game(2, deck=["FB4", "FB6", "FB1", "FB8", "FB11", "FB9", "FB5", "FP2", "FP4", "FP7"])
    run_until(game, Phase.OVER, 9, face=4)
    assert game.discard == ["FB4", "FB6", "FB1", "FB8", "FB11", "FB9", "FB5", "FP2", "FP4"]
    assert game.deck == ["FP7"]


def test_Q11_D9_rat_tails_move_the_start_and_the_first_chip_goes_from_the_rat_stone() -> None:
    game = new_game(2)
    game.players[0].vp, game.players[1].vp = 20, 16
    run_until(game, Phase.BREW, 2, face=4)
    assert [p.tails for p in game.players] == [0, 2]
    assert [p.start for p in game.players] == [0, 2]
    draw(game, 1, "white-1")
    assert pot(game, 1) == [("white-1", 3)]


def test_Q11_tied_leaders_get_no_tails_and_the_stone_is_clamped_at_52() -> None:
    game = new_game(3)
    game.players[0].vp = game.players[1].vp = 30
    game.players[2].droplet = 51
    run_until(game, Phase.BREW, 2, face=4)
    assert [p.tails for p in game.players][:2] == [0, 0]
    assert game.players[2].tails > 1 and game.players[2].start == 52


def test_Q12_a_chip_moves_its_value_from_the_last_chip() -> None:
    game = new_game(2)
    draw(game, 0, "orange-1")
    draw(game, 0, "white-2")
    draw(game, 0, "green-1")
    assert pot(game) == [("orange-1", 1), ("white-2", 3), ("green-1", 4)]
    assert game.scoring_space(0) == 5


def test_Q12_D10_N27_stopping_before_any_chip() -> None:
    game = new_game(2)
    game.apply(Stop(0))
    assert game.players[0].status == "stopped" and game.scoring_space(0) == 1
    game2 = new_game(2)
    game2.players[0].start = 52
    assert game2.scoring_space(0) == 53


def test_Q12_D11_chips_past_the_end_stay_on_52_and_score_the_spoon() -> None:
    game = new_game(2)
    game.players[0].start = 51
    draw(game, 0, "white-3")
    draw(game, 0, "white-1")
    assert pot(game) == [("white-3", 52), ("white-1", 52)]
    assert game.scoring_space(0) == 53 and Draw(0) in game.legal_actions(0)


def test_Q12_N2_an_empty_bag_stops_the_player() -> None:
    game = new_game(2)
    bag_only(game, 0, "orange-1")
    events = draw(game, 0, "orange-1")
    assert game.players[0].status == "stopped"
    assert any(e.code == "stopped" and e.get("forced") for e in events)


def test_Q13_white_values_above_7_explode_and_the_player_must_stop() -> None:
    game = new_game(2)
    for kind in ("white-3", "white-2", "white-2"):
        draw(game, 0, kind)
    assert game.white_sum(0) == 7 and game.players[0].status == "brewing"
    events = draw(game, 0, "white-1")
    assert game.players[0].status == "exploded" and any(e.code == "exploded" for e in events)
    assert pot(game)[-1] == ("white-1", 8)  # the chip that caused it stays
    with pytest.raises(IllegalAction) as err:
        game.apply(Draw(0))
    assert err.value.rule == "Q13"


def test_Q13_D27_living_in_luxury_sets_the_limit_to_9_and_limits_do_not_add() -> None:
    assert new_game(2, deck=["FB5"]).limit() == 9
    assert new_game(2, deck=["FB5"], explosion_limit=10).limit() == 10
    assert new_game(2, explosion_limit=8).limit() == 8


def test_Q14_the_flask_puts_back_a_last_white_that_did_not_explode() -> None:
    game = new_game(2)
    draw(game, 0, "orange-1")
    draw(game, 0, "white-3")
    assert UseFlask(0) in game.legal_actions(0)
    game.apply(UseFlask(0))
    assert pot(game) == [("orange-1", 1)] and game.white_sum(0) == 0
    assert not game.players[0].flask and chip_in(game, 0, "white-3")
    draw(game, 0, "white-2")
    with pytest.raises(IllegalAction) as err:
        game.apply(UseFlask(0))
    assert err.value.rule == "Q14"


def test_Q14_no_flask_after_an_explosion_or_on_a_coloured_chip() -> None:
    game = new_game(2)
    draw(game, 0, "green-1")
    assert UseFlask(0) not in game.legal_actions(0)
    for kind in ("white-3", "white-2", "white-2", "white-1"):
        draw(game, 0, kind)
    with pytest.raises(IllegalAction):
        game.apply(UseFlask(0))


def test_Q14_D12_the_flask_works_on_a_white_placed_from_a_blue_offer() -> None:
    game = new_game(2)
    bag_only(game, 0, "blue-1", "white-2", "orange-1")
    draw(game, 0, "blue-1")
    game.apply(Draw(0, chip_in(game, 0, "white-2")))
    game.apply(ChooseOffer(0, chip_in(game, 0, "white-2", "hand")))
    assert pot(game) == [("blue-1", 1), ("white-2", 3)]
    game.apply(UseFlask(0))
    assert pot(game) == [("blue-1", 1)]


def test_Q15_blue_offers_its_value_in_chips_one_may_be_placed_the_rest_go_back() -> None:
    game = new_game(2)
    bag_only(game, 0, "blue-2", "orange-1", "green-1", "white-1")
    draw(game, 0, "blue-2")
    assert game.legal_actions(0) == [Draw(0)]
    game.apply(Draw(0, chip_in(game, 0, "orange-1")))
    game.apply(Draw(0, chip_in(game, 0, "green-1")))
    offers = game.legal_actions(0)
    assert ChooseOffer(0, None) in offers and len(offers) == 3
    game.apply(ChooseOffer(0, chip_in(game, 0, "green-1", "hand")))
    assert pot(game) == [("blue-2", 2), ("green-1", 3)]
    assert sorted(kind_of(c) for c in game.players[0].bag) == ["orange-1", "white-1"]


def test_Q15_D13_a_short_bag_offers_what_is_there() -> None:
    game = new_game(2)
    bag_only(game, 0, "blue-4", "white-1")
    draw(game, 0, "blue-4")
    assert game.players[0].to_draw == 1


def test_Q15_red_moves_extra_for_oranges_already_in_the_pot() -> None:
    for oranges, bonus in ((1, 1), (2, 1), (3, 2)):
        game = new_game(2)
        bag_only(game, 0, *["orange-1"] * oranges, "red-2", "white-1")
        for _ in range(oranges):
            draw(game, 0, "orange-1")
        draw(game, 0, "red-2")
        game.apply(Answer(0, "red", True))
        assert pot(game)[-1] == ("red-2", oranges + 2 + bonus)


def test_Q15_red_without_orange_has_no_bonus_and_no_question() -> None:
    game = new_game(2)
    bag_only(game, 0, "red-4", "white-1")
    draw(game, 0, "red-4")
    assert pot(game) == [("red-4", 4)] and game.players[0].question is None


def test_N4_the_red_bonus_may_be_declined() -> None:
    game = new_game(2)
    bag_only(game, 0, "orange-1", "red-1", "white-1")
    draw(game, 0, "orange-1")
    draw(game, 0, "red-1")
    game.apply(Answer(0, "red", False))
    assert pot(game) == [("orange-1", 1), ("red-1", 2)]


def test_Q15_yellow_may_put_the_white_just_before_it_back() -> None:
    game = new_game(2)
    give(game, 0, "yellow-1")
    draw(game, 0, "white-2")
    draw(game, 0, "yellow-1")
    assert game.players[0].question == "yellow"
    game.apply(Answer(0, "yellow", True))
    assert pot(game) == [("yellow-1", 3)] and game.white_sum(0) == 0


def test_Q16_N1_brewing_is_simultaneous_and_order_free() -> None:
    game = new_game(2)
    assert game.actors() == [0, 1]
    draw(game, 1, "white-1")
    draw(game, 0, "orange-1")
    game.apply(Stop(1))
    assert game.phase is Phase.BREW
    game.apply(Stop(0))
    assert game.phase is not Phase.BREW


def test_N23_the_explosion_chance_counts_the_next_draw_only() -> None:
    game = new_game(2)
    for kind in ("white-2", "white-2", "white-1"):
        draw(game, 0, kind)
    # white sum 5 of 7, 6 chips left: only the white-3 explodes
    assert game.explosion_chance(0) == Fraction(1, 6)
    draw(game, 0, "white-1")
    draw(game, 0, "white-1")  # 7: any white explodes: white-1, white-3 of 4 chips left
    assert game.explosion_chance(0) == Fraction(2, 4)
    bag_only(game, 1)
    assert game.explosion_chance(1) == 0


def test_N17_the_droplet_stops_at_52() -> None:
    game = new_game(2)
    game.players[0].droplet = 52
    game._move_droplet(0, 3)
    assert game.players[0].droplet == 52

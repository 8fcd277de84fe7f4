"""Q27: the 24 fortune-teller cards and their Decisions (D22–D25, N5–N13, N30)."""

from __future__ import annotations

from quacks_helpers import (
    bag_only,
    chip_in,
    draw,
    give,
    new_game,
    run_to_round,
    run_until,
    stop_all,
)

from engine.games.quacks.rules import (
    Answer,
    Choose,
    ChooseOffer,
    Draw,
    Game,
    Phase,
    RollDie,
    Spend,
    Stop,
    UseFlask,
)
from engine.games.quacks.rules.catalogue import kind_of


def kinds(game: Game, seat: int) -> list[str]:
    return sorted(kind_of(c) for c in game.players[seat].bag)


def round_2(card: str, vp: tuple[int, int] = (0, 0)) -> Game:
    """A 2-player game at the start of round 2 with `card`, after VP `vp` in round 1."""
    game = new_game(2, deck=["FB9", card])
    game.players[0].vp, game.players[1].vp = vp
    run_to_round(game, 2, face=4)
    return game


def test_Q27_FP1_D22_a_black_chip_any_coloured_2_chip_of_a_book_out_or_3_rubies() -> None:
    game = new_game(2, deck=["FP1"])
    options = [a.option for a in game.legal_actions(0)]  # type: ignore[union-attr]
    assert options == ["black-1", "green-2", "blue-2", "red-2", "rubies"]  # no yellow in round 1
    game.apply(Choose(0, "black-1"))
    game.apply(Choose(1, "rubies"))
    assert "black-1" in kinds(game, 0) and game.players[1].rubies == 4


def test_Q27_FP2_the_droplet_moves_one_space() -> None:
    assert [p.droplet for p in new_game(2, deck=["FP2"]).players] == [1, 1]


def test_Q27_FP3_trade_a_ruby_for_a_1_chip_not_purple_or_black() -> None:
    game = new_game(2, deck=["FP3"])
    options = [a.option for a in game.legal_actions(0)]  # type: ignore[union-attr]
    assert options == ["none", "orange-1", "green-1", "blue-1", "red-1"]
    game.apply(Choose(0, "red-1"))
    game.apply(Choose(1, "none"))
    assert game.players[0].rubies == 0 and "red-1" in kinds(game, 0)
    assert game.players[1].rubies == 1


def test_Q27_FP4_FP5_D25_every_tied_player_gets_it() -> None:
    game = new_game(3, deck=["FP4"])
    assert [p.rubies for p in game.players] == [2, 2, 2]
    game = round_2("FP5", vp=(3, 0))
    assert kinds(game, 0).count("green-1") == 1 and kinds(game, 1).count("green-1") == 2


def test_Q27_FP6_four_vp_or_a_white_1_out_of_the_bag() -> None:
    game = new_game(2, deck=["FP6"])
    game.apply(Choose(0, "vp"))
    game.apply(Choose(1, "white"))
    assert game.players[0].vp == 4 and kinds(game, 1).count("white-1") == 3
    assert "white-1-05" in game.supply["white-1"]  # the lowest white-1 of seat 1's bag


def test_Q27_FP7_rat_tails_count_double() -> None:
    game = round_2("FP7", vp=(20, 16))
    assert [p.tails for p in game.players] == [0, 4] and game.players[1].start == 4


def test_Q27_FP8_N13_D23_the_lowest_sum_of_five_takes_a_blue_2_the_others_a_ruby() -> None:
    game = new_game(2, deck=["FP8"])
    for kind in ("white-1", "white-1", "white-1", "white-1", "orange-1"):
        game.apply(Draw(0, chip_in(game, 0, kind)))
    for kind in ("white-3", "white-2", "white-2", "orange-1", "green-1"):  # 9: cannot explode
        game.apply(Draw(1, chip_in(game, 1, kind)))
    assert game.phase is Phase.BREW and not game.players[1].pot
    assert "blue-2" in kinds(game, 0) and len(game.players[0].bag) == 10
    assert game.players[1].rubies == 2 and len(game.players[1].bag) == 9


def test_Q27_FP9_N11_give_up_tails_for_rubies() -> None:
    game = round_2("FP9", vp=(20, 16))
    assert game.legal_actions(1) == [Choose(1, "0"), Choose(1, "1"), Choose(1, "2")]
    assert game.legal_actions(0) == []
    game.apply(Choose(1, "2"))
    assert game.players[1].rubies == 2 + 2 and game.players[1].start == 0  # 1 + the die + 2


def test_Q27_FP10_N10_a_4_chip_or_1_vp_per_rat_tail() -> None:
    game = round_2("FP10", vp=(20, 16))
    game.apply(Choose(0, "green-4"))
    game.apply(Choose(1, "rats"))
    assert "green-4" in kinds(game, 0)
    assert game.players[1].vp == 18 and game.players[1].start == 2


def test_Q27_FP11_N2_droplet_two_or_a_purple_only_once_its_book_is_out() -> None:
    game = new_game(2, deck=["FP11"])
    assert [p.droplet for p in game.players] == [2, 2]  # round 1: one option, taken (N2)
    assert game.phase is Phase.BREW


def test_Q27_FP12_everyone_rolls_the_die() -> None:
    game = new_game(2, deck=["FP12"])
    assert game.legal_actions() == [RollDie(0), RollDie(1)]
    game.apply(RollDie(0, 3))
    game.apply(RollDie(1, 4))
    assert game.players[0].vp == 2 and game.players[1].rubies == 2 and game.phase is Phase.BREW


def test_Q27_FP13_N12_trade_a_drawn_chip_up_or_take_a_green_1() -> None:
    game = new_game(2, deck=["FP13"])
    assert game.actors() == [0]  # one player after the other
    for kind in ("green-1", "white-1", "white-1", "white-1"):
        game.apply(Draw(0, chip_in(game, 0, kind)))
    assert [a.option for a in game.legal_actions(0)] == ["none", "green-1-01"]  # type: ignore[union-attr]
    game.apply(Choose(0, "green-1-01"))
    assert "green-2" in kinds(game, 0) and "green-1" not in kinds(game, 0)
    assert "green-1-01" in game.supply["green-1"]
    for kind in ("white-1",) * 4:
        game.apply(Draw(1, chip_in(game, 1, kind)))
    assert kinds(game, 1).count("green-1") == 2 and game.phase is Phase.BREW


def test_Q27_FB1_N8_white_total_exactly_7_moves_the_droplet() -> None:
    game = new_game(2, deck=["FB1"])
    for kind in ("white-3", "white-2", "white-2"):
        draw(game, 0, kind)
    run_until(game, Phase.BREW, 2, face=4)
    assert [p.droplet for p in game.players] == [1, 0]


def test_Q27_FB2_N9_the_left_neighbour_of_an_exploded_pot_takes_a_2_chip() -> None:
    game = new_game(3, deck=["FB2"])
    for kind in ("white-3", "white-2", "white-2", "white-1"):
        draw(game, 2, kind)
    stop_all(game)
    assert game.phase is Phase.GIFTS and game.actors() == [0]
    game.apply(Choose(0, "red-2"))
    assert "red-2" in kinds(game, 0)


def test_Q27_FB3_N6_after_five_chips_start_again_once() -> None:
    game = new_game(2, deck=["FB3"])
    for kind in ("orange-1", "green-1", "white-1", "white-1", "white-2"):
        draw(game, 0, kind)
    assert game.legal_actions(0) == [Answer(0, "restart", True), Answer(0, "restart", False)]
    game.apply(Answer(0, "restart", True))
    assert not game.players[0].pot and len(game.players[0].bag) == 9
    for kind in ("orange-1", "green-1", "white-1", "white-1", "white-2"):
        draw(game, 0, kind)
    assert game.players[0].question is None  # only once


def test_Q27_FB3_D24_also_after_an_early_explosion_flask_stays_used() -> None:
    game = new_game(2, deck=["FB3"])
    draw(game, 0, "white-3")
    game.apply(UseFlask(0))
    for kind in ("white-3", "white-2", "white-2", "white-1"):
        draw(game, 0, kind)
    assert game.players[0].question == "restart"
    game.apply(Answer(0, "restart", True))
    assert game.players[0].status == "brewing" and not game.players[0].flask


def test_Q27_FB4_the_roller_rolls_twice() -> None:
    game = new_game(2, deck=["FB4"])
    draw(game, 0, "orange-1")
    stop_all(game)
    game.apply(RollDie(0, 3))
    assert game.legal_actions(0) == [RollDie(0)]
    game.apply(RollDie(0, 3))
    assert game.players[0].vp == 4


def test_Q27_FB5_the_limit_is_9() -> None:
    game = new_game(2, deck=["FB5"])
    for kind in ("white-3", "white-2", "white-2", "white-1"):
        draw(game, 0, kind)
    assert game.players[0].status == "brewing" and game.white_sum(0) == 8


def test_Q27_FB6_orange_moves_one_extra() -> None:
    game = new_game(2, deck=["FB6"])
    draw(game, 0, "orange-1")
    assert game.players[0].pot[0][1] == 2


def test_Q27_FB7_N7_N30_stopped_players_draw_five_and_may_place_one_without_exploding() -> None:
    game = new_game(2, deck=["FB7"])
    for kind in ("white-3", "white-2", "white-2"):
        draw(game, 0, kind)
    game.apply(Stop(0))
    for kind in ("white-3", "white-2", "white-2", "white-1"):
        draw(game, 1, kind)  # exploded: no strong ingredient
    assert game.phase is Phase.STRONG and game.actors() == [0]
    for kind in ("white-1", "white-1", "white-1", "white-1", "orange-1"):
        game.apply(Draw(0, chip_in(game, 0, kind)))
    game.apply(Choose(0, chip_in(game, 0, "white-1", "hand")))
    assert game.players[0].status == "stopped" and game.white_sum(0) == 8
    assert len(game.players[0].bag) == 5 and game.phase is Phase.DIE  # type: ignore[comparison-overlap]


def test_Q27_FB8_FB11_N8_a_ruby_space_gives_2_vp_or_an_extra_ruby() -> None:
    for card, vp, rubies in (("FB8", 2 + 1, 2), ("FB11", 1, 3)):
        game = new_game(2, deck=[card])
        for kind in ("white-3", "white-2", "white-2", "white-1"):
            draw(game, 0, kind)  # exploded on space 9, a ruby
        game.apply(Stop(1))
        game.apply(RollDie(1, 5))
        game.apply(Choose(0, "vp"))
        assert (game.players[0].vp, game.players[0].rubies) == (vp, rubies), card


def test_Q27_FB9_flasks_are_refilled_at_the_end_of_the_round() -> None:
    game = new_game(2, deck=["FB9"])
    draw(game, 0, "white-1")
    game.apply(UseFlask(0))
    run_until(game, Phase.BREW, 2, face=4)
    assert game.players[0].flask


def test_Q27_FB10_N5_the_first_white_may_go_back_once() -> None:
    game = new_game(2, deck=["FB10"])
    draw(game, 0, "orange-1")
    draw(game, 0, "white-3")
    game.apply(Answer(0, "stirred", True))
    assert game.white_sum(0) == 0 and len(game.players[0].pot) == 1
    draw(game, 0, "white-3")
    assert game.players[0].question is None and game.white_sum(0) == 3


def test_Q27_N2_spend_is_not_asked_with_fewer_than_two_rubies() -> None:
    game = new_game(2, start_rubies=0)
    stop_all(game)
    game.apply(RollDie(0, 1))
    game.apply(RollDie(1, 1))
    assert game.round == 2 and Spend(0) not in game.legal_actions(0)


def test_Q15_D13_bag_only_helper_keeps_chips_conserved() -> None:
    game = new_game(2)
    before = game.chip_count()
    bag_only(game, 0, "red-4")
    assert game.chip_count() == before


def test_N21_the_chips_own_action_comes_before_the_FB3_offer() -> None:
    game = new_game(2, deck=["FB3"])
    give(game, 0, "blue-1")
    for kind in ("orange-1", "green-1", "white-1", "white-1", "blue-1"):
        draw(game, 0, kind)
    assert game.players[0].question == "offer" and game.legal_actions(0) == [Draw(0)]
    game.apply(Draw(0, chip_in(game, 0, "white-2")))
    game.apply(ChooseOffer(0, None))
    assert game.players[0].question == "restart"

"""Q17–Q25 and their Decisions: the bonus die, chip actions, rubies, the exploded choice,
VP, buying, spending rubies, clean-up, round 9 and the tie-break (D15–D21, N14, N15,
N18–N20, N25, N26)."""

from __future__ import annotations

import pytest
from quacks_helpers import bag_only, chip_in, draw, give, new_game, run_until, stop_all

from engine.games.quacks.rules import Buy, Choose, Game, IllegalAction, Phase, RollDie, Spend, Stop
from engine.games.quacks.rules.catalogue import kind_of


def explode(game: Game, seat: int) -> None:
    """white 3, 2, 2, 1 from the start bag: positions 3, 5, 7, 8, scoring space 9 (a ruby)."""
    for kind in ("white-3", "white-2", "white-2", "white-1"):
        draw(game, seat, kind)
    assert game.players[seat].status == "exploded"


def test_Q17_the_furthest_pot_not_exploded_rolls_the_die() -> None:
    game = new_game(2)
    draw(game, 0, "orange-1")
    stop_all(game)
    assert game.phase is Phase.DIE and game.actors() == [0]
    events = game.apply(RollDie(0, 3))
    assert [e.get("result") for e in events if e.code == "die_rolled"] == ["vp2"]
    assert game.players[0].vp == 2


def test_Q17_D15_tied_players_all_roll_and_nobody_rolls_if_all_exploded() -> None:
    game = new_game(3)
    stop_all(game)
    assert game.actors() == [0, 1, 2] and all(a.__class__ is RollDie for a in game.legal_actions())
    game = new_game(2)
    explode(game, 0)
    explode(game, 1)
    assert game.phase is not Phase.DIE and game.phase is Phase.RUBIES


def test_Q17_an_exploded_pot_further_on_does_not_roll() -> None:
    game = new_game(2)
    explode(game, 0)
    game.apply(Stop(1))
    assert game.actors() == [1] and game.legal_actions() == [RollDie(1)]


def test_Q7_die_faces_ruby_droplet_orange() -> None:
    game = new_game(3)
    stop_all(game)
    game.apply(RollDie(0, 4))
    game.apply(RollDie(1, 5))
    game.apply(RollDie(2, 6))
    assert game.players[0].rubies == 2 and game.players[1].droplet == 1
    assert sum(kind_of(c) == "orange-1" for c in game.players[2].bag) == 2


def test_Q18_green_gives_a_ruby_when_last_or_next_to_last() -> None:
    game = new_game(2)
    give(game, 0, "green-2")
    draw(game, 0, "white-1")
    draw(game, 0, "green-1")
    draw(game, 0, "green-2")
    stop_all(game)
    events = game.apply(RollDie(0, 1))
    assert [e.get("rubies") for e in events if e.code == "green"] == [2]


def test_Q18_a_green_earlier_than_the_last_two_chips_gives_nothing() -> None:
    game = new_game(2)
    draw(game, 0, "green-1")
    draw(game, 0, "white-1")
    draw(game, 0, "orange-1")
    stop_all(game)
    events = game.apply(RollDie(0, 1))
    assert not [e for e in events if e.code == "green"]


def test_Q18_N15_purple_tiers_and_a_lower_tier_may_be_chosen() -> None:
    game = new_game(2)
    give(game, 0, "purple-1", "purple-1", "purple-1")
    for _ in range(3):
        draw(game, 0, "purple-1")
    stop_all(game)
    game.apply(RollDie(0, 4))  # a ruby: 2
    assert game.legal_actions(0) == [Choose(0, "3"), Choose(0, "2"), Choose(0, "1")]
    game.apply(Choose(0, "2"))
    assert game.players[0].vp == 1 and game.players[0].rubies == 3


def test_Q18_purple_tier_3_gives_2_vp_and_a_droplet_step() -> None:
    game = new_game(2)
    give(game, 0, *["purple-1"] * 4)
    for _ in range(4):
        draw(game, 0, "purple-1")
    stop_all(game)
    game.apply(RollDie(0, 4))
    game.apply(Choose(0, "3"))
    assert game.players[0].vp == 2 and game.players[0].droplet == 1


def blacks(players: int, counts: list[int]) -> list[tuple[int, int]]:
    game = new_game(players, start_rubies=0)
    for seat, n in enumerate(counts):
        give(game, seat, *["black-1"] * n)
        for _ in range(n):
            draw(game, seat, "black-1")
    stop_all(game)
    while game.phase is Phase.DIE:
        seat = game.actors()[0]
        game.apply(RollDie(seat, 1))
    return [(p.droplet, p.rubies) for p in game.players]


def test_Q18_Q26_black_with_two_players_as_many_or_more() -> None:
    assert blacks(2, [1, 1]) == [(1, 0), (1, 0)]
    assert blacks(2, [2, 1]) == [(1, 1), (0, 0)]


def test_N14_no_black_chip_gains_nothing() -> None:
    assert blacks(2, [0, 0]) == [(0, 0), (0, 0)]


def test_Q18_D16_black_neighbours_with_four_and_three_players() -> None:
    assert blacks(4, [1, 0, 0, 1]) == [(1, 0), (0, 0), (0, 0), (1, 0)]
    assert blacks(4, [2, 1, 0, 1]) == [(1, 1), (1, 0), (0, 0), (1, 0)]
    assert blacks(3, [2, 1, 1]) == [(1, 1), (0, 0), (0, 0)]


def test_Q19_a_ruby_on_the_scoring_space_even_when_exploded() -> None:
    game = new_game(2, start_rubies=0)
    explode(game, 0)
    game.apply(Stop(1))
    game.apply(RollDie(1, 1))
    assert game.scoring_space(0) == 9 and game.players[0].rubies == 1


def test_Q20_N20_the_exploded_player_chooses_vp_or_buying_after_the_rubies() -> None:
    game = new_game(2)
    explode(game, 0)
    game.apply(Stop(1))
    game.apply(RollDie(1, 4))
    assert game.phase is Phase.RUBIES and game.players[0].rubies == 2  # C came first
    assert game.legal_actions(0) == [Choose(0, "vp"), Choose(0, "buy")]
    game.apply(Choose(0, "vp"))
    assert game.players[0].vp == 1  # space 9: 1 VP, then no buying
    assert game.phase is Phase.SPEND or game.asks.get(0) is None or game.asks[0].kind != "buy"  # type: ignore[comparison-overlap]


def test_Q20_choosing_to_buy_gives_no_vp() -> None:
    game = new_game(2)
    explode(game, 0)
    game.apply(Stop(1))
    game.apply(RollDie(1, 4))
    game.apply(Choose(0, "buy"))
    assert game.phase is Phase.BUY and game.players[0].vp == 0
    game.apply(Buy(0, ("orange-1",)))
    assert sum(kind_of(c) == "orange-1" for c in game.players[0].bag) == 2


def test_Q21_victory_points_of_the_scoring_space() -> None:
    game = new_game(2)
    for kind in ("orange-1", "white-3", "white-2", "green-1"):
        draw(game, 0, kind)
    stop_all(game)
    assert game.scoring_space(0) == 8
    game.apply(RollDie(0, 4))
    assert game.players[0].vp == 1


def buying_game(coins_space_kinds: tuple[str, ...] = ("orange-1", "white-3", "white-2", "green-1",
                                                    "white-2")) -> Game:
    """Seat 0 ends on space 10 (10 coins) and is asked to buy."""
    game = new_game(2)
    for kind in coins_space_kinds:
        draw(game, 0, kind)
    stop_all(game)
    game.apply(RollDie(0, 5))
    assert game.phase is Phase.BUY and game.actors() == [0]
    return game


def test_Q22_N25_buy_up_to_two_chips_of_different_colours_within_the_coins() -> None:
    game = buying_game()
    assert game.cat.track[game.scoring_space(0)].coins == 10
    legal = game.legal_actions(0)
    assert Buy(0, ("orange-1", "blue-1")) in legal and Buy(0, ("green-1", "blue-1")) in legal
    assert Buy(0, ("orange-1", "red-1")) in legal  # 3 + 6 = 9
    assert Buy(0, ("orange-1", "blue-2")) not in legal  # 3 + 10 = 13
    game.apply(Buy(0, ("green-2",)))
    assert "green-2-01" in game.players[0].bag


def test_Q22_D17_buying_nothing_is_allowed() -> None:
    game = buying_game()
    game.apply(Buy(0, ()))
    game.apply(Spend(0))  # the green gave a second ruby
    assert game.round == 2 and len(game.players[0].bag) == 9


def test_Q22_two_chips_of_one_colour_are_refused() -> None:
    game = buying_game()
    with pytest.raises(IllegalAction) as err:
        game.apply(Buy(0, ("green-1", "green-2")))
    assert err.value.rule == "Q22" and "different colours" in err.value.message


def test_Q22_three_chips_and_white_chips_are_refused() -> None:
    game = buying_game()
    for chips in (("orange-1", "green-1", "blue-1"), ("white-1",)):
        with pytest.raises(IllegalAction) as err:
            game.apply(Buy(0, chips))
        assert err.value.rule == "Q22"


def test_Q22_N3_an_empty_supply_cannot_be_bought() -> None:
    game = buying_game()
    game.supply["blue-1"].clear()
    assert not [a for a in game.legal_actions(0) if "blue-1" in a.chips]  # type: ignore[union-attr]
    with pytest.raises(IllegalAction) as err:
        game.apply(Buy(0, ("blue-1",)))
    assert err.value.rule == "Q22"


def test_Q22_buying_goes_from_the_start_player_clockwise() -> None:
    game = new_game(3, start_player=1)
    for seat in range(3):
        draw(game, seat, "orange-1")
        draw(game, seat, "green-1")
    stop_all(game)
    for seat in (1, 2, 0):
        game.apply(RollDie(seat, 5))
    assert game.phase is Phase.BUY and game.actors() == [1]


def test_Q23_two_rubies_move_the_droplet_or_refill_the_flask() -> None:
    game = buying_game()
    game.players[0].rubies = 5
    game.players[0].flask = False
    game.apply(Buy(0, ()))
    assert game.phase is Phase.SPEND
    assert Spend(0, droplet=1, refill=True) in game.legal_actions(0)
    assert Spend(0, droplet=2, refill=True) not in game.legal_actions(0)
    game.apply(Spend(0, droplet=1, refill=True))
    assert game.players[0].flask and game.players[0].rubies == 1
    assert game.players[0].droplet == 2  # 1 from the die, 1 bought


def test_Q23_N19_no_refill_for_a_full_flask() -> None:
    game = buying_game()
    game.players[0].rubies = 4
    game.apply(Buy(0, ()))
    with pytest.raises(IllegalAction) as err:
        game.apply(Spend(0, refill=True))
    assert err.value.rule == "Q23"


def test_Q23_D18_rubies_are_not_spent_while_brewing() -> None:
    game = new_game(2)
    game.players[0].rubies = 4
    with pytest.raises(IllegalAction) as err:
        game.apply(Spend(0, droplet=1))
    assert err.value.rule == "Q23"


def test_Q24_clean_up_puts_every_chip_back_and_resets_the_rat_stone() -> None:
    game = new_game(2)
    game.players[1].vp = 10
    run_until(game, Phase.BREW, 2, face=4)
    draw(game, 0, "white-1")
    assert game.players[0].start > 0
    run_until(game, Phase.BREW, 3, face=4)
    assert all(not p.pot and len(p.bag) == 9 for p in game.players)


def nine(game: Game) -> Game:
    game.round = 9
    return game


def test_Q25_D19_N18_round_9_coins_and_rubies_become_vp() -> None:
    game = nine(new_game(2))
    for kind in ("orange-1", "green-1", "white-3", "white-2", "white-2"):
        draw(game, 0, kind)
    stop_all(game)
    assert game.scoring_space(0) == 10
    game.apply(RollDie(0, 4))
    assert game.players[0].rubies == 2 and game.players[0].vp == 2
    assert game.legal_actions(0) == [Spend(0, coins_vp=k) for k in range(3)]
    game.apply(Spend(0, coins_vp=2))
    with pytest.raises(IllegalAction) as err:
        game.apply(Spend(0, droplet=1))
    assert err.value.rule == "Q25"
    game.apply(Spend(0, vp=1))
    assert game.is_over() and game.players[0].vp == 5 and game.winners == (0,)


def test_Q25_D21_a_tie_goes_to_the_furthest_pot_in_round_9_else_shared() -> None:
    game = nine(new_game(2))
    draw(game, 1, "orange-1")
    stop_all(game)
    game.apply(RollDie(1, 4))
    game.apply(Spend(1, vp=0))
    assert [p.vp for p in game.players] == [0, 0] and game.winners == (1,)
    game = nine(new_game(2))
    stop_all(game)
    game.apply(RollDie(0, 4))
    game.apply(RollDie(1, 4))
    game.apply(Spend(0, vp=1))
    game.apply(Spend(1, vp=1))
    assert game.winners == (0, 1)


def test_Q25_the_game_ends_after_round_9() -> None:
    game = new_game(2)
    run_until(game, Phase.OVER, 9)
    assert game.is_over() and game.legal_actions() == []
    with pytest.raises(IllegalAction) as err:
        game.apply(Stop(0))
    assert err.value.rule == "Q25"


def test_N26_rat_tails_are_counted_after_the_purple_cards_vp() -> None:
    game = new_game(2, deck=["FB9", "FP6"])
    game.players[0].vp, game.players[1].vp = 20, 17
    run_until(game, Phase.FORTUNE, 2, face=4)
    game.apply(Choose(0, "white"))
    game.apply(Choose(1, "vp"))
    assert game.players[1].vp == 21
    assert [p.tails for p in game.players] == [1, 0]


def test_Q28_chips_gained_come_from_the_supply_none_left_gives_nothing() -> None:
    game = new_game(3)
    game.supply["orange-1"].clear()
    stop_all(game)
    events = game.apply(RollDie(0, 6))
    assert [e.code for e in events if e.seat == 0][:2] == ["die_rolled", "supply_empty"]
    assert len(game.players[0].bag) == 9
    bag_only(game, 1)
    assert chip_in is not None


def test_Q25_D20_round_9_draws_are_accepted_in_any_order() -> None:
    game = nine(new_game(3))
    draw(game, 2, "white-1")
    draw(game, 0, "white-1")
    draw(game, 2, "orange-1")
    draw(game, 1, "green-1")
    assert [len(p.pot) for p in game.players] == [1, 1, 2]


def test_Q31_house_rules_are_options_of_the_configuration() -> None:
    from engine.games.quacks.rules import InvalidSetup

    game = new_game(2, explosion_limit=9, start_rubies=0)
    for kind in ("white-3", "white-2", "white-2", "white-1"):
        draw(game, 0, kind)
    assert game.players[0].status == "brewing" and game.players[0].rubies == 0
    with pytest.raises(InvalidSetup) as err:
        new_game(2, explosion_limit=0)
    assert err.value.rule == "Q13"

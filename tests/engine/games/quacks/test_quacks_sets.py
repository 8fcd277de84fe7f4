"""Q30: ingredient books of Sets 3 and 4 whose effects are clear enough (blue 3/4, red 3,
yellow 3/4, purple 3, green 3), chosen per colour (Q3: books combine freely); the rest are
data only and refused."""

from __future__ import annotations

from fractions import Fraction

import pytest
from quacks_helpers import draw, give, new_game, stop_all

from engine.games.quacks.rules import Game, InvalidSetup, RollDie
from engine.games.quacks.rules.catalogue import kind_of
from engine.games.quacks.rules.observer import public_view


def pot(game: Game, seat: int = 0) -> list[tuple[str, int]]:
    return [(kind_of(c), i) for c, i in game.players[seat].pot]


def test_Q30_books_combine_and_unbuilt_ones_are_refused() -> None:
    game = new_game(2, books=(("blue", 3), ("red", 3)))
    assert game.price("blue-4") == 14 and game.price("red-4") == 15 and game.price("green-4") == 14
    assert public_view(game)["books"]["blue"] == 3
    for books in ((("green", 2),), (("purple", 4),), (("red", 4),), (("white", 3),)):
        with pytest.raises(InvalidSetup) as err:
            new_game(2, books=books)
        assert err.value.rule in ("Q30", "Q3")
    assert new_game(2, ingredient_set=3).price("purple-1") == 10  # all of Set 3 is built


def test_Q30_set_3_blue_landing_on_a_ruby_gives_a_ruby_and_no_offer() -> None:
    game = new_game(2, books=(("blue", 3),))
    give(game, 0, "blue-4")
    draw(game, 0, "orange-1")
    draw(game, 0, "blue-4")
    assert pot(game) == [("orange-1", 1), ("blue-4", 5)] and game.players[0].rubies == 2
    assert game.players[0].question is None and game.players[0].to_draw == 0


def test_Q30_set_4_blue_landing_on_a_ruby_gives_its_value_in_vp() -> None:
    game = new_game(2, books=(("blue", 4),))
    give(game, 0, "blue-4")
    draw(game, 0, "orange-1")
    draw(game, 0, "blue-4")
    assert game.players[0].vp == 4


def test_Q30_set_3_red_adds_the_white_just_before_it() -> None:
    game = new_game(2, books=(("red", 3),))
    give(game, 0, "red-2", "red-1")
    draw(game, 0, "orange-1")  # no orange bonus in Set 3
    draw(game, 0, "red-1")
    draw(game, 0, "white-3")
    draw(game, 0, "red-2")
    assert pot(game) == [("orange-1", 1), ("red-1", 2), ("white-3", 5), ("red-2", 10)]


def test_Q30_D27_set_3_yellow_raises_the_seats_own_limit() -> None:
    game = new_game(2, books=(("yellow", 3),))
    give(game, 0, "yellow-1")
    assert game.limit(0) == 7
    draw(game, 0, "yellow-1")
    assert game.limit(0) == 8 and game.limit(1) == 7
    for kind in ("white-3", "white-2", "white-2", "white-1"):
        draw(game, 0, kind)
    assert game.players[0].status == "brewing" and game.white_sum(0) == 8
    assert game.explosion_chance(0) == Fraction(3, 5)  # 3 white 1s, the orange, the green
    assert public_view(game)["seats"][0]["limit"] == 8


def test_Q30_set_4_yellow_moves_1_2_3_extra() -> None:
    game = new_game(2, books=(("yellow", 4),))
    give(game, 0, "yellow-1", "yellow-1", "yellow-1", "yellow-1")
    for _ in range(4):
        draw(game, 0, "yellow-1")
    assert [i for _, i in pot(game)] == [2, 5, 9, 13]
    assert game.players[0].question is None  # no white is put back in Set 4


def test_Q30_set_3_purple_scores_by_the_space_of_each_purple() -> None:
    game = new_game(2, books=(("purple", 3),))
    game.players[0].start = 8
    give(game, 0, "purple-1", "purple-1")
    draw(game, 0, "purple-1")  # 9: 0 VP
    draw(game, 0, "purple-1")  # 10: 1 VP
    stop_all(game)
    game.apply(RollDie(0, 4))
    assert game.phase.value == "buy"
    assert game.players[0].vp == 0 + 1 + 2  # purples on 9 and 10, then D: space 11's 2 VP


def test_Q30_set_3_green_moves_the_last_chip_when_the_whites_make_exactly_7() -> None:
    game = new_game(2, books=(("green", 3),))
    give(game, 0, "green-4")
    for kind in ("green-4", "green-1", "white-3", "white-2", "white-2"):
        draw(game, 0, kind)
    assert pot(game)[-1] == ("white-2", 12)
    stop_all(game)
    game.apply(RollDie(0, 4))
    assert pot(game)[-1] == ("white-2", 17) and game.scoring_space(0) == 18
    assert game.players[0].rubies == 2  # the die only: no Set 1 green ruby

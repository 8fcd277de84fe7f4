"""Scoring (G10) and the recipe variant (G11): engine.games.glastonbury.rules.scoring."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations_with_replacement

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.games.glastonbury.rules.cards import (
    CARDS,
    FAMILIES,
    FAMILY_COLOUR,
    IMMUTOS,
    INGREDIENTS,
    PLAYER_COLOURS,
    RECIPE_A,
    RECIPES,
    SPELL_CARDS,
)
from engine.games.glastonbury.rules.errors import RulesError
from engine.games.glastonbury.rules.scoring import (
    REASON_CODES,
    GameScore,
    ReasonCode,
    ReasonParams,
    RecipeScore,
    ScoringError,
    SeatCards,
    SeatScore,
    cauldron_points,
    score_cauldron,
    score_game,
    score_totals,
    second_seat,
)


def points(colour: str, *cauldron: str) -> int:
    return score_cauldron(colour, cauldron)[0]


def recipe(score: GameScore, seat: int, recipe_id: str) -> RecipeScore:
    return next(r for r in score.seat(seat).recipes if r.recipe == recipe_id)


def said(result: RecipeScore) -> tuple[str, bool, int, str]:
    """A recipe's result as a person reads it (the reason in English)."""
    return result.recipe, result.achieved, result.points, result.reason


def seat(
    n: int, colour: str, *cauldron: str, spells: tuple[str, ...] = (), recipes: tuple[str, ...] = ()
) -> SeatCards:
    return SeatCards(n, colour, tuple(cauldron), spells, recipes)


# --- G10: families ------------------------------------------------------------------------


def test_G10_lone_own_colour_card_scores_double_negative() -> None:
    # Worked example (blue player): a lone blue 4 scores -8.
    total, families, assignment = score_cauldron("blue", ["blue-a-4"])
    assert total == -8
    (family,) = families
    assert (family.family, family.counted, family.base, family.doubled, family.points) == (
        "blue-a",
        1,
        -4,
        True,
        -8,
    )
    assert assignment == ()


def test_G10_worked_example_lone_blue_four_with_immuto_scores_zero() -> None:
    total, families, assignment = score_cauldron("blue", ["blue-a-4", "immuto-1"])
    assert total == 0
    assert assignment == (("immuto-1", "blue-a"),)
    assert families[0].immutos == ("immuto-1",) and families[0].counted == 2


def test_G10_worked_example_two_green_cards_score_zero_and_seven_with_immuto() -> None:
    assert points("blue", "green-a-3", "green-a-4") == 0
    total, families, assignment = score_cauldron("blue", ["green-a-3", "immuto-2", "green-a-4"])
    assert total == 7
    assert assignment == (("immuto-2", "green-a"),)
    assert (families[0].counted, families[0].base, families[0].bonus) == (3, 7, 0)


def test_G10_worked_example_three_orange_cards_with_immuto_gain_the_bonus() -> None:
    assert points("blue", "orange-a-1", "orange-a-2", "orange-a-3") == 6
    total, families, _ = score_cauldron(
        "blue", ["orange-a-1", "orange-a-2", "immuto-1", "orange-a-3"]
    )
    assert total == 6 + 5
    assert (families[0].counted, families[0].bonus) == (4, 5)


@pytest.mark.parametrize(
    ("cauldron", "expected"),
    [
        (["violet-b-3"], -3),
        (["violet-b-3", "violet-b-1"], 0),
        (["violet-b-3", "violet-b-1", "violet-b-4"], 8),
        (["violet-b-3", "violet-b-1", "violet-b-4", "violet-b-2"], 10 + 5),
    ],
)
def test_G10_family_points_by_number_of_cards(cauldron: list[str], expected: int) -> None:
    assert points("yellow", *cauldron) == expected


def test_G10_own_colour_doubles_values_but_not_the_bonus() -> None:
    full_red = ["red-a-1", "red-a-2", "red-a-3", "red-a-4"]
    assert points("red", *full_red) == 2 * 10 + 5
    assert points("blue", *full_red) == 10 + 5
    assert points("red", "red-b-2", "red-b-3", "red-b-4") == 18
    assert points("red", "red-b-2", "red-b-3") == 0


def test_G10_families_are_scored_separately_and_listed_in_catalogue_order() -> None:
    total, families, _ = score_cauldron(
        "green", ["grey-b-2", "yellow-a-1", "green-b-1", "green-b-2", "green-b-4", "grey-b-1"]
    )
    assert [f.family for f in families] == ["yellow-a", "green-b", "grey-b"]
    assert [f.points for f in families] == [-1, 14, 0]
    assert total == 13
    assert families[1].cards == ("green-b-1", "green-b-2", "green-b-4")


def test_G10_only_ingredients_score_spells_do_not() -> None:
    plain = score_game([seat(0, "blue", "orange-a-2"), seat(1, "red")])
    with_spells = score_game(
        [seat(0, "blue", "orange-a-2", spells=("accio-1", "vanesco-3")), seat(1, "red")]
    )
    assert plain.seat(0).total == with_spells.seat(0).total == -2
    assert points("blue") == 0


def test_G10_two_immutos_join_the_same_family_when_that_scores_best() -> None:
    total, families, assignment = score_cauldron("blue", ["blue-a-4", "immuto-2", "immuto-1"])
    assert total == 8  # three cards: +4, doubled
    assert assignment == (("immuto-1", "blue-a"), ("immuto-2", "blue-a"))
    assert families[0].immutos == ("immuto-1", "immuto-2")


def test_G10_two_immutos_join_different_families_when_that_scores_best() -> None:
    cauldron = ["orange-a-3", "orange-a-4", "violet-a-3", "violet-a-4", "immuto-1", "immuto-2"]
    total, families, assignment = score_cauldron("blue", cauldron)
    assert total == 7 + 7  # together in one family: 7 + 5 + 0 = 12
    assert assignment == (("immuto-1", "orange-a"), ("immuto-2", "violet-a"))
    assert [f.counted for f in families] == [3, 3]


def test_G10_fifth_card_adds_nothing() -> None:
    full = ["orange-b-1", "orange-b-2", "orange-b-3", "orange-b-4"]
    total, families, assignment = score_cauldron("blue", [*full, "immuto-1"])
    assert total == points("blue", *full) == 15
    assert assignment == (("immuto-1", "orange-b"),)
    assert (families[0].counted, families[0].bonus) == (4, 5)
    # Three cards and two Immutos: five cards, four counted, one bonus.
    assert points("blue", *full[:3], "immuto-1", "immuto-2") == 6 + 5


def test_G10_immuto_goes_where_it_helps_most() -> None:
    # A full family gains nothing from an Immuto; the lone -4 gains 4.
    full = ["orange-b-1", "orange-b-2", "orange-b-3", "orange-b-4"]
    total, _, assignment = score_cauldron("blue", [*full, "white-a-4", "immuto-1"])
    assert total == 15
    assert assignment == (("immuto-1", "white-a"),)


def test_G10_lone_immuto_in_an_empty_cauldron_is_listed() -> None:
    total, families, assignment = score_cauldron("yellow", ["immuto-1"])
    assert total == 0
    assert assignment == (("immuto-1", FAMILIES[0]),)
    assert families[0].cards == () and families[0].immutos == ("immuto-1",)
    assert families[0].points == 0


def test_G10_immuto_ties_prefer_families_holding_cards_then_catalogue_order() -> None:
    # Both full families gain 0 from the Immuto, as does any empty family: the earliest
    # family holding cards wins.
    violet = ["violet-a-1", "violet-a-2", "violet-a-3", "violet-a-4"]
    orange = ["orange-b-1", "orange-b-2", "orange-b-3", "orange-b-4"]
    _, _, assignment = score_cauldron("blue", [*violet, *orange, "immuto-1"])
    assert assignment == (("immuto-1", "orange-b"),)


def test_G10_immuto_ties_prefer_the_colour_of_the_owners_recipe_A() -> None:
    orange = ["orange-b-1", "orange-b-2", "orange-b-3", "orange-b-4"]
    game = score_game(
        [seat(0, "blue", *orange, "immuto-1", recipes=("A-grey",)), seat(1, "red", "red-a-1")]
    )
    me = game.seat(0)
    assert me.immuto_assignment == (("immuto-1", "grey-a"),)
    assert me.ingredient_points == 15  # never traded against the recipe
    assert said(recipe(game, 0, "A-grey")) == (
        "A-grey", True, 1, "most grey cards: 1 vs 0; 1 card × 1 = 1"
    )


def test_G10_highest_total_wins() -> None:
    game = score_game([seat(0, "blue", "orange-a-1"), seat(1, "red", "orange-a-2")])
    assert game.winners == (0,)
    assert [s.total for s in game.seats] == [-1, -2]


def test_G10_ties_for_the_highest_total_are_shared() -> None:
    game = score_game(
        [
            seat(0, "blue", "orange-a-1", "orange-a-2"),
            seat(1, "red", "violet-a-3", "violet-a-4"),
            seat(2, "green", "white-a-4"),
        ]
    )
    assert game.winners == (0, 1)
    assert game.to_json()["winners"] == [0, 1]


def test_G10_second_player_bonus_is_off_by_default() -> None:
    game = score_game([seat(0, "blue"), seat(1, "red")])
    assert [s.second_player_bonus for s in game.seats] == [0, 0]
    assert game.winners == (0, 1)


def test_G10_second_player_bonus_goes_to_the_seat_after_the_first_player() -> None:
    seats = [seat(0, "blue"), seat(1, "red"), seat(2, "green")]
    game = score_game(seats, second_player_bonus=True)
    assert [s.second_player_bonus for s in game.seats] == [0, 2, 0]
    assert game.winners == (1,)
    assert game.seat(1).total == 2
    wrapped = score_game(seats, second_player_bonus=True, first_seat=2)
    assert [s.second_player_bonus for s in wrapped.seats] == [2, 0, 0]


def test_G10_second_seat_follows_seat_numbers_clockwise() -> None:
    assert second_seat([0, 1, 2, 3], 3) == 0
    assert second_seat([0, 1, 2, 3], 1) == 2
    assert second_seat([0, 2], 2) == 0


def test_G10_second_player_bonus_with_an_unknown_first_seat_is_refused() -> None:
    with pytest.raises(ScoringError) as info:
        score_game([seat(0, "blue"), seat(1, "red")], second_player_bonus=True, first_seat=3)
    assert info.value.rule == "G10"
    assert "first_seat 3" in str(info.value)


def test_G10_seats_are_reported_by_seat_number_with_a_full_breakdown() -> None:
    game = score_game(
        [seat(1, "red", "red-a-1", "immuto-1"), seat(0, "blue", "blue-b-2", "blue-b-3", "blue-b-4")]
    )
    assert [s.seat for s in game.seats] == [0, 1]
    data = game.to_json()
    assert data["seats"][0]["total"] == 18
    assert data["seats"][1] == {
        "seat": 1,
        "colour": "red",
        "total": 0,
        "ingredient_points": 0,
        "families": [
            {
                "family": "red-a",
                "name": "Finger bones",
                "colour": "red",
                "cards": ["red-a-1"],
                "immutos": ["immuto-1"],
                "counted": 2,
                "base": 0,
                "doubled": True,
                "bonus": 0,
                "points": 0,
            }
        ],
        "immuto_assignment": {"immuto-1": "red-a"},
        "recipes": [],
        "second_player_bonus": 0,
    }


# --- G11: recipes -------------------------------------------------------------------------


def test_G11_recipe_A_two_players_one_point_per_card() -> None:
    game = score_game(
        [
            seat(0, "blue", "orange-a-1", "orange-a-2", "orange-b-4", recipes=("A-orange",)),
            seat(1, "red", "orange-b-1", "orange-b-2"),
        ]
    )
    assert said(recipe(game, 0, "A-orange")) == (
        "A-orange", True, 3, "most orange cards: 3 vs 2; 3 cards × 1 = 3"
    )
    assert game.seat(0).total == game.seat(0).ingredient_points + 3


def test_G11_recipe_A_three_players_one_point_per_card() -> None:
    game = score_game(
        [
            seat(0, "blue", "black-a-1", recipes=("A-black",)),
            seat(1, "red"),
            seat(2, "green"),
        ]
    )
    assert recipe(game, 0, "A-black").points == 1


def test_G11_recipe_A_four_players_two_points_per_card() -> None:
    game = score_game(
        [
            seat(0, "blue", "white-a-1", "white-b-2", recipes=("A-white",)),
            seat(1, "red", "white-a-3"),
            seat(2, "green"),
            seat(3, "yellow"),
        ]
    )
    assert said(recipe(game, 0, "A-white")) == (
        "A-white", True, 4, "most white cards: 2 vs 1; 2 cards × 2 = 4"
    )


def test_G11_recipe_A_tie_nobody_gains() -> None:
    game = score_game(
        [
            seat(0, "blue", "violet-a-1", recipes=("A-violet",)),
            seat(1, "red", "violet-b-1"),
        ]
    )
    assert said(recipe(game, 0, "A-violet")) == (
        "A-violet", False, 0, "tie for most violet cards: 1 vs 1"
    )


def test_G11_recipe_A_with_no_cards_of_the_colour_at_all_gains_nothing() -> None:
    game = score_game([seat(0, "blue", recipes=("A-grey",)), seat(1, "red")])
    assert recipe(game, 0, "A-grey").achieved is False
    assert game.seat(0).total == 0


def test_G11_recipe_A_not_the_most_gains_nothing() -> None:
    game = score_game(
        [seat(0, "blue", "grey-a-1", recipes=("A-grey",)), seat(1, "red", "grey-a-2", "grey-b-2")]
    )
    assert said(recipe(game, 0, "A-grey")) == (
        "A-grey", False, 0, "not the most grey cards: 1 vs 2"
    )


def test_G11_recipe_A_counts_an_immuto_where_it_was_assigned() -> None:
    game = score_game(
        [
            seat(0, "blue", "orange-a-1", "orange-a-2", "immuto-1", recipes=("A-orange",)),
            seat(1, "red", "orange-b-1", "orange-b-2"),
        ]
    )
    assert game.seat(0).immuto_assignment == (("immuto-1", "orange-a"),)
    assert recipe(game, 0, "A-orange").points == 3
    # The other seat's Immuto, placed in another colour, does not count as orange.
    game = score_game(
        [
            seat(0, "blue", "orange-a-1", "orange-a-2", recipes=("A-orange",)),
            seat(1, "red", "orange-b-1", "red-a-4", "immuto-2"),
        ]
    )
    assert game.seat(1).immuto_assignment == (("immuto-2", "red-a"),)
    assert recipe(game, 0, "A-orange").points == 2


def test_G10_G11_immuto_stays_where_it_scores_more_than_the_recipe_would_give() -> None:
    # The Immuto saves 8 points in the lone blue family; putting it in orange would win the
    # recipe (2 points, tie 1-1 otherwise) but lose those 8: the total is higher in blue.
    game = score_game(
        [
            seat(0, "blue", "blue-a-4", "orange-a-1", "immuto-1", recipes=("A-orange",)),
            seat(1, "red", "orange-b-1"),
        ]
    )
    assert game.seat(0).immuto_assignment == (("immuto-1", "blue-a"),)
    assert recipe(game, 0, "A-orange").achieved is False


def test_G10_G11_immuto_joins_the_recipe_colour_when_that_gives_the_higher_total() -> None:
    # RULES.md: the assignment maximises the player's score. In blue the Immuto saves 8
    # ingredient points, but in orange it breaks a 3-3 tie for recipe A: 4 cards x 2 = 8
    # points for a loss of 5 (orange-b goes from 0 to -3, blue stays -8): -1 -> 2.
    seats = [
        seat(0, "blue", "blue-a-4", "orange-a-1", "orange-b-1", "orange-b-2", "immuto-1",
             recipes=("A-orange",)),
        seat(1, "red", "orange-a-2", "orange-a-3", "orange-a-4"),
        seat(2, "green"),
        seat(3, "yellow"),
    ]
    game = score_game(seats)
    assert game.seat(0).immuto_assignment == (("immuto-1", "orange-b"),)
    assert game.seat(0).ingredient_points == -8 - 1 + 3
    assert said(recipe(game, 0, "A-orange")) == (
        "A-orange", True, 8, "most orange cards: 4 vs 3; 4 cards × 2 = 8")
    assert game.seat(0).total == 2
    assert score_totals(seats)[0][0] == 2


def test_G11_recipe_A_belongs_to_its_owner_only() -> None:
    game = score_game(
        [seat(0, "blue", "orange-a-1", "orange-a-2"), seat(1, "red", recipes=("A-orange",))]
    )
    assert game.seat(0).recipes == ()
    assert recipe(game, 1, "A-orange").achieved is False
    assert game.seat(0).total == 0 and game.seat(1).total == 0


def test_G11_fewest_ingredients_counts_immutos_and_gains_ten() -> None:
    game = score_game(
        [
            seat(0, "blue", "red-a-1", "immuto-1", recipes=("B-fewest-ingredients",)),
            seat(1, "red", "orange-a-1", "orange-a-2", "orange-a-3"),
        ]
    )
    assert said(recipe(game, 0, "B-fewest-ingredients")) == (
        "B-fewest-ingredients", True, 10, "fewest ingredient cards (Immuto included): 2 vs 3"
    )
    assert game.seat(0).total == 0 + 10


def test_G11_fewest_ingredients_tie_nobody_gains() -> None:
    game = score_game(
        [
            seat(0, "blue", "red-a-1", "immuto-1", recipes=("B-fewest-ingredients",)),
            seat(1, "red", "orange-a-1", "orange-a-2"),
            seat(2, "green", "orange-b-1", "orange-b-2", "orange-b-3"),
        ]
    )
    assert recipe(game, 0, "B-fewest-ingredients").achieved is False
    assert recipe(game, 0, "B-fewest-ingredients").reason.startswith("tie")


def test_G11_fewest_fours() -> None:
    seats = [
        seat(0, "blue", "red-a-4", "orange-a-1", recipes=("B-fewest-fours",)),
        seat(1, "red", "orange-b-4", "violet-a-4"),
    ]
    assert said(recipe(score_game(seats), 0, "B-fewest-fours")) == (
        "B-fewest-fours", True, 10, "fewest value-4 cards: 1 vs 2"
    )
    tie = [seats[0], seat(1, "red", "orange-b-4")]
    assert recipe(score_game(tie), 0, "B-fewest-fours").points == 0


def test_G11_fewest_spells() -> None:
    seats = [
        seat(0, "blue", spells=("accio-1",), recipes=("B-fewest-spells",)),
        seat(1, "red", spells=("vanesco-1", "perluceo-2")),
    ]
    assert recipe(score_game(seats), 0, "B-fewest-spells").points == 10
    tie = [seats[0], seat(1, "red", spells=("declinatio-2",))]
    assert said(recipe(score_game(tie), 0, "B-fewest-spells")) == (
        "B-fewest-spells", False, 0, "tie for fewest spell cards: 1 vs 1"
    )


def test_G11_most_ones() -> None:
    seats = [
        seat(0, "blue", "red-a-1", "red-b-1", "immuto-1", recipes=("B-most-ones",)),
        seat(1, "red", "orange-a-1", "orange-a-2"),
        seat(2, "green"),
    ]
    assert said(recipe(score_game(seats), 0, "B-most-ones")) == (
        "B-most-ones", True, 10, "most value-1 cards: 2 vs 1"
    )
    tie = [seats[0], seat(1, "red", "orange-a-1", "orange-b-1")]
    assert recipe(score_game(tie), 0, "B-most-ones").points == 0
    less = [seats[0], seat(1, "red", "orange-a-1", "orange-b-1", "violet-a-1")]
    assert recipe(score_game(less), 0, "B-most-ones").reason == "not the most value-1 cards: 2 vs 3"


def test_G11_last_card() -> None:
    seats = [seat(0, "blue", recipes=("B-last-card",)), seat(1, "red")]
    mine = score_game(seats, last_card_seat=0)
    assert said(recipe(mine, 0, "B-last-card")) == (
        "B-last-card", True, 10, "took the last card"
    )
    assert mine.winners == (0,)
    other = score_game(seats, last_card_seat=1)
    assert said(recipe(other, 0, "B-last-card")) == (
        "B-last-card", False, 0, "Seat 2 (red) took the last card"
    )
    assert recipe(score_game(seats), 0, "B-last-card").achieved is False


def test_G11_last_card_seat_must_be_a_seat() -> None:
    with pytest.raises(ScoringError) as info:
        score_game([seat(0, "blue"), seat(1, "red")], last_card_seat=2)
    assert info.value.rule == "G10a"


def test_G11_recipes_add_to_the_total_in_catalogue_order() -> None:
    game = score_game(
        [
            seat(0, "blue", "grey-a-1", recipes=("B-last-card", "A-grey")),
            seat(1, "red", "red-a-1", "red-a-2"),
        ],
        last_card_seat=0,
    )
    me = game.seat(0)
    assert [r.recipe for r in me.recipes] == ["A-grey", "B-last-card"]
    assert me.total == -1 + 1 + 10


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seats", "rule", "words"),
    [
        ([seat(0, "blue", "blue-a-5")], "G1", "unknown card id 'blue-a-5'"),
        ([seat(0, "blue", spells=("accio-9",))], "G1", "unknown card id 'accio-9'"),
        ([seat(0, "blue", "red-a-1", "red-a-1")], "G1", "'red-a-1' appears twice"),
        (
            [seat(0, "blue", "red-a-1"), seat(1, "red", "red-a-1")],
            "G1",
            "'red-a-1' appears twice (seat 0 and seat 1)",
        ),
        (
            [seat(0, "blue", spells=("accio-1",)), seat(1, "red", spells=("accio-1",))],
            "G1",
            "'accio-1' appears twice",
        ),
        ([seat(0, "blue", spells=("accio-1", "accio-1"))], "G1", "'accio-1' appears twice"),
        ([seat(0, "blue", "vanesco-1")], "G1", "a spell card and cannot be in a cauldron"),
        ([seat(0, "blue", "corner-1")], "G1", "a corner card and cannot be in a cauldron"),
        ([seat(0, "blue", spells=("red-a-1",))], "G1", "an ingredient card, not a spell"),
        ([seat(0, "blue", spells=("immuto-1",))], "G1", "an Immuto card, not a spell"),
        ([seat(0, "orange")], "G2", "'orange' is not a player colour"),
        ([seat(0, "cyan")], "G2", "'cyan' is not a player colour"),
        ([seat(0, "blue"), seat(1, "blue")], "G2", "colour 'blue' is already taken by seat 0"),
        ([seat(0, "blue"), seat(0, "red")], "G2", "seat 0 is listed twice"),
        ([seat(4, "blue")], "G2", "seat 4 is not a seat number"),
        ([seat(-1, "blue")], "G2", "seat -1 is not a seat number"),
        ([], "G2", "no seats"),
        ([seat(0, "blue", recipes=("A-blue",))], "G11", "unknown recipe id 'A-blue'"),
        ([seat(0, "blue", recipes=("B-most-fours",))], "G11", "unknown recipe id"),
        (
            [seat(0, "blue", recipes=("A-grey",)), seat(1, "red", recipes=("A-grey",))],
            "G11",
            "recipe 'A-grey' appears twice (seat 1 and seat 0)",
        ),
        ([seat(0, "blue", recipes=("A-grey", "A-grey"))], "G11", "'A-grey' appears twice"),
    ],
)
def test_G10_G11_bad_input_is_refused_naming_the_rule(
    seats: list[SeatCards], rule: str, words: str
) -> None:
    with pytest.raises(ScoringError) as info:
        score_game(seats)
    assert isinstance(info.value, RulesError)
    assert info.value.rule == rule
    assert words in str(info.value)
    with pytest.raises(ScoringError):
        score_totals(seats)


def test_G10_score_cauldron_checks_its_input() -> None:
    with pytest.raises(ScoringError, match="not a player colour"):
        score_cauldron("grey", [])
    with pytest.raises(ScoringError, match="unknown card id"):
        score_cauldron("blue", ["nope"])
    with pytest.raises(ScoringError, match="appears twice"):
        score_cauldron("blue", ["immuto-1", "immuto-1"])
    with pytest.raises(ScoringError, match="cannot be in a cauldron"):
        score_cauldron("blue", ["perluceo-1"])


# --- properties ---------------------------------------------------------------------------


def reference_points(colour: str, cauldron: list[str], families: tuple[str, ...]) -> int:
    """Independent G10 scoring of one cauldron with the Immutos in `families`."""
    groups: dict[str, list[int]] = {}
    for card_id in cauldron:
        card = CARDS[card_id]
        if card.kind == "ingredient":
            assert card.family is not None
            groups.setdefault(card.family, []).append(card.value)
    for family in families:
        groups.setdefault(family, []).append(0)
    total = 0
    for family, values in groups.items():
        values = sorted(values, reverse=True)[:4]
        factor = 2 if FAMILY_COLOUR[family] == colour else 1
        if len(values) == 1:
            total -= values[0] * factor
        elif len(values) >= 3:
            total += sum(values) * factor + (5 if len(values) == 4 else 0)
    return total


def reference_best(
    colour: str, cauldron: list[str], prefer: frozenset[str] = frozenset()
) -> tuple[int, tuple[str, ...]]:
    """Brute force over every family: best score, then the documented tie-breaks."""
    count = sum(1 for c in cauldron if CARDS[c].kind == "immuto")
    holding = {CARDS[c].family for c in cauldron if CARDS[c].kind == "ingredient"}
    best: tuple[tuple[int, ...], tuple[str, ...]] | None = None
    for combo in combinations_with_replacement(FAMILIES, count):
        key = (
            reference_points(colour, cauldron, combo),
            sum(1 for f in combo if FAMILY_COLOUR[f] in prefer),
            sum(1 for f in combo if f in holding),
            *(-FAMILIES.index(f) for f in combo),
        )
        if best is None or key > best[0]:
            best = (key, combo)
    assert best is not None
    return best[0][0], best[1]


cauldrons = st.tuples(
    st.sampled_from(PLAYER_COLOURS),
    st.lists(st.sampled_from(INGREDIENTS), unique=True, max_size=24),
    st.integers(min_value=0, max_value=2),
    st.randoms(use_true_random=False),
)


@given(cauldrons, st.frozensets(st.sampled_from([r.removeprefix("A-") for r in RECIPE_A])))
def test_G10_property_chosen_immuto_assignment_is_never_worse_than_any_other(
    case: tuple[str, list[str], int, random.Random], prefer: frozenset[str]
) -> None:
    colour, ingredients, immuto_count, rng = case
    cauldron = [*ingredients, *IMMUTOS[:immuto_count]]
    rng.shuffle(cauldron)
    total, families, assignment = score_cauldron(colour, cauldron, prefer_colours=prefer)
    best_points, best_families = reference_best(colour, cauldron, prefer)
    chosen = tuple(family for _immuto, family in assignment)
    assert total == best_points == reference_points(colour, cauldron, chosen)
    assert chosen == best_families  # the documented tie-breaks, exactly
    assert [i for i, _ in assignment] == sorted(IMMUTOS[:immuto_count])
    assert total == sum(f.points for f in families)
    assert cauldron_points(colour, cauldron, prefer_colours=prefer) == total
    for family in families:
        factor = 2 if family.doubled else 1
        assert family.points == family.base * factor + family.bonus
        assert family.counted == min(len(family.cards) + len(family.immutos), 4)
        assert family.doubled == (family.colour == colour)


@st.composite
def games(draw: st.DrawFn) -> tuple[list[SeatCards], int | None, int, bool]:
    players = draw(st.integers(min_value=2, max_value=4))
    colours = draw(st.permutations(PLAYER_COLOURS))[:players]
    cards = draw(st.permutations(INGREDIENTS + IMMUTOS))
    spells = draw(st.permutations(SPELL_CARDS))
    recipes = draw(st.permutations(RECIPES))
    seats = []
    for n in range(players):
        size = draw(st.integers(min_value=0, max_value=16))
        spell_count = draw(st.integers(min_value=0, max_value=2))
        recipe_count = draw(st.integers(min_value=0, max_value=2))
        seats.append(
            SeatCards(
                n,
                colours[n],
                tuple(cards[n * 18 : n * 18 + size]),
                tuple(spells[n * 2 : n * 2 + spell_count]),
                tuple(recipes[n * 2 : n * 2 + recipe_count]),
            )
        )
    last = draw(st.none() | st.integers(min_value=0, max_value=players - 1))
    first = draw(st.integers(min_value=0, max_value=players - 1))
    return seats, last, first, draw(st.booleans())


def check_seat(score: SeatScore) -> None:
    assert score.ingredient_points == sum(f.points for f in score.families)
    assert score.total == (
        score.ingredient_points + sum(r.points for r in score.recipes) + score.second_player_bonus
    )
    assert all((r.points > 0) == r.achieved for r in score.recipes)


@given(games())
def test_G10_G11_property_total_is_the_sum_of_its_parts(
    game: tuple[list[SeatCards], int | None, int, bool],
) -> None:
    seats, last, first, bonus = game
    result = score_game(seats, last_card_seat=last, first_seat=first, second_player_bonus=bonus)
    for seat_score in result.seats:
        check_seat(seat_score)
    totals = {s.seat: s.total for s in result.seats}
    top = max(totals.values())
    assert result.winners == tuple(s for s, t in sorted(totals.items()) if t == top)
    assert sum(s.second_player_bonus for s in result.seats) == (2 if bonus else 0)
    # The fast path agrees with the full breakdown.
    assert score_totals(
        seats, last_card_seat=last, first_seat=first, second_player_bonus=bonus
    ) == (totals, result.winners)
    # Every Immuto in a cauldron is assigned exactly once.
    placed = Counter(i for s in result.seats for i, _ in s.immuto_assignment)
    held = Counter(c for s in seats for c in s.cauldron if CARDS[c].kind == "immuto")
    assert placed == held


def test_G10_G11_a_single_seat_can_be_scored_and_wins_its_recipes_alone() -> None:
    # Decision: one seat is allowed (a host checking one cauldron); with nobody to
    # compare with, "fewest" and "most" are met, a colour needs at least one card.
    game = score_game(
        [seat(2, "green", "orange-a-1", recipes=("B-fewest-spells", "A-orange", "A-grey"))]
    )
    assert game.winners == (2,)
    assert said(recipe(game, 2, "B-fewest-spells")) == (
        "B-fewest-spells", True, 10, "fewest spell cards: 0, no other seat"
    )
    assert recipe(game, 2, "A-orange").points == 1
    assert said(recipe(game, 2, "A-grey")) == ("A-grey", False, 0, "no grey cards")
    assert game.seat(2).total == -1 + 10 + 1


def reference_recipe_total(seats: list[SeatCards], placed: dict[int, tuple[str, ...]],
                           seat_no: int) -> int:
    """Ingredient + recipe A points of `seat_no` with every seat's Immutos in `placed`
    (RULES.md G10/G11 read directly, independent of the engine's code)."""
    rate = 2 if len(seats) >= 4 else 1

    def colour_count(entry: SeatCards, colour: str) -> int:
        own = sum(1 for c in entry.cauldron
                  if CARDS[c].kind == "ingredient" and CARDS[c].colour == colour)
        return own + sum(1 for f in placed[entry.seat] if FAMILY_COLOUR[f] == colour)

    me = next(e for e in seats if e.seat == seat_no)
    total = reference_points(me.colour, list(me.cauldron), placed[seat_no])
    for recipe_id in me.recipes:
        if recipe_id in RECIPE_A:
            colour = recipe_id.removeprefix("A-")
            own = colour_count(me, colour)
            others = [colour_count(e, colour) for e in seats if e.seat != seat_no]
            if own > 0 and (not others or own > max(others)):
                total += own * rate
    return total


@given(games())
def test_G10_G11_property_no_seat_can_raise_its_score_by_placing_its_immutos_otherwise(
    game: tuple[list[SeatCards], int | None, int, bool],
) -> None:
    seats, last, first, bonus = game
    result = score_game(seats, last_card_seat=last, first_seat=first, second_player_bonus=bonus)
    placed = {s.seat: tuple(f for _i, f in s.immuto_assignment) for s in result.seats}
    for entry in seats:
        count = sum(1 for c in entry.cauldron if CARDS[c].kind == "immuto")
        chosen = reference_recipe_total(seats, placed, entry.seat)
        achieved_a = sum(r.points for r in result.seat(entry.seat).recipes
                         if r.recipe in RECIPE_A)
        assert chosen == result.seat(entry.seat).ingredient_points + achieved_a
        for combo in combinations_with_replacement(FAMILIES, count):
            other = reference_recipe_total(seats, {**placed, entry.seat: combo}, entry.seat)
            assert other <= chosen, (entry.seat, combo, other, chosen)


# --- G11: each recipe reason is a code and its numbers (the pages word it per language) ---

_REASON_CASES: dict[ReasonCode, tuple[list[SeatCards], int | None, str, ReasonParams, str]] = {
    # code: (seats, last_card_seat, seat 0's recipe, its params, its English reason)
    "most": (
        [SeatCards(0, "blue", ("white-a-1", "white-a-2"), recipes=("A-white",)),
         SeatCards(1, "red", ("white-b-1",))],
        None, "A-white",
        ReasonParams(measure="colour", colour="white", own=2, other=1, rate=1),
        "most white cards: 2 vs 1; 2 cards × 1 = 2",
    ),
    "fewest": (
        [SeatCards(0, "blue", ("red-a-1",), recipes=("B-fewest-ingredients",)),
         SeatCards(1, "red", ("orange-a-1", "orange-a-2"))],
        None, "B-fewest-ingredients", ReasonParams(measure="cards", own=1, other=2),
        "fewest ingredient cards (Immuto included): 1 vs 2",
    ),
    "most_alone": (
        [SeatCards(0, "blue", ("red-a-1", "red-b-1"), recipes=("B-most-ones",))],
        None, "B-most-ones", ReasonParams(measure="ones", own=2),
        "most value-1 cards: 2, no other seat",
    ),
    "fewest_alone": (
        [SeatCards(0, "blue", ("red-a-4",), recipes=("B-fewest-fours",))],
        None, "B-fewest-fours", ReasonParams(measure="fours", own=1),
        "fewest value-4 cards: 1, no other seat",
    ),
    "tie_most": (
        [SeatCards(0, "blue", ("red-a-1",), recipes=("B-most-ones",)),
         SeatCards(1, "red", ("orange-a-1",))],
        None, "B-most-ones", ReasonParams(measure="ones", own=1, other=1),
        "tie for most value-1 cards: 1 vs 1",
    ),
    "tie_fewest": (
        [SeatCards(0, "blue", (), spells=("accio-1",), recipes=("B-fewest-spells",)),
         SeatCards(1, "red", (), spells=("accio-2",))],
        None, "B-fewest-spells", ReasonParams(measure="spells", own=1, other=1),
        "tie for fewest spell cards: 1 vs 1",
    ),
    "not_most": (
        [SeatCards(0, "blue", ("grey-a-1",), recipes=("A-grey",)),
         SeatCards(1, "red", ("grey-a-2", "grey-a-3"))],
        None, "A-grey", ReasonParams(measure="colour", colour="grey", own=1, other=2),
        "not the most grey cards: 1 vs 2",
    ),
    "not_fewest": (
        [SeatCards(0, "blue", ("red-a-4", "red-b-4"), recipes=("B-fewest-fours",)),
         SeatCards(1, "red", ("orange-a-4",))],
        None, "B-fewest-fours", ReasonParams(measure="fours", own=2, other=1),
        "not the fewest value-4 cards: 2 vs 1",
    ),
    "no_cards": (
        [SeatCards(0, "blue", ("red-a-1",), recipes=("A-violet",))],
        None, "A-violet", ReasonParams(measure="colour", colour="violet", own=0),
        "no violet cards",
    ),
    "last_card_own": (
        [SeatCards(0, "blue", (), recipes=("B-last-card",)), SeatCards(1, "red", ())],
        0, "B-last-card", ReasonParams(seat=0, seat_colour="blue"), "took the last card",
    ),
    "last_card_other": (
        [SeatCards(0, "blue", (), recipes=("B-last-card",)), SeatCards(1, "red", ())],
        1, "B-last-card", ReasonParams(seat=1, seat_colour="red"),
        "Seat 2 (red) took the last card",
    ),
    "last_card_unknown": (
        [SeatCards(0, "blue", (), recipes=("B-last-card",)), SeatCards(1, "red", ())],
        None, "B-last-card", ReasonParams(), "no last-card taker recorded",
    ),
}


def test_G11_every_reason_code_has_a_case() -> None:
    assert set(_REASON_CASES) == set(REASON_CODES)


@pytest.mark.parametrize("code", list(_REASON_CASES))
def test_G11_recipe_reason(code: ReasonCode) -> None:
    seats, last_card_seat, recipe_id, params, english = _REASON_CASES[code]
    result = recipe(score_game(seats, last_card_seat=last_card_seat), 0, recipe_id)
    assert (result.reason_code, result.reason_params, result.reason) == (code, params, english)
    assert result.to_json()["reason_code"] == code
    assert result.to_json()["reason_params"]["own"] == params.own
    # Seats are named 1-based for people: never "seat 0" in a reason.
    assert "seat 0" not in result.reason.lower()

"""G1 (components, card ids) and G2 (set-up) from fixed deals and configurations."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
import rules_deals as D

from engine.games.glastonbury.rules import Game, GameConfig, InvalidSetup
from engine.games.glastonbury.rules.board import CORNER_CELLS, TAKEABLE_CELLS
from engine.games.glastonbury.rules.cards import (
    CARDS,
    CATALOGUE,
    COLOURS,
    CORNER_CARDS,
    EMPTY_CAULDRON_MOVE,
    FAMILIES,
    FAMILY_COLOUR,
    IMMUTOS,
    INGREDIENTS,
    NON_PLAYER_COLOURS,
    PLAYER_COLOURS,
    PLAYING_CARDS,
    RECIPE_A,
    RECIPE_B,
    SPELL_CARDS,
    SPELL_USES,
    card_label,
    deck_for,
    family_name,
)
from engine.games.glastonbury.rules.events import TurnStarted

# ---------------------------------------------------------------- G1: the box


def test_G1_colours_player_and_non_player() -> None:
    assert PLAYER_COLOURS == ("yellow", "red", "green", "blue")
    assert NON_PLAYER_COLOURS == ("orange", "violet", "white", "black", "grey")
    assert len(COLOURS) == 9


def test_G1_72_ingredients_18_families_of_values_1_to_4_two_per_colour() -> None:
    assert len(INGREDIENTS) == 72
    assert len(FAMILIES) == 18
    assert Counter(FAMILY_COLOUR.values()) == {colour: 2 for colour in COLOURS}
    expected = {f"{colour}-{ab}-{v}" for colour in COLOURS for ab in "ab" for v in (1, 2, 3, 4)}
    assert set(INGREDIENTS) == expected
    for card_id in INGREDIENTS:
        card = CARDS[card_id]
        colour, ab, value = card_id.split("-")
        assert (card.kind, card.colour, card.family, card.value) == (
            "ingredient",
            colour,
            f"{colour}-{ab}",
            int(value),
        )
        assert card.move_value == card.value  # G4: move by the top card's value


def test_G1_immuto_spells_corners_and_their_ids() -> None:
    assert IMMUTOS == ("immuto-1", "immuto-2")
    assert all(CARDS[c].move_value == 0 for c in IMMUTOS)  # G5
    spells = Counter(CARDS[c].spell for c in SPELL_CARDS)
    assert spells == {"accio": 2, "declinatio": 2, "vanesco": 4, "perluceo": 2}
    assert set(SPELL_CARDS) == {
        "accio-1", "accio-2", "declinatio-1", "declinatio-2",
        "vanesco-1", "vanesco-2", "vanesco-3", "vanesco-4", "perluceo-1", "perluceo-2",
    }  # fmt: skip
    assert SPELL_USES == {"accio": 2, "declinatio": 3, "vanesco": 0, "perluceo": 0}
    assert CORNER_CARDS == ("corner-1", "corner-2", "corner-3", "corner-4")
    assert EMPTY_CAULDRON_MOVE == 2
    assert len(PLAYING_CARDS) == 84 and len(set(PLAYING_CARDS)) == 84
    assert not set(CORNER_CARDS) & set(PLAYING_CARDS)


def test_G1_catalogue_names_in_three_languages_and_placeholders_marked() -> None:
    known = {
        "yellow-a": "Parfum de soufre",
        "yellow-b": "Poupée de cire",
        "red-a": "Phalanges",
        "red-b": "Jus d'asticot",
    }
    for family, fr in known.items():
        assert family_name(family, "fr") == fr
    assert family_name("yellow-a", "de") == "Schwefelduft"
    for entry in CATALOGUE["families"]:
        assert all(entry["names"][lang].strip() for lang in ("fr", "en", "de"))
        if entry["id"] not in known:
            assert entry["status"] != "source", entry["id"]
    assert card_label("yellow-a-3") == "Sulphur scent 3 (yellow)"
    assert card_label("accio-2") == "Accio"


def test_G1_recipe_ids() -> None:
    assert tuple(f"A-{c}" for c in NON_PLAYER_COLOURS) == RECIPE_A
    assert set(RECIPE_B) == {
        "B-fewest-ingredients",
        "B-fewest-fours",
        "B-fewest-spells",
        "B-most-ones",
        "B-last-card",
    }


def test_G1_card_ids_follow_the_architecture_pattern() -> None:
    pattern = re.compile(
        r"^((yellow|red|green|blue|orange|violet|white|black|grey)-[ab]-[1-4]"
        r"|immuto-[12]|accio-[12]|declinatio-[12]|vanesco-[1-4]|perluceo-[12]|corner-[1-4])$"
    )
    assert len(CARDS) == 88
    assert all(pattern.match(c) for c in CARDS)


# ---------------------------------------------------------------- G2: set-up


def _all_cards(game: Game) -> list[str]:
    return [c for c in game.grid if c is not None] + game.pile.cards()


@pytest.mark.parametrize(
    ("colours", "removed", "gone"),
    [
        (("yellow", "red"), None, "green"),  # default: the first unused player colour
        (("yellow", "red"), "blue", "blue"),
        (("green", "blue"), None, "yellow"),
    ],
)
def test_G2_two_players_remove_one_unused_colour(
    colours: tuple[str, str], removed: str | None, gone: str
) -> None:
    config = GameConfig(colours=colours, removed_colour=removed)
    game = Game.new(config, random.Random(5))
    cards = _all_cards(game)
    assert config.removed == gone
    assert len(cards) == 76 + 4 and len(set(cards)) == 80
    assert not [c for c in cards if CARDS[c].colour == gone]
    assert len(deck_for(gone)) == 76
    assert len(game.pile) == 44
    assert game.view_public()["config"]["removed_colour"] == gone


@pytest.mark.parametrize("players", [3, 4])
def test_G2_three_and_four_players_remove_nothing(players: int) -> None:
    config = D.config(players)
    game = Game.new(config, random.Random(players))
    cards = _all_cards(game)
    assert config.removed is None
    assert sorted(c for c in cards if not c.startswith("corner")) == sorted(PLAYING_CARDS)
    assert len(game.pile) == 52
    assert sum(c is not None for c in game.grid) == 36


def test_G2_corners_hold_the_corner_cards_clockwise_from_top_left() -> None:
    game = Game.new(D.config(4), random.Random(1))
    assert [game.grid[c] for c in (0, 5, 35, 30)] == list(CORNER_CARDS)
    assert all(game.grid[c] not in CORNER_CARDS for c in TAKEABLE_CELLS)
    assert {game.grid[c] for c in CORNER_CELLS} == set(CORNER_CARDS)


def test_G2_default_start_positions_and_first_move() -> None:
    game = Game.new(D.config(4), random.Random(2))
    assert D.config(4).positions == (0, 5, 10, 15)
    # The first seat has moved already: empty cauldron, 2 steps from corner 0.
    first = game.opening_events[0]
    assert first == TurnStarted(seat=0, move_value=2, from_position=0, to_position=2, faced_line=8)
    assert game.pawns == [2, 5, 10, 15]


def test_G2_host_chosen_corners_and_first_seat() -> None:
    config = D.config(3, start_positions=(10, 10, 0), first_seat=1)
    game = Game.new(config, random.Random(3))
    assert game.seat == 1
    assert game.pawns == [10, 12, 0]
    assert game.opening_events[0] == TurnStarted(1, 2, 10, 12, 9)


def test_G2_same_seed_same_deal_other_seed_other_deal() -> None:
    a = Game.new(D.config(4), random.Random(42))
    b = Game.new(D.config(4), random.Random(42))
    c = Game.new(D.config(4), random.Random(43))
    assert a.deal == b.deal and a == b
    assert a.deal != c.deal


@pytest.mark.parametrize(
    ("options", "rule"),
    [
        ({"colours": ("yellow",)}, "G2"),
        ({"colours": ("yellow", "red", "green", "blue", "yellow")}, "G2"),
        ({"colours": ("yellow", "orange")}, "G2"),  # not a player colour
        ({"colours": ("red", "red")}, "G2"),
        ({"colours": ("yellow", "red", "green"), "removed_colour": "blue"}, "G2"),
        ({"colours": ("yellow", "red"), "removed_colour": "red"}, "G2"),  # in use
        ({"colours": ("yellow", "red"), "removed_colour": "orange"}, "G2"),
        ({"colours": ("yellow", "red"), "start_positions": (0, 3)}, "G2"),  # not a corner
        ({"colours": ("yellow", "red"), "start_positions": (0,)}, "G2"),
        ({"colours": ("yellow", "red"), "first_seat": 2}, "G4"),
    ],
)
def test_G2_bad_configurations_are_refused(options: dict[str, object], rule: str) -> None:
    config = GameConfig(**options)  # type: ignore[arg-type]
    with pytest.raises(InvalidSetup) as err:
        Game.new(config, random.Random(0))
    assert err.value.rule == rule


def test_G2_bad_deals_are_refused() -> None:
    config = D.config(2)
    good = D.deal(config)
    assert Game.from_deal(config, good.grid, good.pile).pile.size == 44
    cases: list[tuple[tuple[str, ...], tuple[str, ...] | None, str, str]] = [
        (good.grid[:31], good.pile, "G2", "32 cards"),
        ((good.grid[1], *good.grid[1:]), good.pile, "G1", "twice"),
        (("nope-1", *good.grid[1:]), good.pile, "G1", "unknown card id"),
        (("green-a-1", *good.grid[1:]), None, "G2", "removed"),
        (("corner-1", *good.grid[1:]), None, "G2", "corner-1 cannot be dealt: it is not a playing"),
        (good.grid, good.pile[:-1] if good.pile else None, "G2", "all 76 cards"),
    ]
    for grid, pile, rule, words in cases:
        with pytest.raises(InvalidSetup) as err:
            Game.from_deal(config, grid, pile)
        assert err.value.rule == rule
        assert words in str(err.value)


def test_G2_deal_from_a_cell_map() -> None:
    config = D.config(2)
    d = D.deal(config, {"1,2": "accio-1"})
    grid = {f"{c // 6},{c % 6}": card for c, card in zip(TAKEABLE_CELLS, d.grid, strict=True)}
    game = Game.from_deal(config, grid, d.pile)
    assert game.grid[D.cell("1,2")] == "accio-1"
    assert game.deal == d


def test_G2_a_cell_named_twice_in_a_deal_is_refused() -> None:
    config = D.config(2)
    d = D.deal(config)
    grid = {f"{c // 6},{c % 6}": card for c, card in zip(TAKEABLE_CELLS, d.grid, strict=True)}
    grid[" 0, 1"] = "green-b-1"  # a second spelling of cell 0,1
    for pile in (d.pile, None):
        with pytest.raises(InvalidSetup) as err:
            Game.from_deal(config, grid, pile)
        assert err.value.rule == "G2" and "given twice" in err.value.message


def test_G2_an_empty_pile_tuple_is_a_known_pile_not_a_type_error() -> None:
    config = D.config(2)
    d = D.deal(config)
    grid = {f"{c // 6},{c % 6}": card for c, card in zip(TAKEABLE_CELLS, d.grid, strict=True)}
    with pytest.raises(InvalidSetup) as err:
        Game.from_deal(config, grid, ())
    assert "all 76 cards" in err.value.message

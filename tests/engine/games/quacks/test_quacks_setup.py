"""Q1–Q8, Q26, Q30, Q35/Q36 and the setup Decisions (D1–D7, D31, N16, N29)."""

from __future__ import annotations

import json
import random
from collections import Counter
from importlib import resources

import pytest
from quacks_helpers import new_game

from engine.games.quacks.rules import (
    Game,
    InvalidSetup,
    Phase,
    QuacksConfig,
    default_catalogue,
    from_data,
)
from engine.games.quacks.rules.catalogue import kind_of
from engine.games.quacks.rules.names import card_name, chip_name, placeholders

CAT = default_catalogue()


def raw() -> dict[str, object]:
    data: dict[str, object] = json.loads(
        resources.files("engine.games.quacks.rules").joinpath("catalogue.json").read_text("utf-8")
    )
    return data


def test_Q1_components_two_to_four_players_24_cards_a_six_faced_die() -> None:
    assert len(CAT.fortune) == 24
    assert Counter(c.kind for c in CAT.fortune) == {"purple": 13, "blue": 11}
    assert len(CAT.die) == 6 and CAT.rubies_supply == 20
    for players in (1, 5):
        with pytest.raises(InvalidSetup) as err:
            new_game(players)
        assert err.value.rule == "Q1"


def test_Q1_D1_the_catalogue_holds_216_chips() -> None:
    assert sum(CAT.counts.values()) == 216 == len(set(CAT.all_chips()))


def test_Q2_counts_per_kind_and_physical_chip_ids() -> None:
    assert CAT.counts == {
        "white-1": 20, "white-2": 8, "white-3": 4, "orange-1": 20,
        "green-1": 15, "green-2": 10, "green-4": 13, "blue-1": 14, "blue-2": 10, "blue-4": 10,
        "red-1": 12, "red-2": 8, "red-4": 10, "yellow-1": 13, "yellow-2": 6, "yellow-4": 10,
        "purple-1": 15, "black-1": 18,
    }  # fmt: skip
    assert CAT.chips("white-1")[6] == "white-1-07"
    assert kind_of("white-1-07") == "white-1" and kind_of("red-2") == "red-2"


def test_Q3_set_1_prices_and_unlock_rounds() -> None:
    prices = CAT.prices[1]
    assert prices["orange-1"] == 3 and prices["black-1"] == 10 and prices["purple-1"] == 9
    assert [prices[f"green-{v}"] for v in (1, 2, 4)] == [4, 8, 14]
    assert [prices[f"blue-{v}"] for v in (1, 2, 4)] == [5, 10, 19]
    assert [prices[f"red-{v}"] for v in (1, 2, 4)] == [6, 10, 16]
    assert [prices[f"yellow-{v}"] for v in (1, 2, 4)] == [8, 12, 18]
    assert "white-1" not in prices and CAT.unlock["white"] is None


def test_Q3_D7_yellow_from_round_2_purple_from_round_3() -> None:
    game = new_game()
    assert not game.unlocked("yellow-1") and not game.unlocked("purple-1")
    game.round = 2
    assert game.unlocked("yellow-4") and not game.unlocked("purple-1")
    game.round = 3
    assert game.unlocked("purple-1")


def test_Q4_D6_the_pot_track() -> None:
    track = CAT.track
    assert len(track) == 54
    assert [i for i, s in enumerate(track) if s.ruby] == [5, 9, 13, 16, 20, 24, 28, 30, 34, 36,
                                                          40, 42, 46, 50, 52]  # fmt: skip
    assert (track[53].coins, track[53].vp) == (35, 15)
    assert (track[15].coins, track[16].coins, track[17].coins) == (15, 15, 16)
    assert (track[6].vp, track[10].vp, track[26].vp, track[51].vp) == (1, 2, 6, 14)


def test_Q5_D4_rat_tails_positions_and_the_rulebook_example() -> None:
    assert len(CAT.rat_tails_after) == 23
    # green on 20 leads; blue on 19 gets 0, yellow on 17 gets 1, red on 16 gets 2 (P9).
    assert [CAT.rat_tails_between(v, 20) for v in (19, 17, 16)] == [0, 1, 2]
    assert CAT.rat_tails_between(0, 2) == 1 and CAT.rat_tails_between(0, 1) == 0


def test_Q5_D5_rat_tails_repeat_above_50() -> None:
    assert CAT.rat_tails_between(50, 52) == 1  # the tail after 1, one lap on
    assert CAT.rat_tails_between(48, 51) == 1  # after 48; none between 50 and 51
    assert CAT.rat_tails_between(0, 60) == 23 + 3  # + after 51, 54, 57 (60-61 is past 60)


def test_Q6_D26_rubies_keep_counting_past_the_supply() -> None:
    game = new_game()
    for p in game.players:
        p.rubies = 12
    assert game.rubies_left() == -4


def test_Q7_D3_die_faces() -> None:
    assert CAT.die == ("vp1", "vp1", "vp2", "ruby", "droplet", "orange")


def test_Q8_starting_bag_flask_droplet_and_one_ruby() -> None:
    game = new_game(4)
    for p in game.players:
        assert Counter(kind_of(c) for c in p.bag) == Counter(CAT.start_bag)
        assert len(p.bag) == 9 and p.flask and p.droplet == 0 and p.rubies == 1 and p.vp == 0


def test_Q8_D2_starting_rubies_is_a_host_option() -> None:
    assert [p.rubies for p in new_game(start_rubies=0).players] == [0, 0]
    with pytest.raises(InvalidSetup) as err:
        new_game(start_rubies=2)
    assert err.value.rule == "Q8"


def test_Q8_D31_start_player_is_the_hosts_choice_default_seat_0() -> None:
    assert new_game(3).start_player == 0
    assert new_game(3, start_player=2).start_player == 2
    with pytest.raises(InvalidSetup):
        new_game(3, start_player=3)


def test_N16_start_bags_take_the_lowest_serials_in_seat_order() -> None:
    game = new_game(2)
    assert {c for c in game.players[0].bag if kind_of(c) == "white-1"} == {
        "white-1-01", "white-1-02", "white-1-03", "white-1-04"}  # fmt: skip
    assert "white-1-05" in game.players[1].bag
    assert game.supply["white-1"][0] == "white-1-09"


def test_N29_without_fortune_cards_there_is_no_card() -> None:
    game = new_game(2)
    assert game.card is None and game.phase is Phase.BREW


def test_Q10_the_deck_is_shuffled_by_the_seeded_rng() -> None:
    a = Game.new(QuacksConfig(players=2), random.Random(5))
    b = Game.new(QuacksConfig(players=2), random.Random(5))
    assert a.card == b.card and a.deck == b.deck and len(a.deck) == 23


def test_Q26_nothing_but_the_black_book_changes_with_player_count() -> None:
    two, four = new_game(2), new_game(4)
    assert two.limit() == four.limit() == 7 and two.cat.prices == four.cat.prices


def test_Q30_D28_D29_sets_2_to_4_are_data_only() -> None:
    assert CAT.prices[3]["blue-4"] == 14 and CAT.prices[3]["green-4"] == 18  # D28
    with pytest.raises(InvalidSetup) as err:
        new_game(ingredient_set=2)
    assert err.value.rule == "Q30"


def test_Q36_a_host_corrected_catalogue_is_used() -> None:
    data = raw()
    data["track"][53]["coins"] = 36  # type: ignore[index]
    cat = from_data(data)
    game = Game(QuacksConfig(players=2, fortune_cards=False), [], random.Random(0), cat)
    assert game.cat.track[53].coins == 36


def test_Q36_a_broken_catalogue_is_refused_by_rule() -> None:
    data = raw()
    data["prices"]["1"]["white"] = {"1": 2}  # type: ignore[index]
    with pytest.raises(InvalidSetup) as err:
        from_data(data)
    assert err.value.rule == "Q3"
    with pytest.raises(InvalidSetup) as err:
        from_data({"colours": {}})
    assert err.value.rule == "Q2"


def test_Q27_Q35_names_in_en_fr_de() -> None:
    assert chip_name("white-1", "fr") == "claque-doigt 1"
    assert chip_name("red-4", "de") == "Fliegenpilz 4"
    assert chip_name("black-1", "en") == "death's-head hawkmoth 1"
    assert card_name("FB10", "de") == "Gut gerührt" and card_name("FB10", "en") == "Cauldron Bubble"
    assert "chips.white.fr" not in placeholders() and "chips.red.fr" in placeholders()

"""Refusals (a chip from the supply, already in a pot, from another seat's bag, a purchase
over budget, a colour not yet unlocked), wire forms, and what the views hide (Q29, D30)."""

from __future__ import annotations

import json
import random

import pytest
from quacks_helpers import chip_in, draw, new_game, run_until, stop_all

from engine.games.quacks.rules import (
    Buy,
    Draw,
    Game,
    IllegalAction,
    InvalidWire,
    Phase,
    QuacksConfig,
    RollDie,
    Stop,
    action_from_wire,
    to_wire,
)
from engine.games.quacks.rules.observer import public_view, seat_view


def state(game: Game) -> str:
    return json.dumps(seat_view(game, 0), sort_keys=True) + repr(game.rng.getstate())


def refused(game: Game, action, rule: str, words: str) -> None:  # type: ignore[no-untyped-def]
    before = state(game)
    with pytest.raises(IllegalAction) as err:
        game.apply(action)
    assert err.value.rule == rule and words in err.value.message, err.value
    assert state(game) == before  # the game is unchanged


def test_refusal_a_chip_from_the_supply() -> None:
    game = new_game(2)
    refused(game, Draw(0, "red-4-01"), "Q12", "in the supply")


def test_refusal_a_chip_already_in_a_pot() -> None:
    game = new_game(2)
    draw(game, 0, "orange-1")
    refused(game, Draw(0, "orange-1-01"), "Q12", "already in seat 0's pot")


def test_refusal_a_chip_from_another_seats_bag() -> None:
    game = new_game(2)
    theirs = chip_in(game, 1, "green-1")
    refused(game, Draw(0, theirs), "Q12", "in seat 1's bag")


def test_refusal_an_unknown_chip() -> None:
    game = new_game(2)
    refused(game, Draw(0, "gold-9-01"), "Q2", "not a chip")


def over_budget_game(round_: int = 1) -> Game:
    game = new_game(2)
    game.round = round_
    for kind in ("orange-1", "green-1", "white-3", "white-2"):
        draw(game, 0, kind)
    stop_all(game)
    game.apply(RollDie(0, 5))
    assert game.phase is Phase.BUY and game.cat.track[game.scoring_space(0)].coins == 8
    return game


def test_refusal_a_purchase_over_budget() -> None:
    game = over_budget_game()
    refused(game, Buy(0, ("blue-2",)), "Q22", "cost 10 coins")
    refused(game, Buy(0, ("orange-1", "red-1")), "Q22", "cost 9 coins")


def test_refusal_a_colour_not_yet_unlocked() -> None:
    game = over_budget_game()
    refused(game, Buy(0, ("yellow-1",)), "Q22", "from round 2")
    game = over_budget_game(round_=2)
    refused(game, Buy(0, ("purple-1",)), "Q22", "from round 3")
    game.apply(Buy(0, ("yellow-1",)))


def test_refusal_a_bought_chip_that_is_not_in_the_supply() -> None:
    game = over_budget_game()
    refused(game, Buy(0, ("orange-1-01",)), "Q28", "not in the supply")
    game.apply(Buy(0, ("orange-1-20",)))
    assert "orange-1-20" in game.players[0].bag


def test_refusal_out_of_turn_and_unknown_seats() -> None:
    game = new_game(3, start_player=1)
    for seat in range(3):
        draw(game, seat, "orange-1")
    stop_all(game)
    for seat in (1, 2, 0):
        game.apply(RollDie(seat, 5))
    refused(game, Buy(0, ()), "Q22", "cannot buy now")
    refused(game, Stop(7), "Q8", "no seat 7")
    refused(game, RollDie(1, 2), "Q17", "does not roll")


def test_wire_forms_round_trip_and_garbage_is_refused() -> None:
    game = Game.new(QuacksConfig(players=3), random.Random(3))
    for action in game.legal_actions():
        assert action_from_wire(json.loads(json.dumps(to_wire(action)))) == action
    assert action_from_wire({"type": "buy", "seat": 0, "chips": ["red-1"]}) == Buy(0, ("red-1",))
    for bad in (None, {"type": "fly"}, {"type": "stop"}, {"type": "stop", "seat": "0"},
                {"type": "buy", "seat": 0, "chips": "red"}, {"type": "draw", "seat": 0, "x": 1},
                {"type": "answer", "seat": 0, "question": "red", "yes": "no"},
                {"type": "spend", "seat": 0, "droplet": -1.5}):  # fmt: skip
        with pytest.raises(InvalidWire):
            action_from_wire(bad)


def test_Q29_D30_the_public_view_hides_hands_bags_the_deck_and_the_rng() -> None:
    a = Game.new(QuacksConfig(players=2), random.Random(1))
    b = a.copy()
    b.deck = list(reversed(b.deck))  # the future order differs
    b.rng = random.Random(99)
    assert public_view(a) == public_view(b)
    view = json.dumps(public_view(a))
    assert 'bag"' not in view and 'hand"' not in view and "deck" not in view
    mine = seat_view(a, 0)
    assert sum(mine["bag"].values()) == 9 and "bag" not in public_view(a)["seats"][0]


def test_Q29_a_blue_offer_is_seen_by_its_seat_only() -> None:
    game = new_game(2)
    from quacks_helpers import bag_only, give

    bag_only(game, 0, "blue-1", "red-4")
    give(game, 1)
    draw(game, 0, "blue-1")
    events = game.apply(Draw(0))
    assert all(e.private for e in events if e.code == "chip_to_hand")
    assert "red-4-01" not in json.dumps(public_view(game))
    assert seat_view(game, 0)["hand"] == ["red-4-01"] and seat_view(game, 1)["hand"] == []


def test_Q29_odds_are_exact_and_the_memory_aid_switch_hides_them() -> None:
    game = new_game(2)
    for kind in ("white-2", "white-2", "white-1"):
        draw(game, 0, kind)
    odds = public_view(game)["seats"][0]["explosion_chance"]
    assert (odds["num"], odds["den"]) == (1, 6)
    assert "explosion_chance" not in public_view(game, show_odds=False)["seats"][0]
    assert "bag" not in seat_view(game, 0, bag_visible=False)


def test_Q29_views_show_pots_limits_track_round_and_card() -> None:
    game = new_game(2, deck=["FB6"])
    draw(game, 0, "orange-1")
    view = public_view(game)
    seat = view["seats"][0]
    assert seat["pot"] == [{"chip": "orange-1-01", "kind": "orange-1", "index": 2}]
    assert (seat["white_sum"], seat["limit"], seat["scoring_space"]) == (0, 7, 3)
    assert view["round"] == 1 and view["fortune"] == "FB6" and view["phase"] == "brew"
    run_until(game, Phase.BREW, 2, face=4)
    assert public_view(game)["seats"][0]["history"][0]["space"] == 3

"""Sensing (issue 23): a chip tapped on seat k's draw pad becomes `Draw(k, chip)`, or a
refusal naming the rule (a chip from the supply, already in a pot, from another seat's bag,
a purchase over budget, a colour not yet unlocked); purchases tapped chip by chip; the
phone's "I drew a chip I did not tap" and "undo my last draw"; enrolment by kind."""

from __future__ import annotations

import json

from quacks_helpers import bag_only, chip_in, draw, give, new_game, stop_all

from engine.games.quacks.rules import Buy, Draw, Game, Phase, RollDie, Stop
from engine.games.quacks.rules.observer import seat_view
from engine.games.quacks.rules.sensing import (
    Outcome,
    PadState,
    Refusal,
    finish_buying,
    tap,
    undo_last_draw,
    untapped_draw,
)


def everything(game: Game) -> str:
    return json.dumps([seat_view(game, s) for s in range(game.config.players)], sort_keys=True)


def refused(game: Game, outcome: Outcome, code: str, rule: str) -> Refusal:
    assert outcome.action is None and outcome.refusal is not None, outcome
    assert (outcome.refusal.code, outcome.refusal.rule) == (code, rule), outcome.refusal
    assert f"({rule})" in outcome.refusal.message()
    return outcome.refusal


def apply(game: Game, outcome: Outcome) -> PadState:
    assert outcome.refusal is None and outcome.action is not None, outcome
    game.apply(outcome.action)
    return outcome.state


# ---------------------------------------------------------------- drawing


def test_Q12_a_chip_tapped_on_a_seats_pad_is_drawn_from_that_seats_bag() -> None:
    game = new_game(2)
    chip = chip_in(game, 1, "orange-1")
    outcome = tap(game, PadState(), 1, chip)
    assert outcome.action == Draw(1, chip)
    apply(game, outcome)
    assert game.players[1].pot == [(chip, 1)]


def test_Q12_refusal_a_chip_from_the_supply() -> None:
    game = new_game(2)
    before = everything(game)
    r = refused(game, tap(game, PadState(), 0, "red-4-01"), "chip_in_supply", "Q12")
    assert "from the supply" in r.message() and "toadstool 4" in r.message()
    assert everything(game) == before


def test_Q12_refusal_a_chip_already_in_a_pot() -> None:
    game = new_game(2)
    chip = chip_in(game, 0, "orange-1")
    state = apply(game, tap(game, PadState(), 0, chip))
    before = everything(game)
    r = refused(game, tap(game, state, 0, chip), "chip_in_pot", "Q12")
    assert r.get("owner") == 0 and "already in Seat 1's pot" in r.message()
    r = refused(game, tap(game, state, 1, chip), "chip_in_pot", "Q12")
    assert "Seat 1's pot" in r.message()
    assert everything(game) == before


def test_Q12_refusal_a_chip_from_another_seats_bag() -> None:
    game = new_game(3)
    theirs = chip_in(game, 2, "green-1")
    r = refused(game, tap(game, PadState(), 0, theirs), "chip_in_other_bag", "Q12")
    assert r.get("owner") == 2 and "Seat 3's bag, not Seat 1's" in r.message()


def test_Q2_refusal_a_chip_the_catalogue_does_not_have() -> None:
    game = new_game(2)
    refused(game, tap(game, PadState(), 0, "gold-9-01"), "unknown_chip", "Q2")


def test_Q15_a_blue_offer_is_tapped_into_the_hand_and_a_drawn_chip_is_not_drawn_again() -> None:
    game = new_game(2)
    give(game, 0, "blue-2")
    state = apply(game, tap(game, PadState(), 0, chip_in(game, 0, "blue-2")))
    first = chip_in(game, 0, "white-1")
    state = apply(game, tap(game, state, 0, first))
    assert game.players[0].hand == [first]
    refused(game, tap(game, state, 0, first), "chip_in_hand", "Q12")
    refused(game, tap(game, state, 1, first), "chip_in_hand", "Q12")


def test_Q12_Q13_taps_after_stopping_or_exploding_are_refused() -> None:
    game = new_game(3)
    bag_only(game, 0, "white-3", "white-3", "white-2", "orange-1")
    for kind in ("white-3", "white-3", "white-2"):
        draw(game, 0, kind)
    assert game.players[0].status == "exploded"
    refused(game, tap(game, PadState(), 0, chip_in(game, 0, "orange-1")), "exploded", "Q13")
    game.apply(Stop(1))
    refused(game, tap(game, PadState(), 1, chip_in(game, 1, "orange-1")), "stopped", "Q12")


def test_Q15_a_tap_while_the_seat_must_answer_is_refused() -> None:
    game = new_game(2)
    give(game, 0, "red-1")
    draw(game, 0, "orange-1")
    draw(game, 0, "red-1")
    assert game.players[0].question == "red"
    refused(game, tap(game, PadState(), 0, chip_in(game, 0, "white-1")), "must_answer", "Q15")


# ---------------------------------------------------------------- buying


def buying_game(round_: int = 1) -> Game:
    """Seat 0 stands on 8 coins (orange, green, white 3, white 2: space 7 after the droplet
    at 0 -> scoring space 8) and buys first."""
    game = new_game(2)
    game.round = round_
    for kind in ("orange-1", "green-1", "white-3", "white-2"):
        draw(game, 0, kind)
    stop_all(game)
    game.apply(RollDie(0, 5))
    assert game.phase is Phase.BUY and game.asks[0].kind == "buy"
    assert game.cat.track[game.scoring_space(0)].coins == 8
    return game


def test_Q22_refusal_a_purchase_over_budget() -> None:
    game = buying_game()
    r = refused(game, tap(game, PadState(), 0, "blue-2-01"), "over_budget", "Q22")
    assert (r.get("price"), r.get("left"), r.get("coins")) == (10, 8, 8)
    first = tap(game, PadState(), 0, "orange-1-05")  # 3 coins: 5 left, so it waits
    assert first.action is None and first.refusal is None and first.basket == ("orange-1-05",)
    r = refused(game, tap(game, first.state, 0, "red-1-01"), "over_budget", "Q22")
    assert (r.get("price"), r.get("left")) == (6, 5)


def test_Q22_refusal_a_colour_not_yet_unlocked() -> None:
    game = buying_game()
    r = refused(game, tap(game, PadState(), 0, "yellow-1-01"), "colour_locked", "Q22")
    assert (r.get("first"), r.get("round")) == (2, 1)
    assert "mandrake can be bought from round 2" in r.message()
    game = buying_game(round_=2)
    refused(game, tap(game, PadState(), 0, "purple-1-01"), "colour_locked", "Q22")
    outcome = tap(game, PadState(), 0, "yellow-1-01")  # 8 coins: nothing else fits beside
    assert outcome.action == Buy(0, ("yellow-1-01",))
    apply(game, outcome)
    assert "yellow-1-01" in game.players[0].bag


def test_Q22_two_chips_bought_are_of_different_colours_and_the_second_tap_buys() -> None:
    game = buying_game()
    first = tap(game, PadState(), 0, "orange-1-05")
    refused(game, tap(game, first.state, 0, "orange-1-06"), "same_colour", "Q22")
    second = tap(game, first.state, 0, "green-1-05")  # 3 + 4 = 7 of 8
    assert second.action == Buy(0, ("orange-1-05", "green-1-05"))
    assert second.state.basket_of(0) == ()
    apply(game, second)
    assert {"orange-1-05", "green-1-05"} <= game.players[0].bag


def test_Q28_Q22_a_chip_that_is_not_in_the_supply_or_is_white_is_not_sold() -> None:
    game = buying_game()
    r = refused(game, tap(game, PadState(), 0, chip_in(game, 0, "white-1")), "not_for_sale", "Q28")
    assert r.get("where") == "bag:0"
    refused(game, tap(game, PadState(), 0, "white-1-20"), "white_not_sold", "Q22")


def test_Q22_only_the_seat_whose_turn_it_is_buys_and_done_buys_what_was_tapped() -> None:
    game = buying_game()
    r = refused(game, tap(game, PadState(), 1, "orange-1-05"), "wait_turn", "Q22")
    assert r.get("buyer") == 0
    refused(game, finish_buying(game, PadState(), 1), "nothing_to_buy", "Q22")
    state = tap(game, PadState(), 0, "orange-1-05").state
    done = finish_buying(game, state, 0)
    assert done.action == Buy(0, ("orange-1-05",))
    assert finish_buying(game, PadState(), 0).action == Buy(0, ())  # D17: nothing is allowed
    apply(game, done)
    assert "orange-1-05" in game.players[0].bag


def test_Q9_a_tap_in_a_step_that_draws_nothing_is_refused() -> None:
    game = new_game(2)
    stop_all(game)
    assert game.phase is Phase.DIE
    refused(game, tap(game, PadState(), 0, chip_in(game, 0, "white-1")), "not_now", "Q9")


# ---------------------------------------------------------------- the phone's two buttons


def test_E19_a_chip_drawn_untapped_is_placed_by_kind_and_its_real_tap_is_not_refused() -> None:
    game = new_game(2)
    bag_only(game, 0, "white-1", "white-1", "orange-1")
    a, b = sorted(game.players[0].bag)[1:]
    outcome = untapped_draw(game, PadState(), 0, "white-1")
    assert outcome.action == Draw(0, a)  # the lowest serial stands in
    state = apply(game, outcome)
    # physically the drawn chip was b; a is still in the bag and is tapped now
    outcome = tap(game, state, 0, a)
    assert outcome.action == Draw(0, b)
    state = apply(game, outcome)
    assert sorted(c for c, _ in game.players[0].pot) == [a, b]
    refused(game, tap(game, state, 0, a), "chip_in_pot", "Q12")  # no third white 1 in the bag


def test_E19_a_kind_not_in_the_bag_cannot_be_declared() -> None:
    game = new_game(2)
    r = refused(game, untapped_draw(game, PadState(), 0, "red-4"), "not_in_bag", "Q12")
    assert "toadstool 4" in r.message()


def test_E20_undo_my_last_draw_keeps_the_other_seats_brewing() -> None:
    game = new_game(3)
    draw(game, 0, "orange-1")
    draw(game, 1, "green-1")
    before_mine = json.dumps([seat_view(game, s)["seats"][0] for s in range(3)])
    draw(game, 0, "white-2")
    draw(game, 2, "white-1")
    draw(game, 1, "orange-1")
    back = undo_last_draw(game, PadState(), 0)
    assert not isinstance(back, Refusal)
    undone, _ = back
    assert undone.players[0].pot == game.players[0].pot[:1]
    assert json.dumps([seat_view(undone, s)["seats"][0] for s in range(3)]) == before_mine
    assert undone.players[1].pot == game.players[1].pot
    assert undone.players[2].pot == game.players[2].pot
    assert undone.chip_count() == game.chip_count()


def test_E20_undo_my_last_draw_refuses_with_nothing_to_undo_or_after_brewing() -> None:
    game = new_game(2)
    r = undo_last_draw(game, PadState(), 0)
    assert isinstance(r, Refusal) and (r.code, r.rule) == ("nothing_to_undo", "Q12")
    draw(game, 0, "orange-1")
    stop_all(game)
    assert game.phase is not Phase.BREW
    r = undo_last_draw(game, PadState(), 0)
    assert isinstance(r, Refusal) and (r.code, r.rule) == ("too_late", "Q16")


def test_E20_an_undone_stand_in_is_forgotten() -> None:
    game = new_game(2)
    state = apply(game, untapped_draw(game, PadState(), 0, "orange-1"))
    assert state.stand_ins_of(0)
    back = undo_last_draw(game, state, 0)
    assert not isinstance(back, Refusal)
    assert back[1].stand_ins_of(0) == frozenset()

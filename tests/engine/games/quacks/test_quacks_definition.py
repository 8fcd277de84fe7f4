"""Quacks behind the game seam (issue 22/23): the registry offers it; its one options model
is checked by the rules (rule ids); a game plays to its end through the definition alone;
its catalogue is the 216 chips and one draw pad per seat; its table turns pad taps and
phone buttons into actions, refuses with a rule and a code and changes nothing then, and
its views keep hands and bags private."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pagekit import bot_step

from engine.games import get
from engine.games.base import GameDefinition, Refused, option_fields
from engine.games.quacks.rules import QuacksConfig
from engine.games.quacks.scoring import breakdown
from engine.games.quacks.table import QuacksTable


def test_the_registry_offers_quacks_with_its_editions_titles() -> None:
    quacks = get("quacks")
    assert isinstance(quacks, GameDefinition) and quacks.id == "quacks"
    assert quacks.rules_doc == "RULES-QUACKS.md"


def test_Q1_Q8_Q31_the_options_are_one_model_checked_by_the_rules() -> None:
    quacks = get("quacks")
    fields = {f.name: f for f in option_fields(quacks.options)}
    assert {"players", "start_player", "start_rubies", "show_odds", "bag_visible"} <= set(fields)
    assert all(f.description for f in fields.values())
    assert quacks.check({"players": 3}).wire()["start_rubies"] == 1  # D2's default
    with pytest.raises(Refused) as err:
        quacks.check({"players": 3, "start_player": 3})
    assert err.value.rule == "Q8" and err.value.code == "bad_config"
    with pytest.raises(Refused) as err:
        quacks.check({"players": 3, "ingredient_set": 2})  # Set 2: data only (Q30)
    assert err.value.rule == "Q30"
    with pytest.raises(Refused):
        quacks.check({"players": 3, "colours": ["red"]})  # unknown option: refused


def test_Q8_D31_the_start_player_is_a_seat_option_and_random_is_drawn_from_the_seed() -> None:
    quacks = get("quacks")
    field = {f.name: f for f in option_fields(quacks.options)}["start_player"]
    assert field.seat_of == "players" and field.nullable and field.default == 0
    assert (field.bounds["minimum"], field.bounds["maximum"]) == (0, 3)
    options = quacks.check({"players": 3, "start_player": None})
    starts = [quacks.new(options, random.Random(seed)).start_player for seed in range(40)]
    assert set(starts) == {0, 1, 2}  # only the game's seats
    assert starts == [quacks.new(options, random.Random(seed)).start_player
                      for seed in range(40)]  # the same seed, the same start
    assert quacks.new(quacks.check({"players": 3, "start_player": 2}),
                      random.Random(1)).start_player == 2


def test_Q25_a_game_plays_to_its_end_through_the_definition_alone() -> None:
    quacks = get("quacks")
    state = quacks.new(quacks.check({"players": 3}), random.Random(4))
    rng = random.Random(4)
    while not quacks.is_over(state):
        action = rng.choice(list(quacks.legal_actions(state)))
        assert quacks.action_from_wire(quacks.action_to_wire(action)) == action
        quacks.apply(state, action)
    scores: Any = quacks.to_wire(quacks.scores(state))
    assert scores["over"] and scores["winners"]
    assert all(len(s["rounds"]) == 9 for s in scores["seats"])
    with pytest.raises(Refused) as err:
        quacks.apply(state, quacks.action_from_wire({"type": "stop", "seat": 0}))
    assert err.value.rule == "Q25"


def test_the_catalogue_is_the_216_chips_and_one_draw_pad_per_seat() -> None:
    catalogue = get("quacks").catalogue
    assert len(catalogue.pieces) == 216 and catalogue.is_piece("white-1-20")
    assert not catalogue.is_piece("white-1-21")
    assert catalogue.places_of("cell") == () and len(catalogue.places_of("pad")) == 4
    assert get("quacks").names.piece("red-2-03", "de") == "Fliegenpilz 2"
    assert get("quacks").names.place("pad:0", "fr") == "plateau de pioche de la place 1"


def test_Q12_the_table_turns_taps_into_draws_and_refuses_with_a_rule_and_code() -> None:
    table = QuacksTable(QuacksConfig(players=2), random.Random(1))
    before = json.dumps(table.public_view(), sort_keys=True)
    refused = table.tap(0, "red-4-01")
    assert refused.refusal is not None and (refused.refusal.rule, refused.refusal.code) == (
        "Q12",
        "chip_in_supply",
    )
    assert json.dumps(table.public_view(), sort_keys=True) == before
    mine = table.seat_view(0)["bag"]
    assert mine["white-1"] == 4
    chip = "orange-1-01"
    assert table.tap(0, chip).ok and table.game.players[0].pot[0][0] == chip
    again = table.tap(0, chip)
    assert again.refusal is not None and again.refusal.code == "chip_in_pot"
    assert table.tap(5, chip).refusal is not None
    def refused_as(seat: int, verb: str, args: dict[str, object] | None = None) -> str:
        view = json.dumps(table.public_view(), sort_keys=True)
        refusal = table.play(seat, verb, args).refusal
        assert refusal is not None and refusal.rule in ("Q29", "Q8")
        assert json.dumps(table.public_view(), sort_keys=True) == view  # nothing changed
        return f"{refusal.code}: {refusal.message}"

    assert refused_as(0, "nonsense").startswith("unknown_move: no phone button 'nonsense'")
    assert refused_as(0, "answer", {}) == "bad_args: play answer: question: Field required"
    assert refused_as(0, "roll", {"face": 7}).startswith("bad_args: play roll: face: ")
    assert refused_as(0, "stop", {"now": True}).startswith("bad_args: play stop: now: ")
    assert refused_as(0, "buy", {"chips": "red-4-01"}).startswith("bad_args: play buy: chips")
    assert refused_as(5, "stop") == "no_seat: there is no seat 6 at this table"
    assert table.play(0, "undo_draw").ok and not table.game.players[0].pot


def test_Q29_the_views_keep_bags_and_hands_private_and_the_switch_hides_the_odds() -> None:
    table = QuacksTable(QuacksConfig(players=2), random.Random(1), show_odds=False)
    public = json.dumps(table.public_view())
    assert '"bag"' not in public and '"hand"' not in public and "explosion_chance" not in public
    assert "bag" in table.seat_view(1) and table.seat_view(1)["me"] == 1


def test_E16_the_hosts_undo_takes_back_the_last_action_and_rebuilds_the_steps() -> None:
    table = QuacksTable(QuacksConfig(players=2), random.Random(6))
    rng = random.Random(6)
    while table.game.round < 2:
        bot_step(table, {0, 1}, rng)
    before = table.public_view()
    bot_step(table, {0, 1}, rng)
    assert table.undo().ok
    assert table.public_view() == before
    assert table.public_view()["evaluation"][0]["code"] == "round_started"


def test_the_breakdown_of_a_bot_game_names_its_winners_first() -> None:
    table = QuacksTable(QuacksConfig(players=2), random.Random(9))
    rng = random.Random(9)
    while bot_step(table, {0, 1}, rng):
        pass
    out = breakdown(table.game)
    assert out.over and out.winners == list(table.game.winners)
    assert {s.seat for s in out.seats if s.rank == 1} == set(out.winners)
    assert out.tie_break == (len({s.vp for s in out.seats}) == 1)


def test_E22_pad_events_a_laid_tag_is_a_tap_a_lifted_one_nothing_an_unknown_one_refused() -> None:
    table = QuacksTable(QuacksConfig(players=2), random.Random(3))
    assert table.pad(1, "green-1-02", placed=True).ok
    assert table.game.players[1].pot[0][0] == "green-1-02"
    lifted = table.pad(1, "green-1-02", placed=False)
    assert lifted.ok and not lifted.events and len(table.game.players[1].pot) == 1
    unknown = table.pad(1, None)
    assert unknown.refusal is not None and (unknown.refusal.rule, unknown.refusal.code) == (
        "Q2",
        "unknown_tag",
    )


def test_the_page_catalogue_and_the_box_of_a_simulated_table() -> None:
    quacks = get("quacks")
    page = quacks.page_catalogue("de")
    assert page["t"]["q_colour_red"] == "Fliegenpilz" and len(page["track"]) == 54
    assert page["cards"]["FP1"] == "purple" and page["rat_tails_after"][:4] == [1, 4, 7, 10]
    assert len(quacks.deck({"players": 3})) == 216


def test_E22_a_retired_tag_on_a_pad_is_refused_as_retired_naming_its_tag() -> None:
    """A tag a spare replaced (the hub says ``retired``) is put aside, never "enrol it"."""
    table = QuacksTable(QuacksConfig(players=2), random.Random(3))
    retired = table.pad(1, None, uid="04AB000000CDEF", retired=True)
    assert retired.refusal is not None and not retired.events
    assert (retired.refusal.rule, retired.refusal.code) == ("Q2", "retired_tag")
    assert dict(retired.refusal.params) == {"pad": 1, "uid": "04AB000000CDEF"}
    assert "put it aside" in retired.refusal.message
    unknown = table.pad(1, None, uid="04AB000000CDEF")  # not said retired: enrol it
    assert unknown.refusal is not None and unknown.refusal.code == "unknown_tag"


def test_E16_a_table_is_rebuilt_from_what_it_observed_and_draws_on_the_same() -> None:
    table = QuacksTable(QuacksConfig(players=3), random.Random(12), show_odds=False)
    rng = random.Random(12)
    while table.game.round < 3 or table.game.phase.value != "brew":
        bot_step(table, {0, 1, 2}, rng)
    assert table.play(0, "untapped", {"kind": "white-1"}).ok
    data = json.loads(json.dumps(table.observed()))
    back = QuacksTable.from_observed(data)
    assert back.public_view() == table.public_view()
    assert back.seat_view(0) == table.seat_view(0) and not back.show_odds
    drawn, again = back.play(1, "draw"), table.play(1, "draw")
    assert drawn.ok and drawn.events and drawn.events == again.events  # the same next chip


def test_E16_the_log_through_the_definition_replays_the_game() -> None:
    from engine.games.quacks.rules.log import replay_wire

    table = QuacksTable(QuacksConfig(players=2), random.Random(5))
    rng = random.Random(5)
    while table.game.round < 2:
        bot_step(table, {0, 1}, rng)
    wire = json.loads(json.dumps(get("quacks").log_to_wire(table)))
    assert replay_wire(wire).players[0].history == table.game.players[0].history


def test_the_catalogue_gives_each_chip_its_kind_for_enrolment_by_kind() -> None:
    """The hub enrols by the catalogue (`Catalogue.kinds`): each chip's kind, in runs of one
    kind (all the white 1s, then the white 2s, …), every physical chip once."""
    from collections import Counter

    from engine.games import get

    cat = get("quacks").catalogue
    kinds = [cat.kind_of(c) for c in cat.pieces]
    assert len(set(cat.pieces)) == len(cat.pieces) == 216
    runs = [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]
    assert len(runs) == len(set(runs)), "each kind's chips come in one run"
    assert Counter(kinds)["white-1"] > Counter(kinds)["white-3"] > 0

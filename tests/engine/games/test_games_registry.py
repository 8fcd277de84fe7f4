"""The games registry and the seam's interface (engine.games, issue 22)."""

from __future__ import annotations

import random

import pytest

from engine.games import DEFAULT_GAME, UnknownGame, game_ids, games, get
from engine.games.base import GameDefinition, Refused, option_fields


def test_the_registry_names_each_game_once_and_the_default_first() -> None:
    assert game_ids()[0] == DEFAULT_GAME == "glastonbury"
    assert [g.id for g in games()] == list(game_ids())
    assert get() is get("glastonbury")
    assert all(isinstance(g, GameDefinition) for g in games())


def test_an_unknown_game_is_refused_naming_the_games_offered() -> None:
    with pytest.raises(UnknownGame) as err:
        get("chess")
    assert str(err.value) == "unknown game 'chess': this table offers glastonbury, quacks"
    assert err.value.code == "unknown_game"


def test_G2_the_definition_checks_a_setup_with_the_rules_rule_id() -> None:
    game = get("glastonbury")
    options = game.check({"colours": ["yellow", "red"]})
    assert options.wire()["removed_colour"] == "green"  # the rules' default, filled in
    with pytest.raises(Refused) as err:
        game.check({"colours": ["yellow", "yellow"]})
    assert err.value.rule == "G2" and err.value.code == "bad_config"
    with pytest.raises(Refused) as err:
        game.check({"colours": ["yellow", "red"], "first_seat": 3})
    assert err.value.rule == "G4"


def test_a_game_plays_to_its_end_through_the_definition_alone() -> None:
    game = get("glastonbury")
    state = game.new(game.check({"colours": ["yellow", "red", "blue"]}), random.Random(3))
    while not game.is_over(state):
        action = game.legal_actions(state)[0]
        assert game.action_from_wire(game.action_to_wire(action)) == action
        game.apply(state, action)
    public = game.to_wire(game.public_view(state))
    assert "cauldrons" not in public and game.to_wire(game.scores(state))["seats"]


def test_the_options_model_is_the_form_every_option_has_a_description() -> None:
    fields = option_fields(get("glastonbury").options)
    assert [f.name for f in fields][:2] == ["colours", "first_seat"]
    assert all(f.description for f in fields)


def test_the_catalogue_lists_every_tagged_piece_and_place() -> None:
    catalogue = get("glastonbury").catalogue
    assert len(catalogue.pieces) == 84 and catalogue.is_piece("blue-a-4")
    assert catalogue.is_piece("corner-1") and "corner-1" not in catalogue.pieces  # no tag
    assert len(catalogue.places_of("cell")) == 32 and len(catalogue.places_of("pad")) == 4


def test_the_wires_place_bounds_come_from_the_games_catalogues() -> None:
    from engine.wire import contract

    catalogues = [g.catalogue for g in games()]
    assert contract.N_SEATS == max(c.seats for c in catalogues) == 4
    assert contract.GRID_SIZE == 6 and contract.N_PERIMETER == 20
    assert contract.CELL_PATTERN == r"^[0-5],[0-5]$"

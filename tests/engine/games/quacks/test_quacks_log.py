"""The game log (E16): actions are logged with chance resolved, a log replays to the same
game (also through JSON), undo takes back the last draw or choice, a bad log is refused."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quacks_helpers import draw, new_game

from engine.games.quacks.rules import Draw, Game, QuacksConfig, RollDie, Stop
from engine.games.quacks.rules.log import InvalidLog, log_to_wire, replay_wire, undo
from engine.games.quacks.rules.observer import seat_view

SETTINGS = settings(max_examples=max(5, settings().max_examples // 4), deadline=None)


def everything(game: Game) -> list[Any]:
    views = [seat_view(game, s) for s in range(game.config.players)]
    return [json.dumps(v, sort_keys=True) for v in views] + [game.chip_count()]


@SETTINGS
@given(st.integers(0, 10**6), st.integers(2, 4))
def test_a_log_replays_to_the_same_game_through_json(seed: int, players: int) -> None:
    game = Game.new(QuacksConfig(players=players), random.Random(seed))
    rng = random.Random(seed)
    middle = None
    while not game.is_over():
        seat = rng.choice(game.actors())
        legal = game.legal_actions(seat)
        game.apply(legal[0] if Draw(seat) in legal and rng.random() < 0.8 else rng.choice(legal))
        if middle is None and game.round == 5:
            middle = (json.dumps(log_to_wire(game)), everything(game))
    assert middle is not None
    assert everything(replay_wire(json.loads(middle[0]))) == middle[1]
    assert everything(replay_wire(json.loads(json.dumps(log_to_wire(game))))) == everything(game)


def test_the_log_holds_the_chip_drawn_and_the_face_rolled() -> None:
    game = new_game(2)
    game.apply(Draw(0))
    game.apply(Stop(0))
    game.apply(Stop(1))
    game.apply(RollDie(0))
    drawn, _, _, rolled = game.log
    assert isinstance(drawn, Draw) and drawn.chip in {c for c, _ in game.players[0].pot}
    assert isinstance(rolled, RollDie) and rolled.face in range(1, 7)


def test_undo_takes_back_the_last_draw() -> None:
    game = new_game(2)
    draw(game, 0, "orange-1")
    before = everything(game)
    draw(game, 0, "white-3")
    back = undo(game)
    assert everything(back) == before and back.log == game.log[:-1]
    with pytest.raises(InvalidLog):
        undo(game, 5)


def test_a_log_with_an_illegal_action_is_refused_naming_it() -> None:
    game = new_game(2)
    draw(game, 0, "orange-1")
    wire = log_to_wire(game)
    wire["actions"].append(wire["actions"][0])  # the same chip drawn twice
    with pytest.raises(InvalidLog) as err:
        replay_wire(wire)
    assert err.value.rule == "Q12" and "action #1" in err.value.message

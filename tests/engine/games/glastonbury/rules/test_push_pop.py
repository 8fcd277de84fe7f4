"""History by snapshots: `Game.push` keeps the state before each action and `Game.pop`
restores it, so stepping back equals replaying the log without the last action(s), for
random games (hypothesis) with known and unknown piles, any mix of pushes and pops."""

from __future__ import annotations

import random

import pytest
import rules_deals as D
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.glastonbury.rules import Game, GameLog, IllegalAction, Take, replay

# A whole game per example: a quarter of the profile's examples (tests/conftest.py).
SETTINGS = settings(max_examples=max(5, settings().max_examples // 4))


def _start(seed: int, players: int, unknown: bool) -> Game:
    config = D.config(players, recipes=players <= 3)
    game = Game.new(config, random.Random(seed))
    if unknown:
        game = Game.from_deal(config, game.deal.grid, None, game.deal.recipes)
    return game


def _same(stepped: Game, replayed: Game) -> None:
    assert stepped == replayed  # every piece of state, the actions included
    assert stepped.legal_actions() == replayed.legal_actions()
    assert stepped.view_public() == replayed.view_public()
    assert stepped.scores() == replayed.scores()


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 4), unknown=st.booleans(),
       back=st.lists(st.integers(1, 12), min_size=1, max_size=4))
def test_pop_equals_replay_without_the_last_actions(
    seed: int, players: int, unknown: bool, back: list[int]
) -> None:
    game = _start(seed, players, unknown)
    rng = random.Random(seed + 1)
    while not game.is_over():
        game.push(rng.choice(game.legal_actions()))
    whole = GameLog.of(game)
    stepped = game.copy()
    for count in back:
        count = min(count, len(stepped.actions))
        undone = [stepped.pop() for _ in range(count)]
        assert undone == list(reversed(whole.actions[len(stepped.actions):][:count]))
        _same(stepped, replay(GameLog.of(stepped)))
        _same(stepped, replay(whole.without_last(len(whole.actions) - len(stepped.actions))))
    # Playing the same actions again gives the same game, event for event.
    again = replay(GameLog.of(stepped))
    for action in whole.actions[len(stepped.actions):]:
        assert stepped.push(action) == again.push(action)
    _same(stepped, game)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 4), unknown=st.booleans(),
       steps=st.lists(st.integers(-3, 6), min_size=5, max_size=40))
def test_any_mix_of_pushes_and_pops_equals_a_replay(
    seed: int, players: int, unknown: bool, steps: list[int]
) -> None:
    """Positive steps push that many random actions, negative ones pop: at every point the
    game equals its log replayed from the deal."""
    game = _start(seed, players, unknown)
    rng = random.Random(seed + 2)
    for step in steps:
        for _ in range(abs(step)):
            if step > 0 and not game.is_over():
                game.push(rng.choice(game.legal_actions()))
            elif step < 0 and game.actions:
                game.pop()
        _same(game, replay(GameLog.of(game)))


def test_a_copy_steps_back_on_its_own() -> None:
    game = _start(5, 4, unknown=True)
    rng = random.Random(5)
    for _ in range(30):
        game.push(rng.choice(game.legal_actions()))
    copy = game.copy()
    copy.pop()
    copy.pop()
    assert len(copy.actions) == len(game.actions) - 2
    assert game == replay(GameLog.of(game))  # the original keeps its state and history
    game.pop()
    assert game == replay(GameLog.of(game))


def test_pop_refuses_what_push_did_not_keep() -> None:
    game = _start(7, 3, unknown=False)
    with pytest.raises(IllegalAction, match="has not started") as exc:
        game.pop()
    assert exc.value.rule == "G4"
    game.push(game.legal_actions()[0])
    game.apply(game.legal_actions()[0])  # applied without a snapshot
    before = game.state_key()
    with pytest.raises(IllegalAction, match="not kept with push") as exc:
        game.pop()
    assert exc.value.rule == "G4" and game.state_key() == before
    sampled = replay(GameLog.of(game)).copy(history=False)
    with pytest.raises(IllegalAction, match="not kept with push"):
        sampled.pop()


def test_an_illegal_push_keeps_nothing() -> None:
    game = _start(3, 2, unknown=True)
    first = game.legal_actions()[0]
    assert isinstance(first, Take)
    game.push(first)
    with pytest.raises(IllegalAction):
        game.push(first)  # the hole waits for its refill: no take now
    assert game.pop() == first
    assert game == Game(game.config, game.deal)

"""The one game tracker (`PublicGame`): a bot's observation read straight off a followed
public game equals the one rebuilt by replaying the whole game (`tracker_for`), the bots
decide the same on both, and an undo (`rewind`) equals following the shorter game afresh.
Random games (hypothesis), simulated (known pile) and real-table (unknown pile)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.glastonbury.bots import (
    GreedyBot,
    ObservationTracker,
    PublicGame,
    SearchBot,
    decide,
    observe_public,
    tracker_for,
)
from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.rules.actions import Refill
from engine.games.glastonbury.rules.board import TAKEABLE_CELLS
from engine.games.glastonbury.rules.cards import PLAYER_COLOURS

# A whole game per example: a quarter of the profile's examples (tests/conftest.py).
SETTINGS = settings(max_examples=max(5, settings().max_examples // 4))


def _followed(seed: int, players: int, recipes: bool, moves: int) -> tuple[Game, PublicGame]:
    """A real-table game (pile unknown, refills as actions) and its follower, `moves` in."""
    config = GameConfig(colours=PLAYER_COLOURS[:players], recipes=recipes)
    dealt = Game.new(config, random.Random(seed))
    game = Game.from_deal(config, dealt.deal.grid, None, dealt.deal.recipes)
    follower = PublicGame(config, game.deal.grid, game.deal.recipes)
    rng = random.Random(seed + 1)
    for _ in range(moves):
        if game.is_over():
            break
        action = rng.choice(game.legal_actions())
        follower.observe(action, game.push(action))
    return game, follower


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 4), recipes=st.booleans(),
       moves=st.integers(0, 160))
def test_an_observation_off_the_followed_game_equals_a_replayed_one(
    seed: int, players: int, recipes: bool, moves: int
) -> None:
    game, follower = _followed(seed, players, recipes, moves)
    shadow = follower.shadow
    assert shadow == game  # at a real table the public actions are the whole game
    for seat in range(players):
        replayed = tracker_for(shadow, seat).observation()
        direct = observe_public(shadow, seat, reveals=follower.reveals(seat))
        assert direct == replayed
        assert direct.shadow == replayed.shadow  # the stand-in recipes included
        assert follower.observation(seat) == replayed
    seat = shadow.seat
    direct = observe_public(shadow, seat, reveals=follower.reveals(seat))
    if direct.legal and not any(isinstance(a, Refill) for a in direct.legal):
        replayed = tracker_for(shadow, seat).observation()
        for bot in (GreedyBot(), SearchBot(simulations=8)):
            assert (decide(bot, direct, random.Random(seed))
                    == decide(bot, replayed, random.Random(seed)))


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 4), known=st.booleans(),
       moves=st.integers(1, 160), back=st.integers(0, 40))
def test_rewind_equals_following_the_shorter_game_afresh(
    seed: int, players: int, known: bool, moves: int, back: int
) -> None:
    """Also for a simulated game, whose refills the tracker takes from the public events."""
    config = GameConfig(colours=PLAYER_COLOURS[:players])
    game = Game.new(config, random.Random(seed))
    if not known:
        game = Game.from_deal(config, game.deal.grid, None)
    grid = [game.grid[c] for c in TAKEABLE_CELLS]
    trackers = [ObservationTracker.for_new_game(game, s) for s in range(players)]
    history = []
    rng = random.Random(seed + 2)
    for _ in range(moves):
        if game.is_over():
            break
        action = rng.choice(game.legal_actions())
        events = game.apply(action)
        history.append((action, events))
        for tracker in trackers:
            tracker.observe(action, events)
    length = max(0, len(history) - back)
    for seat, tracker in enumerate(trackers):
        tracker.rewind(length)
        fresh = ObservationTracker(config, seat, Game.from_deal(config, grid, None)
                                   .view_public()["grid"], tracker.recipes)
        for action, events in history[:length]:
            fresh.observe(action, events)
        assert tracker.shadow == fresh.shadow
        assert tracker.observation() == fresh.observation()
        if length < len(history):  # and it follows the game on from there
            tracker.observe(*history[length])
            fresh.observe(*history[length])
            assert tracker.shadow == fresh.shadow

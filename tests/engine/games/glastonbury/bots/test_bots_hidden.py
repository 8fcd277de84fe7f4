"""Bots never see hidden information: observations hold only what the seat may know, and
the search bot decides the same whatever the real pile order is."""

from __future__ import annotations

import random

from engine.games.glastonbury.bots import (
    ObservationTracker,
    SearchBot,
    observe_game,
    sample_world,
    visible_to,
)
from engine.games.glastonbury.bots.base import Observation
from engine.games.glastonbury.bots.greedy import GreedyBot
from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.rules.cards import CARDS
from engine.games.glastonbury.rules.events import PerluceoReveal

CONFIG = GameConfig(colours=("yellow", "red"))


def _play(game: Game, moves: int, seed: int = 0) -> list[ObservationTracker]:
    trackers = [ObservationTracker.for_new_game(game, s) for s in range(game.players)]
    bot = GreedyBot()
    rng = random.Random(seed)
    for _ in range(moves):
        if game.is_over():
            break
        action = bot.choose(trackers[game.seat].observation(), rng)
        events = game.apply(action)
        for tracker in trackers:
            tracker.observe(action, events)
    return trackers


def test_shadow_never_knows_the_pile_order() -> None:
    game = Game.new(CONFIG, random.Random(4))
    trackers = _play(game, 30)
    for tracker in trackers:
        observation = tracker.observation()
        assert observation.shadow.pile.order() is None
        assert observation.shadow.pile.known is False
        # Which cards are unseen is public knowledge; their order is not.
        assert observation.unseen == frozenset(game.pile.cards()) - set(observation.pile_bottom)
        assert observation.pile_size == len(game.pile)


def test_own_memory_forgets_covered_cards_of_others() -> None:
    game = Game.new(CONFIG, random.Random(5))
    trackers = _play(game, 40)
    tracker = ObservationTracker(
        CONFIG, 0, Game(game.config, game.deal).view_public()["grid"], (), memory="own"
    )
    referee = Game(game.config, game.deal)
    for action in game.actions:
        tracker.observe(action, referee.apply(action))
    observation = tracker.observation()
    own, other = observation.stacks
    assert list(own) == game.cauldrons[0]  # its own stack: every card, it laid each one
    assert other[-1] == game.cauldrons[1][-1]  # the top is public
    assert all(card is None for card in other[:-1])  # covered cards are forgotten
    assert set(game.cauldrons[1][:-1]) <= observation.unseen
    assert trackers[0].observation().stacks[1] == tuple(game.cauldrons[1])  # perfect memory


def test_perluceo_reveal_reaches_only_its_seat() -> None:
    reveal = PerluceoReveal(1, "perluceo-1", ("red-a-1",))
    assert visible_to(1, [reveal]) == [reveal]
    assert visible_to(0, [reveal]) == []


def test_observe_game_equals_incremental_tracking() -> None:
    game = Game.new(GameConfig(colours=("yellow", "red", "green")), random.Random(8))
    trackers = _play(game, 25)
    for seat, tracker in enumerate(trackers):
        assert observe_game(game, seat) == tracker.observation()


def test_sampled_worlds_respect_what_is_known() -> None:
    game = Game.new(CONFIG, random.Random(9))
    _play(game, 20)
    observation = observe_game(game, game.seat)
    orders = set()
    for seed in range(5):
        world = sample_world(observation, random.Random(seed))
        order = world.pile.order()
        assert order is not None
        assert sorted(order[: len(order) - len(observation.pile_bottom)]) == sorted(
            observation.unseen
        )
        assert tuple(order[len(order) - len(observation.pile_bottom) :]) == (
            observation.pile_bottom
        )
        assert world.view_public() == game.view_public()
        orders.add(tuple(order))
    assert len(orders) > 1  # really sampled


def test_own_memory_worlds_fill_forgotten_slots_with_cauldron_cards() -> None:
    game = Game.new(CONFIG, random.Random(10))
    _play(game, 40)
    observation = observe_game(game, game.seat, memory="own")
    other = 1 - game.seat
    world = sample_world(observation, random.Random(1))
    assert len(world.cauldrons[other]) == len(game.cauldrons[other])
    assert world.cauldrons[other][-1] == game.cauldrons[other][-1]
    assert all(CARDS[c].kind in ("ingredient", "immuto") for c in world.cauldrons[other])
    in_world = world.pile.cards() + [c for cauldron in world.cauldrons for c in cauldron]
    in_game = game.pile.cards() + [c for cauldron in game.cauldrons for c in cauldron]
    assert sorted(in_world) == sorted(in_game)


def _twin_games(moves: int) -> tuple[Game, Game, Observation, Observation]:
    """Two games identical in everything public, with different pile orders below the
    cards already drawn."""
    first = Game.new(CONFIG, random.Random(21))
    assert first.deal.pile is not None
    pile = list(first.deal.pile)
    drawn = moves + 2  # refills reveal at most one card per move
    tail = pile[drawn:]
    random.Random(99).shuffle(tail)
    assert tail != pile[drawn:]
    second = Game.from_deal(CONFIG, list(first.deal.grid), pile[:drawn] + tail)
    bot = GreedyBot()
    for _ in range(moves):
        observation = observe_game(first, first.seat)
        action = bot.choose(observation, random.Random(0))
        first.apply(action)
        second.apply(action)
    assert first.pile.order() != second.pile.order()
    seat = first.seat
    return first, second, observe_game(first, seat), observe_game(second, seat)


def test_search_decision_is_independent_of_the_true_pile_order() -> None:
    for moves in (0, 9):
        _, _, obs_a, obs_b = _twin_games(moves)
        assert obs_a == obs_b  # the same observation: nothing of the pile order leaks
        for seed in range(4):
            bot_a = SearchBot(simulations=24, depth=12)
            bot_b = SearchBot(simulations=24, depth=12)
            action_a = bot_a.choose(obs_a, random.Random(seed))
            action_b = bot_b.choose(obs_b, random.Random(seed))
            assert action_a == action_b
            assert [(s.action, s.mean, s.runs) for s in bot_a.last_stats] == [
                (s.action, s.mean, s.runs) for s in bot_b.last_stats
            ]


def test_tracker_out_of_step_is_a_clear_error() -> None:
    import pytest

    from engine.games.glastonbury.bots import BotError
    from engine.games.glastonbury.rules import Take

    game = Game.new(CONFIG, random.Random(2))
    tracker = ObservationTracker.for_new_game(game, 0)
    with pytest.raises(BotError, match="out of step"):
        tracker.observe(Take(0), [])  # a corner cell: never a legal take

"""Every bot plays only legal actions, over whole games, with 2 to 4 players."""

from __future__ import annotations

import random

import pytest

from engine.games.glastonbury.bots import GreedyBot, ObservationTracker, RandomBot, SearchBot
from engine.games.glastonbury.bots.base import Bot, Memory
from engine.games.glastonbury.bots.tournament import play_game
from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.rules.cards import PLAYER_COLOURS


def _play_checked(bots: list[Bot], config: GameConfig, seed: int, memory: Memory) -> Game:
    game = Game.new(config, random.Random(seed))
    trackers = [ObservationTracker.for_new_game(game, s, memory) for s in range(config.players)]
    rng = random.Random(seed)
    decisions = 0
    while not game.is_over():
        seat = game.seat
        observation = trackers[seat].observation()
        assert observation.legal == game.legal_actions()  # public info decides what is legal
        action = bots[seat].choose(observation, rng)
        assert action in game.legal_actions(), f"{bots[seat].name} chose illegal {action}"
        assert game.why_illegal(action) is None
        events = game.apply(action)
        for tracker in trackers:
            tracker.observe(action, events)
        decisions += 1
    # The trackers followed the real game exactly (public state).
    # (Not the final scores in the recipe variant: the shadow cannot know others' recipes.)
    for tracker in trackers:
        shadow_view, real_view = tracker.shadow.view_public(), game.view_public()
        if config.recipes:
            shadow_view.pop("end")
            real_view.pop("end")
        assert shadow_view == real_view
    assert decisions > 10
    return game


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("memory", ["perfect", "own"])
def test_random_and_greedy_play_legal_games(players: int, memory: Memory) -> None:
    config = GameConfig(colours=PLAYER_COLOURS[:players])
    for seed in range(3):
        bots: list[Bot] = [GreedyBot() if s % 2 else RandomBot() for s in range(players)]
        game = _play_checked(bots, config, seed + 10 * players, memory)
        assert game.is_over()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_search_plays_legal_games(players: int) -> None:
    config = GameConfig(colours=PLAYER_COLOURS[:players], recipes=players == 3)
    bots: list[Bot] = [SearchBot(simulations=6, depth=8)] + [GreedyBot()] * (players - 1)
    game = _play_checked(bots, config, 100 + players, "own" if players == 4 else "perfect")
    assert game.scores().winners


def test_search_with_random_rollouts_to_the_end() -> None:
    config = GameConfig(colours=("blue", "green"))
    bots: list[Bot] = [SearchBot(simulations=4, rollout="random", depth=None), RandomBot()]
    _play_checked(bots, config, 7, "perfect")


def test_recipe_variant_with_all_bots() -> None:
    config = GameConfig(colours=("yellow", "red", "green", "blue"), recipes=True)
    bots: list[Bot] = [RandomBot(), GreedyBot(), SearchBot(simulations=4, depth=6), GreedyBot()]
    game = play_game(bots, config, seed=3)
    assert game.is_over()
    assert len(game.scores().seats) == 4


def test_bots_at_a_real_table_with_an_unknown_pile() -> None:
    """A real table (pile order unknown to everyone): refills arrive as actions."""
    from engine.games.glastonbury.bots import hint

    shuffled = Game.new(GameConfig(colours=("red", "blue", "yellow")), random.Random(12))
    game = Game.from_deal(shuffled.config, list(shuffled.deal.grid), None)
    trackers = [ObservationTracker.for_new_game(game, s) for s in range(3)]
    bots: list[Bot] = [SearchBot(simulations=6, depth=6), GreedyBot(), RandomBot()]
    table = random.Random(5)  # plays the part of the cards that turn up from the pile
    rng = random.Random(6)
    hinted = False
    while not game.is_over():
        legal = game.legal_actions()
        if game.phase.value == "refill":
            action = legal[table.randrange(len(legal))]
        else:
            if not hinted and game.turns > 20:
                assert hint(game, game.seat, "greedy").action in legal
                hinted = True
            action = bots[game.seat].choose(trackers[game.seat].observation(), rng)
        assert action in legal
        events = game.apply(action)
        for tracker in trackers:
            tracker.observe(action, events)
    assert hinted
    assert trackers[0].shadow.view_public() == game.view_public()


def test_bot_seats_join_a_game_in_progress() -> None:
    """BotSeat catches up with a started game (e.g. after a service restart) and plays on."""
    from engine.games.glastonbury.bots import BotSeat

    game = Game.new(GameConfig(colours=("green", "yellow", "blue")), random.Random(44))
    for _ in range(9):
        game.apply(game.legal_actions()[0])
    players: list[Bot] = [GreedyBot(), RandomBot()]
    seats = [BotSeat(b, game, s, seed=3) for s, b in enumerate(players)]
    human = random.Random(8)
    while not game.is_over():
        deciding = [s for s in seats if s.to_act(game)]
        if deciding:
            action = deciding[0].act()
        else:  # seat 2: a person, here random
            legal = game.legal_actions()
            action = legal[human.randrange(len(legal))]
        assert action in game.legal_actions()
        events = game.apply(action)
        for bot_seat in seats:
            bot_seat.observe(action, events)
    assert seats[0].tracker.shadow.view_public() == game.view_public()

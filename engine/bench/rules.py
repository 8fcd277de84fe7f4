"""`cauldron bench engine`: complete random 4-player games per second on one core.

Two figures: with `Game.play()` (the rules alone, as search bots use them) and with
`Game.apply()` (the same rules, also building the events the service publishes).
"""

from __future__ import annotations

import random
import time

from engine.bench.kit import Figure, ProgressFn
from engine.games.glastonbury.rules import Game, GameConfig

GAMES_PER_RUN = 400


def play_random_games(count: int, seed: int, *, with_events: bool = False) -> tuple[int, float]:
    """Play `count` random legal 4-player games to the end; returns (actions, seconds)."""
    config = GameConfig(colours=("yellow", "red", "green", "blue"))
    rng = random.Random(seed)
    actions = 0
    start = time.perf_counter()
    for _ in range(count):
        game = Game.new(config, rng)
        step = game.apply if with_events else game.play
        while not game.is_over():
            step(rng.choice(game.legal_actions()))
            actions += 1
    return actions, time.perf_counter() - start


def run(runs: int, progress: ProgressFn) -> list[Figure]:
    games_per_s: list[float] = []
    actions_per_s: list[float] = []
    with_events: list[float] = []
    play_random_games(50, seed=0)  # warm-up
    for i in range(runs):
        actions, seconds = play_random_games(GAMES_PER_RUN, seed=1000 + i)
        games_per_s.append(GAMES_PER_RUN / seconds)
        actions_per_s.append(actions / seconds)
        _, seconds = play_random_games(GAMES_PER_RUN, seed=1000 + i, with_events=True)
        with_events.append(GAMES_PER_RUN / seconds)
        progress("engine: random games", i + 1, runs)
    return [
        Figure(
            "complete random 4-player games",
            "games/s",
            games_per_s,
            goal=">= 2,000 games/s on one core",
            detail={"games_per_run": GAMES_PER_RUN, "api": "Game.play"},
        ),
        Figure(
            "same, building every event",
            "games/s",
            with_events,
            detail={"games_per_run": GAMES_PER_RUN, "api": "Game.apply"},
        ),
        Figure("actions applied", "actions/s", actions_per_s),
    ]

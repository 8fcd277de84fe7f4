"""Quacks bot tournaments: seats rotated, win rates with 95% Wilson intervals (the rotation
and the statistic are every game's: `engine.games.tournament`)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.games.quacks.bots.policies import Bot, BotError
from engine.games.quacks.rules.game import Game, QuacksConfig
from engine.games.quacks.rules.observer import seat_view
from engine.games.tournament import (
    Progress,
    WinTally,
    lineup_for,
    tally_header,
    unique_names,
)


@dataclass(slots=True)
class Standing(WinTally):
    vp_sum: int = 0
    explosions: int = 0

    def to_json(self) -> dict[str, Any]:
        n = max(self.seats, 1)
        return {
            **self.tally_json(),
            "mean_vp": round(self.vp_sum / n, 2),
            "explosions_per_game": round(self.explosions / n, 2),
            "cpu_seconds_per_game": round(self.seconds / n, 3),
        }


@dataclass(slots=True)
class Result:
    players: int
    games: int
    seed: int
    standings: list[Standing]
    seconds: float = 0.0
    lineups: list[tuple[str, ...]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "game": "quacks",
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "seconds": round(self.seconds, 2),
            "standings": [s.to_json() for s in self.standings],
        }

    def table(self) -> str:
        return format_table(self)


def play_game(
    bots: Sequence[Bot], seed: int, thinking: list[float] | None = None, start_player: int = 0
) -> Game:
    """One seeded game; the seat to act next among those who may (brewing is simultaneous,
    N1) is picked by the referee's own seeded random, so no seat is always first."""
    config = QuacksConfig(players=len(bots), start_player=start_player)
    game = Game.new(config, random.Random(seed))
    referee = random.Random(seed ^ 0x5EED)
    rngs = [random.Random(seed * 1009 + 17 * s + 1) for s in range(len(bots))]
    while not game.is_over():
        actors = game.actors()
        if not actors:
            raise BotError(f"nobody can act in phase {game.phase.value}: an engine bug")
        seat = referee.choice(actors)
        started = time.process_time()
        action = bots[seat].choose(seat_view(game, seat), game.legal_actions(seat), rngs[seat])
        if thinking is not None:
            thinking[seat] += time.process_time() - started
        game.apply(action)
    return game


def run_tournament(
    labels: Sequence[str],
    make: Callable[[str], Bot],
    games: int,
    players: int = 2,
    seed: int = 1,
    progress: Progress | None = None,
) -> Result:
    if not labels:
        raise BotError("name at least one bot")
    if games < 1:
        raise BotError("play at least one game")
    if not 2 <= players <= 4:
        raise BotError(f"Quacks is for 2 to 4 players here, not {players}")
    bots = [make(label) for label in labels]
    names = unique_names(labels)
    standings = [Standing(name) for name in names]
    result = Result(players, games, seed, standings)
    started = time.perf_counter()
    for g in range(games):
        seats = lineup_for(g, len(labels), players)
        thinking = [0.0] * players
        game = play_game([bots[i] for i in seats], seed * 100_003 + g, thinking, g % players)
        for s, b in enumerate(seats):
            st = standings[b]
            st.vp_sum += game.players[s].vp
            st.explosions += sum(1 for h in game.players[s].history if h["exploded"])
            st.count(s, game.winners, thinking[s])
        result.lineups.append(tuple(names[i] for i in seats))
        if progress is not None:
            progress("tournament", g + 1, games)
    result.seconds = time.perf_counter() - started
    return result


def format_table(result: Result) -> str:
    lines = [
        f"Quacks: {result.games} games, {result.players} players, seed {result.seed}, "
        f"{result.seconds:.1f} s wall",
        f"{tally_header()} {'mean VP':>8} {'explosions':>11}",
    ]
    for s in result.standings:
        n = max(s.seats, 1)
        lines.append(f"{s.tally_row()} {s.vp_sum / n:>8.1f} {s.explosions / n:>11.2f}")
    return "\n".join(lines)

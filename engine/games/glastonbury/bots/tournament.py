"""Bot tournaments: many games, seats and colours rotated, win rates with 95% intervals.

Each game is played by a referee `Game` (a seeded simulation); every seat's bot sees only
its own `Observation`, built by its own `ObservationTracker` from the events it saw.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.games.glastonbury.bots.base import Bot, BotError, Memory, ObservationTracker
from engine.games.glastonbury.rules.cards import PLAYER_COLOURS
from engine.games.glastonbury.rules.game import Game, GameConfig, Phase
from engine.games.tournament import (
    Progress,
    WinTally,
    lineup_for,
    tally_header,
    unique_names,
)


@dataclass(slots=True)
class GameResult:
    lineup: tuple[str, ...]  # bot label per seat
    colours: tuple[str, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    turns: int
    seconds: float


@dataclass(slots=True)
class BotStanding(WinTally):
    score_sum: int = 0
    margin_sum: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            **self.tally_json(),
            "mean_score": round(self.score_sum / self.seats, 2) if self.seats else None,
            "mean_margin": round(self.margin_sum / self.seats, 2) if self.seats else None,
            "cpu_seconds_per_game": round(self.seconds / self.seats, 3) if self.seats else None,
        }


@dataclass(slots=True)
class TournamentResult:
    players: int
    games: int
    seed: int
    memory: Memory
    standings: list[BotStanding]
    results: list[GameResult] = field(default_factory=list)
    seconds: float = 0.0  # wall clock
    cpu_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "memory": self.memory,
            "seconds": round(self.seconds, 2),
            "cpu_seconds": round(self.cpu_seconds, 2),
            "standings": [s.to_json() for s in self.standings],
        }

    def table(self) -> str:
        return format_table(self)


def play_game(
    bots: Sequence[Bot],
    config: GameConfig,
    seed: int,
    memory: Memory = "perfect",
    thinking: list[float] | None = None,
) -> Game:
    """One game between `bots` (seat i plays `bots[i]`); returns the finished game."""
    if len(bots) != config.players:
        raise BotError(f"{len(bots)} bots for {config.players} seats")
    game = Game.new(config, random.Random(seed))
    trackers = [ObservationTracker.for_new_game(game, s, memory) for s in range(config.players)]
    rngs = [random.Random(seed * 1009 + 17 * s + 1) for s in range(config.players)]
    while not game.is_over():
        if game.phase is Phase.REFILL:  # only at a real table; never in a simulation
            raise BotError("tournament games must be simulations with a known pile")
        seat = game.seat
        started = time.process_time()  # CPU time: fair on a busy machine
        action = bots[seat].choose(trackers[seat].observation(), rngs[seat])
        if thinking is not None:
            thinking[seat] += time.process_time() - started
        events = game.apply(action)
        for tracker in trackers:
            tracker.observe(action, events)
    return game


def colours_for(game_index: int, players: int) -> tuple[str, ...]:
    """Player colours rotate too (with 2 players the removed colour follows)."""
    k = game_index % len(PLAYER_COLOURS)
    rotated = PLAYER_COLOURS[k:] + PLAYER_COLOURS[:k]
    return rotated[:players]


def run_tournament(
    labels: Sequence[str],
    make: Callable[[str], Bot],
    games: int,
    players: int = 2,
    seed: int = 1,
    memory: Memory = "perfect",
    progress: Progress | None = None,
) -> TournamentResult:
    if not labels:
        raise BotError("name at least one bot")
    if games < 1:
        raise BotError("play at least one game")
    if not 2 <= players <= 4:
        raise BotError(f"Glastonbury is for 2 to 4 players, not {players}")
    bots = [make(label) for label in labels]
    names = unique_names(labels)
    standings = [BotStanding(name) for name in names]
    result = TournamentResult(players, games, seed, memory, standings)
    started = time.perf_counter()
    cpu_started = time.process_time()
    for g in range(games):
        seats = lineup_for(g, len(labels), players)
        config = GameConfig(colours=colours_for(g, players))
        thinking = [0.0] * players
        game_started = time.perf_counter()
        game = play_game([bots[i] for i in seats], config, seed * 100_003 + g, memory, thinking)
        score = game.scores()
        totals = tuple(score.seat(s).total for s in range(players))
        winners = score.winners
        for s, b in enumerate(seats):
            standing = standings[b]
            standing.score_sum += totals[s]
            standing.margin_sum += totals[s] - max(t for o, t in enumerate(totals) if o != s)
            standing.count(s, winners, thinking[s])
        result.results.append(
            GameResult(
                tuple(names[i] for i in seats),
                config.colours,
                totals,
                winners,
                game.turns,
                time.perf_counter() - game_started,
            )
        )
        if progress is not None:
            progress("tournament", g + 1, games)
    result.seconds = time.perf_counter() - started
    result.cpu_seconds = time.process_time() - cpu_started
    return result


def format_table(result: TournamentResult) -> str:
    lines = [
        f"{result.games} games, {result.players} players, seed {result.seed}, "
        f"memory {result.memory}, {result.seconds:.1f} s wall, {result.cpu_seconds:.1f} s CPU",
        f"{tally_header(28)} {'mean score':>11} {'mean margin':>12} {'CPU s/game':>10}",
    ]
    for s in result.standings:
        mean = s.score_sum / s.seats if s.seats else 0.0
        margin = s.margin_sum / s.seats if s.seats else 0.0
        per_game = s.seconds / s.seats if s.seats else 0.0
        lines.append(f"{s.tally_row(28)} {mean:>11.1f} {margin:>12.1f} {per_game:>10.2f}")
    return "\n".join(lines)

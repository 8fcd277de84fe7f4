"""What every game's bot tournament shares: seats rotated over a ring of bots, win rates
with 95% Wilson intervals, and the report `cauldron tournament` prints
(`engine/app/tournament.py`). Each game plays its own games (its `GameDefinition.tournament`)
and counts into `WinTally`; the statistic and the rotation live here once.

Standard library only: a game's pure packages may use it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Z95 = 1.959963984540054

Progress = Callable[[str, int, int], None]
"""A long command's progress: (what, done, total)."""


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (fractional successes allowed: shared wins)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = (z / (1 + z2 / trials)) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    low = 0.0 if successes <= 0 else max(0.0, centre - half)  # exact at the ends
    high = 1.0 if successes >= trials else min(1.0, centre + half)
    return (low, high)


@dataclass(slots=True)
class WinTally:
    """One bot's seat-games and wins, with their interval: what every game's tournament
    reports first (a game's standing adds its own means)."""

    label: str
    seats: int = 0  # seat-games played
    wins: float = 0.0  # ties shared as fractions
    seconds: float = 0.0  # thinking time (CPU seconds)

    @property
    def win_rate(self) -> float:
        return self.wins / self.seats if self.seats else 0.0

    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.seats)

    def count(self, seat: int, winners: Sequence[int], thinking: float) -> None:
        """One seat-game: a win shared among tied winners."""
        self.seats += 1
        self.seconds += thinking
        if seat in winners:
            self.wins += 1 / len(winners)

    def tally_json(self) -> dict[str, Any]:
        low, high = self.interval()
        return {"bot": self.label, "seat_games": self.seats, "wins": round(self.wins, 4),
                "win_rate": round(self.win_rate, 4), "ci95": [round(low, 4), round(high, 4)]}

    def tally_row(self, width: int = 20) -> str:
        """The columns every game's table starts with (`TALLY_HEADER`)."""
        low, high = self.interval()
        return (f"{self.label:<{width}} {self.seats:>6} {self.wins:>7.2f} {self.win_rate:>8.1%} "
                f"  [{low:>5.1%}, {high:>5.1%}]")


def tally_header(width: int = 20) -> str:
    return f"{'bot':<{width}} {'games':>6} {'wins':>7} {'win rate':>9} {'95% CI':>15}"


def lineup_for(game_index: int, count: int, players: int) -> tuple[int, ...]:
    """Which bot (index into the ``count`` bots) sits at each seat in game ``game_index``.

    The bots are read as a ring: game g seats ``players`` consecutive bots starting at bot
    g mod count, so every group of neighbours meets; every ``count`` games the window also
    turns one seat further, so each bot of a group plays every seat (and so moves first) in
    turn, also when there are more bots than seats."""
    start = game_index % count
    turn = (game_index // count) % players
    window = [(start + i) % count for i in range(players)]
    return tuple(window[(i + turn) % players] for i in range(players))


def unique_names(labels: Sequence[str]) -> list[str]:
    """The bots' labels, a repeated one numbered (``greedy``, ``greedy#2``)."""
    names: list[str] = []
    for label in labels:
        name, n = label, 2
        while name in names:
            name, n = f"{label}#{n}", n + 1
        names.append(name)
    return names


class TournamentReport(Protocol):
    """What `GameDefinition.tournament` gives back: `cauldron tournament` prints one or
    the other."""

    def to_json(self) -> dict[str, Any]: ...

    def table(self) -> str: ...


__all__ = ["Z95", "Progress", "TournamentReport", "WinTally", "lineup_for", "tally_header",
           "unique_names", "wilson_interval"]

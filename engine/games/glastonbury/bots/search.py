"""The search bot: information-set Monte Carlo over sampled worlds.

For each decision the bot:

1. keeps the `candidates` best legal actions by the greedy rating (all when fewer);
2. samples worlds (`engine.games.glastonbury.bots.determinize.sample_world`): a random pile order
above the
   known Vanesco bottom, random recipes for the others, and with `memory="own"` random
   cards for forgotten covered slots; never the real game;
3. applies each candidate in each world and plays the game out with a fast rollout policy
   (light greedy with `epsilon` random moves, or random), every candidate in the same
   worlds with the same rollout seeds (common random numbers: the comparison between
   candidates is far less noisy than each mean);
4. spends the budget in rounds of successive halving: after each round the worse half of
   the candidates is dropped, so most rollouts go to the close contenders;
5. picks the candidate with the best mean final margin (own score − best other score).

`simulations` is the total number of rollouts per decision (the budget); `depth` the
number of actions a rollout plays before the position is scored as it stands (None: to
the end of the game, exact scores with recipes).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Final, Literal

from engine.games.glastonbury.bots.base import BotError, Observation
from engine.games.glastonbury.bots.determinize import sample_world
from engine.games.glastonbury.bots.evaluation import IN_CAULDRON, SPELL_OF, Tally
from engine.games.glastonbury.bots.greedy import Rating, rate_actions, reason_text
from engine.games.glastonbury.bots.texts import text
from engine.games.glastonbury.rules.actions import (
    DISCARD,
    KEEP,
    PASS,
    TAKES,
    USE_DECLINATIO,
    Action,
)
from engine.games.glastonbury.rules.board import FACED_LINE, LINES
from engine.games.glastonbury.rules.cards import Lang
from engine.games.glastonbury.rules.game import Game, Phase
from engine.games.glastonbury.rules.names import seat_name
from engine.games.glastonbury.rules.scoring import score_totals

Rollout = Literal["greedy", "random"]
# Tuned so a 100-game search-vs-greedy tournament takes about 3 minutes on one core and
# search still wins clearly (see the final report / README: figures measured there).
DEFAULT_SIMULATIONS: Final = 80
# Rollouts stop after this many actions and score the cauldrons as they stand: the far
# future of a random-ish rollout is mostly noise, and short rollouts buy more worlds.
DEFAULT_DEPTH: Final = 16
# Rough worth of a spell card in a rollout (the exact values do not matter much there).
_ROLLOUT_SPELL_VALUE: Final[dict[str, float]] = {
    "accio": 1.5,
    "declinatio": 0.5,
    "vanesco": 1.5,
    "perluceo": 0.0,
}


def rollout_policy(game: Game, rng: random.Random, epsilon: float) -> Action:
    """A fast light-greedy move for whoever is to play in a simulated game: the card of
    the faced line that adds most to their own cauldron (Accio is not used)."""
    legal = game.legal_actions()
    if len(legal) == 1 or rng.random() < epsilon:
        return legal[rng.randrange(len(legal))]
    phase = game.phase
    seat = game.seat
    colour = game.config.colours[seat]
    if phase is Phase.TAKE or phase is Phase.DECLINATIO:
        line = FACED_LINE[game.pawns[seat]]
        if line is None:  # at a corner with a Declinatio
            return USE_DECLINATIO if rng.random() < 0.5 else PASS
        tally = Tally(colour, game.cauldrons[seat])
        grid = game.grid
        best_value = -1e9
        best: Action = legal[0]
        for cell in LINES[line]:
            card = grid[cell]
            if card is None:
                continue
            spell = SPELL_OF.get(card)
            if spell is None:
                value = tally.gain(card) + rng.random() * 0.5
            else:
                if phase is Phase.DECLINATIO and spell in ("vanesco", "perluceo"):
                    continue
                value = _ROLLOUT_SPELL_VALUE[spell] + rng.random() * 0.5
            if value > best_value:
                best_value, best = value, TAKES[cell]
        return best
    if phase is Phase.LAST_CARD:
        assert game.last_card is not None
        card = game.last_card[1]
        keep = card in IN_CAULDRON and Tally(colour, game.cauldrons[seat]).gain(card) > 0
        return KEEP if keep else DISCARD
    return legal[rng.randrange(len(legal))]


def final_margin(game: Game, seat: int) -> float:
    """Own total minus the best other total: exact once over, else ingredient points."""
    if game.is_over():
        totals, _ = score_totals(
            game.seat_cards(),
            last_card_seat=game.last_card_seat,
            first_seat=game.config.first_seat,
            second_player_bonus=game.config.second_player_bonus,
        )
    else:
        totals = {
            s: Tally(colour, game.cauldrons[s]).points()
            for s, colour in enumerate(game.config.colours)
        }
    own = totals[seat]
    return own - max(v for s, v in totals.items() if s != seat)


def play_out(
    game: Game, seat: int, rng: random.Random, policy: Rollout, epsilon: float, depth: int | None
) -> float:
    """Play `game` (a sampled world, changed in place) on; the margin of `seat`."""
    steps = 0
    while not game.is_over() and (depth is None or steps < depth):
        if policy == "random":
            legal = game.legal_actions()
            game.play(legal[rng.randrange(len(legal))])
        else:
            game.play(rollout_policy(game, rng, epsilon))
        steps += 1
    return final_margin(game, seat)


@dataclass(slots=True)
class Stats:
    action: Action
    rating: Rating
    total: float = 0.0
    runs: int = 0

    @property
    def mean(self) -> float:
        return self.total / self.runs if self.runs else float("-inf")


@dataclass(slots=True)
class SearchBot:
    """Information-set Monte Carlo. `simulations`: rollouts per decision."""

    simulations: int = DEFAULT_SIMULATIONS
    candidates: int = 6
    rollout: Rollout = "greedy"
    epsilon: float = 0.1
    depth: int | None = DEFAULT_DEPTH
    name: str = "search"
    last_stats: list[Stats] = field(default_factory=list, repr=False)
    last_observation: Observation | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.simulations < 1:
            raise BotError("the search bot needs at least 1 simulation per decision")
        if self.candidates < 1:
            raise BotError("the search bot needs at least 1 candidate action")
        if self.rollout not in ("greedy", "random"):
            raise BotError(f"unknown rollout policy {self.rollout!r}; use 'greedy' or 'random'")

    def analyse(self, observation: Observation, rng: random.Random) -> list[Stats]:
        """Every candidate with its mean margin, best first."""
        ratings = rate_actions(observation)
        if not ratings:
            raise BotError(f"{seat_name(observation.seat)} has nothing to do now")
        ratings.sort(key=lambda r: r.key, reverse=True)
        alive = [Stats(r.action, r) for r in ratings[: self.candidates]]
        every = list(alive)
        if len(alive) == 1:
            return every
        budget = self.simulations
        rounds = max(1, (len(alive) - 1).bit_length())
        while len(alive) > 1 and budget > 0:
            per_round = max(1, budget // rounds)
            worlds = max(1, per_round // len(alive))
            for _ in range(worlds):
                world = sample_world(observation, rng)
                seed = rng.getrandbits(32)
                for stats in alive:
                    game = world.copy()
                    game.play(stats.action)
                    stats.total += play_out(
                        game,
                        observation.seat,
                        random.Random(seed),
                        self.rollout,
                        self.epsilon,
                        self.depth,
                    )
                    stats.runs += 1
            budget -= worlds * len(alive)
            rounds = max(1, rounds - 1)
            alive.sort(key=lambda s: (s.mean, s.rating.key), reverse=True)
            alive = alive[: max(1, (len(alive) + 1) // 2)]
        every.sort(key=lambda s: (s.runs, s.mean, s.rating.key), reverse=True)
        return every

    def choose(self, observation: Observation, rng: random.Random) -> Action:
        if len(observation.legal) == 1:
            return observation.legal[0]
        self.last_stats = self.analyse(observation, rng)
        self.last_observation = observation
        return self.last_stats[0].action

    def explain(self, observation: Observation, action: Action, lang: Lang = "en") -> str:
        if self.last_observation is observation and self.last_stats:
            stats = self.last_stats  # explain the decision just taken
        else:
            stats = self.analyse(observation, random.Random(0))
        for i, entry in enumerate(stats):
            if entry.action != action:
                continue
            words = reason_text(entry.rating, lang)
            others = [s.mean for j, s in enumerate(stats) if j != i and s.runs]
            if entry.runs and others:
                words += "; " + text(
                    "search",
                    lang,
                    sims=sum(s.runs for s in stats),
                    margin=entry.mean,
                    other=max(others),
                )
            return words
        for rating in rate_actions(observation):
            if rating.action == action:
                return reason_text(rating, lang)
        return str(action)

"""`cauldron bench history`: stepping back through a game's history, at turn 60.

Two production paths, on random 4-player games played at a real table (the pile's order
unknown, refills observed) through the engine's `TableInterpreter` until turn 60:

- **undo at turn 60**: the host's ``undo`` command (`TableInterpreter.command("undo")`:
  the game one decision back, the steps to put the cards back, the alerts), on a fresh copy
  of the table each time (the copy is not timed);
- **bot decision at turn 60**: one decision of the demo's bot for the seat to play
  (`engine.app.demo.driver.bot_decision`: the random bot, whose choice costs nothing, so
  the figure is what reading the seat's observation costs; the greedy bot the demo runs;
  the search bot with 50 simulations), from the public game as the demo follows it.

Each figure is the median over runs of the per-run median over `SAMPLES` positions.
"""

from __future__ import annotations

import copy
import random
import statistics
import time
from collections.abc import Callable

from engine.app.demo.driver import bot_decision
from engine.bench.kit import Figure, ProgressFn
from engine.games.glastonbury.bots import make_bot
from engine.games.glastonbury.rules import Game
from engine.games.glastonbury.rules.game import Phase
from engine.games.glastonbury.rules.log import GameLog, replay
from engine.games.glastonbury.table.interpreter import TableInterpreter
from engine.games.glastonbury.table.table_driver import (
    inputs_for,
    next_decision,
    refill_of,
    scripted_game,
)

TURN = 60
SAMPLES = 8  # positions (games) per run
REPEATS = 5  # timings per position (the median is kept)


def table_at_turn(seed: int, turn: int = TURN) -> TableInterpreter | None:
    """A real-table interpreter whose random 4-player game reached `turn` (between two
    decisions, the active seat to take); None when the game ended before."""
    script = scripted_game(4, seed, max_decisions=0)
    ref = script.reference
    assert ref is not None
    rng = random.Random(seed * 31 + 7)
    interp = TableInterpreter("bench")
    for inp in script.deal:
        interp.handle(inp)
    interp.command("new_game", dict(script.new_game_args))
    game = interp.game
    while game is not None and game.turns < turn:
        if ref.is_over():
            return None
        decision = next_decision(ref, rng)
        for inp in inputs_for(interp, decision, refill_of(ref, decision)):
            interp.handle(inp)
        game = interp.game
    if game is None or game.phase is not Phase.TAKE or not game.actions:
        return None
    return interp


def positions(count: int, seed: int) -> list[TableInterpreter]:
    found: list[TableInterpreter] = []
    k = 0
    while len(found) < count:
        interp = table_at_turn(seed + k)
        k += 1
        if interp is not None:
            found.append(interp)
    return found


def _median_time(step: Callable[[], object], prepare: Callable[[], object] | None = None,
                 repeats: int = REPEATS) -> float:
    samples = []
    for _ in range(repeats):
        if prepare is not None:
            prepare()
        start = time.perf_counter()
        step()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def undo_ms(interp: TableInterpreter) -> float:
    """The host's undo at this position, in ms (on copies of the table)."""
    fresh: list[TableInterpreter] = []

    def prepare() -> None:
        fresh[:] = [copy.deepcopy(interp)]

    return 1000 * _median_time(lambda: fresh[0].command("undo"), prepare)


def shadow_of(interp: TableInterpreter) -> Game:
    """The game as the demo's bots follow it: the public deal and actions, pile unknown."""
    game = interp.game
    assert game is not None
    return replay(GameLog.of(game))


def decision_ms(bot_spec: str, interp: TableInterpreter, seed: int) -> float:
    bot = make_bot(bot_spec)
    shadow = shadow_of(interp)
    seat = shadow.seat
    return 1000 * _median_time(lambda: bot_decision(bot, shadow.copy(), seat, seed))


# The random bot's decision is the tracking alone: what the seat knows, read for it.
BOTS = (("random", "random"), ("greedy", "greedy"), ("search", "search:simulations=50"))


def run(runs: int, progress: ProgressFn) -> list[Figure]:
    undo: list[float] = []
    decisions: dict[str, list[float]] = {name: [] for name, _ in BOTS}
    actions: list[float] = []
    for i in range(runs):
        tables = positions(SAMPLES, seed=9000 + 100 * i)
        actions.append(statistics.median(len(t.game.actions) for t in tables if t.game))
        undo.append(statistics.median(undo_ms(t) for t in tables))
        for name, spec in BOTS:
            decisions[name].append(statistics.median(
                decision_ms(spec, t, seed=k) for k, t in enumerate(tables)))
        progress("history: undo, bot decisions", i + 1, runs)
    detail = {"turn": TURN, "positions_per_run": SAMPLES, "timings_per_position": REPEATS,
              "players": 4, "actions_at_turn_60_median": statistics.median(actions)}
    return [
        Figure(f"undo at turn {TURN}", "ms", undo, detail=detail),
        *(Figure(f"bot decision at turn {TURN} ({name})", "ms", decisions[name],
                 detail={**detail, "bot": spec}) for name, spec in BOTS),
    ]

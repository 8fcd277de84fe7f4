"""The host's undo steps back by the game's snapshots (`Game.pop`), not by a replay: for
random games played at a table (hypothesis), any number of undos in a row leaves the
interpreter's game equal to its log replayed without the undone actions, with the same
steps to put the cards back, and play goes on from there."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.glastonbury.rules import GameLog, replay
from engine.games.glastonbury.table.interpreter import TableInterpreter, undo_steps
from engine.games.glastonbury.table.table_driver import (
    inputs_for,
    next_decision,
    refill_of,
    scripted_game,
)

# A whole game per example: a quarter of the profile's examples (tests/conftest.py).
SETTINGS = settings(max_examples=max(5, settings().max_examples // 4))


def _table(seed: int, players: int, decisions: int) -> TableInterpreter:
    script = scripted_game(players, seed, max_decisions=0)
    ref = script.reference
    assert ref is not None
    rng = random.Random(seed)
    interp = TableInterpreter("t")
    for inp in script.deal:
        interp.handle(inp)
    interp.command("new_game", dict(script.new_game_args))
    for _ in range(decisions):
        if ref.is_over():
            break
        decision = next_decision(ref, rng)
        for inp in inputs_for(interp, decision, refill_of(ref, decision)):
            interp.handle(inp)
    return interp


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 4),
       decisions=st.integers(1, 90), undos=st.integers(1, 6))
def test_undo_by_snapshots_equals_a_replay_of_the_log(
    seed: int, players: int, decisions: int, undos: int
) -> None:
    interp = _table(seed, players, decisions)
    for _ in range(undos):
        before = interp.game
        assert before is not None
        if not before.actions:
            break
        log = GameLog.of(before)
        out = interp.command("undo")
        replayed = replay(log.without_last(out.undone))
        assert interp.game == replayed
        assert interp.game.legal_actions() == replayed.legal_actions()
        assert interp.game.view_public() == replayed.view_public()
        assert out.instructions == [step.text for step in undo_steps(before, replayed)]
        assert len(before.actions) == len(log.actions)  # the game undone from is untouched
    game = interp.game
    assert game is not None
    if not game.is_over():  # play goes on from the stepped-back game
        action = game.legal_actions()[0]
        game.push(action)
        assert game == replay(GameLog.of(game))

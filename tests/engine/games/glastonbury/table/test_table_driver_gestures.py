"""The table driver speaks gestures (`gestures_for`), the simulated table's words; the sensor
inputs it feeds an interpreter are those gestures' (`Gesture.inputs`), as many as the
simulated back-end's own table (`GESTURE_INPUTS`) says each gesture makes."""

from __future__ import annotations

import random

from engine.games.glastonbury.rules.cards import enrolment_order
from engine.games.glastonbury.table.interpreter import TableInterpreter
from engine.games.glastonbury.table.table_driver import (
    Gesture,
    gestures_for,
    inputs_for,
    next_decision,
    refill_of,
    scripted_game,
)
from hub.backends.sim import GESTURE_INPUTS

CARD = enrolment_order()[0]


def test_each_gesture_makes_as_many_inputs_as_the_simulated_table_says() -> None:
    for gesture in (Gesture("lift", 0, CARD, 7), Gesture("lay", 1, CARD, 7),
                    Gesture("lay", 2, CARD), Gesture("slide", 3, CARD),
                    Gesture("tap", 1, CARD)):
        assert len(gesture.inputs()) == GESTURE_INPUTS[gesture.kind], gesture


def test_a_whole_game_is_played_by_gestures() -> None:
    script = scripted_game(3, 5, max_decisions=0)
    ref = script.reference
    assert ref is not None
    rng = random.Random(5)
    interp = TableInterpreter("t")
    for inp in script.deal:
        interp.handle(inp)
    interp.command("new_game", dict(script.new_game_args))
    while not ref.is_over():
        decision = next_decision(ref, rng)
        refill = refill_of(ref, decision)
        gestures = gestures_for(interp, decision, refill)
        assert [i for g in gestures for i in g.inputs()] == inputs_for(interp, decision, refill)
        for gesture in gestures:
            for inp in gesture.inputs():
                interp.handle(inp)
    game = interp.game
    assert game is not None and game.is_over()
    assert game.actions and game.scores() == ref.scores()

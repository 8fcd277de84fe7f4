"""The greedy bot in fixed positions, and the values it is built on."""

from __future__ import annotations

import random

from bots_deals import deal_game

from engine.games.glastonbury.bots import GreedyBot, ObservationTracker
from engine.games.glastonbury.bots.evaluation import (
    IMMUTO,
    IN_CAULDRON,
    Tally,
    card_gain,
    cauldron_points,
)
from engine.games.glastonbury.bots.greedy import rate_actions
from engine.games.glastonbury.rules import Game, GameConfig, Take
from engine.games.glastonbury.rules.board import parse_cell

CONFIG = GameConfig(colours=("yellow", "red"))  # 2 players: green is removed


def _tracker_after(game: Game, script: list[str], seat: int) -> ObservationTracker:
    """Apply scripted takes ("r,c") to `game`, following them with a tracker for `seat`."""
    tracker = ObservationTracker.for_new_game(game, seat)
    for cell in script:
        action = Take(parse_cell(cell))
        tracker.observe(action, game.apply(action))
    return tracker


def _family_position() -> Game:
    # Yellow (seat 0) takes orange-a-2 then orange-a-3; on its third turn its pawn faces
    # row 2, which holds orange-a-4: the third card of the family, +9 points.
    cells = {
        "1,2": "orange-a-2",  # turn 1: seat 0 faces column 2
        "2,0": "violet-b-1",  # turn 2: seat 1 faces row 2, moves 1 next
        "0,4": "orange-a-3",  # turn 3: seat 0 faces column 4
        "2,1": "blue-a-1",
        "2,2": "yellow-a-4",
        "2,3": "orange-a-4",
        "2,4": "white-a-2",
        "2,5": "grey-a-3",
    }
    return deal_game(CONFIG, cells, ["black-b-1", "black-b-2", "black-b-3", "black-b-4"])


def test_greedy_takes_the_card_that_makes_a_family_of_three() -> None:
    game = _family_position()
    # Seat 1's second turn faces row 3 (it moved 1 from position 7); it takes "3,0".
    tracker = _tracker_after(game, ["1,2", "2,0", "0,4", "3,0"], 0)
    observation = tracker.observation()
    assert game.seat == 0 and observation.own_stack == ("orange-a-2", "orange-a-3")
    assert game.faced_line() == 2  # row 2
    for seed in range(5):
        assert GreedyBot().choose(observation, random.Random(seed)) == Take(parse_cell("2,3"))
    reason = GreedyBot().explain(observation, Take(parse_cell("2,3")))
    assert "+9" in reason and "3 cards" in reason
    best = max(rate_actions(observation), key=lambda r: r.key)
    assert best.card == "orange-a-4" and best.value == 9


def test_greedy_denies_an_opponents_own_colour_one_when_gains_tie() -> None:
    cells = {
        "0,2": "orange-a-1",  # -1 for yellow
        "1,2": "red-a-1",  # -1 for yellow too, and red's own colour: deny it
        "2,2": "blue-a-4",
        "3,2": "violet-a-3",
        "4,2": "black-a-4",
        "5,2": "white-a-3",
    }
    game = deal_game(CONFIG, cells)
    observation = ObservationTracker.for_new_game(game, 0).observation()
    for seed in range(8):
        assert GreedyBot().choose(observation, random.Random(seed)) == Take(parse_cell("1,2"))
    assert "red" in GreedyBot().explain(observation, Take(parse_cell("1,2")))


def test_tally_is_exact_without_immuto_and_close_with_it() -> None:
    rng = random.Random(3)
    cards = sorted(IN_CAULDRON)
    plain = sorted(IN_CAULDRON - IMMUTO)
    for _ in range(400):
        stack = rng.sample(plain, rng.randrange(0, 30))
        colour = rng.choice(["yellow", "red", "green", "blue"])
        tally = Tally(colour, stack)
        assert tally.points() == cauldron_points(colour, stack)
        card = rng.choice([c for c in cards if c not in stack])
        if card not in IMMUTO:
            assert tally.gain(card) == card_gain(colour, stack, card)
    # With Immutos the rollout tally may miss the best assignment, never by much.
    for _ in range(200):
        stack = [*rng.sample(plain, rng.randrange(1, 20)), *rng.sample(sorted(IMMUTO), 1)]
        exact = cauldron_points("blue", stack)
        assert exact - 12 <= Tally("blue", stack).points() <= exact


def test_greedy_casts_vanesco_when_it_hurts_the_opponent() -> None:
    cells = {
        "1,2": "black-a-2",  # turn 1, seat 0 (yellow), column 2
        "2,0": "red-b-4",  # turn 2, seat 1 (red), row 2: -8 alone (own colour)
        "0,4": "black-a-3",  # turn 3, seat 0, column 4
        "1,4": "red-b-3",  # turn 4, seat 1, column 4: red back to 0 points
        "2,1": "white-b-4",  # turn 5, seat 0 faces row 2: only bad cards, and Vanesco
        "2,2": "vanesco-1",
        "2,3": "grey-b-4",
        "2,4": "violet-b-4",
        "2,5": "blue-b-4",
    }
    game = deal_game(CONFIG, cells, ["black-b-1", "orange-b-4", "black-b-3", "black-b-4"])
    tracker = _tracker_after(game, ["1,2", "2,0", "0,4", "1,4"], 0)
    observation = tracker.observation()
    assert game.seat == 0 and game.faced_line() == 2
    assert observation.stacks[1] == ("red-b-4", "red-b-3")
    action = GreedyBot().choose(observation, random.Random(0))
    assert action == Take(parse_cell("2,2"))
    assert "8" in GreedyBot().explain(observation, action)  # red would lose 8 points

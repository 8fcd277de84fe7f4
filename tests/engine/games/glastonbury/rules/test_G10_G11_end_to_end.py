"""G10/G11 end to end: a finished game is scored by `scoring.py` with the game's facts
(cauldrons, spells, recipes, last-card seat, options). The worked scoring examples are
tested with the scoring module itself; here we check the engine hands it the right game."""

from __future__ import annotations

import json
import random

import pytest
import rules_deals as D

from engine.games.glastonbury.rules import Discard, Game, GameLog, Keep, UseDeclinatio, replay
from engine.games.glastonbury.rules.board import LINES
from engine.games.glastonbury.rules.cards import RECIPE_A, RECIPE_B, RECIPES
from engine.games.glastonbury.rules.events import GameEnded
from engine.games.glastonbury.rules.scoring import SeatCards, score_game


def _finish(game: Game, seed: int) -> list[object]:
    rng = random.Random(seed)
    events: list[object] = []
    while not game.is_over():
        events += game.apply(rng.choice(game.legal_actions()))
    return events


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 3), (4, 4), (2, 5)])
def test_G10_finished_game_is_scored_from_its_cauldrons(players: int, seed: int) -> None:
    game = Game.new(D.config(players), random.Random(seed))
    events = _finish(game, seed)
    expected = score_game(
        [
            SeatCards(
                s,
                game.config.colours[s],
                tuple(game.cauldrons[s]),
                tuple(slot[0] for slot in game.spells[s]),
            )
            for s in range(players)
        ],
        last_card_seat=game.last_card_seat,
        first_seat=0,
    )
    assert game.scores() == expected
    end = events[-1]
    assert isinstance(end, GameEnded) and end.winners == expected.winners
    assert game.view_public()["end"]["scores"] == expected.to_json()
    if game.end_reason == "line_emptied":
        assert game.actions[-1] in (Keep(), Discard())
        assert len(game.pile) == 0 and game.last_card is not None
        assert all(game.grid[c] is None for c in LINES[game.last_card[2]])
        assert game.last_card_seat is not None
    else:
        assert game.end_reason == "declinatio_blocked"
        assert game.actions[-1] == UseDeclinatio() and game.last_card_seat is None


def test_G11_recipe_variant_deals_private_recipes_and_scores_them() -> None:
    config = D.config(4, recipes=True)
    game = Game.new(config, random.Random(11))
    dealt = [r for pair in game.recipes for r in pair]
    assert len(game.recipes) == 4 and len(set(dealt)) == 8 and set(dealt) <= set(RECIPES)
    assert all(a in RECIPE_A and b in RECIPE_B for a, b in game.recipes)
    public = json.dumps(game.view_public())
    assert not [r for r in dealt if f'"{r}"' in public]  # recipes stay secret
    mine = game.view(2)["you"]["recipes"]
    assert mine == list(game.recipes[2])
    others = json.dumps(game.view(2))
    assert not [r for s in (0, 1, 3) for r in game.recipes[s] if f'"{r}"' in others]
    _finish(game, 11)
    score = game.scores()
    for seat in score.seats:
        assert {r.recipe for r in seat.recipes} == set(game.recipes[seat.seat])
        for recipe in seat.recipes:
            if recipe.recipe == "B-last-card":
                assert recipe.achieved == (seat.seat == game.last_card_seat)
                assert recipe.points == (10 if recipe.achieved else 0)
    assert score == score_game(game.seat_cards(), last_card_seat=game.last_card_seat)


def test_G10_second_player_bonus_adds_two_to_the_seat_after_the_first() -> None:
    game = Game.new(D.config(3, first_seat=2), random.Random(8))
    _finish(game, 8)
    log = GameLog.of(game)
    config = D.config(3, first_seat=2, second_player_bonus=True)
    with_bonus = replay(GameLog(config, log.deal, log.actions))
    plain = {s.seat: s.total for s in game.scores().seats}
    bonus = {s.seat: s.total for s in with_bonus.scores().seats}
    assert bonus == {0: plain[0] + 2, 1: plain[1], 2: plain[2]}

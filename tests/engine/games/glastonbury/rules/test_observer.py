"""The observer (engine/games/glastonbury/rules/observer.py): typed views, the only way state
leaves the game.

Property: across random games (2-4 players, memory aid on or off, recipes on or off), at
every step the public view holds no covered card (a cauldron card under the top, a pile
card, another seat's recipe), and a seat's view holds another seat's covered card never.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hidden import covered
from hypothesis import given
from hypothesis import strategies as st

from engine.games.glastonbury.rules import Game, GameConfig, IllegalAction
from engine.games.glastonbury.rules.observer import (
    PublicView,
    SeatView,
    dealing_view,
    public_view,
    refill_refusal,
    returned_to_cauldrons,
    seat_view,
    where_is,
)

COLOURS = ("yellow", "red", "green", "blue")


def new_game(players: int, seed: int, **options: bool) -> Game:
    return Game.new(GameConfig(colours=COLOURS[:players], **options), random.Random(seed))


def named(cards: set[str], text: str) -> list[str]:
    return sorted(c for c in cards if f'"{c}"' in text)


@given(players=st.integers(2, 4), seed=st.integers(0, 2**32 - 1),
       memory_aid=st.booleans(), recipes=st.booleans())
def test_public_view_never_holds_a_covered_card(players: int, seed: int, memory_aid: bool,
                                                recipes: bool) -> None:
    game = new_game(players, seed, memory_aid=memory_aid, recipes=recipes)
    rng = random.Random(seed)
    while True:
        view = public_view(game)
        assert isinstance(view, PublicView)
        text = json.dumps(view.to_wire())
        if game.is_over():  # cauldrons are turned face up to score; the pile is not
            assert not named(set(game.pile.cards()), text)
            break
        assert not named(covered(game), text)
        for seat in range(players):
            mine = seat_view(game, seat)
            assert not named(covered(game, seat), json.dumps(mine.to_wire()))
            assert mine.stack == (tuple(game.cauldrons[seat]) if memory_aid else None)
        game.apply(rng.choice(game.legal_actions()))


def test_views_are_typed_frozen_and_match_the_game() -> None:
    game = new_game(3, 4, recipes=True)
    for _ in range(25):
        game.apply(game.legal_actions()[0])
    view = public_view(game)
    assert view.players == 3 and view.turns == game.turns and view.turn == game.seat
    assert view.pile_size == len(game.pile) and view.phase == game.phase.value
    assert [s.cauldron_size for s in view.seats] == [len(c) for c in game.cauldrons]
    assert [s.top for s in view.seats] == [c[-1] if c else None for c in game.cauldrons]
    assert view.config is not None and view.config.colours == COLOURS[:3]
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.turns = 0  # type: ignore[misc]
    mine = seat_view(game, 1)
    assert isinstance(mine, SeatView) and mine.recipes == game.recipes[1]
    with pytest.raises(IllegalAction, match=r"Seat 4 is not at this table \(seats 1 to 3\)"):
        seat_view(game, 3)
    # The dict form is the same data: what Game.view_public() returns.
    assert view.to_wire() == game.view_public()
    assert game.view(1)["you"] == mine.to_wire()


def test_a_finished_game_shows_its_scores() -> None:
    game = new_game(2, 9)
    rng = random.Random(9)
    while not game.is_over():
        game.apply(rng.choice(game.legal_actions()))
    view = public_view(game)
    assert view.over and view.end is not None and view.end.scores is not None
    truth = game.scores()
    assert view.end.scores.winners == truth.winners
    assert [s.total for s in view.end.scores.seats] == [s.total for s in truth.seats]
    assert view.to_wire()["end"]["scores"] == truth.to_json()


def test_every_field_added_to_a_view_has_a_default() -> None:
    """Old payloads keep parsing when a field is added: only the identity fields are
    required (see the module's note on adding a field)."""
    required = {
        cls.__name__: [f.name for f in dataclasses.fields(cls)
                       if f.default is dataclasses.MISSING
                       and f.default_factory is dataclasses.MISSING]
        for cls in (PublicView, SeatView)
    }
    assert required == {"PublicView": ["grid"], "SeatView": ["seat", "colour"]}
    assert dealing_view(((None,) * 6,) * 6, None).phase == "dealing"


def test_the_referees_narrow_questions() -> None:
    game = new_game(2, 3)
    rng = random.Random(3)
    while sum(len(c) for c in game.cauldrons) < 6:
        game.apply(rng.choice(game.legal_actions()))
    top = next(c[-1] for c in game.cauldrons if c)
    seat = next(s for s, c in enumerate(game.cauldrons) if c and c[-1] == top)
    assert where_is(game, top) == where_is(game, top) and where_is(game, top).kind == "top"
    assert where_is(game, top).seat == seat
    under = next((c[0] for c in game.cauldrons if len(c) > 1), None)
    if under is not None:
        assert where_is(game, under).kind == "cauldron"
    nxt = game.pile.cards()[0]
    assert where_is(game, nxt).kind == "pile"
    assert refill_refusal(game, nxt) is None
    assert refill_refusal(game, game.pile.cards()[-1]) is not None
    assert returned_to_cauldrons(game, game) == []

"""The typed views on the wire: what `game/public` and `game/seat/<n>` carry, as bytes.

Property (hypothesis): across random games the encoded `game/public` payload never names
a covered card (a cauldron card under the top, a pile card, another seat's recipe), and a
seat's payload never names another seat's covered card; every payload parses back to the
same typed view. A forged view with a field of its own is refused.
"""

from __future__ import annotations

import json
import random

import pytest
from hidden import covered
from hypothesis import given
from hypothesis import strategies as st

from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.rules.observer import public_view, seat_view
from engine.wire.contract import (
    GamePublic,
    GameSeat,
    PayloadError,
    PublicTableView,
    TableInfo,
    Topics,
    encode,
    parse_payload,
)

T = Topics("t1")
COLOURS = ("yellow", "red", "green", "blue")


def on_the_wire(model: GamePublic | GameSeat, topic: str) -> bytes:
    payload = encode(model)
    assert parse_payload(topic, payload) == model  # the typed view comes back as it went
    return payload


@given(players=st.integers(2, 4), seed=st.integers(0, 2**32 - 1), memory_aid=st.booleans(),
       recipes=st.booleans(), stop=st.integers(0, 200))
def test_payloads_never_carry_a_covered_card(players: int, seed: int, memory_aid: bool,
                                             recipes: bool, stop: int) -> None:
    config = GameConfig(colours=COLOURS[:players], memory_aid=memory_aid, recipes=recipes)
    game = Game.new(config, random.Random(seed))
    rng = random.Random(seed)
    for _ in range(stop):
        if game.is_over():
            break
        game.apply(rng.choice(game.legal_actions()))
    view = PublicTableView.of(public_view(game), TableInfo(status="playing", game_id="g"))
    public = on_the_wire(GamePublic(table="t1", game_id="g", view=view), T.game_public)
    hidden = covered(game) if not game.is_over() else set(game.pile.cards())
    assert not [c for c in hidden if f'"{c}"'.encode() in public]
    for seat in range(players):
        mine = GameSeat(seat=seat, game_id="g", view=seat_view(game, seat))
        payload = on_the_wire(mine, T.game_seat(seat))
        assert not [c for c in covered(game, seat) if f'"{c}"'.encode() in payload]


def test_a_view_with_a_field_of_its_own_is_refused() -> None:
    game = Game.new(GameConfig(colours=COLOURS[:2]), random.Random(1))
    data = GamePublic(view=PublicTableView.of(public_view(game), None)).model_dump(mode="json")
    data["view"]["stacks"] = [list(c) for c in game.cauldrons]
    with pytest.raises(PayloadError, match="stacks"):
        parse_payload(T.game_public, json.dumps(data).encode())
    seat = GameSeat(seat=0, view=seat_view(game, 0)).model_dump(mode="json")
    seat["view"]["others"] = [list(c) for c in game.cauldrons[1:]]
    with pytest.raises(PayloadError, match="others"):
        parse_payload(T.game_seat(0), json.dumps(seat).encode())
    seat["view"].pop("others")
    seat["view"]["seat"] = 1  # seat 1's view on seat 0's topic
    with pytest.raises(PayloadError, match="seat 1's, not seat 0's"):
        parse_payload(T.game_seat(0), json.dumps(seat).encode())

"""G8 (Vanesco) and G9 (Perluceo), in known and unknown pile modes."""

from __future__ import annotations

import json

import pytest
import rules_deals as D

from engine.games.glastonbury.rules import IllegalAction, Phase, Refill
from engine.games.glastonbury.rules.cards import card_label
from engine.games.glastonbury.rules.events import (
    CardTaken,
    PerluceoReveal,
    PerluceoUsed,
    Refilled,
    SpellKept,
    TurnStarted,
    VanescoResolved,
)

# Four players: seat 0 faces column 2, seat 1 row 2, seat 2 column 3, seat 3 row 3.
CELLS = {"1,2": "orange-a-1", "2,0": "orange-a-2", "4,3": "vanesco-1"}
PILE_TOP = ["violet-a-1", "violet-a-2", "violet-a-3"]


def _vanesco_game(unknown: bool):  # type: ignore[no-untyped-def]
    game = D.game(D.config(4), CELLS, PILE_TOP, unknown=unknown)
    for name in ("1,2", "2,0", "4,3"):
        events = D.take(game, name)
        if unknown:
            assert game.phase is Phase.REFILL
            events += game.apply(game.legal_actions()[0])
    return game, events


def test_G8_other_tops_go_under_the_pile_in_seat_order_from_the_taker() -> None:
    game, events = _vanesco_game(unknown=False)
    # Seat 2 took it: seat 3 (empty cauldron) loses nothing, then seat 0, then seat 1,
    # whose card ends at the very bottom.
    assert events[:4] == [
        CardTaken(2, 27, "vanesco-1", "line"),
        VanescoResolved(2, "vanesco-1", ((0, "orange-a-1"), (1, "orange-a-2")), True),
        SpellKept(2, "vanesco-1", 0),
        Refilled(27, "violet-a-3", 51),  # the hole is refilled from the top, as usual
    ]
    assert game.cauldrons == [[], [], [], []]
    assert game.pile.order()[-2:] == ["orange-a-1", "orange-a-2"]  # type: ignore[index]
    assert game.spells[2] == [["vanesco-1", 0]]
    # The cards come back out of the pile last, in that order.
    drawn = D.play_first(game, avoid=["vanesco"], until=0)
    assert not D.of_type(drawn, VanescoResolved)
    refills = [e.card for e in D.of_type(drawn, Refilled)]  # type: ignore[attr-defined]
    assert refills[-2:] == ["orange-a-1", "orange-a-2"]


def test_G8_with_one_card_left_the_tops_go_under_it_then_it_refills_the_hole() -> None:
    game, _ = D.position(D.config(3), cells={"1,1": "vanesco-2"}, fill=True,
                         pile=["violet-a-1"],
                         cauldrons=[["white-a-1"], ["white-a-2", "white-a-3"], ["black-a-1"]])
    events = D.take(game, "1,1")
    resolved = D.of_type(events, VanescoResolved)
    assert resolved == [VanescoResolved(0, "vanesco-2", ((1, "white-a-3"), (2, "black-a-1")),
                                        True)]
    refilled = D.of_type(events, Refilled)
    assert [(e.card, e.pile_size) for e in refilled] == [("violet-a-1", 2)]  # type: ignore[attr-defined]
    assert game.pile.cards() == ["white-a-3", "black-a-1"]  # still in the game
    assert game.cauldrons[1] == ["white-a-2"] and game.cauldrons[2] == []


def test_G8_unknown_pile_bottom_cards_come_out_only_after_the_unknown_part() -> None:
    game, events = _vanesco_game(unknown=True)
    assert D.of_type(events, VanescoResolved)[0].removed == (  # type: ignore[attr-defined]
        (0, "orange-a-1"),
        (1, "orange-a-2"),
    )
    assert "orange-a-1" in game.pile and len(game.pile) == 52 - 3 + 2
    avoid = ["vanesco"]
    while game.phase is not Phase.REFILL:
        D.step(game, avoid)
    before = game.state_key()
    assert Refill("orange-a-1") not in game.legal_actions()
    with pytest.raises(IllegalAction) as err:
        game.apply(Refill("orange-a-1"))
    assert err.value.rule == "G4" and "under the pile by Vanesco" in err.value.message
    with pytest.raises(IllegalAction) as err:
        game.apply(Refill(game.grid[D.cell("5,1")] or ""))  # on the table
    assert err.value.rule == "G4" and "not in the draw pile" in err.value.message
    assert game.state_key() == before
    # Refill from the unknown part until only the two bottom cards are left.
    while not (len(game.pile) == 2 and game.phase is Phase.REFILL):
        assert not game.is_over()
        D.step(game, avoid)
    assert game.legal_actions() == (Refill("orange-a-1"),)
    with pytest.raises(IllegalAction) as err:
        game.apply(Refill("orange-a-2"))
    assert f"next card of the draw pile is {card_label('orange-a-1')}" in err.value.message
    game.apply(Refill("orange-a-1"))
    while game.phase is not Phase.REFILL:
        D.step(game, avoid)
    assert game.legal_actions() == (Refill("orange-a-2"),)
    game.apply(Refill("orange-a-2"))
    assert len(game.pile) == 0


def test_G8_with_the_pile_empty_the_cards_leave_the_game() -> None:
    game, _ = D.position(
        D.config(3),
        cells={"1,1": "vanesco-2"},  # seat 0 moves 1 (its top card) to face column 1
        fill=True,
        pile=[],
        cauldrons=[["white-a-1"], ["white-a-2", "white-a-3"], []],
    )
    out_before = list(game.out_of_game)
    events = D.take(game, "1,1")
    assert events[1] == VanescoResolved(0, "vanesco-2", ((1, "white-a-3"),), False)
    assert game.out_of_game == [*out_before, "white-a-3"]
    assert game.cauldrons == [["white-a-1"], ["white-a-2"], []]  # the taker keeps its own
    assert len(game.pile) == 0 and game.grid[7] is None and not game.is_over()
    assert game.view_public()["out_of_game"][-1] == "white-a-3"


# ---------------------------------------------------------------- G9: Perluceo


def test_G9_perluceo_reveals_the_whole_cauldron_privately() -> None:
    cauldron = ["orange-a-1", "immuto-1", "white-b-3"]
    game, _ = D.position(
        D.config(2),
        cells={"1,3": "perluceo-1"},  # seat 0 moves 3 (its top card) to face column 3
        fill=True,
        pile=["violet-a-1"],
        cauldrons=[cauldron, ["black-a-2", "black-a-3"]],
    )
    events = D.take(game, "1,3")
    assert events[:4] == [
        CardTaken(0, 9, "perluceo-1", "line"),
        PerluceoUsed(0, "perluceo-1"),
        PerluceoReveal(0, "perluceo-1", tuple(cauldron)),
        SpellKept(0, "perluceo-1", 0),
    ]
    reveal = events[2]
    assert reveal.private is True and events[1].private is False
    assert [e for e in events if e.private] == [reveal]
    assert reveal.to_wire() == {
        "type": "perluceo_reveal",
        "seat": 0,
        "card": "perluceo-1",
        "cauldron": cauldron,
    }
    assert game.cauldrons[0] == cauldron  # unchanged
    public = json.dumps(game.view_public())
    assert '"orange-a-1"' not in public and '"immuto-1"' not in public
    assert '"black-a-2"' not in public
    assert '"white-b-3"' in public  # the top is face up


def test_G9_perluceo_in_the_faced_line_does_not_spend_accio() -> None:
    game, _ = D.position(
        D.config(2),
        cells={"1,2": "perluceo-2"},
        fill=True,
        pile=["violet-a-1"],
        spells=[[("accio-1", 2)]],
    )
    events = D.take(game, "1,2")
    assert events[0] == CardTaken(0, 8, "perluceo-2", "line")
    assert game.spells[0] == [["accio-1", 2], ["perluceo-2", 0]]
    assert isinstance(events[-1], TurnStarted)

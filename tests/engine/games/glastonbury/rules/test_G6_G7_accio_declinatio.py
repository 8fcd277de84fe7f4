"""G6 (Accio), G7 (Declinatio), several copies of a spell, one spell per turn."""

from __future__ import annotations

import pytest
import rules_deals as D

from engine.games.glastonbury.rules import IllegalAction, Pass, Phase, Take, UseDeclinatio
from engine.games.glastonbury.rules.board import LINES, TAKEABLE_CELLS
from engine.games.glastonbury.rules.events import (
    CardTaken,
    DeclinatioUsed,
    GameEnded,
    Refilled,
    SpellKept,
    TurnPassed,
    TurnStarted,
)

ROW, COL = 0, 6
PILE = ["violet-a-1", "violet-a-2", "violet-a-3", "violet-a-4"]


def _takes(game: object) -> set[int]:
    return {a.cell for a in game.legal_actions() if isinstance(a, Take)}  # type: ignore[attr-defined]


# ---------------------------------------------------------------- G6: Accio


def _accio_game(spells: list[tuple[str, int]], cells: dict[str, str | None] | None = None):  # type: ignore[no-untyped-def]
    # Seat 0 moves 2 from corner 0 to position 2, facing column 2.
    game, _ = D.position(
        D.config(2), cells=cells or {}, fill=True, pile=PILE, spells=[spells], pawns=[0, 15]
    )
    assert game.faced_line() == COL + 2
    return game


def test_G6_accio_takes_any_card_but_vanesco_and_perluceo() -> None:
    game = _accio_game(
        [("accio-1", 2)], {"1,4": "vanesco-1", "4,4": "perluceo-1", "3,2": "vanesco-2"}
    )
    anywhere = set(TAKEABLE_CELLS) - {D.cell("1,4"), D.cell("4,4")}
    assert _takes(game) == anywhere  # the faced line's Vanesco is a normal take
    for name in ("1,4", "4,4"):
        with pytest.raises(IllegalAction) as err:
            D.take(game, name)
        assert err.value.rule == "G6"
    card = game.grid[D.cell("3,4")]
    events = D.take(game, "3,4")
    assert events[0] == CardTaken(0, D.cell("3,4"), card, "accio", "accio-1", 1)  # type: ignore[arg-type]
    assert game.spells[0] == [["accio-1", 1]]
    assert game.spell_uses(0, "accio") == 1
    assert events[2] == Refilled(D.cell("3,4"), "violet-a-1", 3)


def test_G6_second_use_spends_the_card_then_no_more_accio() -> None:
    game = _accio_game([("accio-1", 1)], {"4,4": "orange-a-1"})
    D.take(game, "4,4")
    assert game.spells[0] == [["accio-1", 0]]  # spent: face down
    assert game.view_public()["seats"][0]["spells"] == [{"card": "accio-1", "uses_left": 0}]
    D.take(game, "3,0")  # seat 1, at position 17 facing row 3
    # Seat 0 is elsewhere now; a take outside its faced line is refused (G6).
    assert game.seat == 0 and game.faced_line() == COL + 3  # moved 1, from 2 to 3
    outside = next(c for c in TAKEABLE_CELLS if c not in LINES[COL + 3])
    with pytest.raises(IllegalAction) as err:
        game.apply(Take(outside))
    assert err.value.rule == "G6" and "Accio" in err.value.message


def test_G6_a_take_in_the_faced_line_does_not_spend_accio() -> None:
    game = _accio_game([("accio-1", 2)])
    events = D.take(game, "4,2")
    assert events[0].via == "line"  # type: ignore[attr-defined]
    assert game.spells[0] == [["accio-1", 2]]


def test_G6_taking_an_accio_with_accio() -> None:
    game = _accio_game([("accio-1", 1)], {"4,4": "accio-2"})
    events = D.take(game, "4,4")
    assert events[:2] == [
        CardTaken(0, D.cell("4,4"), "accio-2", "accio", "accio-1", 0),
        SpellKept(0, "accio-2", 2),
    ]
    assert game.spells[0] == [["accio-1", 0], ["accio-2", 2]]
    assert game.cauldrons[0] == []  # spells never go into a cauldron


def test_G6_several_accios_spend_the_one_with_fewest_uses_first() -> None:
    game = _accio_game([("accio-1", 2), ("accio-2", 1)])
    assert game.spell_uses(0, "accio") == 3
    events = D.take(game, "3,4")
    assert (events[0].spell_card, events[0].uses_left) == ("accio-2", 0)  # type: ignore[attr-defined]
    assert game.spells[0] == [["accio-1", 2], ["accio-2", 0]]


def test_G6_accio_is_never_used_at_a_corner() -> None:
    # Holding only an Accio at a corner: the turn passes on its own.
    game, events = D.position(
        D.config(2), cells={}, fill=True, pile=PILE, spells=[[("accio-1", 2)]], pawns=[3, 15]
    )
    assert events[:2] == [TurnStarted(0, 2, 3, 5, None), TurnPassed(0, "corner")]
    assert game.seat == 1
    # Holding Accio and Declinatio at a corner: only Declinatio or Pass.
    game, _ = D.position(
        D.config(2),
        cells={},
        fill=True,
        pile=PILE,
        spells=[[("accio-1", 2), ("declinatio-1", 3)]],
        pawns=[3, 15],
    )
    assert game.legal_actions() == (UseDeclinatio(), Pass())
    with pytest.raises(IllegalAction) as err:
        D.take(game, "2,2")
    assert err.value.rule == "G4"
    assert game.spells[0] == [["accio-1", 2], ["declinatio-1", 3]]


# ---------------------------------------------------------------- G7: Declinatio


def _corner_game(cells: dict[str, str | None] | None = None, uses: int = 3, pile=PILE):  # type: ignore[no-untyped-def]
    # Seat 0's top card is a 2: from position 3 it stops at corner 5.
    game, events = D.position(
        D.config(2),
        cells=cells or {},
        fill=True,
        pile=pile,
        cauldrons=[["orange-a-2"]],
        spells=[[("declinatio-1", uses)]],
        pawns=[3, 15],
    )
    assert events == [TurnStarted(0, 2, 3, 5, None)]
    return game


def test_G7_declinatio_at_a_corner_moves_again_by_the_same_value() -> None:
    game = _corner_game({"2,4": "vanesco-1", "2,1": "perluceo-1"})
    assert game.legal_actions() == (UseDeclinatio(), Pass())
    events = game.apply(UseDeclinatio())
    assert events == [DeclinatioUsed(0, "declinatio-1", 2, 5, 7, ROW + 2)]
    assert game.phase is Phase.DECLINATIO and game.pawns[0] == 7
    # One spell per turn: no Vanesco/Perluceo, and no Accio-style take elsewhere.
    assert _takes(game) == set(LINES[ROW + 2]) - {D.cell("2,4"), D.cell("2,1")}
    for name, rule in (("2,4", "G7"), ("2,1", "G7"), ("3,3", "G7")):
        with pytest.raises(IllegalAction) as err:
            D.take(game, name)
        assert err.value.rule == rule
    events = D.take(game, "2,2")
    assert events[0].via == "declinatio"  # type: ignore[attr-defined]
    assert game.seat == 1


def test_G7_pass_keeps_the_declinatio_and_ends_the_turn() -> None:
    game = _corner_game()
    events = game.apply(Pass())
    assert events[0] == TurnPassed(0, "corner")
    assert not [e for e in events if isinstance(e, Refilled)]
    assert game.spells[0] == [["declinatio-1", 3]] and game.seat == 1


def test_G7_three_uses_then_spent() -> None:
    game = _corner_game(uses=1)
    events = game.apply(UseDeclinatio())
    assert events[0].uses_left == 0  # type: ignore[attr-defined]
    assert game.spells[0] == [["declinatio-1", 0]]
    assert game.spell_uses(0, "declinatio") == 0
    assert game.phase is Phase.DECLINATIO


def test_G7_several_declinatios_spend_the_fewest_uses_first() -> None:
    game, _ = D.position(
        D.config(2),
        cells={},
        fill=True,
        pile=PILE,
        cauldrons=[["orange-a-2"]],
        spells=[[("declinatio-1", 3), ("declinatio-2", 2)]],
        pawns=[3, 15],
    )
    events = game.apply(UseDeclinatio())
    assert events[0] == DeclinatioUsed(0, "declinatio-2", 1, 5, 7, ROW + 2)


def test_G7_line_of_only_vanesco_and_perluceo_ends_the_game_even_with_a_pile() -> None:
    # From a real deal: row 1 holds the 4 Vanesco and the 2 Perluceo.
    blocked = ["vanesco-1", "vanesco-2", "vanesco-3", "vanesco-4", "perluceo-1", "perluceo-2"]
    cells = {f"1,{c}": card for c, card in enumerate(blocked)}
    cells |= {"3,2": "declinatio-1", "2,0": "orange-a-2", "2,4": "orange-a-1", "4,0": "white-a-2"}
    game = D.game(D.config(2), cells)
    D.take(game, "3,2")  # seat 0 at 2 (column 2) takes the Declinatio
    D.take(game, "2,0")  # seat 1 at 7 (row 2)
    D.take(game, "2,4")  # seat 0 at 4 (column 4) takes a 1
    events = D.take(game, "4,0")  # seat 1 at 9 (row 4); seat 0 moves 1 to corner 5
    assert events[-1] == TurnStarted(0, 1, 4, 5, None)
    assert game.legal_actions() == (UseDeclinatio(), Pass())
    pile_before = len(game.pile)
    events = game.apply(UseDeclinatio())
    assert events[0] == DeclinatioUsed(0, "declinatio-1", 2, 5, 6, ROW + 1)
    assert isinstance(events[-1], GameEnded)
    assert events[-1].reason == "declinatio_blocked" and events[-1].last_card_seat is None
    assert game.is_over() and game.end_reason == "declinatio_blocked"
    assert len(game.pile) == pile_before > 0
    assert game.legal_actions() == ()
    assert game.view_public()["end"]["reason"] == "declinatio_blocked"
    with pytest.raises(IllegalAction) as err:
        D.take(game, "1,0")
    assert err.value.rule == "G10a"


def test_G7_one_takeable_card_among_vanesco_and_perluceo() -> None:
    row = ["vanesco-1", "vanesco-2", "orange-b-4", "vanesco-4", "perluceo-1", "perluceo-2"]
    game = _corner_game({f"2,{c}": card for c, card in enumerate(row)})
    game.apply(UseDeclinatio())
    assert game.legal_actions() == (Take(D.cell("2,2")),)
    assert not game.is_over()

"""G10a (the end of the game: the last card of a line, keep or discard)."""

from __future__ import annotations

import pytest
import rules_deals as D

from engine.games.glastonbury.rules import Discard, IllegalAction, Keep, Phase, Take, UseDeclinatio
from engine.games.glastonbury.rules.events import (
    CardTaken,
    CardToCauldron,
    GameEnded,
    LastCardResolved,
    LastCardTaken,
    PerluceoReveal,
    Refilled,
    SpellKept,
    VanescoResolved,
)

ROW, COL = 0, 6


def _row3_last(card: str, pile: list[str] | None = None, **kwargs):  # type: ignore[no-untyped-def]
    """Seat 0 faces column 2; row 3 holds only `card`, at 3,2; every other cell is full."""
    cells: dict[str, str | None] = {f"3,{c}": None for c in range(6)}
    cells["3,2"] = card
    game, _ = D.position(D.config(2), cells=cells, fill=True, pile=pile or [], **kwargs)
    assert game.faced_line() == COL + 2
    return game


def test_G10a_last_card_of_an_inner_row_then_keep() -> None:
    game = _row3_last("orange-a-4", cauldrons=[["white-a-1"]], pawns=[1, 15])
    events = D.take(game, "3,2")
    assert events == [CardTaken(0, 20, "orange-a-4", "line"), LastCardTaken(0, "orange-a-4", 3)]
    assert game.phase is Phase.LAST_CARD and game.last_card_seat == 0
    assert game.legal_actions() == (Keep(), Discard())
    assert game.view_public()["expected"]["last_card"] == "orange-a-4"
    with pytest.raises(IllegalAction) as err:
        D.take(game, "2,2")
    assert err.value.rule == "G4"
    events = game.apply(Keep())
    assert events[:2] == [
        LastCardResolved(0, "orange-a-4", True),
        CardToCauldron(0, "orange-a-4", 2),
    ]
    end = events[-1]
    assert isinstance(end, GameEnded)
    assert (end.reason, end.last_card_seat) == ("line_emptied", 0)
    assert end.winners == game.scores().winners
    assert game.cauldrons[0] == ["white-a-1", "orange-a-4"]
    assert game.is_over() and game.legal_actions() == () and game.last_card_seat == 0


def test_G10a_discard_the_last_card_still_the_last_card_taker() -> None:
    game = _row3_last("orange-a-4")
    D.take(game, "3,2")
    events = game.apply(Discard())
    assert events[0] == LastCardResolved(0, "orange-a-4", False)
    assert game.discarded == ["orange-a-4"] and game.cauldrons[0] == []
    assert game.last_card_seat == 0 and game.end_reason == "line_emptied"
    assert game.view_public()["end"]["last_card_seat"] == 0


def test_G10a_an_edge_column_counts() -> None:
    # Seat 0 faces row 2 (position 7); column 0 holds only 2,0.
    cells: dict[str, str | None] = {f"{r},0": None for r in range(1, 5)}
    cells["2,0"] = "orange-b-2"
    game, _ = D.position(D.config(2), cells=cells, fill=True, pawns=[5, 15])
    assert game.faced_line() == ROW + 2
    events = D.take(game, "2,0")
    assert events[-1] == LastCardTaken(0, "orange-b-2", COL + 0)
    assert game.grid[0] == "corner-1" and game.grid[30] == "corner-4"  # corners never count


def test_G10a_an_edge_row_emptied_with_accio() -> None:
    cells: dict[str, str | None] = {"0,1": None, "0,2": None, "0,3": "grey-a-3", "0,4": None}
    game, _ = D.position(D.config(2), cells=cells, fill=True, spells=[[("accio-1", 2)]])
    assert game.faced_line() == COL + 2
    events = D.take(game, "0,3")
    assert events == [
        CardTaken(0, 3, "grey-a-3", "accio", "accio-1", 1),
        LastCardTaken(0, "grey-a-3", ROW + 0),
    ]


def test_G10a_no_end_while_the_pile_still_refills_the_hole() -> None:
    game = _row3_last("orange-a-4", pile=["violet-b-1"])
    events = D.take(game, "3,2")
    assert Refilled(20, "violet-b-1", 0) in events
    assert not D.of_type(events, LastCardTaken) and not game.is_over()


def test_G10a_a_last_vanesco_is_resolved_first_then_kept_beside_the_cauldron() -> None:
    game = _row3_last("vanesco-3", cauldrons=[[], ["white-a-1", "white-a-2"]])
    events = D.take(game, "3,2")
    assert events == [
        CardTaken(0, 20, "vanesco-3", "line"),
        VanescoResolved(0, "vanesco-3", ((1, "white-a-2"),), False),
        LastCardTaken(0, "vanesco-3", 3),
    ]
    assert game.out_of_game[-1] == "white-a-2"
    events = game.apply(Keep())
    assert events[1] == SpellKept(0, "vanesco-3", 0)
    assert game.spells[0] == [["vanesco-3", 0]] and game.is_over()


def test_G10a_a_last_perluceo_reveals_then_discard() -> None:
    game = _row3_last("perluceo-1", cauldrons=[["white-a-1", "white-a-2"]], pawns=[0, 15])
    assert game.faced_line() == COL + 2  # moved 2 (its top card) from 0
    events = D.take(game, "3,2")
    assert D.of_type(events, PerluceoReveal) == [
        PerluceoReveal(0, "perluceo-1", ("white-a-1", "white-a-2"))
    ]
    assert isinstance(events[-1], LastCardTaken)
    game.apply(Discard())
    assert game.discarded == ["perluceo-1"] and game.spells[0] == []


def test_G10a_the_last_card_taken_after_declinatio_ends_the_game() -> None:
    # Seat 0 at corner 3 holds a Declinatio: moving 2 again faces row 2, whose only card
    # is 2,3; the pile is empty, so taking it empties the row and ends the game.
    cells: dict[str, str | None] = {f"2,{c}": None for c in range(6)}
    cells["2,3"] = "orange-b-4"
    game, _ = D.position(D.config(2), cells=cells, fill=True, pile=[],
                         cauldrons=[["orange-a-2"], []], spells=[[("declinatio-1", 3)], []],
                         pawns=[3, 15])
    game.apply(UseDeclinatio())
    events = D.take(game, "2,3")
    assert D.of_type(events, LastCardTaken) == [LastCardTaken(0, "orange-b-4", 2)]
    assert game.phase is Phase.LAST_CARD
    events = game.apply(Keep())
    assert game.is_over() and game.end_reason == "line_emptied" and game.last_card_seat == 0
    assert game.cauldrons[0][-1] == "orange-b-4"
    assert D.of_type(events, GameEnded)


def test_G10a_take_after_the_end_is_refused() -> None:
    game = _row3_last("orange-a-4")
    D.take(game, "3,2")
    game.apply(Keep())
    before = game.state_key()
    for action in (Keep(), Discard(), Take(D.cell("2,2"))):
        with pytest.raises(IllegalAction) as err:
            game.apply(action)
        assert err.value.rule == "G10a"
    assert game.state_key() == before

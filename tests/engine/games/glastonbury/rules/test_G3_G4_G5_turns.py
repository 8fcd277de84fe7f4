"""G3 (the perimeter), G4 (a turn: move, take, refill) and G5 (Immuto) from fixed deals."""

from __future__ import annotations

import pytest
import rules_deals as D

from engine.games.glastonbury.rules import (
    Discard,
    IllegalAction,
    Keep,
    Pass,
    Refill,
    Take,
    UseDeclinatio,
)
from engine.games.glastonbury.rules.board import (
    CORNER_POSITIONS,
    FACED_LINE,
    LINES,
    PERIMETER,
    cell_name,
)
from engine.games.glastonbury.rules.cards import CARDS
from engine.games.glastonbury.rules.events import (
    CardTaken,
    CardToCauldron,
    Refilled,
    TurnPassed,
    TurnStarted,
)

# The faced line of each of the 20 positions, written out from RULES.md G3
# (lines 0-5 are rows 0-5, lines 6-11 columns 0-5).
ROW, COL = 0, 6
EXPECTED_FACED = {
    0: None, 1: COL + 1, 2: COL + 2, 3: COL + 3, 4: COL + 4,
    5: None, 6: ROW + 1, 7: ROW + 2, 8: ROW + 3, 9: ROW + 4,
    10: None, 11: COL + 4, 12: COL + 3, 13: COL + 2, 14: COL + 1,
    15: None, 16: ROW + 4, 17: ROW + 3, 18: ROW + 2, 19: ROW + 1,
}  # fmt: skip


def test_G3_faced_line_table() -> None:
    assert {p: FACED_LINE[p] for p in range(PERIMETER)} == EXPECTED_FACED
    assert {0, 5, 10, 15} == CORNER_POSITIONS
    # Only the four inner rows and columns are ever faced.
    faced = {line for line in FACED_LINE if line is not None}
    assert faced == {1, 2, 3, 4, 7, 8, 9, 10}


def test_G3_lines_leave_out_the_corners() -> None:
    assert len(LINES) == 12
    for line, cells in enumerate(LINES):
        edge = line in (0, 5, 6, 11)
        assert len(cells) == (4 if edge else 6)
        assert not {0, 5, 30, 35} & set(cells)
    assert [cell_name(c) for c in LINES[COL + 3]] == [f"{r},3" for r in range(6)]
    assert [cell_name(c) for c in LINES[ROW + 0]] == ["0,1", "0,2", "0,3", "0,4"]


@pytest.mark.parametrize("target", range(PERIMETER))
def test_G3_pawn_faces_its_line_after_moving(target: int) -> None:
    # Seat 0 stands two steps before `target` with an empty cauldron (move 2).
    game, events = D.position(D.config(2), cells={}, fill=True, pawns=[(target - 2) % 20, 15])
    assert events[0] == TurnStarted(0, 2, (target - 2) % 20, target, EXPECTED_FACED[target])
    line = EXPECTED_FACED[target]
    if line is None:
        # A corner faces nothing: the turn passes, seat 1 plays.
        assert events[1] == TurnPassed(0, "corner")
        assert game.seat == 1 and game.pawns[0] == target
    else:
        assert game.seat == 0
        assert game.faced_line() == line
        assert {a.cell for a in game.legal_actions() if isinstance(a, Take)} == set(LINES[line])


def test_G3_several_pawns_share_a_position() -> None:
    game = D.game(D.config(3, start_positions=(0, 0, 0)))
    assert game.pawns == [2, 0, 0]
    D.play_first(game, until=len(game.pile) - 2)  # seats 0 and 1 take
    assert game.pawns == [2, 2, 2]
    assert all(game.faced_line(s) == COL + 2 for s in range(3))
    assert [s["pawn"] for s in game.view_public()["seats"]] == [2, 2, 2]


# ---------------------------------------------------------------- G4: a turn


def test_G4_move_by_top_value_take_refill_then_corner_passes_without_refill() -> None:
    game = D.game(D.config(2), {"1,2": "orange-a-3"}, pile_top=["violet-a-4", "violet-a-1"])
    # Empty cauldron: seat 0 moved 2, from corner 0 to position 2 facing column 2.
    assert game.opening_events == [TurnStarted(0, 2, 0, 2, COL + 2)]
    assert set(game.legal_actions()) == {Take(c) for c in LINES[COL + 2]}
    events = D.take(game, "1,2")
    assert events == [
        CardTaken(0, 8, "orange-a-3", "line"),
        CardToCauldron(0, "orange-a-3", 1),
        Refilled(8, "violet-a-4", 43),  # the top of the pile fills the hole
        TurnStarted(1, 2, 5, 7, ROW + 2),
    ]
    assert game.grid[8] == "violet-a-4" and game.cauldrons[0] == ["orange-a-3"]
    taken = game.grid[D.cell("2,0")]
    assert taken is not None
    events = D.take(game, "2,0")
    # Seat 0 moves 3 (its top card) from 2 to corner 5: nothing taken, nothing refilled.
    assert events[2:] == [
        Refilled(12, "violet-a-1", 42),
        TurnStarted(0, 3, 2, 5, None),
        TurnPassed(0, "corner"),
        TurnStarted(
            1, CARDS[taken].value, 7, 7 + CARDS[taken].value, FACED_LINE[7 + CARDS[taken].value]
        ),
    ]
    assert len(game.pile) == 42 and game.seat == 1


def test_G4_turns_go_clockwise_from_the_first_seat() -> None:
    game = D.game(D.config(3, first_seat=2))
    events = list(game.opening_events) + D.play_first(game, until=len(game.pile) - 5)
    seats = [e.seat for e in events if isinstance(e, TurnStarted)]
    assert seats[:6] == [2, 0, 1, 2, 0, 1]


def test_G4_take_only_from_the_faced_line_and_refusals_leave_the_game_unchanged() -> None:
    game = D.game(D.config(2))
    before = game.state_key()
    refusals: list[tuple[object, str]] = [
        (Take(D.cell("1,3")), "G6"),  # not the faced column 2, no Accio
        (Take(D.cell("0,0")), "G3"),  # a corner card
        (Take(D.cell("5,5")), "G3"),
        (UseDeclinatio(), "G7"),  # not at a corner
        (Pass(), "G4"),  # a pawn facing a line must take
        (Keep(), "G10a"),
        (Discard(), "G10a"),
        (Refill("violet-a-1"), "G4"),  # no hole to refill (the pile is known here)
    ]
    for action, rule in refusals:
        with pytest.raises(IllegalAction) as err:
            game.apply(action)  # type: ignore[arg-type]
        assert err.value.rule == rule, action
        assert game.why_illegal(action) is not None  # type: ignore[arg-type]
        assert game.state_key() == before


def test_G4_empty_cell_refused_and_hole_stays_when_the_pile_is_empty() -> None:
    game, _ = D.position(D.config(2), cells={"1,2": None}, fill=True, pile=[])
    assert game.faced_line() == COL + 2
    with pytest.raises(IllegalAction) as err:
        D.take(game, "1,2")
    assert err.value.rule == "G4" and "empty" in err.value.message
    card = game.grid[D.cell("2,2")]
    events = D.take(game, "2,2")
    assert events[0] == CardTaken(0, 14, card, "line")  # type: ignore[arg-type]
    assert not D.of_type(events, Refilled)
    assert game.grid[14] is None and len(game.pile) == 0
    assert not game.is_over() and game.seat == 1


def test_G4_unknown_action_objects_are_refused_with_a_rule() -> None:
    game = D.game(D.config(2))
    before = game.state_key()
    for bogus in (Take(36), Take(-1), "take 1,2", None):
        with pytest.raises(IllegalAction):
            game.apply(bogus)  # type: ignore[arg-type]
    assert game.state_key() == before


# ---------------------------------------------------------------- G5: Immuto


def test_G5_immuto_moves_zero_and_the_seat_takes_from_the_same_line() -> None:
    game = D.game(D.config(2), {"1,2": "immuto-1"})
    D.take(game, "1,2")
    events = D.take(game, "2,0")  # seat 1
    assert TurnStarted(0, 0, 2, 2, COL + 2) in events
    assert game.seat == 0 and game.pawns[0] == 2
    assert {a.cell for a in game.legal_actions() if isinstance(a, Take)} == set(LINES[COL + 2])


@pytest.mark.parametrize(
    ("cauldron", "move"),
    [
        (["orange-a-3", "immuto-1"], 3),  # the first card under the Immuto
        (["orange-a-1", "immuto-1", "immuto-2"], 1),  # under both Immutos
        (["immuto-1", "immuto-2"], 2),  # nothing else: like an empty cauldron
        (["immuto-2"], 2),
    ],
)
def test_G5_immuto_on_top_at_a_corner(cauldron: list[str], move: int) -> None:
    _game, events = D.position(
        D.config(2), cells={}, fill=True, pile=[], cauldrons=[cauldron], pawns=[5, 15]
    )
    assert events[0] == TurnStarted(0, move, 5, 5 + move, FACED_LINE[5 + move])


def test_G5_immuto_away_from_a_corner_still_moves_zero() -> None:
    _game, events = D.position(
        D.config(2), cells={}, fill=True, cauldrons=[["orange-a-3", "immuto-1"]], pawns=[7, 15]
    )
    assert events[0] == TurnStarted(0, 0, 7, 7, ROW + 2)


def test_G5_vanesco_uncovers_an_immuto_at_a_corner() -> None:
    # Seat 0 moves 4 onto corner 5 and passes; seat 1's Vanesco takes its 4 away,
    # leaving the Immuto on top at a corner: seat 0 then moves by the 3 under it.
    game, events = D.position(
        D.config(2),
        cells={"4,1": "vanesco-1"},
        fill=True,
        pile=["violet-a-2", "violet-a-3"],
        cauldrons=[["orange-a-3", "immuto-1", "orange-a-4"], []],
        pawns=[1, 7],
    )
    assert events[:3] == [
        TurnStarted(0, 4, 1, 5, None),
        TurnPassed(0, "corner"),
        TurnStarted(1, 2, 7, 9, ROW + 4),
    ]
    events = D.take(game, "4,1")
    assert game.cauldrons[0] == ["orange-a-3", "immuto-1"]
    assert TurnStarted(0, 3, 5, 8, ROW + 3) in events

"""Table interpreter scenarios: every inference, every kind of wrong physical action (alert
with rule id and instruction) and the way back."""

from __future__ import annotations

import json

import pytest
from glastonbury_table import (
    game_of,
    next_pile_card,
    play,
    start,
    until_blocked_declinatio,
    until_last_card,
)

from engine.games.base import Refused
from engine.games.glastonbury.rules import GameLog, Phase, Refill, Take, UseDeclinatio
from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, parse_cell
from engine.games.glastonbury.rules.cards import card_label
from engine.games.glastonbury.rules.events import PerluceoReveal, VanescoResolved
from engine.games.glastonbury.table.interpreter import (
    Status,
    TableInterpreter,
    lay,
    lift,
    pad_lay,
    pad_lift,
    press,
)

C = parse_cell


def alerts(interp: TableInterpreter) -> list[tuple[str, str]]:
    return [(a.rule, a.code) for a in interp.active_alerts]


def card_at(interp: TableInterpreter, cell: str) -> str:
    card = game_of(interp).grid[C(cell)]
    assert card is not None, cell
    return card


def snapshot(interp: TableInterpreter) -> str:
    game = GameLog.of(interp.game).to_wire() if interp.game else None
    return json.dumps([game, interp.public_view().to_wire()], sort_keys=True)


# ----------------------------------------------------------------------------- dealing


def test_deal_is_read_from_the_cells_and_the_game_starts_when_32_cells_are_right() -> None:
    interp = start({"0,2": "yellow-a-3"})
    game = interp.game
    assert game is not None and game.grid[C("0,2")] == "yellow-a-3"
    assert interp.turn == 0 and game.pawns[0] == 2  # moved 2 from corner 0 (empty cauldron)
    assert interp.active_alerts == []


def test_deal_checked_against_the_box_with_alerts_until_fixed() -> None:
    interp = TableInterpreter("t")
    interp.command("new_game", {"game_id": "g", "colours": ["yellow", "red"]})
    cards = [c for c in game_of(start()).deal.grid]  # a valid 2-player deal
    for cell, card in zip(TAKEABLE_CELLS[:29], cards, strict=False):
        interp.handle(lay(cell, card))
    with pytest.raises(Refused, match="29 of 32"):
        interp.command("confirm")
    # A card of the removed colour, one card twice, an unknown tag.
    out = interp.handle(lay(TAKEABLE_CELLS[29], "green-a-1"))
    assert [(a.rule, a.code) for a in out.raised] == [("G2", "not_in_deck")]
    assert out.raised[0].to_wire()["params"]["code"] == "not_in_deck"
    assert "green ingredients are removed" in out.raised[0].message
    interp.handle(lay(TAKEABLE_CELLS[30], cards[0]))
    interp.handle(lay(TAKEABLE_CELLS[31], None, uid="04AABBCCDDEEFF"))
    assert sorted(alerts(interp)) == [("G1", "card_twice"), ("G1", "unknown_tag"),
                                      ("G2", "not_in_deck")]
    assert interp.status is Status.DEALING
    twice = next(a for a in interp.active_alerts if a.code == "card_twice")
    assert "one card, two tags" in twice.message and twice.instruction.startswith("Lift")
    with pytest.raises(Refused, match="deal is not right"):
        interp.command("confirm")
    for cell, card in zip(TAKEABLE_CELLS[29:], cards[29:], strict=True):
        interp.handle(lift(cell, "x"))
        out = interp.handle(lay(cell, card))
    assert out.started and interp.status is Status.PLAYING  # type: ignore[comparison-overlap]
    assert interp.active_alerts == []


# ----------------------------------------------------------------------------- inferences


def test_normal_take_lay_on_pad_then_refill() -> None:
    interp = start({"0,2": "yellow-a-3"})
    out = interp.handle(lift("0,2", "yellow-a-3"))
    assert out.actions == [] and interp.held is not None
    assert interp.prompt()["code"] == "lay_on_pad"
    out = interp.handle(pad_lay(0, "yellow-a-3"))
    assert out.actions == [Take(C("0,2"))]
    assert interp.game is not None and interp.game.cauldrons[0] == ["yellow-a-3"]
    assert interp.game.phase is Phase.REFILL and interp.prompt()["code"] == "refill"
    interp.handle(pad_lift(0, "yellow-a-3"))
    card = next_pile_card(interp)
    out = interp.handle(lay("0,2", card))
    assert out.actions == [Refill(card)] and interp.turn == 1
    assert interp.active_alerts == []


def test_reading_the_pile_on_a_pad_during_the_refill_raises_an_alert_that_stays() -> None:
    """A seat at a real table draws, lays the card on its own pad to read it, lifts it off
    and slips it under the pile: the alert stands (naming no card: it is face down for the
    others) until the refill is laid."""
    interp = start({"0,2": "yellow-a-3"})
    play(interp, lift("0,2", "yellow-a-3"), pad_lay(0, "yellow-a-3"),
         pad_lift(0, "yellow-a-3"))
    assert interp.game is not None and interp.game.phase is Phase.REFILL
    card = next_pile_card(interp)
    for seat in (1, 0):
        out = interp.handle(pad_lay(seat, card))
        assert ("G4", "pile_card_on_pad") in [(a.rule, a.code) for a in out.raised]
        interp.handle(pad_lift(seat, card))
        raised = [a for a in interp.active_alerts if a.code == "pile_card_on_pad"]
        assert raised and raised[-1].seat == seat and raised[-1].severity == "error"
        assert card not in raised[-1].message + raised[-1].instruction
    assert len([a for a in interp.active_alerts if a.code == "pile_card_on_pad"]) == 2
    out = interp.handle(lay("0,2", card))
    assert out.actions == [Refill(card)] and interp.active_alerts == []


def test_a_restarted_hub_reporting_every_card_again_changes_nothing() -> None:
    interp = start({"0,2": "yellow-a-3", "3,3": "red-b-2"})
    interp.handle(lift("0,2", "yellow-a-3"))
    out = interp.handle(pad_lay(0, "yellow-a-3"))
    assert out.actions == [Take(C("0,2"))]
    before = snapshot(interp).replace('"inputs": 35', '"inputs": 37')  # counted, no more
    # The hub restarts: its readers report what lies on them again, with no removal.
    for repeat in (pad_lay(0, "yellow-a-3"), lay("3,3", "red-b-2")):
        out = interp.handle(repeat)
        assert out.actions == [] and out.raised == [] and out.note
    assert snapshot(interp) == before and interp.active_alerts == []
    interp.handle(pad_lift(0, "yellow-a-3"))
    out = interp.handle(lay("0,2", next_pile_card(interp)))
    assert out.actions[0].TYPE == "refill" and interp.active_alerts == []


def test_refill_laid_before_the_card_reaches_the_pad() -> None:
    interp = start({"0,2": "yellow-a-3"})
    card = next_pile_card(interp)
    play(interp, lift("0,2", "yellow-a-3"), lay("0,2", card))
    assert alerts(interp) == [("G4", "pad_first")]
    out = interp.handle(pad_lay(0, "yellow-a-3"))
    assert out.actions == [Take(C("0,2")), Refill(card)] and interp.active_alerts == []


def test_lifted_card_put_back_where_it_was_is_no_error() -> None:
    interp = start()
    before = snapshot(interp)
    outs = play(interp, lift("3,2", card_at(interp, "3,2")),
                lay("3,2", card_at(interp, "3,2")))
    assert all(not o.raised and not o.actions for o in outs)
    assert interp.held is None and game_of(interp).actions == []
    assert json.loads(snapshot(interp))[0] == json.loads(before)[0]


def test_lift_from_a_line_the_pawn_does_not_face_alerts_g6_until_put_back() -> None:
    interp = start({"1,1": "red-a-2"})
    out = interp.handle(lift("1,1", "red-a-2"))
    assert [(a.rule, a.code) for a in out.raised] == [("G6", "illegal_take")]
    alert = out.raised[0]
    assert alert.instruction == f"Put {card_label('red-a-2')} back on row 2, column 2."
    assert "column 2" in alert.message and alert.to_wire()["params"]["code"] == "illegal_take"
    # Laying it on the pad does not take it either: still one alert, now from the pad.
    out = interp.handle(pad_lay(0, "red-a-2"))
    assert out.actions == [] and alerts(interp) == [("G6", "illegal_take")]
    assert [a.alert_id for a in out.raised] == [alert.alert_id]
    assert out.raised[0].instruction.startswith("Lift ") and "pad" in out.raised[0].instruction
    interp.handle(pad_lift(0, "red-a-2"))
    out = interp.handle(lay("1,1", "red-a-2"))
    assert [a.alert_id for a in out.cleared] == [alert.alert_id]
    assert interp.active_alerts == [] and game_of(interp).actions == []


def _take(interp: TableInterpreter, cell: str, card: str, seat: int) -> None:
    outs = play(interp, lift(cell, card), pad_lay(seat, card), pad_lift(seat, card))
    assert outs[1].actions, interp.alerts
    if interp.game is not None and interp.game.phase is Phase.REFILL:
        interp.handle(lay(cell, next_pile_card(interp)))


def test_accio_take_from_anywhere_and_its_refusals() -> None:
    interp = start({"0,2": "accio-1", "2,4": "red-a-1", "1,1": "vanesco-1", "3,1": "blue-a-4"})
    _take(interp, "0,2", "accio-1", 0)  # seat 0 keeps the Accio
    _take(interp, "2,4", "red-a-1", 1)  # seat 1 faces row 2
    assert interp.turn == 0 and game_of(interp).faced_line() == 10  # column 4
    out = interp.handle(lift("1,1", "vanesco-1"))  # Vanesco may not be taken with Accio
    assert [(a.rule, a.code) for a in out.raised] == [("G6", "illegal_take")]
    interp.handle(lay("1,1", "vanesco-1"))
    out = interp.handle(lift("3,1", "blue-a-4"))
    assert out.raised == [] and interp.held is not None
    out = interp.handle(pad_lay(0, "blue-a-4"))
    assert out.actions == [Take(C("3,1"))]
    assert out.events[0].to_wire()["via"] == "accio" and game_of(interp).spell_uses(0, "accio") == 1


def test_declinatio_at_a_corner_and_pass_with_the_button() -> None:
    # Seat 0: turn 1 at position 2 takes Declinatio; turn 2 at 4 takes a 1; turn 3 lands on
    # corner 5 and may move 1 again with Declinatio, facing row 1.
    placed = {"0,2": "declinatio-1", "2,0": "red-b-2", "0,4": "yellow-b-1", "1,3": "blue-b-3",
              "1,0": "blue-a-1"}
    interp = start(placed)
    _take(interp, "0,2", "declinatio-1", 0)
    _take(interp, "2,0", "red-b-2", 1)
    _take(interp, "0,4", "yellow-b-1", 0)
    _take(interp, "4,2", card_at(interp, "4,2"), 1)  # seat 1 at 9 faces row 4
    game = game_of(interp)
    assert interp.turn == 0 and game.pawns[0] == 5 and interp.prompt()["code"] == "corner"
    out = interp.handle(lift("3,3", card_at(interp, "3,3")))  # not the line reached
    assert [(a.rule, a.code) for a in out.raised] == [("G7", "corner_declinatio_line")]
    assert "row 2" in out.raised[0].message  # line 1, the second row
    interp.handle(lay("3,3", card_at(interp, "3,3")))
    snapshot_before = snapshot(interp)
    play(interp, lift("1,3", "blue-b-3"))
    out = interp.handle(pad_lay(0, "blue-b-3"))
    assert out.actions == [UseDeclinatio(), Take(C("1,3"))]
    assert out.events[0].TYPE == "declinatio_used"
    # Undo takes the Declinatio back too; then the seat passes with its button.
    interp.handle(pad_lift(0, "blue-b-3"))
    undo = interp.command("undo")
    assert any("Put " + card_label("blue-b-3") + " back on row 2, column 4." == s
               for s in undo.instructions)
    interp.handle(lay("1,3", "blue-b-3"))
    assert json.loads(snapshot(interp))[0] == json.loads(snapshot_before)[0]
    out = interp.handle(press("confirm", seat=0))
    assert out.actions[0].TYPE == "pass" and interp.turn == 1


def test_declinatio_onto_a_line_of_spells_only_ends_the_game_by_a_tap_G7() -> None:
    # Seed 24 (2 players) reaches a corner where Declinatio would face only Vanesco/Perluceo.
    interp = until_blocked_declinatio(24)
    assert interp is not None and interp.game is not None and interp.turn is not None
    game, seat = interp.game, interp.turn
    prompt = interp.prompt()
    assert prompt["code"] == "corner_blocked" and prompt["seat"] == seat
    assert "ends the game (G7)" in prompt["text"]
    spell = next(card for card, uses in game.spells[seat] if card.startswith("declinatio"))
    other = 1 - seat
    # The dashboard's command from the wrong seat is refused and changes nothing.
    before = snapshot(interp)
    with pytest.raises(Refused) as refused:
        interp.command("declinatio", seat=other)
    assert refused.value.code == "wrong_seat" and snapshot(interp) == before
    # Tapping the Declinatio card on the pad uses it: the game ends at once and is scored.
    out = interp.handle(pad_lay(seat, spell))
    assert out.actions == [UseDeclinatio()] and out.ended
    assert interp.status is Status.OVER and interp.game.is_over()
    interp.handle(pad_lift(seat, spell))
    # Undo brings the corner back; the same choice from the seat view ends it again.
    interp.command("undo")
    assert interp.status is Status.PLAYING and interp.prompt()["code"] == "corner_blocked"  # type: ignore[comparison-overlap]
    out = interp.command("declinatio", seat=seat)
    assert out.actions == [UseDeclinatio()] and interp.game.is_over()


def test_declinatio_command_and_tap_where_a_take_is_possible_are_refused_G7() -> None:
    placed = {"0,2": "declinatio-1", "2,0": "red-b-2", "0,4": "yellow-b-1", "1,3": "blue-b-3"}
    interp = start(placed)
    _take(interp, "0,2", "declinatio-1", 0)
    _take(interp, "2,0", "red-b-2", 1)
    _take(interp, "0,4", "yellow-b-1", 0)
    _take(interp, "4,2", card_at(interp, "4,2"), 1)
    assert interp.prompt()["code"] == "corner"
    before = snapshot(interp)
    with pytest.raises(Refused) as refused:
        interp.command("declinatio", seat=0)
    assert (refused.value.rule, refused.value.code) == ("G7", "declinatio_not_blocked")
    assert snapshot(interp) == before
    out = interp.handle(pad_lay(0, "declinatio-1"))
    assert out.actions == []
    assert [(a.rule, a.code) for a in out.raised] == [("G7", "declinatio_by_take")]
    assert "row 2" in out.raised[0].message
    out = interp.handle(pad_lift(0, "declinatio-1"))
    assert [a.code for a in out.cleared] == ["declinatio_by_take"]
    out = play(interp, lift("1,3", "blue-b-3"), pad_lay(0, "blue-b-3"))[-1]
    assert out.actions == [UseDeclinatio(), Take(C("1,3"))]


def test_vanesco_waits_until_the_victim_taps_its_top_card() -> None:
    interp = start({"0,2": "yellow-a-2", "2,3": "vanesco-2", "4,2": "red-a-3"})
    _take(interp, "0,2", "yellow-a-2", 0)
    out = play(interp, lift("2,3", "vanesco-2"), pad_lay(1, "vanesco-2"))[-1]
    resolved = [e for e in out.events if isinstance(e, VanescoResolved)]
    assert resolved and resolved[0].removed == ((0, "yellow-a-2"),)
    assert interp.vanesco_wait == [(0, "yellow-a-2")]
    interp.handle(pad_lift(1, "vanesco-2"))
    interp.handle(lay("2,3", next_pile_card(interp)))  # refilling does not wait
    assert interp.turn == 0 and interp.prompt()["code"] == "vanesco_tap"
    out = interp.handle(lift("4,2", "red-a-3"))  # seat 0 (pawn at 4 after a 2) …
    assert [(a.rule, a.code) for a in out.raised] == [("G8", "vanesco_pending")]
    assert "tap" in out.raised[0].message
    interp.handle(lay("4,2", "red-a-3"))
    interp.handle(pad_lay(0, "yellow-a-2"))
    assert interp.vanesco_wait == [] and interp.active_alerts == []
    interp.handle(pad_lift(0, "yellow-a-2"))
    assert interp.prompt()["code"] == "take"


def test_vanesco_wait_ends_with_the_host_confirm() -> None:
    interp = start({"0,2": "yellow-a-2", "2,3": "vanesco-2"})
    _take(interp, "0,2", "yellow-a-2", 0)
    _take(interp, "2,3", "vanesco-2", 1)
    assert interp.vanesco_wait
    interp.command("confirm")
    assert interp.vanesco_wait == []


def test_perluceo_reveal_is_private_to_the_taker() -> None:
    interp = start({"0,2": "yellow-a-2", "2,3": "red-b-4", "4,4": "perluceo-1"})
    _take(interp, "0,2", "yellow-a-2", 0)
    _take(interp, "2,3", "red-b-4", 1)
    out = play(interp, lift("4,4", "perluceo-1"), pad_lay(0, "perluceo-1"))[-1]
    private = out.private_events
    assert len(private) == 1 and isinstance(private[0], PerluceoReveal)
    assert private[0].seat == 0 and private[0].cauldron == ("yellow-a-2",)
    assert "yellow-a-2" not in json.dumps(interp.public_view().to_wire()["seats"][0]["spells"])


def test_memory_aid_shows_own_stack_only_on_the_seat_view() -> None:
    interp = start({"0,2": "yellow-a-2", "2,3": "red-b-4"}, memory_aid=True)
    _take(interp, "0,2", "yellow-a-2", 0)
    _take(interp, "2,3", "red-b-4", 1)
    config = interp.public_view().config
    assert config is not None and config.memory_aid is True
    mine, theirs = interp.seat_view(0), interp.seat_view(1)
    assert mine is not None and mine.stack == ("yellow-a-2",)
    assert theirs is not None and theirs.stack == ("red-b-4",)


# ----------------------------------------------------------------------------- wrong actions


def test_card_laid_on_the_wrong_seats_pad() -> None:
    interp = start({"0,2": "yellow-a-3"})
    out = play(interp, lift("0,2", "yellow-a-3"), pad_lay(1, "yellow-a-3"))[-1]
    assert [(a.rule, a.code) for a in out.raised] == [("G4", "wrong_pad")]
    assert out.raised[0].message.startswith("It is Seat 1 (yellow)'s turn")
    assert "Lay it on Seat 1 (yellow)'s pad" in out.raised[0].instruction
    assert out.actions == []
    out = interp.handle(pad_lift(1, "yellow-a-3"))
    assert out.cleared and interp.active_alerts == []
    out = interp.handle(pad_lay(0, "yellow-a-3"))
    assert out.actions == [Take(C("0,2"))]


def test_second_card_and_card_put_back_in_another_cell() -> None:
    interp = start({"0,2": "yellow-a-3", "1,2": "yellow-a-4", "3,3": "red-a-1"})
    play(interp, lift("0,2", "yellow-a-3"))
    out = interp.handle(lift("1,2", "yellow-a-4"))
    assert [(a.rule, a.code) for a in out.raised] == [("G4", "one_card_per_turn")]
    interp.handle(lay("1,2", "yellow-a-4"))
    play(interp, pad_lay(0, "yellow-a-3"), pad_lift(0, "yellow-a-3"))
    # Before the refill, someone moves red-a-1 from 3,3 into the hole at 0,2.
    out = interp.handle(lift("3,3", "red-a-1"))
    assert [(a.rule, a.code) for a in out.raised] == [("G4", "refill_first")]
    out = interp.handle(lay("0,2", "red-a-1"))
    assert ("G4", "bad_refill") in alerts(interp) and out.actions == []
    bad = next(a for a in interp.active_alerts if a.code == "bad_refill")
    assert "not in the draw pile" in bad.message
    assert bad.instruction.startswith(f"Lift {card_label('red-a-1')} from row 1, column 3")
    play(interp, lift("0,2", "red-a-1"), lay("3,3", "red-a-1"))
    assert interp.active_alerts == []
    card = next_pile_card(interp)
    assert interp.handle(lay("0,2", card)).actions == [Refill(card)]


def test_refill_with_a_card_that_should_not_exist() -> None:
    interp = start({"0,2": "yellow-a-3"})
    play(interp, lift("0,2", "yellow-a-3"), pad_lay(0, "yellow-a-3"), pad_lift(0, "yellow-a-3"))
    out = interp.handle(lay("0,2", "green-b-2"))  # green is out of a yellow/red game
    assert [(a.rule, a.code) for a in out.raised] == [("G4", "bad_refill")]
    assert f"{card_label('green-b-2')} is not in the draw pile" in out.raised[0].message
    interp.handle(lift("0,2", "green-b-2"))
    assert interp.active_alerts == []


def test_unknown_tags_on_a_cell_and_on_a_pad() -> None:
    interp = start()
    cell_card = card_at(interp, "2,2")
    out = play(interp, lift("4,4", card_at(interp, "4,4")))[-1]
    interp.handle(lay("4,4", card_at(interp, "4,4")))  # put back: fine
    out = interp.handle(pad_lay(1, None, uid="04A1B2C3D4E5F6"))
    assert [(a.rule, a.code) for a in out.raised] == [("G1", "unknown_tag")]
    assert "enrol" in out.raised[0].instruction
    interp.handle(pad_lift(1, None, uid="04A1B2C3D4E5F6"))
    play(interp, lift("2,2", cell_card))
    out = interp.handle(lay("2,2", None, uid="04A1B2C3D4E5F6"))
    assert ("G1", "unknown_tag") in alerts(interp)
    play(interp, lift("2,2", "x"), pad_lay(0, cell_card))  # held: seat 0 faces column 2
    assert game_of(interp).cauldrons[0] == [cell_card]


def test_a_retired_tag_on_a_pad_or_a_cell_says_put_it_aside_not_enrol_it() -> None:
    """A tag the hub retired (a spare replaced it; `Sensed.retired`) has its own code: it is
    put aside, never enrolled; any other unknown tag is still "enrol it"."""
    from engine.games.base import Sensed

    interp = start()
    old = "04A1B2C3D4E5F6"
    out = interp.sense(Sensed("placed", place="pad:1", uid=old, retired=True))
    assert [(a.rule, a.code) for a in out.raised] == [("G1", "retired_tag")]
    assert "retired" in out.raised[0].message and "aside" in out.raised[0].instruction
    assert "enrol its tag" not in out.raised[0].instruction
    assert out.raised[0].params == {"card": f"uid:{old}", "pad": 1}
    interp.handle(pad_lift(1, None, uid=old))
    cell_card = card_at(interp, "2,2")
    play(interp, lift("2,2", cell_card))
    interp.handle(lay("2,2", None, uid=old))  # known retired since its first event
    assert ("G1", "retired_tag") in alerts(interp)
    out = interp.handle(pad_lay(2, None, uid="04000000000099"))
    assert [(a.rule, a.code) for a in out.raised] == [("G1", "unknown_tag")]


def test_wrong_card_on_a_cell_names_both_cards() -> None:
    interp = start({"3,3": "red-a-1", "0,2": "yellow-a-3"})
    play(interp, lift("3,3", "red-a-1"), lift("0,2", "yellow-a-3"), lay("3,3", "yellow-a-3"))
    codes = alerts(interp)
    assert ("G4", "moved_card") in codes
    play(interp, lift("3,3", "yellow-a-3"), lay("3,3", "red-a-1"))
    assert interp.active_alerts == [] and interp.held is not None


# ----------------------------------------------------------------------------- last card


@pytest.fixture(scope="module")
def ending() -> tuple[TableInterpreter, int]:
    for seed in range(40):
        found = until_last_card(seed)
        if found is not None:
            return found
    raise AssertionError("no seed reached a last-card take")


def _clone(found: tuple[TableInterpreter, int]) -> tuple[TableInterpreter, int, str]:
    import copy

    interp, cell = copy.deepcopy(found)
    card = game_of(interp).grid[cell]
    assert card is not None
    return interp, cell, card


def test_last_card_laid_on_the_pad_is_kept(ending: tuple[TableInterpreter, int]) -> None:
    interp, cell, card = _clone(ending)
    seat = interp.turn
    assert seat is not None
    interp.handle(lift(cell, card))
    assert interp.prompt()["code"] == "last_card"
    view = interp.public_view()  # shown as the rules' last-card moment
    assert view.phase == "last_card" and view.expected.last_card == card
    assert view.expected.seat == seat
    with pytest.raises(Refused, match="Seat"):
        interp.command("keep", seat=(seat + 1) % 2)
    out = interp.handle(pad_lay(seat, card))
    assert [a.TYPE for a in out.actions] == ["take", "keep"] and out.ended
    assert interp.status is Status.OVER and game_of(interp).last_card_seat == seat


def test_last_card_discarded_with_the_seat_button(ending: tuple[TableInterpreter, int]) -> None:
    interp, cell, card = _clone(ending)
    seat = interp.turn
    interp.handle(lift(cell, card))
    out = interp.handle(press("confirm", seat=seat))
    assert [a.TYPE for a in out.actions] == ["take", "discard"]
    assert game_of(interp).discarded == [card] and interp.status is Status.OVER
    undo = interp.command("undo")  # the whole decision comes back
    assert interp.status is Status.PLAYING  # type: ignore[comparison-overlap]
    assert f"Put {card_label(card)} back" in undo.instructions[0]


def test_last_card_discarded_from_the_dashboard(ending: tuple[TableInterpreter, int]) -> None:
    interp, cell, card = _clone(ending)
    interp.handle(lift(cell, card))
    out = interp.command("discard", seat=interp.turn)
    assert [a.TYPE for a in out.actions] == ["take", "discard"] and out.ended


# ----------------------------------------------------------------------------- undo / commands


def test_undo_take_and_refill_together_with_instructions() -> None:
    interp = start({"0,2": "yellow-a-3"})
    card = next_pile_card(interp)
    play(interp, lift("0,2", "yellow-a-3"), pad_lay(0, "yellow-a-3"), pad_lift(0, "yellow-a-3"),
         lay("0,2", card))
    out = interp.command("undo")
    assert game_of(interp).actions == [] and interp.turn == 0
    assert out.instructions == [
        f"Lift {card_label(card)} from row 1, column 3 and put it back on top of the draw pile.",
        f"Put {card_label('yellow-a-3')} back on row 1, column 3.",
    ]
    assert ("G4", "wrong_card") in alerts(interp)  # the table does not match yet
    note = next(a for a in interp.active_alerts if a.code == "undone")
    assert "taken from row 1, column 3" in note.message and "refill with" in note.message
    assert card not in note.message and "yellow-a-3" not in note.message  # names, not ids
    assert note.instruction.startswith("1. ") and "2. " in note.instruction
    assert [s["done"] for s in note.params["steps"]] == [False, False]
    play(interp, lift("0,2", card))  # step 1 done: ticked off as the readers see it
    note = next(a for a in interp.active_alerts if a.code == "undone")
    assert note.instruction.startswith("1. ✓")
    play(interp, lay("0,2", "yellow-a-3"))
    assert alerts(interp) == [("G4", "undone")]  # only the notice of what was undone
    note = interp.active_alerts[0]
    assert [s["done"] for s in note.params["steps"]] == [True, True]
    play(interp, lift("0,2", "yellow-a-3"), pad_lay(0, "yellow-a-3"))
    assert interp.active_alerts == []


def test_commands_that_do_not_fit_are_refused_and_change_nothing() -> None:
    idle = TableInterpreter("t")
    for verb in ("undo", "keep", "discard", "confirm", "end"):
        with pytest.raises(Refused):
            idle.command(verb)
    with pytest.raises(Refused, match="not a player colour"):
        idle.command("new_game", {"game_id": "g", "colours": ["pink", "red"]})
    assert idle.status is Status.IDLE and idle.inputs == 0
    interp = start()
    before = snapshot(interp)
    cases = {
        "undo": "nothing to undo",
        "keep": "no game is ending",
        "discard": "no game is ending",
        "confirm": "nothing to confirm",
        "new_game": "in progress",
    }
    for verb, reason in cases.items():
        with pytest.raises(Refused, match=reason):
            interp.command(verb, {"game_id": "g2", "colours": ["yellow", "red"]}
                           if verb == "new_game" else {})
    assert snapshot(interp) == before
    interp.command("end")
    assert interp.status is Status.ENDED and interp.turn is None


def test_replaying_the_same_inputs_gives_the_same_state_and_alert_ids() -> None:
    inputs = [lift("1,1", "red-a-2"), lay("1,1", "red-a-2"), lift("0,2", "yellow-a-3"),
              pad_lay(1, "yellow-a-3"), pad_lift(1, "yellow-a-3"), pad_lay(0, "yellow-a-3")]
    first, second = (start({"1,1": "red-a-2", "0,2": "yellow-a-3"}) for _ in range(2))
    ids = [[a.alert_id for o in play(i, *inputs) for a in o.raised] for i in (first, second)]
    assert ids[0] == ids[1] and len(ids[0]) == 2
    assert snapshot(first) == snapshot(second)


def test_host_undo_button_and_a_seat_confirm_out_of_turn() -> None:
    interp = start({"0,2": "yellow-a-3"})
    card = next_pile_card(interp)
    play(interp, lift("0,2", "yellow-a-3"), pad_lay(0, "yellow-a-3"), pad_lift(0, "yellow-a-3"),
         lay("0,2", card))
    out = interp.handle(press("undo"))
    assert out.undone == 2 and game_of(interp).actions == [] and out.instructions
    out = interp.handle(press("confirm", seat=1))  # nothing for seat 1 to confirm
    assert out.actions == [] and out.note and "Seat 2" in out.note


def test_resync_from_a_snapshot_replaces_what_the_readers_see() -> None:
    interp = start({"0,2": "yellow-a-3"})
    seen = {place: piece for place, piece in interp.seen().items() if place != "3,3"}
    out = interp.resync(seen)
    assert [(a.rule, a.code) for a in out.raised] == [("G4", "card_missing")]
    assert out.raised[0].instruction.endswith("back on row 4, column 4.")


def test_a_victim_tapping_the_wrong_card_is_told_which_one() -> None:
    interp = start({"0,2": "yellow-a-2", "2,3": "vanesco-2"})
    _take(interp, "0,2", "yellow-a-2", 0)
    _take(interp, "2,3", "vanesco-2", 1)
    out = interp.handle(pad_lay(0, "red-b-1"))
    assert [(a.rule, a.code) for a in out.raised] == [("G8", "wrong_tap")]
    assert card_label("yellow-a-2") in out.raised[0].instruction
    interp.handle(pad_lift(0, "red-b-1"))
    interp.handle(pad_lay(0, "yellow-a-2"))
    assert interp.vanesco_wait == [] and interp.active_alerts == []


def test_pile_empty_alert_keeps_its_rule_id_g10a(ending: tuple[TableInterpreter, int]) -> None:
    from engine.service.service import EngineService

    interp, _, _ = _clone(ending)
    hole = next(c for c in TAKEABLE_CELLS if game_of(interp).grid[c] is None)
    top = next(c[-1] for c in game_of(interp).cauldrons if c)
    out = interp.handle(lay(hole, top))  # with the pile empty, holes stay empty
    assert [(a.rule, a.code) for a in out.raised] == [("G10a", "pile_empty")]
    assert "back on top of Seat" in out.raised[0].instruction
    wire = EngineService._alert(out.raised[0].table_alert(), True, "g", 0.0)
    assert wire.rule == "G10a" and wire.params["code"] == "pile_empty"


def test_a_card_refused_while_another_was_held_can_be_taken_once_that_one_is_back() -> None:
    interp = start({"0,2": "yellow-a-3", "1,2": "yellow-a-4"})
    play(interp, lift("0,2", "yellow-a-3"))
    out = interp.handle(lift("1,2", "yellow-a-4"))
    assert [(a.rule, a.code) for a in out.raised] == [("G4", "one_card_per_turn")]
    interp.handle(lay("0,2", "yellow-a-3"))  # the first card goes back
    out = interp.handle(pad_lay(0, "yellow-a-4"))
    assert out.actions == [Take(C("1,2"))] and interp.active_alerts == []


def test_a_card_lifted_out_of_turn_and_laid_on_that_seats_pad() -> None:
    interp = start({"2,4": "red-a-1"})  # seat 0 plays; seat 1 faces row 2 on its turn
    out = interp.handle(lift("2,4", "red-a-1"))
    assert [(a.rule, a.code) for a in out.raised] == [("G6", "illegal_take")]
    out = interp.handle(pad_lay(1, "red-a-1"))
    assert [(a.rule, a.code) for a in out.raised] == [("G4", "not_your_turn")]
    assert out.raised[0].message == "It is Seat 1 (yellow)'s turn, not Seat 2 (red)'s."
    assert out.raised[0].instruction.endswith("back on row 3, column 5.")
    play(interp, pad_lift(1, "red-a-1"), lay("2,4", "red-a-1"))
    assert interp.active_alerts == [] and game_of(interp).actions == []


def test_the_same_card_id_on_two_cells_is_a_copied_tag() -> None:
    interp = start({"0,2": "yellow-a-3", "3,3": "red-a-1"})
    play(interp, lift("0,2", "yellow-a-3"), pad_lay(0, "yellow-a-3"))
    out = interp.handle(lay("0,2", "red-a-1"))  # a second tag reading red-a-1
    assert [(a.rule, a.code) for a in out.raised] == [("G1", "card_twice")]
    assert "one card, two tags" in out.raised[0].message
    interp.handle(lift("0,2", "red-a-1"))
    assert interp.active_alerts == []

"""Alerts are derived from the table as it is now (issue 18, item 2): a card lifted while a hole
waited for its refill says "refill first" only while the refill is still to be done."""

from __future__ import annotations

from glastonbury_table import next_pile_card, play, start

from engine.games.glastonbury.rules import Refill
from engine.games.glastonbury.rules.cards import card_label
from engine.games.glastonbury.table.interpreter import lay, lift, pad_lay, pad_lift


def test_G4_a_refill_done_since_the_lift_is_no_longer_asked_for() -> None:
    interp = start({"0,2": "yellow-a-3", "3,3": "red-a-1"})
    play(interp, lift("0,2", "yellow-a-3"), pad_lay(0, "yellow-a-3"), pad_lift(0, "yellow-a-3"))
    out = interp.handle(lift("3,3", "red-a-1"))  # the host lifts another card mid-refill
    (alert,) = out.raised
    assert alert.code == "refill_first" and "row 1, column 3" in alert.instruction
    card = next_pile_card(interp)
    out = interp.handle(lay("0,2", card))  # the refill, made meanwhile
    assert out.actions == [Refill(card)]
    (now,) = interp.active_alerts
    assert now.code != "refill_first", now
    assert "refill" not in (now.message + now.instruction).lower(), now
    assert "row 1, column 3" not in now.instruction, now  # the filled hole is not named
    assert now.instruction.startswith(f"Put {card_label('red-a-1')} back on row 4, column 4")
    assert now.alert_id != alert.alert_id or now.message != alert.message
    interp.handle(lay("3,3", "red-a-1"))
    assert interp.active_alerts == []


def test_G4_a_card_lifted_too_early_is_a_take_once_the_other_card_is_back() -> None:
    interp = start({"0,2": "yellow-a-3", "1,2": "yellow-a-4"})
    play(interp, lift("0,2", "yellow-a-3"))
    out = interp.handle(lift("1,2", "yellow-a-4"))
    assert [a.code for a in out.raised] == ["one_card_per_turn"]
    interp.handle(lay("0,2", "yellow-a-3"))  # the first card back: the second is alone out
    (now,) = interp.active_alerts
    assert now.code == "lifted_early", now
    assert "already took" not in now.message, now
    assert "Seat 1 (yellow)'s pad" in now.instruction, now
    out = interp.handle(pad_lay(0, "yellow-a-4"))
    assert out.actions and interp.active_alerts == []

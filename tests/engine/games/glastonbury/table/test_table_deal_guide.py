"""The deal guided for the table view (engine.games.glastonbury.table.deal_guide) with 2 players:
the removed
colour's 8 cards named, each cell read / missing / wrong, and what happens next; the undo
note is a notice, not a breach, in a host's words."""

from __future__ import annotations

from glastonbury_table import deal_grid, next_pile_card, play, start

from engine.games.glastonbury.rules.board import TAKEABLE_CELLS
from engine.games.glastonbury.rules.cards import CARDS, card_label
from engine.games.glastonbury.table.interpreter import (
    Status,
    TableInterpreter,
    lay,
    lift,
    pad_lay,
    pad_lift,
)
from engine.wire.contract import GameAlert, GamePublic


def dealing(interp: TableInterpreter) -> dict:
    view = interp.public_view()
    GamePublic(table="t", view=view)  # the wire contract accepts it
    return view.to_wire()["table"]["dealing"]


def new_two_player_table() -> TableInterpreter:
    interp = TableInterpreter("t")
    interp.command("new_game", {"game_id": "g", "colours": ["yellow", "red"], "first_seat": 1})
    return interp


def test_two_players_are_told_which_8_cards_to_set_aside() -> None:
    interp = new_two_player_table()
    guide = dealing(interp)
    aside = guide["set_aside"]
    assert aside["colour"] == "green"
    assert len(aside["cards"]) == 8
    assert {CARDS[c["card"]].colour for c in aside["cards"]} == {"green"}
    assert [c["name"] for c in aside["cards"]] == [card_label(c["card"]) for c in aside["cards"]]
    assert card_label("green-b-4") in aside["text"]
    assert guide["total"] == 32 and guide["counts"] == {"read": 0, "missing": 32, "wrong": 0}
    assert guide["filled"] == 0 and len(guide["missing"]) == 32  # the earlier fields stay
    assert guide["next"]["code"] == "set_aside"
    assert guide["next"]["text"].startswith("2 players: before shuffling, set aside the 8 green")
    assert "Seat 2 (red) plays first" in guide["next"]["text"]


def test_cells_read_missing_and_wrong_then_what_comes_next() -> None:
    interp = new_two_player_table()
    cards = deal_grid({})
    for cell, card in zip(TAKEABLE_CELLS[:30], cards, strict=False):
        interp.handle(lay(cell, card))
    interp.handle(lay(TAKEABLE_CELLS[30], "green-a-1"))  # the removed colour
    guide = dealing(interp)
    assert guide["counts"] == {"read": 30, "missing": 1, "wrong": 1}
    wrong = next(c for c in guide["cells"] if c["state"] == "wrong")
    assert wrong["state"] == "wrong" and "green ingredients are removed" in wrong["why"]
    assert wrong["name"].startswith("row ") and ", column " in wrong["name"]
    missing = [c for c in guide["cells"] if c["state"] == "missing"]
    assert len(missing) == 1 and missing[0]["card"] is None
    assert guide["next"]["code"] == "fix_wrong"
    interp.handle(lift(TAKEABLE_CELLS[30], "green-a-1"))
    interp.handle(lay(TAKEABLE_CELLS[30], cards[30]))
    guide = dealing(interp)
    assert guide["next"]["code"] == "lay_cards" and "1 empty cell" in guide["next"]["text"]
    interp.handle(lay(TAKEABLE_CELLS[31], cards[31]))
    assert interp.status is Status.PLAYING
    table = interp.public_view().table
    assert table is not None and table.dealing is None


def test_four_players_set_nothing_aside() -> None:
    interp = TableInterpreter("t")
    interp.command("new_game", {"game_id": "g", "colours": ["yellow", "red", "green", "blue"]})
    guide = dealing(interp)
    assert guide["set_aside"] is None and guide["next"]["code"] == "lay_cards"


def test_undo_note_is_a_notice_in_words() -> None:
    interp = start({"0,2": "yellow-a-3"})
    card = next_pile_card(interp)
    play(interp, lift("0,2", "yellow-a-3"), pad_lay(0, "yellow-a-3"), pad_lift(0, "yellow-a-3"),
         lay("0,2", card))
    interp.command("undo")
    play(interp, lift("0,2", card), lay("0,2", "yellow-a-3"))
    (note,) = interp.active_alerts
    wire = note.to_wire()
    assert wire["kind"] == "notice" and wire["severity"] == "info"
    assert note.message == ("Undone: the card taken from row 1, column 3; the refill with "
                            f"{card_label(card)}.")
    assert "0,2" not in note.message
    GameAlert(**{k: v for k, v in wire.items() if k != "params"}, params=wire["params"])


def test_a_wrong_line_take_laid_on_the_pad_is_one_alert() -> None:
    interp = start({"1,1": "red-a-2"})
    raised = interp.handle(lift("1,1", "red-a-2")).raised
    raised += interp.handle(pad_lay(0, "red-a-2")).raised
    assert len({a.alert_id for a in raised}) == 1 and len(interp.active_alerts) == 1
    assert all(a.to_wire()["kind"] == "breach" for a in raised)
    interp.handle(pad_lift(0, "red-a-2"))
    out = interp.handle(lay("1,1", "red-a-2"))
    assert [a.alert_id for a in out.cleared] == [raised[0].alert_id]
    assert interp.active_alerts == []

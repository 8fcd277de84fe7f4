"""The deal, guided: what the table view shows while the cards are laid (public data only).

With 2 players one player colour leaves the game (G2): its 8 ingredient cards are set
aside before shuffling, named here. Then each of the 32 cells is read, missing or wrong
(a card that is not of this deal, twice, or an unknown tag), and ``next`` says what happens
next in a host's words. Every card named lies face up or is out of the game: nothing
covered.
"""

from __future__ import annotations

from typing import Any

from engine.games.glastonbury.rules import GameConfig
from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, cell_name
from engine.games.glastonbury.rules.cards import CARDS, PLAYING_CARDS, card_label
from engine.games.glastonbury.rules.names import cell_label, seat_name


def set_aside(config: GameConfig) -> dict[str, Any] | None:
    """The removed colour's 8 cards (2 players), or None."""
    colour = config.removed
    if colour is None:
        return None
    cards = [c for c in PLAYING_CARDS if CARDS[c].colour == colour]
    names = [card_label(c) for c in cards]
    return {"colour": colour, "cards": [{"card": c, "name": n} for c, n in zip(cards, names,
                                                                              strict=True)],
            "text": f"2 players: before shuffling, set aside the {len(cards)} {colour} "
                    f"cards ({', '.join(names)}); they are not used in this game."}


def deal_guidance(config: GameConfig, seen: dict[int, str], wrong: dict[int, str]
                  ) -> dict[str, Any]:
    """``seen``: cell -> what its reader reads (card id or unknown tag); ``wrong``: cell ->
    why that card is not right there (the alert's message)."""
    cells = []
    for cell in TAKEABLE_CELLS:
        card = seen.get(cell)
        state = "missing" if card is None else "wrong" if cell in wrong else "read"
        cells.append({"cell": cell_name(cell), "name": cell_label(cell), "state": state,
                      "card": card if card in CARDS else None, "why": wrong.get(cell)})
    counts = {s: sum(1 for c in cells if c["state"] == s) for s in ("read", "missing", "wrong")}
    first = seat_name(config.first_seat, config.colours[config.first_seat])
    aside = set_aside(config)
    if counts["wrong"]:
        code = "fix_wrong"
        text = (f"Fix the {counts['wrong']} cell(s) marked wrong (each alert says how); the "
                "game starts by itself once all 32 cells hold the dealt cards.")
    elif counts["missing"]:
        code = "lay_cards"
        text = (f"Lay a card face up on each of the {counts['missing']} empty cell(s); when "
                f"all 32 are read the game starts by itself and {first} plays first.")
        if aside is not None and counts["read"] == 0:
            code = "set_aside"
            text = aside["text"] + " Then shuffle and " + text[0].lower() + text[1:]
    else:
        code = "starting"
        text = f"All 32 cells are read: the game starts, {first} plays first."
    return {"total": len(TAKEABLE_CELLS), "counts": counts, "cells": cells,
            "set_aside": aside, "next": {"code": code, "text": text}}

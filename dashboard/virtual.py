"""The virtual table: a physical table in software, played by clicking.

It mirrors what people would do with real cards on the simulated hub (``hub/cmd/sim``): lift
a card from a cell, lay it on a pad, slide it onto the cauldron, draw the pile's top card and
lay it into the hole, tap a cauldron's top card on the pad (Vanesco). The hub then produces
the same sensor events as real cards, and the engine judges them: any gesture is allowed,
so a wrong one (a card dropped on the wrong cell) raises the engine's alert, exactly as at a
real table.

The virtual table keeps the physical truth the readers cannot see (the order of the pile, the
cards under each cauldron's top). Only its public part (`VirtualPublic`: hand, pads, pile
size, tops) ever leaves it.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from dashboard.bridge import Bridge
from dashboard.models import VirtualPublic
from engine.rules.board import TAKEABLE_CELLS, cell_name
from engine.rules.cards import CARDS, PLAYER_COLOURS, deck_for
from engine.wire.contract import N_SEATS


class VirtualError(Exception):
    """A gesture the virtual table cannot do (nothing in hand, the cell is taken, ...)."""


def _is_cell(where: str) -> bool:
    parts = where.split(",")
    return len(parts) == 2 and all(p.isdigit() and 0 <= int(p) <= 5 for p in parts)


def _pad_seat(where: str) -> int | None:
    if where.startswith("pad:") and where[4:].isdigit() and int(where[4:]) < N_SEATS:
        return int(where[4:])
    return None


class VirtualTable:
    """Physical state of the simulated table, changed through the hub's ``sim`` command."""

    def __init__(self, bridge: Bridge, settle: float = 0.015) -> None:
        self.bridge = bridge
        self.settle = settle  # the hub needs two polls to confirm a change
        self._lock = threading.RLock()
        self.dealt = False
        self.cells: dict[str, str] = {}
        self.pads: dict[int, str] = {}
        self.hand: str | None = None
        self.hand_from: str | None = None
        self.cauldrons: list[list[str]] = [[] for _ in range(N_SEATS)]
        self.beside: list[list[str]] = [[] for _ in range(N_SEATS)]
        self.pile: list[str] = []  # top first
        self.out: list[str] = []
        self.message: str | None = None
        self._public = self._snapshot()

    # ------------------------------------------------------------ what anyone may see

    def public(self) -> VirtualPublic:
        """The latest public snapshot. Never waits for the lock: the MQTT dispatcher calls
        this (through the bridge) while a gesture may hold the lock waiting for the hub."""
        return self._public

    def _snapshot(self) -> VirtualPublic:
        return VirtualPublic(
            enabled=True,
            dealt=self.dealt,
            cells=dict(self.cells),
            hand=self.hand,
            hand_from=self.hand_from,
            pads={str(s): c for s, c in self.pads.items()},
            pile_size=len(self.pile),
            tops={str(s): (c[-1] if c else None) for s, c in enumerate(self.cauldrons)},
            sizes={str(s): len(c) for s, c in enumerate(self.cauldrons)},
            message=self.message,
        )

    # ------------------------------------------------------------ the hub

    def _sim(self, action: str, where: str | None = None, card_id: str | None = None) -> Any:
        args: dict[str, Any] = {"action": action}
        if where is not None:
            args["where"] = where
        if card_id is not None:
            args["card_id"] = card_id
        result = self.bridge.hub_command("sim", args)
        if not result.ok:
            raise VirtualError(result.error or "the simulated hub refused")
        if self.settle:
            time.sleep(self.settle)
        return result.data

    def _changed(self, message: str | None = None) -> VirtualPublic:
        """Publish the new physical state (called with the lock held)."""
        self.message = message
        self._public = self._snapshot()
        self.bridge.broadcast()
        return self._public

    # ------------------------------------------------------------ set-up

    def deal(self, colours: list[str], removed_colour: str | None, seed: int | None) -> list[str]:
        """Shuffle the box and lay 32 cards on the square; the rest is the pile (G2)."""
        removed = removed_colour
        if len(colours) == 2 and removed is None:
            removed = next(c for c in PLAYER_COLOURS if c not in colours)
        if len(colours) != 2:
            removed = None
        cards = list(deck_for(removed))
        random.Random(seed).shuffle(cards)
        with self._lock:
            self._sim("clear")
            self.cells.clear()
            self.pads.clear()
            self.hand = self.hand_from = None
            self.cauldrons = [[] for _ in range(N_SEATS)]
            self.beside = [[] for _ in range(N_SEATS)]
            self.out = []
            settle, self.settle = self.settle, 0.0
            try:
                for cell, card in zip(TAKEABLE_CELLS, cards, strict=False):
                    key = cell_name(cell)
                    self._sim("place", key, card)
                    self.cells[key] = card
            finally:
                self.settle = settle
            self.pile = cards[len(TAKEABLE_CELLS) :]
            self.dealt = True
            time.sleep(max(self.settle, 0.05))
            self._changed()
            return cards[: len(TAKEABLE_CELLS)]

    # ------------------------------------------------------------ gestures

    def lift(self, where: str) -> VirtualPublic:
        """Pick up the card lying at a cell or on a pad."""
        with self._lock:
            if self.hand is not None:
                raise VirtualError(f"your hand already holds {self.hand}: lay it down first")
            seat = _pad_seat(where)
            if _is_cell(where):
                card = self.cells.get(where)
                if card is None:
                    raise VirtualError(f"cell {where} is empty")
                self._sim("remove", where)
                del self.cells[where]
            elif seat is not None:
                card = self.pads.get(seat)
                if card is None:
                    raise VirtualError(f"pad {seat} is empty")
                self._sim("remove", where)
                del self.pads[seat]
            else:
                raise VirtualError(f"{where!r} is not a cell 'r,c' or a pad 'pad:<seat>'")
            self.hand, self.hand_from = card, where
            return self._changed()

    def lay(self, where: str) -> VirtualPublic:
        """Put the card in hand on a cell or a pad."""
        with self._lock:
            card = self.hand
            if card is None:
                raise VirtualError("your hand is empty: pick up a card first")
            seat = _pad_seat(where)
            if _is_cell(where):
                if where in ("0,0", "0,5", "5,0", "5,5"):
                    raise VirtualError(f"{where} is a corner: it holds the corner card")
                if where in self.cells:
                    raise VirtualError(f"cell {where} already holds {self.cells[where]}")
                self._sim("place", where, card)
                self.cells[where] = card
            elif seat is not None:
                if seat in self.pads:
                    raise VirtualError(f"pad {seat} already holds {self.pads[seat]}")
                self._sim("place", where, card)
                self.pads[seat] = card
            else:
                raise VirtualError(f"{where!r} is not a cell 'r,c' or a pad 'pad:<seat>'")
            self.hand = self.hand_from = None
            return self._changed()

    def draw(self) -> VirtualPublic:
        """Take the top card of the draw pile in hand (to lay it into the hole)."""
        with self._lock:
            if self.hand is not None:
                raise VirtualError(f"your hand already holds {self.hand}: lay it down first")
            if not self.pile:
                raise VirtualError("the draw pile is empty: holes stay empty now (G10a)")
            self.hand, self.hand_from = self.pile.pop(0), "pile"
            return self._changed()

    def drop(self) -> VirtualPublic:
        """Put the card in hand under the draw pile (or out of the game if it is empty)."""
        with self._lock:
            if self.hand is None:
                raise VirtualError("your hand is empty")
            if self.pile:
                self.pile.append(self.hand)
            else:
                self.out.append(self.hand)
            self.hand = self.hand_from = None
            return self._changed()

    def slide(self, seat: int) -> VirtualPublic:
        """Slide the card on a seat's pad onto its cauldron (a spell goes beside it)."""
        with self._lock:
            card = self.pads.get(seat)
            if card is None:
                raise VirtualError(f"pad {seat} is empty")
            self._sim("remove", f"pad:{seat}")
            del self.pads[seat]
            if CARDS[card].kind in ("ingredient", "immuto"):
                self.cauldrons[seat].append(card)
            else:
                self.beside[seat].append(card)
            return self._changed()

    def tap(self, seat: int) -> VirtualPublic:
        """Vanesco: tap the top card of a seat's cauldron on its pad, then put it under the
        pile (out of the game when the pile is empty, G8)."""
        with self._lock:
            if not self.cauldrons[seat]:
                raise VirtualError(f"seat {seat}'s cauldron is empty: nothing to remove")
            if seat in self.pads:
                raise VirtualError(f"pad {seat} holds {self.pads[seat]}: clear it first")
            card = self.cauldrons[seat][-1]
            self._sim("place", f"pad:{seat}", card)
            self._sim("remove", f"pad:{seat}")
            self.cauldrons[seat].pop()
            if self.pile:
                self.pile.append(card)
            else:
                self.out.append(card)
            return self._changed()

    def apply(self, action: str, where: str | None, seat: int | None) -> VirtualPublic:
        if action in ("lift", "lay") and not where:
            raise VirtualError(f"{action} needs `where`: a cell 'r,c' or a pad 'pad:<seat>'")
        if action in ("slide", "tap") and seat is None:
            raise VirtualError(f"{action} needs `seat`")
        if action == "lift":
            assert where is not None
            return self.lift(where)
        if action == "lay":
            assert where is not None
            return self.lay(where)
        if action == "draw":
            return self.draw()
        if action == "drop":
            return self.drop()
        assert seat is not None
        if action == "slide":
            return self.slide(seat)
        return self.tap(seat)

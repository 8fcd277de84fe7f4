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

With a data dir it survives a restart (even a kill): the whole state is written to
``virtual-<table>.json`` after every change (temp file + ``os.replace``), tagged with the
engine's game id. On start, a saved state is restored in a background thread when the engine
still has that game in progress, then reconciled with what the simulated hub really holds
(``hub/cmd/sim`` ``state``): a fresh (empty) hub gets the cards laid again; otherwise the hub
is right about cells and pads (a gesture cut in half by the kill is completed or undone).
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import threading
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dashboard.bridge import Bridge
from dashboard.models import VirtualPublic
from engine.rules.board import CORNER_CELLS, TAKEABLE_CELLS, cell_name, is_cell
from engine.rules.cards import CARDS, PLAYER_COLOURS, deck_for
from engine.wire.contract import N_SEATS, GamePublic

log = logging.getLogger("cauldron.dashboard")

CORNERS = frozenset(cell_name(c) for c in CORNER_CELLS)
IN_PROGRESS = frozenset({"dealing", "playing"})
RESTORING = "restoring the virtual table after a restart..."


class VirtualError(Exception):
    """A gesture the virtual table cannot do (nothing in hand, the cell is taken, ...)."""


def _pad_seat(where: str) -> int | None:
    if where.startswith("pad:") and where[4:].isdigit() and int(where[4:]) < N_SEATS:
        return int(where[4:])
    return None


def _per_seat() -> list[list[str]]:
    return [[] for _ in range(N_SEATS)]


def in_progress(public: GamePublic | None) -> str | None:
    """The id of the game the engine has in progress (being dealt or played), else None."""
    if public is None or public.game_id is None or public.view.over:
        return None
    table = public.view.table
    if table is not None and table.status not in IN_PROGRESS:
        return None
    return public.game_id


def _status(public: GamePublic) -> str:
    table = public.view.table
    if table is not None:
        return table.status
    return "over" if public.view.over else "unknown"


class SavedVirtual(BaseModel):
    """``virtual-<table>.json``: the whole physical state of the virtual table."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    table: str | None = None
    game_id: str | None = Field(default=None, max_length=64)
    saved_at: float | None = None
    dealt: bool = False
    cells: dict[str, str] = Field(default_factory=dict)
    pads: dict[int, str] = Field(default_factory=dict)
    hand: str | None = None
    hand_from: str | None = Field(default=None, max_length=16)
    cauldrons: list[list[str]] = Field(default_factory=_per_seat)
    beside: list[list[str]] = Field(default_factory=_per_seat)
    pile: list[str] = Field(default_factory=list)
    out: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _physical(self) -> SavedVirtual:
        for key in self.cells:
            if not is_cell(key) or key in CORNERS:
                raise ValueError(f"cells: {key!r} is not a cell that holds a card")
        for seat in self.pads:
            if not 0 <= seat < N_SEATS:
                raise ValueError(f"pads: {seat} is not a seat")
        if len(self.cauldrons) != N_SEATS or len(self.beside) != N_SEATS:
            raise ValueError(f"cauldrons and beside need one list per seat ({N_SEATS})")
        cards = [*self.cells.values(), *self.pads.values(), *self.pile, *self.out]
        cards += [c for stack in (*self.cauldrons, *self.beside) for c in stack]
        if self.hand is not None:
            cards.append(self.hand)
        unknown = sorted({c for c in cards if c not in CARDS})
        if unknown:
            raise ValueError(f"unknown card ids {unknown[:5]}")
        twice = sorted({c for c in cards if cards.count(c) > 1})
        if twice:
            raise ValueError(f"cards in two places at once {twice[:5]}")
        return self


class VirtualTable:
    """Physical state of the simulated table, changed through the hub's ``sim`` command.

    `path`: where the state is saved after every change (None: kept in memory only).
    `restore_wait`: how long the restore waits for the engine's game and the hub's answer."""

    def __init__(
        self, bridge: Bridge, settle: float = 0.015, path: Path | None = None,
        restore_wait: float = 20.0,
    ) -> None:
        self.bridge = bridge
        self.settle = settle  # the hub needs two polls to confirm a change
        self.path = path
        self.restore_wait = restore_wait
        self.game_id: str | None = None  # the engine's game these cards belong to
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
        # A saved state waiting to be restored (gestures wait for it), and its thread.
        self._pending: SavedVirtual | None = self._load()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        if self._pending is not None:
            self.message = RESTORING
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
            restoring=self._pending is not None,
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
        """Save and publish the new physical state (called with the lock held)."""
        self.message = message
        self._save()
        self._public = self._snapshot()
        self.bridge.broadcast()
        return self._public

    def _ready(self) -> None:
        """Refuse gestures while a saved state is being restored (called with the lock)."""
        if self._pending is not None:
            raise VirtualError(
                "the virtual table is being restored after a restart: try again in a moment"
            )

    # ------------------------------------------------------------ saving

    def state(self) -> SavedVirtual:
        """The whole physical state, as saved."""
        with self._lock:
            return SavedVirtual(
                table=self.bridge.settings.table,
                game_id=self.game_id,
                saved_at=time.time(),
                dealt=self.dealt,
                cells=dict(self.cells),
                pads=dict(self.pads),
                hand=self.hand,
                hand_from=self.hand_from,
                cauldrons=[list(c) for c in self.cauldrons],
                beside=[list(b) for b in self.beside],
                pile=list(self.pile),
                out=list(self.out),
            )

    def _save(self) -> None:
        """Write the state atomically (a temp file in the same dir, then ``os.replace``), so
        a kill at any moment leaves the old or the new file, never half of one."""
        if self.path is None:
            return
        if self.game_id is None:  # the engine had not named the game at the deal yet
            self.game_id = in_progress(self.bridge.public)
        text = self.state().model_dump_json()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("cannot save the virtual table to %s: %s", self.path, exc)
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _load(self) -> SavedVirtual | None:
        if self.path is None or not self.path.exists():
            return None
        try:
            return SavedVirtual.model_validate_json(self.path.read_bytes())
        except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            reason = str(exc).splitlines()
            bad = self.path.with_name(self.path.name + ".bad")
            with contextlib.suppress(OSError):
                os.replace(self.path, bad)
            log.warning(
                "virtual table file %s is damaged or unreadable (%s); starting with an empty "
                "virtual table (the file is kept as %s)",
                self.path, "; ".join(reason[:3]), bad.name,
            )
            return None

    def _forget_file(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()

    # ------------------------------------------------------------ restoring

    @property
    def restoring(self) -> bool:
        return self._pending is not None

    def start_restore(self) -> None:
        """Restore the saved state in the background (once; nothing to do without one)."""
        if self._pending is None or self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._restore, args=(self._pending,), name="virtual-restore", daemon=True
        )
        self._thread.start()

    def stop_restore(self, timeout: float = 2.0) -> None:
        self._cancel.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def wait_restored(self, timeout: float) -> bool:
        """True once no saved state waits to be restored (tests)."""
        return self.bridge.wait_for(lambda: self._pending is None, timeout)

    def _give_up(self, saved: SavedVirtual, why: str, forget: bool) -> None:
        with self._lock:
            if self._pending is not saved:
                return
            self._pending = None
            if forget:
                self._forget_file()
            self._public_changed(None)
        log.warning("virtual table not restored: %s", why)

    def _public_changed(self, message: str | None) -> None:
        """Publish without saving (lock held)."""
        self.message = message
        self._public = self._snapshot()
        self.bridge.broadcast()

    def _restore(self, saved: SavedVirtual) -> None:
        try:
            self._restore_inner(saved)
        except Exception:  # never leave the table refusing gestures for good
            log.exception("virtual table: restoring the saved state failed")
            self._give_up(saved, "unexpected error (see above)", forget=False)

    def _restore_inner(self, saved: SavedVirtual) -> None:
        deadline = time.monotonic() + self.restore_wait
        public = None
        while not self._cancel.is_set():
            public = self.bridge.public
            if public is not None or time.monotonic() >= deadline:
                break
            self._cancel.wait(0.05)
        if self._cancel.is_set():
            return
        if public is None:
            self._give_up(
                saved, f"the engine's game (game/public) did not come within "
                f"{self.restore_wait:g} s; the file {self.path} is kept for the next start",
                forget=False,
            )
            return
        if in_progress(public) != saved.game_id or saved.game_id is None:
            self._give_up(
                saved, f"the saved table belongs to game {saved.game_id}, but the engine has "
                f"game {public.game_id} ({_status(public)}); the saved file is removed",
                forget=True,
            )
            return
        lying: dict[str, str] | None = None
        why = "no answer"
        while not self._cancel.is_set() and time.monotonic() < deadline:
            result = self.bridge.hub_command("sim", {"action": "state"})
            data = result.data if isinstance(result.data, dict) else {}
            if result.ok and isinstance(data.get("lying"), dict):
                lying = {str(k): str(v) for k, v in data["lying"].items()}
                break
            why = result.error or "no 'lying' in the hub's answer"
            if not result.unavailable:
                break  # refused: not a simulated hub (or one without 'state')
            self._cancel.wait(0.2)
        if self._cancel.is_set():
            return
        if lying is None:
            self._give_up(
                saved, f"the simulated hub did not tell what lies on it ({why}); the file "
                f"{self.path} is kept for the next start", forget=False,
            )
            return
        with self._lock:
            if self._pending is not saved:
                return  # a new deal came first
            notes = self._reconcile(saved, lying)
            self._pending = None
            self._changed()
        log.info(
            "virtual table restored for game %s: %d cells, %d pads, pile %d cards%s",
            saved.game_id, len(self.cells), len(self.pads), len(self.pile),
            "".join(f"; {n}" for n in notes),
        )

    def _reconcile(self, saved: SavedVirtual, lying: dict[str, str]) -> list[str]:
        """Take the saved state, made to agree with what lies on the hub (lock held)."""
        self.game_id = saved.game_id
        self.dealt = saved.dealt
        self.cells = dict(saved.cells)
        self.pads = dict(saved.pads)
        self.hand, self.hand_from = saved.hand, saved.hand_from
        self.cauldrons = [list(c) for c in saved.cauldrons]
        self.beside = [list(b) for b in saved.beside]
        self.pile = list(saved.pile)
        self.out = list(saved.out)
        notes: list[str] = []
        if not lying:  # a fresh hub: lay the cards again
            places = [*self.cells.items(), *((f"pad:{s}", c) for s, c in self.pads.items())]
            laid = self._lay_again(places)
            if places:
                notes.append(f"the hub was empty: {len(laid)} of {len(places)} cards laid on "
                             "it again")
            if laid:
                time.sleep(max(self.settle, 0.05))
            return notes
        hub_cells: dict[str, str] = {}
        hub_pads: dict[int, str] = {}
        for where, card in lying.items():
            seat = _pad_seat(where)
            if card not in CARDS:
                notes.append(f"{where} holds an unknown tag ({card}): ignored")
            elif is_cell(where):
                hub_cells[where] = card
            elif seat is not None:
                hub_pads[seat] = card
        shown = set(hub_cells.values()) | set(hub_pads.values())
        before: dict[str, str] = {**self.cells, **{f"pad:{s}": c for s, c in self.pads.items()}}
        on_hub = {**hub_cells, **{f"pad:{s}": c for s, c in hub_pads.items()}}
        shown_at = {c: w for w, c in on_hub.items()}
        for where, card in before.items():
            if card in shown_at and shown_at[card] != where:
                notes.append(f"{card} lies on {shown_at[card]}, not {where}")
        if self.hand is not None and self.hand in shown_at:
            notes.append(f"{self.hand} (in hand) lies on {shown_at[self.hand]}")
            self.hand = self.hand_from = None
        missing = [(w, c) for w, c in before.items() if c not in shown]
        self.cells, self.pads = hub_cells, hub_pads
        self.cauldrons = [[c for c in stack if c not in shown] for stack in self.cauldrons]
        self.beside = [[c for c in stack if c not in shown] for stack in self.beside]
        self.pile = [c for c in self.pile if c not in shown]
        self.out = [c for c in self.out if c not in shown]
        if len(missing) == 1 and self.hand is None:
            # A lift (or a slide) cut in half: the card left the reader, so it is in hand.
            self.hand_from, self.hand = missing[0]
            notes.append(f"{self.hand} from {self.hand_from} is not on the hub: now in hand")
        elif missing:
            # More than one gesture's worth: the hub lost them, lay them again where free.
            free = self._lay_again([(w, c) for w, c in missing if w not in on_hub])
            for where, card in free:
                seat = _pad_seat(where)
                if seat is None:
                    self.cells[where] = card
                else:
                    self.pads[seat] = card
            lost = [c for w, c in missing if (w, c) not in free]
            for card in lost:
                (self.pile if self.pile else self.out).append(card)
            notes.append(f"{len(missing)} cards were missing from the hub: {len(free)} laid "
                         f"again, {len(lost)} put under the pile")
            log.warning("virtual table: %d saved cards were missing from the hub (%s)",
                        len(missing), ", ".join(f"{c} at {w}" for w, c in missing))
        return notes

    def _lay_again(self, places: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Lay cards on the hub (`(where, card)`); returns those it took."""
        laid: list[tuple[str, str]] = []
        settle, self.settle = self.settle, 0.0
        try:
            for where, card in places:
                try:
                    self._sim("place", where, card)
                except VirtualError as exc:
                    log.warning("virtual table: cannot lay %s on %s again: %s", card, where, exc)
                else:
                    laid.append((where, card))
        finally:
            self.settle = settle
        return laid

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
            if self._pending is not None:  # a new game: the saved one is not restored
                log.info("virtual table: a new deal replaces the saved table of game %s",
                         self._pending.game_id)
                self._pending = None
            self.game_id = None
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
            if self.path is not None:
                # The engine names the game when it takes new_game, just before the deal;
                # its game/public may still be on its way.
                self.bridge.wait_for(lambda: in_progress(self.bridge.public) is not None, 2.0)
                self.game_id = in_progress(self.bridge.public)
            self._changed()
            return cards[: len(TAKEABLE_CELLS)]

    # ------------------------------------------------------------ gestures

    def lift(self, where: str) -> VirtualPublic:
        """Pick up the card lying at a cell or on a pad."""
        with self._lock:
            self._ready()
            if self.hand is not None:
                raise VirtualError(f"your hand already holds {self.hand}: lay it down first")
            seat = _pad_seat(where)
            if is_cell(where):
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
            self._ready()
            card = self.hand
            if card is None:
                raise VirtualError("your hand is empty: pick up a card first")
            seat = _pad_seat(where)
            if is_cell(where):
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
            self._ready()
            if self.hand is not None:
                raise VirtualError(f"your hand already holds {self.hand}: lay it down first")
            if not self.pile:
                raise VirtualError("the draw pile is empty: holes stay empty now (G10a)")
            self.hand, self.hand_from = self.pile.pop(0), "pile"
            return self._changed()

    def drop(self) -> VirtualPublic:
        """Put the card in hand under the draw pile (or out of the game if it is empty)."""
        with self._lock:
            self._ready()
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
            self._ready()
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
            self._ready()
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

"""A simulated table: the same reads as real readers, without hardware.

Used by the tests, the demo and the dashboard's virtual table (through the hub's
``hub/cmd/sim`` command). Cards are placed and removed by card id or by UID; a card id gets
the UID the tag map gives it, or a stable made-up 7-byte UID. Faults can be injected, all
driven by a seeded RNG so a run repeats exactly:

- ``drop_rate``: a present tag is missed in one poll (never twice in a row on one reader:
  that would be a real removal under the two-missed-sweeps rule);
- ``misread_rate``: a present tag is read with one bit flipped, for one poll;
- ``flicker(reader)``: the reader reads its tag only every other poll (what REQA polling
  does; health becomes ``flicker``); an empty flickering reader sees a neighbour's tag
  every other poll (cross-talk);
- ``stuck(reader)``: the chip hangs and answers nothing (health ``silent``);
- ``vanish(reader)``: the reader is gone from the bus (health ``absent``);
- ``repair(reader)``: back to normal.

Real cards stay on a real table when the hub process stops, however it stops. With a
``state_path`` (the hub's data dir: ``HubConfig.sim_state_path``) the table's physical truth,
what lies on each reader and what was written into each tag, is saved after every change
(temp file + ``os.replace``: a kill leaves the old or the new file, never half of one) and
loaded on start. A change that cannot be saved is not made (`BackendError`). A damaged file
is set aside as ``.bad`` and the table starts empty. Faults are not saved. With pawn sensors
(``perimeter``) the pawns are part of that truth: saved with the cards, moved through
`move_pawn`/`set_pawns`, laid where the game says by ``restore``.

It is also the one owner of the simulated *physical world* beyond the readers: the draw pile
in order, each cauldron's stack, the spells beside it, the cards out of the game, and each
hand (a card in a hand belongs to its owner: a seat ``"0"``..``"3"`` or ``"host"``). People,
bots and the engine change it only through `gesture` (the hub's ``hub/cmd/sim``): lift, lay,
slide, draw, drop, tap, the one-tap ``take``/``refill``/``vanesco``, ``deal`` and ``restore``
(lay the table out as a given physical state). `public()` never shows a covered card nor the
pile's order; `private(seat)` is that seat's own stack. A gesture that changes a reader
returns once the presence tracker has confirmed the change (when the hub polls), so the
sensor events of successive steps go out in the order they were made.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import random
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from pydantic import ValidationError

from engine.wire.api import (
    BadArgs,
    Deal,
    Draw,
    Drop,
    Gesture,
    Lay,
    Lift,
    Refill,
    Restore,
    RestoreLayout,
    SeatStack,
    SimResult,
    Slide,
    TakeCard,
    Tap,
    Vanesco,
    ViewTable,
    parse_gesture,
)
from hub.backends.base import PollResult, RawBackend, ReaderRead
from hub.backends.sim_pawns import check_position
from hub.errors import BackendError, TagMapError
from hub.game import current, enrolment_order, piece_name, place_name, seat_name
from hub.layout import Layout, cell_key, parse_cell_key
from hub.tagmap import TagMap, normalise_uid

log = logging.getLogger("cauldron.hub.sim")
STATE_VERSION = 2
SEATS = 4
HOST = "host"
OWNERS = (HOST, "0", "1", "2", "3")
CONFIRM_TIMEOUT = 3.0  # seconds a gesture waits for the polls to see its change
FAST_SWEEPS = 12  # polls a gesture asks for at once (confirm, miss, a few dropped reads)


class GestureRefused(BackendError):
    """A gesture the physical table cannot do (the reason names the place, card or hand)."""


def made_up_uid(card_id: str) -> str:
    """A stable 7-byte NXP-style UID (first byte 04) for a card without an enrolled tag."""
    return "04" + hashlib.sha1(card_id.encode()).hexdigest()[:12].upper()


_MADE_UP: dict[str, dict[str, str]] = {}  # game id -> made-up UID -> piece


def _made_up_uids() -> dict[str, str]:
    """The made-up UIDs of the hub's game's box (its catalogue, through the game seam)."""
    game = current()
    found = _MADE_UP.get(game.id)
    if found is None:
        found = _MADE_UP[game.id] = {made_up_uid(card): card for card in game.catalogue.kinds}
    return found


def _seat(seat: Any) -> int:
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < SEATS:
        raise GestureRefused(f"seat {seat!r} is not 0..{SEATS - 1}")
    return seat


def _owner_label(owner: str) -> str:
    return "the host" if owner == HOST else seat_name(int(owner)) if owner.isdigit() else owner


def _card(card: str) -> str:
    return piece_name(card)


def virtual_box_tagmap() -> TagMap:
    """A tag map with every taggable card enrolled under its made-up UID (a virtual box)."""
    return TagMap(tags={made_up_uid(card): card for card in enrolment_order()})



# The sensor events (hence engine inputs) each `gesture` makes, so that whoever makes one
# (the demo's bots, the tests' players) knows when the engine has seen all of it.
GESTURE_INPUTS: Final[dict[str, int]] = {
    "lift": 1, "lay": 1, "slide": 1, "tap": 2, "draw": 0, "drop": 0, "refill": 1, "take": 3,
    "vanesco": 2,
}


class SimulatedTable(RawBackend):
    name: ClassVar[str] = "sim"
    capabilities = frozenset({"write_tag", "lay_out"})

    def __init__(
        self,
        layout: Layout | None = None,
        tagmap: TagMap | None = None,
        seed: int = 0,
        drop_rate: float = 0.0,
        misread_rate: float = 0.0,
        confirm_reads: int = 2,
        miss_sweeps: int = 2,
        state_path: Path | str | None = None,
    ) -> None:
        super().__init__(layout or Layout(), confirm_reads, miss_sweeps)
        self.tagmap = tagmap or TagMap()
        self.rng = random.Random(seed)
        self.drop_rate = drop_rate
        self.misread_rate = misread_rate
        self._lock = threading.Lock()
        self._tags: dict[int, str] = {}  # reader -> UID really lying there
        self._memory: dict[str, str] = {}  # UID -> card id written into the tag
        self._flicker: set[int] = set()
        self._stuck: set[int] = set()
        self._vanished: set[int] = set()
        self._bad_last: set[int] = set()  # readers whose last poll was a dropped/misread one
        self._flick_phase: dict[int, bool] = {}
        self.sweeps = 0
        # The physical world beyond the readers (see the module doc).
        self._pile: list[str] = []  # top first
        self._stacks: list[list[str]] = [[] for _ in range(SEATS)]  # bottom first
        self._beside: list[list[str]] = [[] for _ in range(SEATS)]
        self._out: list[str] = []
        self._hands: dict[str, tuple[str, str]] = {}  # owner -> (card, origin)
        # Cards drawn off the pile since the deal: none of them ever goes back under the
        # pile by hand (that would let a seat read the pile, or reject refills it dislikes).
        self._drawn: list[str] = []
        self._dealt = False
        self._gesture_lock = threading.RLock()  # one gesture at a time, start to end
        self._polled = threading.Condition()
        self._polling = False  # someone polls: gestures wait for their change to be seen
        self.state_path = Path(state_path) if state_path is not None else None
        if self.state_path is not None:
            self._load(self.state_path)

    # ------------------------------------------------------------ persistence

    def _load(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise BackendError(f"cannot read the simulated table {path}: {exc}") from None
        try:
            data = json.loads(text)
            tags, memory = self._parse(data)
            world = self._parse_world(data, tags)
        except (ValueError, TypeError, RecursionError, TagMapError) as exc:
            bad = path.with_name(path.name + ".bad")
            with contextlib.suppress(OSError):
                os.replace(path, bad)
            log.warning("simulated table %s is damaged (%s); starting with an empty table "
                        "(the file is kept as %s)", path, exc, bad)
            return
        self._tags, self._memory = tags, memory
        self._adopt(world)

    def _parse(self, data: Any) -> tuple[dict[int, str], dict[str, str]]:
        if not isinstance(data, dict) or data.get("version") not in (1, STATE_VERSION):
            raise ValueError(f"not a version 1 or {STATE_VERSION} simulated table")
        raw_tags, raw_memory = data.get("tags", {}), data.get("memory", {})
        if not isinstance(raw_tags, dict) or not isinstance(raw_memory, dict):
            raise ValueError("'tags' and 'memory' must be objects")
        tags: dict[int, str] = {}
        for key, uid in raw_tags.items():
            reader = int(key)
            if not isinstance(uid, str):
                raise ValueError(f"reader {key}: {uid!r} is not a UID")
            if not 0 <= reader < self.n_readers:
                log.warning("simulated table: reader %d is not in this layout; the tag %s "
                            "lying there is left out", reader, uid)
                continue
            tags[reader] = normalise_uid(uid)
        if len(set(tags.values())) < len(tags):
            raise ValueError("one tag lies on two readers")
        memory = {normalise_uid(str(uid)): str(card) for uid, card in raw_memory.items()}
        return tags, memory

    def _parse_world(self, data: dict[str, Any], tags: dict[int, str]) -> dict[str, Any]:
        """The physical world beyond the readers (empty in a version 1 file), checked: every
        card lies in one place at most."""
        world: dict[str, Any] = {"pile": [str(c) for c in data.get("pile", [])],
                 "stacks": [[str(c) for c in s] for s in data.get("stacks", [[]] * SEATS)],
                 "beside": [[str(c) for c in s] for s in data.get("beside", [[]] * SEATS)],
                 "out": [str(c) for c in data.get("out", [])],
                 "hands": {str(o): (str(h[0]), str(h[1]))
                           for o, h in dict(data.get("hands", {})).items()},
                 "dealt": bool(data.get("dealt", False)),
                 "drawn": [str(c) for c in data.get("drawn", [])],
                 "pawns": self._parse_pawns(data.get("pawns"))}
        if len(world["stacks"]) != SEATS or len(world["beside"]) != SEATS:
            raise ValueError(f"stacks and beside need one list per seat ({SEATS})")
        if any(owner not in OWNERS for owner in world["hands"]):
            raise ValueError(f"hands: owners are {', '.join(OWNERS)}")
        cards = [*world["pile"], *world["out"], *(c for c, _ in world["hands"].values())]
        cards += [c for stack in (*world["stacks"], *world["beside"]) for c in stack]
        cards += [self.card_at(uid) for uid in tags.values()]
        twice = sorted({c for c in cards if cards.count(c) > 1 and not c.startswith("uid:")})
        if twice:
            raise ValueError(f"cards in two places at once: {twice[:5]}")
        return world

    def _parse_pawns(self, raw: Any) -> list[int] | None:
        """Saved pawn positions (one per pawn); None: none saved, or no pawn sensors here."""
        if raw is None or self.pawn_switches is None:
            return None
        if not isinstance(raw, list) or len(raw) > SEATS:
            raise ValueError(f"pawns: a list of up to {SEATS} perimeter positions")
        try:
            return sorted(check_position(p) for p in raw)
        except BackendError as exc:
            raise ValueError(f"pawns: {exc}") from None

    def _world(self) -> dict[str, Any]:
        switches = self.pawn_switches
        return {"pile": list(self._pile), "stacks": [list(s) for s in self._stacks],
                "beside": [list(b) for b in self._beside], "out": list(self._out),
                "hands": dict(self._hands), "dealt": self._dealt,
                "drawn": list(self._drawn),
                "pawns": None if switches is None else switches.positions()}

    def _adopt(self, world: dict[str, Any]) -> None:
        self._pile, self._stacks = world["pile"], world["stacks"]
        self._beside, self._out = world["beside"], world["out"]
        self._hands, self._dealt = world["hands"], world["dealt"]
        self._drawn = world.get("drawn", [])
        if self.pawn_switches is not None and world.get("pawns") is not None:
            self.pawn_switches.set(world["pawns"])

    def _commit(self, tags: dict[int, str], memory: dict[str, str] | None = None,
                **changes: Any) -> None:
        """Save then adopt a new physical truth (call with ``_lock`` held); ``changes``
        replace parts of the world beyond the readers (pile, stacks, beside, out, hands,
        dealt, pawns)."""
        memory = self._memory if memory is None else memory
        world = {**self._world(), **changes}
        path = self.state_path
        if path is not None:
            text = json.dumps({"version": STATE_VERSION,
                               "tags": {str(r): u for r, u in sorted(tags.items())},
                               "memory": dict(sorted(memory.items())),
                               "pile": world["pile"], "stacks": world["stacks"],
                               "beside": world["beside"], "out": world["out"],
                               "hands": {o: list(h) for o, h in world["hands"].items()},
                               "dealt": world["dealt"], "drawn": world["drawn"],
                               **({} if world["pawns"] is None
                                  else {"pawns": world["pawns"]})}, indent=1)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                # No fsync: a killed process leaves its writes in the page cache, and a
                # simulated table needs no power-cut safety (an fsync per card moved stalls
                # every gesture on a busy disk).
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, path)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    tmp.unlink()
                raise BackendError(f"cannot save the simulated table to {path}: {exc}; "
                                   "nothing changed") from None
        self._tags, self._memory = tags, memory
        self._adopt(world)

    # ------------------------------------------------------------ the physical table

    def _reader(self, where: int | str) -> int:
        if isinstance(where, int):
            self.layout.place(where)
            return where
        try:
            return self.layout.reader_for(where)
        except ValueError as exc:
            raise GestureRefused(str(exc)) from None

    def uid_of(self, card_id: str) -> str:
        return self.tagmap.uid_for(card_id) or made_up_uid(card_id)

    def place(self, where: int | str, card_id: str | None = None, uid: str | None = None) -> str:
        """Lay a card (by card id or tag UID) on a reader; returns its UID."""
        if (card_id is None) == (uid is None):
            raise BackendError("place needs a card id or a UID (one of them)")
        tag = normalise_uid(uid) if uid is not None else self.uid_of(str(card_id))
        reader = self._reader(where)
        with self._lock:
            self._check_free(reader)
            if tag in self._tags.values():
                raise BackendError(f"tag {tag} already lies on another reader")
            self._commit({**self._tags, reader: tag})
        return tag

    def _check_free(self, reader: int) -> None:
        if reader in self._tags:
            raise BackendError(
                f"{self.layout.place(reader).label()} already holds tag {self._tags[reader]}"
                "; remove it first (stacked tags cannot be read)"
            )

    def remove(self, where: int | str) -> str | None:
        """Lift whatever lies on a reader; returns its UID (None when it was empty)."""
        reader = self._reader(where)
        with self._lock:
            uid = self._tags.get(reader)
            if uid is not None:
                self._commit({r: u for r, u in self._tags.items() if r != reader})
            return uid

    def move(self, source: int | str, target: int | str) -> str:
        """Slide the tag on ``source`` onto ``target`` (one change: a refused move leaves it
        where it was)."""
        src, dst = self._reader(source), self._reader(target)
        with self._lock:
            uid = self._tags.get(src)
            if uid is None:
                raise BackendError(f"nothing lies on {source}")
            if dst != src:
                self._check_free(dst)
            tags = {r: u for r, u in self._tags.items() if r != src}
            tags[dst] = uid
            self._commit(tags)
        return uid

    def clear(self) -> None:
        """Nothing on the table any more (readers, pile, stacks, hands: all back in the box)."""
        with self._lock:
            self._commit({}, pile=[], stacks=[[] for _ in range(SEATS)],
                         beside=[[] for _ in range(SEATS)], out=[], hands={}, dealt=False,
                         drawn=[])

    # ------------------------------------------------------------ pawns (sensors fitted)

    def _switches(self) -> Any:
        if self.pawn_switches is None:
            raise self._refuse("this table has no pawn sensors (perimeter = true)")
        return self.pawn_switches

    def move_pawn(self, source: Any, target: Any) -> list[int]:
        """Move one pawn from perimeter position ``source`` to ``target`` (0..19); returns
        where every pawn stands."""
        self._switches()
        at, to = check_position(source), check_position(target)
        with self._lock:
            pawns = self._world()["pawns"]
            if at not in pawns:
                raise self._refuse(f"no pawn stands on perimeter {place_name(f'pos:{at}')}")
            pawns.remove(at)
            self._commit(self._tags, pawns=sorted([*pawns, to]))
            return list(self._world()["pawns"])

    def set_pawns(self, positions: Any) -> list[int]:
        """Every pawn where ``positions`` says (up to 4: a game's start positions)."""
        self._switches()
        if not isinstance(positions, list) or len(positions) > SEATS:
            raise self._refuse(f"pawns: positions must be a list of up to {SEATS} positions")
        pawns = sorted(check_position(p) for p in positions)
        with self._lock:
            self._commit(self._tags, pawns=pawns)
            return pawns

    def truth(self) -> dict[int, str]:
        """What really lies on each reader (reader -> UID)."""
        with self._lock:
            return dict(self._tags)


    # ------------------------------------------------------------ the physical world

    def card_at(self, uid: str) -> str:
        """The card id of a tag (``uid:<UID>`` for a tag that is no card)."""
        return self.tagmap.card_for(uid) or _made_up_uids().get(uid) or f"uid:{uid}"

    def _lying(self) -> dict[str, str]:
        """``{"r,c" | "pad:<seat>" | "pos:<n>": card id}``: what lies on each reader."""
        lying: dict[str, str] = {}
        for reader, uid in self._tags.items():
            lying[self.layout.place(reader).where] = self.card_at(uid)
        return lying

    def public(self) -> dict[str, Any]:
        """What anyone at the table sees: no covered card, no pile order."""
        with self._lock:
            lying = self._lying()
            return {
                "dealt": self._dealt,
                "cells": {w: c for w, c in lying.items() if "," in w and ":" not in w},
                "pads": {w[4:]: c for w, c in lying.items() if w.startswith("pad:")},
                "hands": {o: {"card": c, "origin": f} for o, (c, f) in self._hands.items()},
                "pile_size": len(self._pile),
                "tops": {str(s): (st[-1] if st else None) for s, st in enumerate(self._stacks)},
                "sizes": {str(s): len(st) for s, st in enumerate(self._stacks)},
                "beside": {str(s): list(b) for s, b in enumerate(self._beside)},
            }

    def private(self, seat: int) -> dict[str, Any]:
        """What only `seat` may see: its own stack, bottom first."""
        with self._lock:
            return {"seat": seat, "stack": list(self._stacks[_seat(seat)])}

    def physical(self) -> dict[str, Any]:
        """The whole physical truth, covered cards and pile order included (tests, restore)."""
        with self._lock:
            return {**self._world(), "lying": self._lying()}

    # The presence tracker confirms a change after a few polls; a gesture's next step waits
    # for that, so "laid on the pad, then lifted off" is seen as both, in order.

    def poll(self) -> PollResult:
        result = super().poll()
        with self._polled:
            self._polling = True
            self._polled.notify_all()
        return result

    def _await_seen(self, readers: set[int]) -> None:
        """Return once the tracker confirmed what lies on `readers` and the hub has sent
        the events of that poll (the next sweep began: the hub polls, then publishes, then
        polls again, on one thread), or after `CONFIRM_TIMEOUT` with a warning.

        Each of the first `FAST_SWEEPS` polls is asked for at once (the hub's `wake`) rather
        than after the poll interval: a gesture is confirmed in milliseconds (instant
        feedback). The hub polls once per wake, so a waiting gesture paces it; and a reader
        that never confirms (a fault) does not make it poll flat out for long."""
        if not self._polling or not readers:
            return
        deadline = time.monotonic() + CONFIRM_TIMEOUT
        fast_until = self.sweeps + FAST_SWEEPS
        seen_at: int | None = None
        with self._polled:
            while True:
                if seen_at is None:
                    with self._lock:
                        truth = {r: self._tags.get(r) for r in readers}
                    confirmed = self.tracker.state()
                    if all(confirmed.get(r) == uid for r, uid in truth.items()):
                        seen_at = self.sweeps
                if seen_at is not None and self.sweeps > seen_at:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    # The change is made (and saved): refusing now would tell the caller
                    # nothing happened while it did (a deal the host never starts, a bot
                    # that repeats a lift on an empty cell). The readers catch up later.
                    log.warning("the readers did not see the change within %g s (a busy "
                                "machine, or the hub is not polling)", CONFIRM_TIMEOUT)
                    return
                if self.sweeps < fast_until:
                    self.wake()
                self._polled.wait(min(left, 0.005))

    def _refuse(self, message: str) -> GestureRefused:
        return GestureRefused(message)

    def _held_from(self, where: str) -> str | None:
        """The owner whose hand holds the card lifted from `where`, if any."""
        return next((o for o, (_, f) in self._hands.items() if f == where), None)

    def _lift(self, where: str, owner: str) -> str:
        reader = self._reader(where)
        place = self.layout.place(reader).where
        with self._lock:
            if owner in self._hands:
                card, origin = self._hands[owner]
                raise self._refuse(f"{_owner_label(owner)}'s hand already holds "
                                   f"{_card(card)} (from {place_name(origin)}): lay it down "
                                   "first")
            uid = self._tags.get(reader)
            if uid is None:
                holder = self._held_from(place)
                if holder is not None:
                    raise self._refuse(
                        f"the card at {place_name(place)} is in {_owner_label(holder)}'s "
                        "hand")
                raise self._refuse(f"{place_name(place)} is empty")
            card = self.card_at(uid)
            self._commit({r: u for r, u in self._tags.items() if r != reader},
                         hands={**self._hands, owner: (card, place)})
        self._await_seen({reader})
        return card

    def _lay(self, where: str, owner: str) -> str:
        reader = self._reader(where)
        place = self.layout.place(reader).where
        with self._lock:
            held = self._hands.get(owner)
            if held is None:
                raise self._refuse(f"{_owner_label(owner)}'s hand is empty: pick up a card "
                                   "first")
            card, origin = held
            if origin == "pile" and "," not in place:
                raise self._refuse(f"{_card(card)} was drawn from the pile: it goes into the "
                                   f"hole it was drawn for, not on {place_name(place)}")
            if reader in self._tags:
                raise self._refuse(f"{place_name(place)} already holds "
                                   f"{_card(self.card_at(self._tags[reader]))}")
            tag = card[4:] if card.startswith("uid:") else self.uid_of(card)
            hands = {o: h for o, h in self._hands.items() if o != owner}
            self._commit({**self._tags, reader: tag}, hands=hands)
        self._await_seen({reader})
        return card

    def _slide(self, seat: int) -> str:
        reader = self._reader(f"pad:{seat}")
        self._await_seen({reader})  # the pad has seen the card before it leaves
        with self._lock:
            uid = self._tags.get(reader)
            if uid is None:
                raise self._refuse(f"{place_name(f'pad:{seat}')} is empty")
            card = self.card_at(uid)
            stacks = [list(st) for st in self._stacks]
            beside = [list(b) for b in self._beside]
            if current().catalogue.kinds.get(card) in ("ingredient", "immuto"):
                stacks[seat].append(card)
            else:
                beside[seat].append(card)
            self._commit({r: u for r, u in self._tags.items() if r != reader},
                         stacks=stacks, beside=beside)
        self._await_seen({reader})
        return card

    def _draw(self, owner: str) -> str:
        with self._lock:
            if owner in self._hands:
                raise self._refuse(f"{_owner_label(owner)}'s hand already holds "
                                   f"{_card(self._hands[owner][0])}: lay it down first")
            if any(origin == "pile" for _, origin in self._hands.values()):
                raise self._refuse("a card drawn from the pile is still in a hand: it goes "
                                   "into its hole before another is drawn")
            if not self._pile:
                raise self._refuse("the draw pile is empty: holes stay empty now (G10a)")
            card = self._pile[0]
            self._commit(self._tags, pile=self._pile[1:],
                         hands={**self._hands, owner: (card, "pile")},
                         drawn=[*self._drawn, card])
            return card

    def _drop(self, owner: str) -> str:
        with self._lock:
            held = self._hands.get(owner)
            if held is None:
                raise self._refuse(f"{_owner_label(owner)}'s hand is empty")
            card, origin = held
            if origin == "pile" or card in self._drawn:
                raise self._refuse(f"{_card(card)} was drawn from the pile: it goes into the "
                                   "hole it was drawn for, not back on the pile unseen")
            hands = {o: h for o, h in self._hands.items() if o != owner}
            if self._pile:
                self._commit(self._tags, pile=[*self._pile, card], hands=hands)
            else:
                self._commit(self._tags, out=[*self._out, card], hands=hands)
            return card

    def _tap(self, seat: int) -> str:
        """Vanesco: the seat's top card tapped on its pad, then under the pile (G8)."""
        reader = self._reader(f"pad:{seat}")
        with self._lock:
            if not self._stacks[seat]:
                raise self._refuse(f"{seat_name(seat)}'s cauldron is empty: nothing to tap")
            if reader in self._tags:
                raise self._refuse(f"{place_name(f'pad:{seat}')} holds "
                                   f"{_card(self.card_at(self._tags[reader]))}: clear it first")
            card = self._stacks[seat][-1]
            stacks = [list(st) for st in self._stacks]
            stacks[seat].pop()
            self._commit({**self._tags, reader: self.uid_of(card)}, stacks=stacks)
        self._await_seen({reader})
        with self._lock:
            tags = {r: u for r, u in self._tags.items() if r != reader}
            if self._pile:
                self._commit(tags, pile=[*self._pile, card])
            else:
                self._commit(tags, out=[*self._out, card])
        self._await_seen({reader})
        return card

    def _take(self, where: str, seat: int, owner: str) -> str:
        """One tap: lift the card at `where`, lay it on `seat`'s pad, slide it on. When the
        hand already holds the card lifted from `where` (a take half done, e.g. by the bot a
        person took the seat from), the tap finishes it: lay and slide."""
        pad = self._reader(f"pad:{seat}")
        place = self.layout.place(self._reader(where)).where
        with self._lock:
            if pad in self._tags:
                raise self._refuse(f"{place_name(f'pad:{seat}')} holds "
                                   f"{_card(self.card_at(self._tags[pad]))}: clear it first")
            held = self._hands.get(owner)
        card = held[0] if held is not None and held[1] == place else self._lift(where, owner)
        self._lay(f"pad:{seat}", owner)
        self._slide(seat)
        return card

    def _refill(self, where: str, owner: str) -> str:
        reader = self._reader(where)
        place = self.layout.place(reader).where
        with self._lock:
            if reader in self._tags:
                raise self._refuse(f"{place_name(place)} already holds "
                                   f"{_card(self.card_at(self._tags[reader]))}")
        self._draw(owner)
        return self._lay(where, owner)

    def deal(self, removed_colour: str | None = None, seed: int | None = None,
             grid: list[str] | None = None, pile: list[str] | None = None) -> list[str]:
        """Everything back in the box, shuffled, 32 cards laid face up in the square (in one
        change: no reader ever shows half of the old deal and half of the new), the rest the
        draw pile. Returns the dealt square in cell order."""
        cells = self.layout.cells
        if grid is None:
            cards = list(current().deck({"removed_colour": removed_colour}))
            random.Random(seed).shuffle(cards)
            grid, pile = cards[:len(cells)], cards[len(cells):]
        if not cells or len(grid) != len(cells) or len(set([*grid, *(pile or [])])) != len(
                grid) + len(pile or []):
            raise self._refuse("a deal is 32 different cards for the square plus the pile")
        readers = {self._reader(cell_key(*c)) for c in cells}
        with self._lock:
            old = set(self._tags)
            tags = {self._reader(cell_key(*c)): self.uid_of(card)
                    for c, card in zip(cells, grid, strict=True)}
            self._commit(tags, pile=list(pile or []), stacks=[[] for _ in range(SEATS)],
                         beside=[[] for _ in range(SEATS)], out=[], hands={}, dealt=True,
                         drawn=[])
        self._await_seen(readers | old)
        return list(grid)

    def restore(self, layout: RestoreLayout | Mapping[str, object]) -> int:
        """Lay the table out as `layout` says (what the engine's game holds): ``cells``
        ``{"r,c": card}``, ``stacks`` (per seat, bottom first), ``beside`` (per seat),
        ``pile`` (the cards in the pile, in any order) and ``pile_bottom`` (cards under the
        pile, top first). Pads and hands end empty; any other card is out of the game. The
        pile keeps its physical order: a card coming back to it goes on top (it was drawn
        from there), one leaving it is pulled out. ``pawns`` (one position per seat) puts
        the pawns there too, on a table with pawn sensors. Returns how many places
        changed."""
        if not isinstance(layout, RestoreLayout):
            try:
                layout = RestoreLayout.model_validate(dict(layout))
            except ValidationError as exc:
                raise self._refuse(f"restore: {exc.errors()[0]['msg']}") from None
        cells = dict(layout.cells)
        stacks = [list(s) for s in layout.stacks]
        beside = [list(b) for b in layout.beside]
        stacks += [[] for _ in range(SEATS - len(stacks))]
        beside += [[] for _ in range(SEATS - len(beside))]
        in_pile = set(layout.pile)
        bottom = list(layout.pile_bottom)
        placed = [*cells.values(), *(c for s in (*stacks, *beside) for c in s), *in_pile,
                  *bottom]
        unknown = sorted({c for c in placed if not current().catalogue.is_piece(c)})
        if unknown:
            raise self._refuse(f"restore: unknown card ids {unknown[:5]}")
        if len(placed) != len(set(placed)):
            raise self._refuse("restore: a card is in two places at once")
        for key in cells:
            parse_cell_key(key)
        pawns: list[int] | None = layout.pawns
        if pawns is not None and self.pawn_switches is not None:
            pawns = sorted(check_position(p) for p in pawns)
        else:
            pawns = None  # no sensors: the pawns are not the table's to know
        with self._lock:
            before = self._lying()
            world = self._world()
            known = set(placed)
            everything = [*before.values(), *world["pile"], *world["out"],
                          *(c for c, _ in world["hands"].values()),
                          *(c for s in (*world["stacks"], *world["beside"]) for c in s)]
            out = [c for c in everything if c not in known and not c.startswith("uid:")]
            out += [c for c in world["out"] if c not in known and c not in out]
            kept = [c for c in world["pile"] if c in in_pile]
            back = sorted(in_pile - set(kept))  # drawn earlier: back on top
            pile = [*back, *kept, *bottom]
            tags = {r: u for r, u in self._tags.items()
                    if self.layout.place(r).kind == "perimeter"}
            for key, card in cells.items():
                tags[self._reader(key)] = self.uid_of(card)
            changed = {r for r in set(tags) | set(self._tags)
                       if tags.get(r) != self._tags.get(r)}
            self._commit(tags, pile=pile, stacks=stacks, beside=beside,
                         out=list(dict.fromkeys(out)), hands={}, dealt=True,
                         drawn=[c for c in self._drawn if c not in in_pile],
                         pawns=world["pawns"] if pawns is None else pawns)
        self._await_seen(changed)
        return len(changed)

    def lay_out(self, layout: RestoreLayout | None, pawns: list[int] | None) -> SimResult:
        """The game changed without the readers (``hub/cmd/layout``): the cards go where
        `layout` says (`restore`: an undo carried out physically, or a game's end), or, at a
        game's start, the pawns to `pawns` on a table with pawn sensors (people then move
        them; a wrong move gets its G3/G4 alert)."""
        with self._gesture_lock:
            if layout is not None:
                return SimResult(moved=self.restore(layout))
            if pawns is not None and self.pawn_switches is not None:
                return SimResult(pawns=self.set_pawns(pawns))
            return SimResult()

    def gesture(self, args: Gesture | Mapping[str, object]) -> SimResult:
        """One ``hub/cmd/sim`` gesture (`engine.wire.api.GESTURES`; a mapping is parsed as
        the hub parses its args); raises `GestureRefused` or `BackendError` naming what is
        wrong, and then nothing changed."""
        if not isinstance(args, Gesture):
            try:
                args = parse_gesture(args)
            except BadArgs as exc:
                raise self._refuse(exc.message) from None
        g, owner = args, args.owner
        with self._gesture_lock:
            if isinstance(g, Lift):
                return SimResult(card=self._lift(g.place, owner))
            if isinstance(g, Lay):
                return SimResult(card=self._lay(g.place, owner))
            if isinstance(g, Slide):
                return SimResult(card=self._slide(g.seat_no))
            if isinstance(g, Draw):
                return SimResult(card=self._draw(owner))
            if isinstance(g, Drop):
                return SimResult(card=self._drop(owner))
            if isinstance(g, Tap | Vanesco):
                return SimResult(card=self._tap(g.seat_no))
            if isinstance(g, TakeCard):
                return SimResult(card=self._take(g.place, g.seat_no, owner))
            if isinstance(g, Refill):
                return SimResult(card=self._refill(g.place, owner))
            if isinstance(g, Deal):
                return SimResult(grid=self.deal(g.removed_colour, g.seed))
            if isinstance(g, Restore):
                return SimResult(moved=self.restore(g.layout))
            if isinstance(g, ViewTable):
                return SimResult.model_validate(self.public())
            if isinstance(g, SeatStack):
                return SimResult.model_validate(self.private(g.seat_no))
        raise self._refuse(f"unknown gesture {type(g).__name__}")

    # ------------------------------------------------------------ faults

    def flicker(self, where: int | str) -> None:
        self._flicker.add(self._reader(where))

    def stuck(self, where: int | str) -> None:
        self._stuck.add(self._reader(where))

    def vanish(self, where: int | str) -> None:
        self._vanished.add(self._reader(where))

    def repair(self, where: int | str) -> None:
        reader = self._reader(where)
        for faults in (self._flicker, self._stuck, self._vanished):
            faults.discard(reader)

    # ------------------------------------------------------------ reading

    def _misread(self, uid: str) -> str:
        value = int(uid, 16) ^ (1 << self.rng.randrange(len(uid) * 4))
        return f"{value:0{len(uid)}X}"

    def _read(self, reader: int, tags: dict[int, str]) -> ReaderRead:
        if reader in self._vanished:
            return ReaderRead(fault="absent")
        if reader in self._stuck:
            return ReaderRead(fault="silent")
        uid = tags.get(reader)
        if reader in self._flicker:
            phase = not self._flick_phase.get(reader, False)
            self._flick_phase[reader] = phase
            if uid is None:
                neighbour = tags.get(reader + 1) or tags.get(reader - 1)
                return ReaderRead(uid=neighbour if phase and neighbour else None)
            return ReaderRead(uid=uid if phase else None)
        if uid is None:
            return ReaderRead()
        if reader not in self._bad_last:
            roll = self.rng.random()
            if roll < self.drop_rate:
                self._bad_last.add(reader)
                return ReaderRead()
            if roll < self.drop_rate + self.misread_rate:
                self._bad_last.add(reader)
                return ReaderRead(uid=self._misread(uid))
        self._bad_last.discard(reader)
        return ReaderRead(uid=uid)

    def sweep(self) -> list[ReaderRead]:
        with self._lock:
            tags = dict(self._tags)
        self.sweeps += 1
        return [self._read(reader, tags) for reader in range(self.n_readers)]

    def write_tag(self, reader: int, card_id: str) -> None:
        with self._lock:
            uid = self._tags.get(reader)
            if uid is None:
                raise BackendError(f"no tag on {self.layout.place(reader).label()} to write to")
            self._commit(self._tags, {**self._memory, uid: card_id})

    def tag_memory(self, uid: str) -> str | None:
        with self._lock:
            return self._memory.get(uid)

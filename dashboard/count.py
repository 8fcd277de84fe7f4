"""Score-only mode: after a game played with the real cards, each seat taps its cauldron
cards, spells and recipe cards one by one on one reader (or picks them on the page), and the
exact score follows every tap.

- `CountSession` is the count itself, pure (no I/O, no clock): the host's set-up (colours,
  options, who took the last card), each seat's list in tap order, undo and remove, and the
  score, always computed by the rules engine's one scorer
  (`engine.games.glastonbury.rules.scoring.score_game`).
  A card that cannot be counted is refused with a `CountRefused` naming why (already
  counted for another seat, out of this game, ...).
- `CountDesk` holds the session for the web app: thread-safe (reader taps come from the
  reader thread), saved after every change (temp file + rename: a killed process loses
  nothing), and pushed to every WebSocket subscriber. Where the taps come from is wired by
  whoever starts it (``cauldron count``): ``reader_tap`` for a tag read on the reader, and
  optional hooks for the simulated reader (``sim_tap``) and for enrolling an unknown tag
  (``enrol``). The dashboard itself never touches a reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import JsonValue

from dashboard.game import GAME
from engine.games.base import Refused
from engine.games.glastonbury.rules.cards import CARDS, RECIPES
from engine.games.glastonbury.rules.names import card_name, seat_name
from engine.games.glastonbury.rules.scoring import GameScore, ScoringError, SeatCards, score_game

Source = Literal["tag", "manual", "sim"]
SOURCES: tuple[Source, ...] = ("tag", "manual", "sim")
STATE_VERSION = 1


class CountRefused(Exception):
    """A tap or a set-up that cannot be taken; ``code`` for machines, ``message`` for people."""

    def __init__(self, code: str, message: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.seat = seat  # the other seat that already holds the card, for "duplicate"


@dataclass(frozen=True)
class CountSetup:
    """What the host picks before the seats tap: seat i plays ``colours[i]``."""

    colours: tuple[str, ...]
    recipes: bool = False
    second_player_bonus: bool = False
    first_seat: int = 0
    last_card_seat: int | None = None
    removed_colour: str | None = None  # 2 players: default, the first unused player colour

    def __post_init__(self) -> None:
        self._checked()  # the game's one check of a set-up (G2, G4)
        n = len(self.colours)
        if self.last_card_seat is not None and not 0 <= self.last_card_seat < n:
            raise CountRefused("setup", f"the seat that took the last card must be one of "
                                        f"the {n} seats")

    def _checked(self) -> dict[str, JsonValue]:
        try:
            return GAME.check({"colours": list(self.colours), "first_seat": self.first_seat,
                               "removed_colour": self.removed_colour, "recipes": self.recipes,
                               "second_player_bonus": self.second_player_bonus}).wire()
        except Refused as exc:
            raise CountRefused("setup", exc.message) from None

    @property
    def removed(self) -> str | None:
        """The colour whose cards are out of the box (2 players, G2)."""
        removed = self._checked().get("removed_colour")
        return removed if isinstance(removed, str) else None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "colours": list(self.colours), "removed": self.removed}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CountSetup:
        return cls(colours=tuple(data["colours"]), recipes=bool(data.get("recipes")),
                   second_player_bonus=bool(data.get("second_player_bonus")),
                   first_seat=int(data.get("first_seat", 0)),
                   last_card_seat=data.get("last_card_seat"),
                   removed_colour=data.get("removed_colour"))


@dataclass(frozen=True)
class Tap:
    card: str
    source: Source
    uid: str | None = None


@dataclass
class SeatList:
    seat: int
    colour: str
    taps: list[Tap] = field(default_factory=list)
    done: bool = False

    def cards(self) -> list[str]:
        return [tap.card for tap in self.taps]

    def seat_cards(self) -> SeatCards:
        cards = self.cards()
        return SeatCards(
            seat=self.seat, colour=self.colour,
            cauldron=tuple(c for c in cards if c in CARDS and CARDS[c].kind != "spell"),
            spells=tuple(c for c in cards if c in CARDS and CARDS[c].kind == "spell"),
            recipes=tuple(c for c in cards if c in RECIPES),
        )


class CountSession:
    """One count: the set-up and each seat's list. Every change either happens whole or
    raises `CountRefused` and changes nothing."""

    def __init__(self, setup: CountSetup) -> None:
        self.setup = setup
        self.seats = [SeatList(i, colour) for i, colour in enumerate(setup.colours)]
        self.active: int | None = 0  # the seat the reader's taps go to

    def name(self, seat: int) -> str:
        return seat_name(seat, self.setup.colours[seat])

    def owner(self, card_id: str) -> int | None:
        return next((s.seat for s in self.seats if card_id in s.cards()), None)

    def _seat(self, seat: int | None) -> SeatList:
        if seat is None:
            if self.active is None:
                raise CountRefused("no_seat", "every seat is done: choose the seat to add "
                                              "this card to first")
            seat = self.active
        if not 0 <= seat < len(self.seats):
            raise CountRefused("no_seat", f"there is no {seat_name(seat)} in this count")
        return self.seats[seat]

    def check(self, card_id: str, seat: int) -> None:
        """Refuse a card that cannot be in this seat's final hand (changes nothing)."""
        if card_id.startswith("pawn-"):
            raise CountRefused("not_a_card", "that tag is a pawn, not a card")
        if card_id not in CARDS and card_id not in RECIPES:
            raise CountRefused("unknown_card", f"{card_id!r} is not a card of the box")
        if card_id in RECIPES:
            if not self.setup.recipes:
                raise CountRefused("impossible", f"{card_name(card_id)} cannot count: the "
                                   "recipe variant is off for this count (the host can turn "
                                   "it on)")
        else:
            card = CARDS[card_id]
            if card.kind == "corner":
                raise CountRefused("impossible", "corner cards stay in the corners of the "
                                   "grid: they are never in a cauldron")
            removed = self.setup.removed
            if removed is not None and card.colour == removed:
                raise CountRefused("impossible", f"{card_name(card_id)} cannot be in this "
                                   f"game: with 2 players the {removed} cards are out of the "
                                   "box (G2)")
        owner = self.owner(card_id)
        if owner == seat:
            raise CountRefused("already_here", f"{card_name(card_id)} is already counted "
                               f"for {self.name(seat)}", seat)
        if owner is not None:
            raise CountRefused("duplicate", f"{card_name(card_id)} is already counted for "
                               f"{self.name(owner)}: every card exists once. Remove it "
                               "there first if it was tapped for the wrong seat.", owner)

    def tap(self, card_id: str, seat: int | None = None, source: Source = "manual",
            uid: str | None = None) -> tuple[int, Tap]:
        """Count ``card_id`` for ``seat`` (default: the active seat). Returns (seat, tap)."""
        target = self._seat(seat)
        self.check(card_id, target.seat)
        tap = Tap(card_id, source, uid)
        target.taps.append(tap)
        target.done = False
        return target.seat, tap

    def undo(self, seat: int) -> Tap:
        target = self._seat(seat)
        if not target.taps:
            raise CountRefused("empty", f"nothing to undo: {self.name(seat)} has no card yet")
        target.done = False
        return target.taps.pop()

    def remove(self, seat: int, card_id: str) -> Tap:
        target = self._seat(seat)
        for i, tap in enumerate(target.taps):
            if tap.card == card_id:
                target.done = False
                return target.taps.pop(i)
        raise CountRefused("not_here", f"{card_name(card_id)} is not counted for "
                           f"{self.name(seat)}")

    def set_active(self, seat: int) -> None:
        self._seat(seat)
        self.active = seat

    def set_done(self, seat: int, done: bool = True) -> None:
        target = self._seat(seat)
        target.done = done
        if done and self.active == seat:
            after = [s.seat for s in self.seats[seat + 1:] + self.seats[:seat] if not s.done]
            self.active = after[0] if after else None
        elif not done and self.active is None:
            self.active = seat

    def set_last_card(self, seat: int | None) -> None:
        data = {**self.setup.to_json(), "last_card_seat": seat}
        data.pop("removed")
        self.setup = CountSetup.from_json(data)

    @property
    def finished(self) -> bool:
        return all(s.done for s in self.seats)

    def score(self) -> GameScore:
        """The score of the lists as they are now (the one scorer: `score_game`)."""
        return score_game(
            [s.seat_cards() for s in self.seats],
            last_card_seat=self.setup.last_card_seat if self.setup.recipes else None,
            first_seat=self.setup.first_seat,
            second_player_bonus=self.setup.second_player_bonus,
        )

    def score_input(self) -> dict[str, Any]:
        """The same cards as `cauldron score` input (to check or keep a count)."""
        return {
            "players": [{"seat": s.seat, "colour": s.colour, "cauldron": list(c.cauldron),
                         "spells": list(c.spells), "recipes": list(c.recipes)}
                        for s in self.seats for c in [s.seat_cards()]],
            "last_card_seat": self.setup.last_card_seat if self.setup.recipes else None,
            "options": {"second_player_bonus": self.setup.second_player_bonus,
                        "first_seat": self.setup.first_seat},
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "setup": self.setup.to_json(),
            "active": self.active,
            "seats": [{"seat": s.seat, "colour": s.colour, "done": s.done,
                       "taps": [asdict(t) for t in s.taps]} for s in self.seats],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CountSession:
        setup = data["setup"]
        setup = {k: v for k, v in setup.items() if k != "removed"}
        session = cls(CountSetup.from_json(setup))
        for entry in data["seats"]:
            for tap in entry["taps"]:
                source = tap.get("source", "manual")
                session.tap(tap["card"], entry["seat"], source if source in SOURCES else "manual",
                            tap.get("uid"))
            session.seats[entry["seat"]].done = bool(entry.get("done"))
        active = data.get("active")
        session.active = active if isinstance(active, int) and 0 <= active < len(
            session.seats) else None
        return session


# ---------------------------------------------------------------------------- the desk


@dataclass
class ReaderStatus:
    """What the page says about the reader: which kind, and whether it works."""

    kind: str | None = None  # "pcsc", "sim", "spi", "serial"; None: manual entry only
    label: str = "no reader: pick the cards on the page"
    health: str = "ok"  # "ok", "absent" (unplugged), "silent" (read errors)
    simulated: bool = False


class CountDesk:
    """The count behind the web app (see the module docstring)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.RLock()
        self.session: CountSession | None = None
        self.reader = ReaderStatus()
        self.sim_tap: Callable[[str], None] | None = None
        self.enrol: Callable[[str, str], None] | None = None
        self.message: dict[str, Any] | None = None  # the last tap's outcome, for the page
        self._message_id = 0
        self.save_error: str | None = None
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[str]]] = set()
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text("utf-8"))
                self.session = CountSession.from_json(data) if data is not None else None
            except (OSError, ValueError, KeyError, TypeError, AttributeError, CountRefused):
                # Never overwrite what cannot be read: keep it beside, start afresh.
                with contextlib.suppress(OSError):
                    path.replace(path.with_suffix(".bad"))
                self._message_id = 1
                self.message = {"id": 1, "kind": "info",
                                "text": f"The saved count could not be read; it is kept as "
                                        f"{path.with_suffix('.bad').name}. Start a new count."}

    # -- changes (each saves and notifies)

    def _changed(self, message: dict[str, Any] | None = None) -> None:
        if message is not None:
            self._message_id += 1
            self.message = {"id": self._message_id, **message}
        self._save()
        self._notify()

    def _save(self) -> None:
        """Keep the count on disk; when it cannot be (disk full, read-only), the count goes
        on in memory and the page says so."""
        if self.path is None:
            return
        data = self.session.to_json() if self.session else None
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".count-", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            self.save_error = None
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            self.save_error = (f"the count cannot be saved to {self.path} ({exc.strerror}): "
                               "it goes on, but a restart would lose it")

    def _need(self) -> CountSession:
        if self.session is None:
            raise CountRefused("no_count", "no count yet: the host picks the players first")
        return self.session

    def start(self, setup: CountSetup) -> None:
        with self._lock:
            self.session = CountSession(setup)
            self._changed({"kind": "info", "text": "New count: " + ", ".join(
                self.session.name(s) for s in range(len(setup.colours)))})

    def tap(self, card_id: str, seat: int | None = None, source: Source = "manual",
            uid: str | None = None) -> int:
        """Count a card (refusals are also shown on the page). Returns the seat."""
        with self._lock:
            try:
                session = self._need()
                target, _tap = session.tap(card_id, seat, source, uid)
            except CountRefused as exc:
                self._changed({"kind": "refused", "code": exc.code, "text": exc.message,
                               "card": card_id, "seat": seat, "other_seat": exc.seat})
                raise
            self._changed({"kind": "counted", "card": card_id, "seat": target,
                           "text": f"{card_name(card_id)} counted for {session.name(target)}"})
            return target

    def reader_tap(self, uid: str, card_id: str | None, seat: int | None = None) -> None:
        """A tag was laid on a reader: count its card for ``seat`` (a seat's own pad) or the
        seat being counted, or say that the tag is not enrolled. Never raises (it runs on
        the reader thread)."""
        if card_id is None:
            with self._lock:
                self._changed({"kind": "unknown_tag", "uid": uid,
                               "text": f"This tag (…{uid[-6:]}) is not enrolled, so its card "
                                       "is unknown: enrol it, or pick the card by hand.",
                               "link": "#enrol"})
            return
        with contextlib.suppress(CountRefused):
            self.tap(card_id, seat, "tag", uid)

    def act(self, action: Callable[[CountSession], Any], text: str | None = None) -> Any:
        """Run a host action on the session (undo, remove, done, active, options)."""
        with self._lock:
            result = action(self._need())
            self._changed({"kind": "info", "text": text} if text else None)
            return result

    def set_reader(self, **status: Any) -> None:
        with self._lock:
            for key, value in status.items():
                setattr(self.reader, key, value)
            self._notify()

    # -- views

    def state(self) -> dict[str, Any]:
        """Everything the count page shows: set-up, lists, score, last message, reader."""
        with self._lock:
            session = self.session
            data: dict[str, Any] = {
                "reader": asdict(self.reader),
                "can_enrol": self.enrol is not None,
                "message": self.message,
                "save_error": self.save_error,
                "count": None,
            }
            if session is None:
                return data
            count = session.to_json()
            for entry, seat in zip(count["seats"], session.seats, strict=True):
                entry["name"] = session.name(seat.seat)
            count["finished"] = session.finished
            try:
                count["scores"] = session.score().to_json()
                count["score_error"] = None
            except ScoringError as exc:  # cannot happen for accepted taps; say it if it does
                count["scores"] = None
                count["score_error"] = f"{exc.message} (rule {exc.rule})"
            count["score_input"] = session.score_input()
            data["count"] = count
            return data

    def state_text(self) -> str:
        return json.dumps(self.state(), ensure_ascii=False)

    # -- live subscribers (WebSocket)

    def subscribe(self) -> asyncio.Queue[str]:
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=1)
        with self._lock:
            self._subscribers.add((asyncio.get_running_loop(), queue))
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str]) -> None:
        with self._lock:
            self._subscribers = {s for s in self._subscribers if s[1] is not queue}

    def _notify(self) -> None:
        text = self.state_text()
        for loop, queue in list(self._subscribers):
            with contextlib.suppress(RuntimeError):  # loop closed
                loop.call_soon_threadsafe(_offer, queue, text)


def _offer(queue: asyncio.Queue[str], text: str) -> None:
    """Keep only the latest state: a slow phone skips states, never lags behind."""
    if queue.full():
        with contextlib.suppress(asyncio.QueueEmpty):
            queue.get_nowait()
    queue.put_nowait(text)

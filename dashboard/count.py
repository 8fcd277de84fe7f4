"""Score-only mode: after a game played with the real cards, each seat taps its cauldron
cards, spells and recipe cards one by one on one reader (or picks them on the page), and the
exact score follows every tap.

- The count itself is the game's, pure (`GameDefinition.score_only`: Glastonbury's
  `count.CountSession`, scored by its rules' one scorer); a piece that cannot be counted
  is refused with a `CountRefused` (`engine.games.base`) naming why.
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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal

from dashboard.game import GAME
from engine.games.base import CountRefused, ScoreOnly

Source = Literal["tag", "manual", "sim"]


def _score_only() -> ScoreOnly:
    if GAME.score_only is None:
        raise RuntimeError(f"{GAME.id} has no score-only count")
    return GAME.score_only


COUNT: Final[ScoreOnly] = _score_only()
CountSession = Any  # the game's session (`ScoreOnly.new`): its own type, behind the seam


def CountSetup(colours: tuple[str, ...], recipes: bool = False,
               second_player_bonus: bool = False, first_seat: int = 0,
               last_card_seat: int | None = None, removed_colour: str | None = None) -> Any:
    """The host's set-up of a count, checked by the game (`CountRefused` ``setup``)."""
    return COUNT.setup({"colours": list(colours), "recipes": recipes,
                        "second_player_bonus": second_player_bonus, "first_seat": first_seat,
                        "last_card_seat": last_card_seat, "removed_colour": removed_colour})

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
                self.session = COUNT.restore(data) if data is not None else None
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

    def start(self, setup: Any) -> None:
        with self._lock:
            self.session = COUNT.new(setup)
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
            said = f"{GAME.names.piece(card_id)} counted for {session.name(target)}"
            self._changed({"kind": "counted", "card": card_id, "seat": target, "text": said})
            return int(target)

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

    def act(self, action: Callable[[CountSession], object], text: str | None = None) -> object:
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
                count["scores"] = session.score_json()
                count["score_error"] = None
            except CountRefused as exc:  # cannot happen for accepted taps; say it if it does
                count["scores"] = None
                count["score_error"] = exc.message
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

"""Enrolment: tap every card of the box, in catalogue order, on one scan pad.

`Enrolment` is the state (which card is next, what was done, undo, skip); the tag map file
is saved after every step, so an interrupted enrolment resumes where it stopped (cards
already in the map are not asked again). `run_enrolment` drives it from a reader back-end
and a non-blocking command source (the terminal in ``cauldron enroll``, a script in tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.rules.cards import enrolment_order
from engine.rules.names import card_name
from hub.backends.base import ReaderBackend
from hub.errors import BackendError, TagMapError, UnsupportedError
from hub.tagmap import TagMap

COMMANDS_HELP = "u = undo the last step, s = skip this card, q = stop (what is enrolled stays)"


@dataclass
class Enrolment:
    tagmap: TagMap
    order: list[str] = field(default_factory=enrolment_order)
    backend: ReaderBackend | None = None
    reader: int | None = None
    write_tags: bool = False
    skipped: list[str] = field(default_factory=list)
    # ("enrolled" | "skipped", card id) in the order they happened this session: `undo`
    # takes back the last, whichever it was.
    history: list[tuple[str, str]] = field(default_factory=list)
    # With --write: tags whose written card id an undo took back (UID -> that card), erased
    # (or given back what they carried before) the next time they lie on the pad.
    to_erase: dict[str, str] = field(default_factory=dict)
    carried: dict[str, str | None] = field(default_factory=dict)  # UID -> id before our write
    _erase_due: bool = field(default=False, repr=False)  # look at the pad once, after an undo
    _pad_gone: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.write_tags and (self.backend is None
                                or "write_tag" not in self.backend.capabilities):
            name = self.backend.name if self.backend else "no"
            raise BackendError(f"the {name} back-end cannot write tags; run without --write")

    def remaining(self) -> list[str]:
        done = self.tagmap.cards()
        return [c for c in self.order if c not in done and c not in self.skipped]

    @property
    def current(self) -> str | None:
        left = self.remaining()
        return left[0] if left else None

    @property
    def done(self) -> int:
        return sum(1 for c in self.order if c in self.tagmap.cards())

    @property
    def total(self) -> int:
        return len(self.order)

    def progress(self, width: int = 30) -> str:
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        return f"[{bar}] {self.done}/{self.total}{skipped}"

    def name(self, card: str) -> str:
        """A card as the person finds it in the box: by its printed name, never its id (the
        cards carry no printed id; the id lives in the tag map, and in the tag with --write).
        Identical cards (Accio, Immuto) are counted: "Accio (copy 2 of 3)"."""
        name = card_name(card)
        same = [c for c in self.order if card_name(c) == name]
        if len(same) < 2 or card not in same:
            return name
        return f"{name} (copy {same.index(card) + 1} of {len(same)})"

    def prompt(self) -> str:
        card = self.current
        if card is None:
            return f"{self.progress()} every card is enrolled."
        return f"{self.progress()}  next: {self.name(card)}: tap it on the pad"

    def tag_seen(self, uid: str) -> str:
        """A tag was laid on the pad: enrol it as the current card. Returns what to say."""
        if uid in self.to_erase:
            return self._erase(uid)
        card = self.current
        if card is None:
            return "Nothing left to enrol."
        try:
            self.tagmap.add(uid, card)
        except TagMapError as exc:
            return f"Refused: {exc}"
        if self.write_tags:
            assert self.backend is not None and self.reader is not None
            self.carried.setdefault(uid, self.backend.tag_memory(uid))
            try:
                self.backend.write_tag(self.reader, card)
            except BackendError as exc:
                self.tagmap.remove_card(card)
                return f"Could not write {self.name(card)} into tag {uid}: {exc}. Tap it again."
        self.tagmap.save()
        self.history.append(("enrolled", card))
        written = " (written into the tag)" if self.write_tags else ""
        return f"Enrolled {self.name(card)} (tag {uid}){written}. Lift it."

    @property
    def enrolled_now(self) -> int:
        """Cards enrolled (and saved) in this session."""
        return sum(1 for kind, _ in self.history if kind == "enrolled")

    def undo(self) -> str:
        if not self.history:
            return "Nothing to undo in this session."
        kind, card = self.history.pop()
        if kind == "skipped":
            self.skipped.remove(card)
            return f"Skip undone: {self.name(card)} is asked again; tap it on the pad."
        uid = self.tagmap.remove_card(card)
        self.tagmap.save()
        said = f"Undone: {self.name(card)} (tag {uid}) is no longer enrolled; tap it again."
        if self.write_tags and uid is not None:
            self.to_erase[uid] = card
            self._erase_due = True
            said += (f" Tag {uid} still carries {self.name(card)}: the next time it lies on the "
                     "pad, that is erased (then lift it and tap the card asked for).")
        return said

    def erase_lying(self, uid: str | None) -> str | None:
        """Right after an undo: erase the undone tag if it still lies on the pad (``uid``:
        what lies there now). None when there is nothing to do."""
        if not self._erase_due:
            return None
        self._erase_due = False
        return self._erase(uid) if uid is not None and uid in self.to_erase else None

    def _erase(self, uid: str) -> str:
        """Give tag ``uid`` back what it carried before this session wrote it (nothing, or
        another card's id): an undone enrolment leaves no card id in the tag."""
        assert self.backend is not None and self.reader is not None
        card, before = self.to_erase[uid], self.carried.get(uid)
        erase = getattr(self.backend, "erase_tag", None)
        try:
            if before is not None:
                self.backend.write_tag(self.reader, before)
            elif erase is None:
                raise UnsupportedError(f"the {self.backend.name} back-end cannot erase a tag")
            else:
                erase(self.reader)
        except UnsupportedError as exc:
            del self.to_erase[uid]
            return (f"Tag {uid} still carries {self.name(card)} ({exc}): enrol that tag as its "
                    "own card to overwrite it.")
        except BackendError as exc:
            return (f"Could not erase {self.name(card)} from tag {uid}: {exc}. Lay it on the "
                    "pad again.")
        del self.to_erase[uid]
        self.carried.pop(uid, None)
        now = f"carries {self.name(before)} again" if before else "carries no card id any more"
        return f"Tag {uid} {now} (undone: {self.name(card)}). Lift it."

    def pad_health(self, health: str) -> str | None:
        """What to say when the pad's reader goes away (unplugged) or comes back; None when
        that did not change. Without it a person taps cards on a dead reader in silence."""
        gone = health == "absent"
        if gone == self._pad_gone:
            return None
        self._pad_gone = gone
        where = ("the pad" if self.backend is None or self.reader is None
                 else self.backend.layout.place(self.reader).label())
        if not gone:
            return f"The reader of {where} is back. {self.prompt()}"
        hint = str(getattr(self.backend, "absent_hint", ""))
        return (f"The reader of {where} is gone (unplugged?): plug it back in; enrolment goes "
                f"on by itself when it is back{hint}. What is enrolled is saved; q stops.")

    def skip(self) -> str:
        card = self.current
        if card is None:
            return "Nothing to skip."
        self.skipped.append(card)
        self.history.append(("skipped", card))
        return (f"Skipped {self.name(card)} (not enrolled; enrol again later to do it, "
                "or u to undo).")

    def stopped(self) -> str:
        """What to say when the person stops: saved only when something was."""
        still = ""
        if self.to_erase:
            still = (" Still carrying an undone card's id: " + ", ".join(
                f"tag {uid} ({self.name(card)})" for uid, card in self.to_erase.items())
                + "; enrol with --write again and lay it on the pad to erase it.")
        if not self.enrolled_now:
            return f"Stopped. {self.progress()}; nothing new was enrolled this time.{still}"
        where = f" in {self.tagmap.path}" if self.tagmap.path else ""
        return (f"Stopped. {self.progress()}; the {self.enrolled_now} card(s) enrolled this "
                f"time are saved{where}. Enrol again to resume.{still}")

    def status(self) -> dict[str, object]:
        """Progress for the host page (no UID: the tags' numbers mean nothing to people)."""
        card = self.current
        return {"done": self.done, "total": self.total, "next": card,
                "next_label": self.name(card) if card else None,
                "skipped": list(self.skipped), "enrolled_now": self.enrolled_now}


def run_enrolment(
    enrolment: Enrolment,
    backend: ReaderBackend,
    pad_reader: int,
    read_command: Callable[[], str | None],
    say: Callable[[str], None],
    *,
    poll_interval: float = 0.01,
    idle_timeout: float | None = None,
) -> bool:
    """Enrol until every card is done, ``q`` is given, or nothing happens for
    ``idle_timeout`` seconds. Returns True when every card is enrolled."""
    say(enrolment.prompt())
    last_activity = time.monotonic()
    while enrolment.current is not None:
        command = read_command()
        if command is not None:
            last_activity = time.monotonic()
            word = command.strip().lower()[:1]
            if word == "q":
                say(enrolment.stopped())
                return False
            message = {"u": enrolment.undo, "s": enrolment.skip}.get(word)
            say(message() if message else f"Unknown command {command.strip()!r}: {COMMANDS_HELP}")
            erased = enrolment.erase_lying(backend.state().get(pad_reader))
            if erased is not None:
                say(erased)
            say(enrolment.prompt())
        for change in backend.poll().changes:
            if change.reader == pad_reader and change.kind == "placed":
                last_activity = time.monotonic()
                say(enrolment.tag_seen(change.uid))
                say(enrolment.prompt())
        health = enrolment.pad_health(backend.health().get(pad_reader, "ok"))
        if health is not None:
            last_activity = time.monotonic()
            say(health)
        if idle_timeout is not None and time.monotonic() - last_activity > idle_timeout:
            say(f"No tag for {idle_timeout:g} s. " + enrolment.stopped())
            return False
        time.sleep(poll_interval)
    return not enrolment.skipped

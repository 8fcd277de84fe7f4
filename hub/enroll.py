"""Enrolment: tap every card of the box, in catalogue order, on one scan pad.

A game whose catalogue enrols by kind (Quacks' chips, `Catalogue.enrol_by`) is asked kind
by kind: "White 1: 20 chips, tap them one after another"; each new tag takes that kind's
next piece id, and a tag tapped twice is said, not counted twice. `Spare` gives a lost
piece a new tag (``cauldron enroll --spare <piece or kind>``); its old tag is retired
(refused since).

`Enrolment` is the state (which card is next, what was done, undo, skip); the tag map file
is saved after every step, so an interrupted enrolment resumes where it stopped (cards
already in the map are not asked again). `run_enrolment` drives it from a reader back-end
and a non-blocking command source (the terminal in ``cauldron enroll``, a script in tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Final

from hub.backends.base import ReaderBackend
from hub.errors import BackendError, TagMapError, UnsupportedError
from hub.game import (
    current,
    enrolment_order,
    enrols_by_kind,
    piece_kind,
    piece_name,
    piece_noun,
)
from hub.tagmap import TagMap

COMMANDS_HELP = "u = undo the last step, s = skip this one, q = stop (what is enrolled stays)"

# Everything enrolment says to people, as a code with parameters: the host page words each
# code in its language (dashboard/i18n ``enrol_<code>``, core.js `enrolWords`), the terminal
# gets the English below. Parameters ``card`` and ``before`` are card ids (worded by name,
# with ``<key>_copy``/``<key>_copies`` for identical cards), ``n`` picks a plural form,
# ``done``/``total``/``skipped`` make the progress; ``piece``/``pieces`` are the game's noun
# ("card", "chip").
WORDS: Final[dict[str, str]] = {
    "enrolling": "Enrolling on Seat {seat}'s pad: tap each {piece} as asked.",
    "next": "{progress}  next: {card}: tap it on the pad",
    "all_done": "{progress} every {piece} is enrolled.",
    "nothing_left": "Nothing left to enrol.",
    "tag_taken": "Refused: tag {uid} is already enrolled as {card}; use another {piece}, or "
                 "undo that enrolment first",
    "card_taken": "Refused: {card} is already enrolled with tag {uid}; undo that enrolment "
                  "first to change it",
    "refused": "Refused: {reason}",
    "write_failed": "Could not write {card} into tag {uid}: {error}. Tap it again.",
    "enrolled": "Enrolled {card} (tag {uid}). Lift it.",
    "enrolled_written": "Enrolled {card} (tag {uid}) (written into the tag). Lift it.",
    "nothing_to_undo": "Nothing to undo in this session.",
    "skip_undone": "Skip undone: {card} is asked again; tap it on the pad.",
    "undone": "Undone: {card} (tag {uid}) is no longer enrolled; tap it again.",
    "undone_written": "Tag {uid} still carries {card}: the next time it lies on the pad, that "
                      "is erased (then lift it and tap the {piece} asked for).",
    "erase_unsupported": "Tag {uid} still carries {card} ({error}): enrol that tag as its own "
                         "{piece} to overwrite it.",
    "erase_failed": "Could not erase {card} from tag {uid}: {error}. Lay it on the pad again.",
    "erased_back": "Tag {uid} carries {before} again (undone: {card}). Lift it.",
    "erased": "Tag {uid} carries no {piece} id any more (undone: {card}). Lift it.",
    "pad_back": "The reader of Seat {seat}'s pad is back.",
    "pad_gone": "The reader of Seat {seat}'s pad is gone (unplugged?): plug it back in; "
                "enrolment goes on by itself when it is back{hint}. What is enrolled is saved; "
                "q stops.",
    "next_kind": "{progress}  {card}: {count} chips, tap them one after another "
                 "({kind_done}/{count} done)",
    "enrolled_kind": "Enrolled {card} {kind_done}/{count} (tag {uid}).",
    "tapped_twice": "Tag {uid} is already enrolled as {card}: not counted twice; tap the "
                    "next one",
    "retired_tag": "Refused: tag {uid} is retired (it was {card}'s tag until a spare "
                   "replaced it); put it aside",
    "spare_next": "Spare for {card}: tap its new tag on the pad (its old tag {old} is then "
                  "retired).",
    "spare_enrolled": "Spare enrolled: tag {uid} is now {card}; its old tag {old} is retired "
                      "(refused from now on).",
    "spare_stopped": "No spare enrolled: {card} keeps its tag {old}.",
    "nothing_to_skip": "Nothing to skip.",
    "skipped": "Skipped {card} (not enrolled; enrol again later to do it, or u to undo).",
    "still_carrying": "Still carrying an undone {piece}'s id: tag {uid} ({card}); enrol with "
                      "--write again and lay it on the pad to erase it.",
    "stopped_nothing": "Stopped. {progress}; nothing new was enrolled this time.",
    "stopped_saved": "Stopped. {progress}; saved: the {n} {pieces} enrolled this time. "
                     "Enrol again to resume.",
    "ended_skipped": "Enrolment ended: {done}/{total} {pieces}; {skipped} skipped (start again "
                     "to enrol them).",
    "ended": "Every {piece} is enrolled ({done}/{total}).",
}
CARD_PARAMS: Final = ("card", "before")
Param = str | int


def card_words(params: dict[str, Param], key: str = "card") -> str:
    """The English name of card parameter ``key``: "Accio (copy 2 of 3)" for a copy."""
    name, copy = piece_name(str(params[key])), params.get(f"{key}_copy")
    return f"{name} (copy {copy} of {params[f'{key}_copies']})" if copy else name


@dataclass(frozen=True)
class Line:
    """One thing enrolment says: a `WORDS` code and its parameters."""

    code: str
    params: dict[str, Param] = field(default_factory=dict)

    def __post_init__(self) -> None:
        assert self.code in WORDS, self.code

    def english(self) -> str:
        p: dict[str, object] = dict(self.params)
        p.update(piece=piece_noun(), pieces=piece_noun(many=p.get("n") != 1))
        for key in CARD_PARAMS:
            if key in p:
                p[key] = card_words(self.params, key)
        if "total" in p:
            done, total = int(self.params["done"]), max(int(self.params["total"]), 1)
            filled = int(30 * done / total)
            skipped = f", {p['skipped']} skipped" if p.get("skipped") else ""
            p["progress"] = f"[{'#' * filled}{'-' * (30 - filled)}] {done}/{p['total']}{skipped}"
        return WORDS[self.code].format(**p)


@dataclass(frozen=True)
class Said:
    """What enrolment says at one step: lines in order. `str` gives the terminal's
    English; `wire` the codes for the host page."""

    lines: tuple[Line, ...]

    def __str__(self) -> str:
        return " ".join(line.english() for line in self.lines)

    def __add__(self, other: Said) -> Said:
        return Said(self.lines + other.lines)

    def wire(self) -> list[dict[str, object]]:
        return [{"code": line.code, "params": dict(line.params)} for line in self.lines]


def said(code: str, **params: Param) -> Said:
    return Said((Line(code, params),))


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
    # Kind by kind (identical pieces in a row) rather than piece by piece: the game's say.
    by_kind: bool = field(default_factory=enrols_by_kind)

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

    def progress(self) -> dict[str, Param]:
        return {"done": self.done, "total": self.total, "skipped": len(self.skipped)}

    def card(self, card: str, key: str = "card") -> dict[str, Param]:
        """A card as the person finds it in the box: by its printed name, never its id (the
        cards carry no printed id; the id lives in the tag map, and in the tag with --write).
        Identical cards (Accio, Immuto) are counted: "Accio (copy 2 of 3)"."""
        if self.by_kind:  # a chip of a kind has no copy number: any one of them will do
            return {key: card}
        name = piece_name(card)
        same = [c for c in self.order if piece_name(c) == name]
        if len(same) < 2 or card not in same:
            return {key: card}
        return {key: card, f"{key}_copy": same.index(card) + 1, f"{key}_copies": len(same)}

    def name(self, card: str) -> str:
        return card_words(self.card(card))

    def kind_progress(self, card: str) -> dict[str, Param]:
        """How far the kind of ``card`` is: ``kind_done`` of ``count`` pieces enrolled."""
        kind, done = piece_kind(card), self.tagmap.cards()
        same = [c for c in self.order if piece_kind(c) == kind]
        return {"kind_done": sum(1 for c in same if c in done), "count": len(same)}

    def prompt(self) -> Said:
        card = self.current
        if card is None:
            return said("all_done", **self.progress())
        if self.by_kind:
            return said("next_kind", **self.progress(), **self.card(card),
                        **self.kind_progress(card))
        return said("next", **self.progress(), **self.card(card))

    def tag_seen(self, uid: str) -> Said:
        """A tag was laid on the pad: enrol it as the current card. Returns what to say."""
        if uid in self.to_erase:
            return self._erase(uid)
        card = self.current
        if card is None:
            return said("nothing_left")
        try:
            self.tagmap.add(uid, card)
        except TagMapError as exc:
            held, other = self.tagmap.card_for(uid), self.tagmap.uid_for(card)
            retired = self.tagmap.retired_for(uid)
            if retired is not None:
                return said("retired_tag", uid=uid.upper(), **self.card(retired))
            if held is not None:
                return said("tapped_twice" if self.by_kind else "tag_taken", uid=uid,
                            **self.card(held))
            if other is not None:
                return said("card_taken", uid=other, **self.card(card))
            return said("refused", reason=str(exc))
        if self.write_tags:
            assert self.backend is not None and self.reader is not None
            self.carried.setdefault(uid, self.backend.tag_memory(uid))
            try:
                self.backend.write_tag(self.reader, card)
            except BackendError as exc:
                self.tagmap.remove_card(card)
                return said("write_failed", uid=uid, error=str(exc), **self.card(card))
        self.tagmap.save()
        self.history.append(("enrolled", card))
        if self.by_kind and not self.write_tags:
            return said("enrolled_kind", uid=uid, **self.card(card), **self.kind_progress(card))
        return said("enrolled_written" if self.write_tags else "enrolled", uid=uid,
                    **self.card(card))

    @property
    def enrolled_now(self) -> int:
        """Cards enrolled (and saved) in this session."""
        return sum(1 for kind, _ in self.history if kind == "enrolled")

    def undo(self) -> Said:
        if not self.history:
            return said("nothing_to_undo")
        kind, card = self.history.pop()
        if kind == "skipped":
            self.skipped.remove(card)
            return said("skip_undone", **self.card(card))
        uid = self.tagmap.remove_card(card)
        self.tagmap.save()
        words = said("undone", uid=str(uid), **self.card(card))
        if self.write_tags and uid is not None:
            self.to_erase[uid] = card
            self._erase_due = True
            words += said("undone_written", uid=uid, **self.card(card))
        return words

    def erase_lying(self, uid: str | None) -> Said | None:
        """Right after an undo: erase the undone tag if it still lies on the pad (``uid``:
        what lies there now). None when there is nothing to do."""
        if not self._erase_due:
            return None
        self._erase_due = False
        return self._erase(uid) if uid is not None and uid in self.to_erase else None

    def _erase(self, uid: str) -> Said:
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
            return said("erase_unsupported", uid=uid, error=str(exc), **self.card(card))
        except BackendError as exc:
            return said("erase_failed", uid=uid, error=str(exc), **self.card(card))
        del self.to_erase[uid]
        self.carried.pop(uid, None)
        if before:
            return said("erased_back", uid=uid, **self.card(card), **self.card(before, "before"))
        return said("erased", uid=uid, **self.card(card))

    def pad_health(self, health: str) -> Said | None:
        """What to say when the pad's reader goes away (unplugged) or comes back; None when
        that did not change. Without it a person taps cards on a dead reader in silence."""
        gone = health == "absent"
        if gone == self._pad_gone:
            return None
        self._pad_gone = gone
        seat = (None if self.backend is None or self.reader is None
                else self.backend.layout.place(self.reader).seat)
        where = 1 if seat is None else seat + 1
        if not gone:
            return said("pad_back", seat=where) + self.prompt()
        hint = str(getattr(self.backend, "absent_hint", ""))
        return said("pad_gone", seat=where, hint=hint)

    def skip(self) -> Said:
        card = self.current
        if card is None:
            return said("nothing_to_skip")
        self.skipped.append(card)
        self.history.append(("skipped", card))
        return said("skipped", **self.card(card))

    def stopped(self) -> Said:
        """What to say when the person stops: saved only when something was."""
        if not self.enrolled_now:
            words = said("stopped_nothing", **self.progress())
        else:
            words = said("stopped_saved", n=self.enrolled_now, **self.progress())
        for uid, card in self.to_erase.items():
            words += said("still_carrying", uid=uid, **self.card(card))
        return words

    def ended(self) -> Said:
        """What to say when the last card is done (or skipped)."""
        if self.skipped:
            return said("ended_skipped", done=self.done, total=self.total,
                        n=len(self.skipped), skipped=len(self.skipped))
        return said("ended", done=self.done, total=self.total)

    def status(self) -> dict[str, object]:
        """Progress for the host page (no UID: the tags' numbers mean nothing to people)."""
        card = self.current
        return {"done": self.done, "total": self.total, "next": card,
                "next_label": self.name(card) if card else None,
                "skipped": list(self.skipped), "enrolled_now": self.enrolled_now}


class SpareError(ValueError):
    """A spare that cannot be: the message names the problem and the choices."""


@dataclass
class Spare:
    """A new tag for a lost piece (``cauldron enroll --spare <piece or kind>``): the next tag
    laid on the pad becomes ``card``'s, and the tag it had is retired (refused since).
    A spare is no extra piece: the tag map stays one tag per piece."""

    tagmap: TagMap
    card: str
    done: bool = False

    @classmethod
    def of(cls, tagmap: TagMap, piece_or_kind: str, *,
           seen: Mapping[str, float] | None = None, lying: Collection[str] = ()) -> Spare:
        """The spare of a piece id, or of a kind: then its first piece with no tag (one
        skipped at enrolment), else the one whose tag was seen least recently (`seen`: UID ->
        when last laid or lifted, the outbox's `last_seen`; never seen counts as oldest, ties
        go by id) and lies on no reader now (`lying`: UIDs). Pieces of a kind are identical
        and the hub cannot know which one was lost; a chip drawn a moment ago is not it, one
        not seen for the longest may be. To retire another, name the piece itself."""
        catalogue = current().catalogue
        if piece_or_kind in catalogue.pieces:
            return cls(tagmap, piece_or_kind)
        same = [p for p in catalogue.pieces if catalogue.kinds[p] == piece_or_kind]
        title = current().titles["en"]
        if not same or not enrols_by_kind():
            if not enrols_by_kind():  # each piece its own (Glastonbury's cards): name it
                raise SpareError(f"{piece_or_kind!r} is not a piece of {title}: name the lost "
                                 f"piece itself (e.g. {catalogue.pieces[0]})")
            kinds = sorted(set(catalogue.kinds[p] for p in catalogue.pieces))
            raise SpareError(f"{piece_or_kind!r} is neither a piece nor a kind of "
                             f"{title}; its kinds: {', '.join(kinds)}")
        untagged = [p for p in same if tagmap.uid_for(p) is None]
        if untagged:
            return cls(tagmap, untagged[0])
        away = [p for p in same if tagmap.uid_for(p) not in lying]
        if not away:
            raise SpareError(f"every {piece_or_kind} lies on a reader now, so none is lost; "
                             f"name the lost piece itself (e.g. {same[0]})")
        last = seen or {}
        return cls(tagmap, min(away, key=lambda p: last.get(tagmap.uid_for(p) or "",
                                                               float("-inf"))))

    def prompt(self) -> Said:
        return said("spare_next", card=self.card, old=self.tagmap.uid_for(self.card) or "-")

    def stopped(self) -> Said:
        return said("spare_stopped", card=self.card, old=self.tagmap.uid_for(self.card) or "-")

    def tag_seen(self, uid: str) -> Said:
        try:
            old = self.tagmap.replace(uid, self.card)
        except TagMapError as exc:
            retired = self.tagmap.retired_for(uid)
            if retired is not None:
                return said("retired_tag", uid=uid.upper(), card=retired)
            held = self.tagmap.card_for(uid)
            if held is not None:
                return said("tag_taken", uid=uid.upper(), card=held)
            return said("refused", reason=str(exc))
        self.tagmap.save()
        self.done = True
        return said("spare_enrolled", uid=uid.upper(), card=self.card, old=old or "-")


def run_spare(spare: Spare, backend: ReaderBackend, pad_reader: int,
              say: Callable[[str], None], *, poll_interval: float = 0.01,
              idle_timeout: float | None = None) -> bool:
    """Wait for the spare's tag on the pad (a refused tag: say why, wait for another).
    True when the spare is enrolled."""
    say(str(spare.prompt()))
    start = time.monotonic()
    while not spare.done:
        for change in backend.poll().changes:
            if change.reader == pad_reader and change.kind == "placed" and not spare.done:
                start = time.monotonic()
                say(str(spare.tag_seen(change.uid)))
        if idle_timeout is not None and time.monotonic() - start > idle_timeout:
            say(f"No tag for {idle_timeout:g} s: no spare enrolled.")
            return False
        time.sleep(poll_interval)
    return True


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
    say(str(enrolment.prompt()))
    last_activity = time.monotonic()
    while enrolment.current is not None:
        command = read_command()
        if command is not None:
            last_activity = time.monotonic()
            word = command.strip().lower()[:1]
            if word == "q":
                say(str(enrolment.stopped()))
                return False
            message = {"u": enrolment.undo, "s": enrolment.skip}.get(word)
            say(str(message()) if message
                else f"Unknown command {command.strip()!r}: {COMMANDS_HELP}")
            erased = enrolment.erase_lying(backend.state().get(pad_reader))
            if erased is not None:
                say(str(erased))
            say(str(enrolment.prompt()))
        for change in backend.poll().changes:
            if change.reader == pad_reader and change.kind == "placed":
                last_activity = time.monotonic()
                say(str(enrolment.tag_seen(change.uid)))
                say(str(enrolment.prompt()))
        health = enrolment.pad_health(backend.health().get(pad_reader, "ok"))
        if health is not None:
            last_activity = time.monotonic()
            say(str(health))
        if idle_timeout is not None and time.monotonic() - last_activity > idle_timeout:
            say(f"No tag for {idle_timeout:g} s. {enrolment.stopped()}")
            return False
        time.sleep(poll_interval)
    return not enrolment.skipped

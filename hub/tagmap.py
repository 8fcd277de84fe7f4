"""The tag map: which physical tag (UID) is which card (card id).

Stored as a JSON file ``{"schema_version": 1, "tags": {"04A1B2C3": "blue-a-4", ...}}``
(with ``"retired": {UID: piece}``: the old tags of pieces a spare replaced, refused since),
written atomically (temp file + rename) so a crash never leaves half a file. Values are card
ids of the catalogue (`engine.games.glastonbury.rules.cards`) or ``pawn-<seat>`` for pawn tags.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from engine.wire.contract import UID_PATTERN
from hub.errors import TagMapError
from hub.game import is_piece, piece_name, seat_name

_UID_RE = re.compile(UID_PATTERN)
_PAWN_RE = re.compile(r"^pawn-[0-3]$")


def normalise_uid(uid: str) -> str:
    text = uid.strip().upper().replace(":", "").replace(" ", "")
    if not _UID_RE.match(text):
        raise TagMapError(f"UID {uid!r} is not 8, 14 or 20 hex digits (a 4, 7 or 10 byte UID)")
    return text


def check_tag_value(value: str) -> str:
    if not (is_piece(value) or _PAWN_RE.match(value)):
        raise TagMapError(f"{value!r} is not a card id of the catalogue (nor pawn-0..3)")
    if value.startswith("corner-"):
        raise TagMapError(f"{value} is a corner card: corner cards carry no tag")
    return value


def tag_value_name(value: str) -> str:
    """What a tag stands for, for people: "Pumpkins 4 (blue)", "Seat 2's pawn"."""
    if _PAWN_RE.match(value):
        return f"{seat_name(int(value[5:]))}'s pawn"
    return piece_name(value)


class TagMap:
    """UID -> card id, one UID per card and one card per UID."""

    def __init__(self, path: Path | None = None, tags: dict[str, str] | None = None) -> None:
        self.path = path
        self._by_uid: dict[str, str] = {}
        self._by_card: dict[str, str] = {}
        self._retired: dict[str, str] = {}  # UID -> the piece it was, before a spare
        for uid, card in (tags or {}).items():
            self.add(uid, card)

    @classmethod
    def load(cls, path: Path, missing_ok: bool = True) -> TagMap:
        """Read a tag map file (an empty map when it does not exist and ``missing_ok``)."""
        if not path.exists():
            if missing_ok:
                return cls(path)
            raise TagMapError(f"tag map {path} does not exist; run `cauldron enroll` first")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            raise TagMapError(f"tag map {path} cannot be read: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("tags"), dict):
            raise TagMapError(f"tag map {path} has no 'tags' object; is it a tag map file?")
        tagmap = cls(path)
        retired = data.get("retired", {})
        if not isinstance(retired, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in retired.items()):
            raise TagMapError(f"tag map {path}: 'retired' is not an object of UID -> piece id")
        try:
            tagmap._retired = {normalise_uid(uid): card for uid, card in retired.items()}
        except TagMapError as exc:
            raise TagMapError(f"tag map {path}: retired: {exc}") from None
        for uid, card in data["tags"].items():
            if not isinstance(card, str):
                raise TagMapError(f"tag map {path}: value of {uid} is not a card id")
            try:
                tagmap.add(uid, card)
            except TagMapError as exc:  # the file's own words too: they are what to edit
                raise TagMapError(f"tag map {path}: {exc} (the file has \"{uid}\": "
                                  f"\"{card}\")") from None
        return tagmap

    def save(self, path: Path | None = None) -> Path:
        target = path or self.path
        if target is None:
            raise TagMapError("no file to save the tag map to")
        target.parent.mkdir(parents=True, exist_ok=True)
        payload: dict[str, object] = {"schema_version": 1, "tags": dict(self._by_uid)}
        if self._retired:
            payload["retired"] = dict(self._retired)
        fd, tmp = tempfile.mkstemp(prefix=".tagmap-", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=1)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        return target

    def add(self, uid: str, card_id: str) -> str:
        """Enrol ``uid`` as ``card_id``; refuses a UID or a card already enrolled."""
        uid = normalise_uid(uid)
        check_tag_value(card_id)
        if uid in self._retired:
            raise TagMapError(self.retired_words(uid))
        if uid in self._by_uid:
            raise TagMapError(
                f"tag {uid} is already enrolled as {tag_value_name(self._by_uid[uid])}; use "
                "another card, or undo that enrolment first"
            )
        if card_id in self._by_card:
            raise TagMapError(f"{tag_value_name(card_id)} is already enrolled with tag "
                              f"{self._by_card[card_id]}; undo that enrolment first to change it")
        self._by_uid[uid] = card_id
        self._by_card[card_id] = uid
        return uid

    def replace(self, uid: str, card_id: str) -> str | None:
        """A spare: ``uid`` becomes ``card_id``'s tag, and the tag it had (returned; None
        when it had none) is retired: refused from now on (`retired_for`). Refuses a UID
        already enrolled or retired."""
        uid = normalise_uid(uid)
        check_tag_value(card_id)
        if uid in self._retired:
            raise TagMapError(self.retired_words(uid))
        if uid in self._by_uid:
            raise TagMapError(f"tag {uid} is already enrolled as "
                              f"{tag_value_name(self._by_uid[uid])}: a spare is a new tag")
        old = self.remove_card(card_id)
        if old is not None:
            self._retired[old] = card_id
        self.add(uid, card_id)
        return old

    def unreplace(self, uid: str, old: str | None) -> None:
        """Undo `replace`: ``uid`` is no longer enrolled, ``old`` is its piece's tag again."""
        card = self._by_uid.get(normalise_uid(uid))
        if card is None:
            return
        self.remove_card(card)
        if old is not None:
            self._retired.pop(old, None)
            self.add(old, card)

    def retired_for(self, uid: str) -> str | None:
        """The piece a retired tag was (None: not retired)."""
        return self._retired.get(uid.upper())

    def retired_words(self, uid: str) -> str:
        card = self._retired[uid.upper()]
        return (f"tag {uid.upper()} is retired: it was {tag_value_name(card)}'s tag until a "
                "spare replaced it; put that tag aside")

    def remove_card(self, card_id: str) -> str | None:
        uid = self._by_card.pop(card_id, None)
        if uid is not None:
            del self._by_uid[uid]
        return uid

    def card_for(self, uid: str) -> str | None:
        return self._by_uid.get(uid.upper())

    def uid_for(self, card_id: str) -> str | None:
        return self._by_card.get(card_id)

    def __contains__(self, uid: object) -> bool:
        return isinstance(uid, str) and uid.upper() in self._by_uid

    def __len__(self) -> int:
        return len(self._by_uid)

    def items(self) -> list[tuple[str, str]]:
        return list(self._by_uid.items())

    def cards(self) -> set[str]:
        return set(self._by_card)

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
is set aside as ``.bad`` and the table starts empty. Faults are not saved.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import random
import threading
from pathlib import Path
from typing import Any, ClassVar

from hub.backends.base import RawBackend, ReaderRead
from hub.errors import BackendError, TagMapError
from hub.layout import Layout
from hub.tagmap import TagMap, normalise_uid

log = logging.getLogger("cauldron.hub.sim")
STATE_VERSION = 1


def made_up_uid(card_id: str) -> str:
    """A stable 7-byte NXP-style UID (first byte 04) for a card without an enrolled tag."""
    return "04" + hashlib.sha1(card_id.encode()).hexdigest()[:12].upper()


def virtual_box_tagmap() -> TagMap:
    """A tag map with every taggable card enrolled under its made-up UID (a virtual box)."""
    from engine.rules.cards import enrolment_order

    return TagMap(tags={made_up_uid(card): card for card in enrolment_order()})


class SimulatedTable(RawBackend):
    name: ClassVar[str] = "sim"
    capabilities = frozenset({"write_tag"})

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
            tags, memory = self._parse(json.loads(text))
        except (ValueError, TypeError, RecursionError, TagMapError) as exc:
            bad = path.with_name(path.name + ".bad")
            with contextlib.suppress(OSError):
                os.replace(path, bad)
            log.warning("simulated table %s is damaged (%s); starting with an empty table "
                        "(the file is kept as %s)", path, exc, bad)
            return
        self._tags, self._memory = tags, memory

    def _parse(self, data: Any) -> tuple[dict[int, str], dict[str, str]]:
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise ValueError(f"not a version {STATE_VERSION} simulated table")
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

    def _commit(self, tags: dict[int, str], memory: dict[str, str] | None = None) -> None:
        """Save then adopt a new physical truth (call with ``_lock`` held)."""
        memory = self._memory if memory is None else memory
        path = self.state_path
        if path is not None:
            text = json.dumps({"version": STATE_VERSION,
                               "tags": {str(r): u for r, u in sorted(tags.items())},
                               "memory": dict(sorted(memory.items()))}, indent=1)
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

    # ------------------------------------------------------------ the physical table

    def _reader(self, where: int | str) -> int:
        if isinstance(where, int):
            self.layout.place(where)
            return where
        try:
            return self.layout.reader_for(where)
        except ValueError as exc:
            raise BackendError(str(exc)) from None

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
        with self._lock:
            if self._tags:
                self._commit({})

    def truth(self) -> dict[int, str]:
        """What really lies on each reader (reader -> UID)."""
        with self._lock:
            return dict(self._tags)

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

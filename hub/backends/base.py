"""The reader back-end interface.

A back-end answers `poll()` with the confirmed changes since the last poll:

- *raw* back-ends (`RawBackend`: the simulator) read every reader once per `sweep()`;
  `RawBackend.poll` debounces those reads with the firmware's own
  `firmware.presence.PresenceTracker`;
- the *serial* back-end receives changes already confirmed by the firmware; the *spi*
  back-end (a `SerialBackend`) runs the firmware's scan loop in-process and reads its lines
  the same way (one piece of logic on the Pico and on the Pi).

After a restart the hub seeds the back-end (`ReaderBackend.seed_state`) with what it last
reported (kept in its outbox) before the first poll, so a card lifted while the hub was down
is reported ``removed`` and one still lying there is not reported again.

Capabilities (``capabilities``, announced in ``hub/snapshot``): ``"write_tag"`` when
`write_tag` can store a card id in a tag's memory; ``"lay_out"`` when `lay_out` lays the
table out itself as the game holds it (the simulated table: ``hub/cmd/layout`` after an
undo), so that no other package needs to know which back-end it is.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal, cast

from firmware.presence import PresenceTracker
from hub.backends.sim_pawns import SimPawns
from hub.errors import UnsupportedError
from hub.layout import Layout

if TYPE_CHECKING:
    from engine.wire.api import RestoreLayout, SimResult

ChangeKind = Literal["placed", "removed"]
Health = Literal["ok", "silent", "flicker", "absent"]
BoardState = Literal["ok", "hung", "disconnected"]


@dataclass(frozen=True)
class BoardStatus:
    """The scan board behind a back-end (the Pico): ``hung`` when it stopped answering
    PING; ``resets`` counts the times the hub reset it."""

    state: BoardState = "ok"
    resets: int = 0
    firmware: str | None = None


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    reader: int
    uid: str


@dataclass(frozen=True)
class ReaderRead:
    """One poll of one reader: the UID read (upper-case hex) or None when no tag answered;
    ``fault`` ``"silent"``/``"absent"`` when the reader itself failed (says nothing about
    the tag)."""

    uid: str | None = None
    fault: Literal["silent", "absent"] | None = None


@dataclass
class PollResult:
    changes: list[Change] = field(default_factory=list)
    health: dict[int, Health] = field(default_factory=dict)  # readers whose health changed
    resynced: bool = False  # the state was re-read in full (after a reconnect)
    board_changed: bool = False  # `ReaderBackend.board()` changed (hung, back, reset)
    pawns: frozenset[int] | None = None  # sensed pawn positions, when they changed


def _no_wake() -> None:
    """No hub polls this back-end yet."""


class ReaderBackend(ABC):
    """Where the hub gets reader changes from."""

    name: ClassVar[str] = "base"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        # Set by the hub that polls this back-end: asks for the next poll now rather than
        # after the poll interval (a simulated gesture waiting for its change to be seen).
        self.wake: Callable[[], None] = _no_wake

    @property
    def n_readers(self) -> int:
        return self.layout.n_readers

    def open(self) -> None:  # noqa: B027 - optional hook
        """Acquire the hardware / link (idempotent)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release it."""

    @abstractmethod
    def poll(self) -> PollResult:
        """Changes confirmed since the last call (one sweep for raw back-ends)."""

    @abstractmethod
    def state(self) -> dict[int, str | None]:
        """Confirmed content of every reader: reader -> UID or None."""

    @abstractmethod
    def health(self) -> dict[int, Health]:
        """Health of every reader."""

    @abstractmethod
    def seed_state(self, state: Mapping[int, str]) -> None:
        """Take ``state`` (reader -> UID; a reader not in it is empty) as the confirmed
        content of every reader, emitting nothing: what the hub last reported before it
        restarted. Call it before the first poll; the polls then give what changed since
        (a seeded tag no longer there is ``removed``, another tag ``removed`` + ``placed``).
        Readers outside the layout are ignored."""

    def settled(self) -> bool:
        """Whether the confirmed state says what lies on the readers now: the sweeps (or
        the full report) that confirm a tag lifted while the hub was down are in."""
        return True

    def tag_memory(self, uid: str) -> str | None:
        """The card id written in tag ``uid``'s memory (NDEF text, `hub.ndef`), when the
        back-end read one: a box works without its tag map. None otherwise."""
        return None

    def board(self) -> BoardStatus | None:
        """The scan board's status; None for back-ends without one (the simulator)."""
        return None

    def pawns(self) -> frozenset[int] | None:
        """Perimeter positions where a pawn is sensed; None when pawns are not sensed."""
        return None

    def write_tag(self, reader: int, card_id: str) -> None:
        raise UnsupportedError(
            f"the {self.name} back-end cannot write tags; enrol with the tag map only"
        )

    def lay_out(self, layout: RestoreLayout | None, pawns: list[int] | None) -> SimResult:
        """Lay the table out as the game now holds it (capability ``lay_out``): the cards
        as `layout` says (an undo, a game's end), or only the pawns (a game's start)."""
        raise UnsupportedError(
            f"the {self.name} back-end cannot lay a table out: people put the cards back"
        )

    def __enter__(self) -> ReaderBackend:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RawBackend(ReaderBackend):
    """A back-end that reads raw polls; presence is confirmed here, as on the firmware.

    With ``layout.perimeter`` (pawn sensors fitted) it also has ``pawn_switches``: the Hall
    switches of the 20 perimeter positions (`hub.backends.sim_pawns.SimPawns`), reported in
    `PollResult.pawns` when they change."""

    def __init__(self, layout: Layout, confirm_reads: int = 2, miss_sweeps: int = 2) -> None:
        super().__init__(layout)
        self.tracker = PresenceTracker(layout.n_readers, confirm_reads, miss_sweeps)
        self._settle_sweeps = max(confirm_reads, miss_sweeps)
        self._sweeps = 0
        self._health: dict[int, Health] = {i: "ok" for i in range(layout.n_readers)}
        self.pawn_switches = SimPawns() if layout.perimeter else None

    def pawns(self) -> frozenset[int] | None:
        return None if self.pawn_switches is None else self.pawn_switches.sensed()

    @abstractmethod
    def sweep(self) -> list[ReaderRead]:
        """Poll every reader once, in reader order."""

    def poll(self) -> PollResult:
        result = PollResult()
        tracker = self.tracker
        self._sweeps += 1
        for reader, read in enumerate(self.sweep()):
            for kind, index, uid in tracker.update(reader, read.uid, read.fault):
                result.changes.append(Change(kind, index, uid))
            health = cast(Health, tracker.health(reader))
            if health != self._health[reader]:
                self._health[reader] = health
                result.health[reader] = health
        if self.pawn_switches is not None:
            result.pawns = self.pawn_switches.change()
        return result

    def state(self) -> dict[int, str | None]:
        return dict(self.tracker.state())

    def settled(self) -> bool:
        return self._sweeps >= self._settle_sweeps

    def health(self) -> dict[int, Health]:
        return dict(self._health)

    def seed_state(self, state: Mapping[int, str]) -> None:
        # Every reader: one the hub believed empty is confirmed empty (a tag there is new).
        self.tracker.seed({reader: state.get(reader) for reader in range(self.n_readers)})

# ruff: noqa: UP031 -- MicroPython: %-formatting works on every port
"""Presence tracking: raw per-sweep reads -> confirmed placed/removed events.

Shared by the Pico firmware and the hub's spi/sim back-ends; runs unchanged on
MicroPython and CPython.

Rules (ARCHITECTURE.md, "Physical design"):
- a placement is reported once the same UID was read ``confirm_reads`` times in
  a row (default 2);
- a removal is reported after ``miss_sweeps`` consecutive sweeps without any
  read (default 2);
- a different UID on an occupied reader, once confirmed, is ``removed(old)``
  then ``placed(new)``;
- a single miss (dropped poll, flicker) or a single misread UID produces no
  event; a misread neither confirms a new tag nor counts as a miss of the old
  one, so a bit-flipped UID is simply ignored;
- a poll that failed at the reader level (``fault`` = "silent" or "absent":
  the chip did not answer, is stuck, or vanished from the bus) says nothing
  about the tag: it neither removes nor confirms, so a dying reader never
  invents a removal. It is reported through ``health()`` instead.
"""

from firmware.native import const, native

PLACED = "placed"
REMOVED = "removed"

OK = "ok"
SILENT = "silent"
FLICKER = "flicker"
ABSENT = "absent"

# Presence history window used for flicker detection (last N good polls).
_HISTORY = const(8)
_HISTORY_MASK = const((1 << _HISTORY) - 1)
# Present/absent transitions within the window that mean "flicker": a single
# dropped poll gives 2 (1,0,1), a drop then a real removal 3; alternating reads 4+.
_FLICKER_TRANSITIONS = const(4)
# Consecutive failed polls before a reader is reported silent.
_SILENT_POLLS = const(2)


def _popcount(value: int) -> int:
    count = 0
    while value:
        value &= value - 1
        count += 1
    return count


class _Reader:
    """Per-reader state (plain attributes: cheap on MicroPython)."""

    def __init__(self) -> None:
        self.confirmed = None  # UID hex string or None
        self.candidate = None  # UID seen but not yet confirmed
        self.candidate_reads = 0
        self.misses = 0  # consecutive empty sweeps while confirmed
        self.history = 0  # presence bits, newest in bit 0
        self.history_len = 0
        self.fault = None  # last fault kind, None when the last poll worked
        self.fault_polls = 0  # consecutive failed polls
        self.good_polls = 0  # good polls ever (0 = never answered)


class PresenceTracker:
    """Debounces reads of ``n_readers`` readers into placed/removed events."""

    def __init__(self, n_readers: int, confirm_reads: int = 2, miss_sweeps: int = 2) -> None:
        if n_readers < 1:
            raise ValueError("n_readers must be at least 1")
        if confirm_reads < 1 or miss_sweeps < 1:
            raise ValueError("confirm_reads and miss_sweeps must be at least 1")
        self.n_readers = n_readers
        self.confirm_reads = confirm_reads
        self.miss_sweeps = miss_sweeps
        self._readers = [_Reader() for _ in range(n_readers)]

    def _reader(self, reader: int) -> _Reader:
        if not 0 <= reader < self.n_readers:
            raise ValueError("reader %d is outside 0..%d" % (reader, self.n_readers - 1))
        return self._readers[reader]

    @native
    def update(self, reader: int, uid: str | None, fault: str | None = None) -> list:
        """Feed one poll of ``reader``: ``uid`` read (hex string) or None when
        no tag answered. ``fault`` = "silent"/"absent" when the reader itself
        failed. Returns the events, a list of ``(kind, reader, uid)``."""
        if not 0 <= reader < self.n_readers:
            raise ValueError("reader %d is outside 0..%d" % (reader, self.n_readers - 1))
        state = self._readers[reader]
        if fault is not None:
            if fault not in (SILENT, ABSENT):
                raise ValueError("fault must be 'silent' or 'absent', got %r" % (fault,))
            if state.fault == fault:
                state.fault_polls += 1
            else:
                state.fault = fault
                state.fault_polls = 1
            return []
        state.fault = None
        state.fault_polls = 0
        state.good_polls += 1
        state.history = ((state.history << 1) | (1 if uid else 0)) & _HISTORY_MASK
        if state.history_len < _HISTORY:
            state.history_len += 1

        events = []
        if not uid:
            state.candidate = None
            state.candidate_reads = 0
            if state.confirmed is not None:
                state.misses += 1
                if state.misses >= self.miss_sweeps:
                    events.append((REMOVED, reader, state.confirmed))
                    state.confirmed = None
                    state.misses = 0
            return events

        if uid == state.confirmed:
            state.misses = 0
            state.candidate = None
            state.candidate_reads = 0
            return events

        if uid == state.candidate:
            state.candidate_reads += 1
        else:
            state.candidate = uid
            state.candidate_reads = 1
        if state.candidate_reads >= self.confirm_reads:
            if state.confirmed is not None:
                events.append((REMOVED, reader, state.confirmed))
            events.append((PLACED, reader, uid))
            state.confirmed = uid
            state.misses = 0
            state.candidate = None
            state.candidate_reads = 0
        return events

    @native
    def same(self, reader: int, uid: str | None) -> bool:
        """The scan loop's usual poll, without building a list: when ``uid`` (or
        None) is what ``reader`` shows confirmed, with nothing pending and no
        fault, the good poll is counted as ``update`` would, and True says no
        event can follow. False: call ``update``."""
        state = self._readers[reader]  # the scan loop's own reader numbers: no check
        if state.fault is not None or state.candidate is not None or uid != state.confirmed:
            return False
        state.good_polls += 1
        state.history = ((state.history << 1) | (1 if uid else 0)) & _HISTORY_MASK
        if state.history_len < _HISTORY:
            state.history_len += 1
        state.misses = 0
        return True

    def apply_full(self, full_state: dict) -> list:
        """Adopt an authoritative full state (e.g. a firmware FULL report after
        a reconnect): returns the events that bring the confirmed state in
        line with it. Readers not in ``full_state`` are left alone."""
        events = []
        for reader in sorted(full_state):
            uid = full_state[reader] or None
            state = self._reader(reader)
            if state.confirmed == uid:
                continue
            if state.confirmed is not None:
                events.append((REMOVED, reader, state.confirmed))
            if uid is not None:
                events.append((PLACED, reader, uid))
            state.confirmed = uid
            state.candidate = None
            state.candidate_reads = 0
            state.misses = 0
        return events

    def seed(self, full_state: dict) -> None:
        """Take ``full_state`` (reader -> UID or None) as the confirmed state,
        emitting nothing: what was last reported before a restart. Then the
        usual rules report what changed meanwhile: a seeded tag still read gives
        nothing, a reader read empty ``miss_sweeps`` times gives ``removed``, a
        different tag (once confirmed) gives ``removed`` + ``placed``. Readers
        not in ``full_state`` are left alone; a bad reader number changes
        nothing (ValueError)."""
        readers = [(self._reader(reader), full_state[reader] or None) for reader in full_state]
        for state, uid in readers:
            state.confirmed = uid
            state.candidate = None
            state.candidate_reads = 0
            state.misses = 0

    def pending(self, reader: int) -> bool:
        """True while a UID has been seen on ``reader`` but not yet confirmed."""
        return self._reader(reader).candidate is not None

    def settled(self, reader: int) -> str | None:
        """The confirmed UID while no other tag is pending confirmation, else None
        (the scan loop's probe needs both; one call on its hot path)."""
        state = self._readers[reader]  # the scan loop's own reader numbers: no check
        return state.confirmed if state.candidate is None else None

    def uid(self, reader: int) -> str | None:
        return self._reader(reader).confirmed

    def state(self) -> dict:
        """Confirmed state of every reader: reader -> UID hex string or None."""
        return {i: r.confirmed for i, r in enumerate(self._readers)}

    def health(self, reader: int) -> str:
        """ "absent" (the reader vanished from the bus), "silent" (it does not
        answer or is stuck, or never answered), "flicker" (present/absent
        alternating recently) or "ok"."""
        state = self._reader(reader)
        if state.fault == ABSENT:
            return ABSENT
        if state.fault == SILENT and (state.fault_polls >= _SILENT_POLLS or not state.good_polls):
            return SILENT
        if state.history_len >= 3:
            valid = (1 << (state.history_len - 1)) - 1
            transitions = _popcount((state.history ^ (state.history >> 1)) & valid)
            if transitions >= _FLICKER_TRANSITIONS:
                return FLICKER
        return OK

    def health_all(self) -> dict:
        return {i: self.health(i) for i in range(self.n_readers)}

"""Presence tracking under flicker, dropped polls and misreads."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.presence import PresenceTracker

UIDS = ["04A1B2C3D4E501", "04A1B2C3D4E502", "04A1B2C3D4E503"]
Event = tuple[str, int, str]


def feed(tracker: PresenceTracker, reads: list[str | None], reader: int = 0) -> list[Event]:
    events: list[Event] = []
    for uid in reads:
        events += tracker.update(reader, uid)
    return events


def test_placement_needs_two_equal_reads() -> None:
    tracker = PresenceTracker(1)
    assert tracker.update(0, UIDS[0]) == []
    assert tracker.update(0, UIDS[0]) == [("placed", 0, UIDS[0])]
    assert tracker.state() == {0: UIDS[0]}


def test_removal_needs_two_missed_sweeps() -> None:
    tracker = PresenceTracker(1)
    feed(tracker, [UIDS[0], UIDS[0]])
    assert tracker.update(0, None) == []
    assert tracker.update(0, None) == [("removed", 0, UIDS[0])]
    assert tracker.state() == {0: None}


def test_single_miss_and_single_misread_give_no_event() -> None:
    tracker = PresenceTracker(1)
    feed(tracker, [UIDS[0], UIDS[0]])
    assert feed(tracker, [None, UIDS[0], UIDS[1], UIDS[0], None, UIDS[0]]) == []
    assert tracker.uid(0) == UIDS[0]


def test_swap_is_removed_then_placed() -> None:
    tracker = PresenceTracker(1)
    feed(tracker, [UIDS[0], UIDS[0]])
    assert feed(tracker, [UIDS[1], UIDS[1]]) == [("removed", 0, UIDS[0]), ("placed", 0, UIDS[1])]


def test_reader_fault_never_invents_a_removal() -> None:
    tracker = PresenceTracker(2)
    feed(tracker, [UIDS[0], UIDS[0]])
    for _ in range(5):
        assert tracker.update(0, None, fault="silent") == []
    assert tracker.health(0) == "silent"
    assert tracker.uid(0) == UIDS[0]
    assert tracker.update(0, None, fault="absent") == []
    assert tracker.health(0) == "absent"
    assert tracker.update(1, None, fault="silent") == []
    assert tracker.health(1) == "silent"  # never answered at all
    assert tracker.update(0, UIDS[0]) == []
    assert tracker.health(0) == "ok"


def test_flicker_health() -> None:
    tracker = PresenceTracker(1)
    feed(tracker, [UIDS[0], UIDS[0], None, UIDS[0], None, None])  # one drop, one removal
    assert tracker.health(0) == "ok"
    feed(tracker, [UIDS[0], None, UIDS[0], None, UIDS[0]])
    assert tracker.health(0) == "flicker"
    feed(tracker, [UIDS[0]] * 8)
    assert tracker.health(0) == "ok"


def test_apply_full_reports_differences() -> None:
    tracker = PresenceTracker(3)
    feed(tracker, [UIDS[0], UIDS[0]], reader=0)
    events = tracker.apply_full({0: None, 1: UIDS[1], 2: None})
    assert events == [("removed", 0, UIDS[0]), ("placed", 1, UIDS[1])]
    assert tracker.apply_full({0: None, 1: UIDS[1], 2: None}) == []


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        PresenceTracker(0)
    with pytest.raises(ValueError):
        PresenceTracker(2).update(2, None)
    with pytest.raises(ValueError):
        PresenceTracker(2).update(0, None, fault="tired")


def true_events(timeline: list[str | None]) -> list[Event]:
    events: list[Event] = []
    previous = None
    for uid in timeline:
        if uid != previous:
            if previous is not None:
                events.append(("removed", 0, previous))
            if uid is not None:
                events.append(("placed", 0, uid))
            previous = uid
    return events


FAULTS = ("drop", "misread", "stale", "reader-silent")


@given(
    segments=st.lists(
        st.tuples(st.sampled_from([None, *UIDS]), st.integers(min_value=5, max_value=9)),
        min_size=1,
        max_size=12,
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_exact_true_events_under_isolated_single_faults(
    segments: list[tuple[str | None, int]], seed: int
) -> None:
    """A random true timeline (each state held >= 5 sweeps) read with at most
    one random fault per state segment yields exactly the true events."""
    rng = random.Random(seed)
    timeline: list[str | None] = []
    reads: list[tuple[str | None, str | None]] = []
    previous: str | None = None
    for uid, length in segments:
        # Never on a segment's first or last sweep, so two faults are never
        # adjacent (>= length - 1: this segment has no fault).
        fault_at = rng.randrange(1, length + 2)
        fault = rng.choice(FAULTS)
        for i in range(length):
            timeline.append(uid)
            read: tuple[str | None, str | None] = (uid, None)
            if i == fault_at and i < length - 1:
                if fault == "drop":
                    read = (None, None)
                elif fault == "misread":
                    wrong = uid or UIDS[0]
                    flipped = f"{int(wrong, 16) ^ (1 << rng.randrange(56)):014X}"
                    read = (flipped, None)
                elif fault == "stale":
                    read = (previous, None)  # reader returns the last tag it saw
                else:
                    read = (None, "silent")
            reads.append(read)
        previous = uid
    # Trailing quiet sweeps so the final state has settled.
    timeline += [timeline[-1]] * 3
    reads += [(timeline[-1], None)] * 3

    tracker = PresenceTracker(1)
    events: list[Event] = []
    for uid, read_fault in reads:
        events += tracker.update(0, uid, fault=read_fault)
    assert events == true_events(timeline)
    assert tracker.uid(0) == timeline[-1]

"""The on-disk outbox: written before publish, delivered marks, order and epoch kept
across restarts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hub.outbox import Outbox


def make_payload(i: int) -> Callable[[int], bytes]:
    return lambda seq: f"{seq}:{i}".encode()


def test_append_mark_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "outbox.sqlite"
    box = Outbox(path)
    epoch = box.epoch
    for i in range(5):
        seq, payload = box.append("t/hub/event", make_payload(i))
        assert seq == i + 1 and payload == f"{seq}:{i}".encode()
    box.mark_delivered(2)
    box.mark_delivered(4)
    box.close()

    again = Outbox(path)
    assert again.epoch == epoch and again.last_seq == 5
    assert [r.seq for r in again.undelivered()] == [1, 3, 5]
    assert again.pending_count() == 3
    assert [(r.seq, r.delivered) for r in again.rows(2, 4)] == [(2, True), (3, False), (4, True)]
    seq, _ = again.append("t/hub/event", lambda s: b"x")
    assert seq == 6
    again.close()


def test_a_new_file_is_a_new_epoch(tmp_path: Path) -> None:
    first = Outbox(tmp_path / "a.sqlite")
    second = Outbox(tmp_path / "b.sqlite")
    assert first.epoch != second.epoch


def test_prune_keeps_the_last_delivered_and_every_undelivered(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.sqlite", keep=10)
    for _ in range(1000):
        seq, _ = box.append("t", lambda s: b"p")
        if seq != 500:
            box.mark_delivered(seq)
    rows = box.rows(1)
    assert [r.seq for r in rows] == [500, *range(991, 1001)]
    assert [r.seq for r in box.undelivered()] == [500]


def test_undelivered_before(tmp_path: Path) -> None:
    import time

    box = Outbox(tmp_path / "o.sqlite")
    box.append("t", lambda s: b"a")
    box.append("t", lambda s: b"b")
    box.mark_delivered(1)
    assert [r.seq for r in box.undelivered_before(time.time() + 1)] == [2]
    assert box.undelivered_before(time.time() - 60) == []


def test_reader_state_is_stored_with_each_event_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite"
    box = Outbox(path)
    box.append("t", lambda s: b"placed 3", {3: "04AA"})
    box.append("t", lambda s: b"placed 5", {5: "04BB"})
    box.append("t", lambda s: b"button")  # no reader change
    box.append("t", lambda s: b"removed 3", {3: None})
    box.append("t", lambda s: b"placed 5 other", {5: "04CC"})
    assert box.reader_state() == {5: "04CC"}
    box.close()
    assert Outbox(path).reader_state() == {5: "04CC"}


def test_reader_state_and_event_share_one_transaction(tmp_path: Path) -> None:
    """A failed event store leaves the reader state as it was (and the reverse: the state is
    never written without its event)."""
    import sqlite3

    import pytest

    path = tmp_path / "o.sqlite"
    box = Outbox(path)
    box.append("t", lambda s: b"placed 3", {3: "04AA"})
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("INSERT INTO events (seq, topic, payload, created) VALUES (2, 't', x'00', 0)")
    other.close()  # seq 2 is taken behind the outbox's back: its next insert fails
    with pytest.raises(sqlite3.IntegrityError):
        box.append("t", lambda s: b"removed 3", {3: None, 4: "04BB"})
    assert box.reader_state() == {3: "04AA"} and box.last_seq == 1
    box.close()
    again = Outbox(path)
    assert again.reader_state() == {3: "04AA"}
    again.close()


def test_each_reader_keeps_the_card_its_event_named(tmp_path: Path) -> None:
    """The name an event gave (a card id, or none for an unknown tag) is kept with the
    reader's tag, so a change of the tag map cannot rename what an event meant."""
    from hub.outbox import Lying

    path = tmp_path / "o.sqlite"
    box = Outbox(path)
    box.append("t", lambda s: b"placed 3", {3: Lying("04AA", "blue-a-4")})
    box.append("t", lambda s: b"placed 5", {5: Lying("04BB", None)})  # an unknown tag
    box.append("t", lambda s: b"placed 6", {6: "04CC"})  # no name given
    box.close()
    again = Outbox(path)
    assert again.reader_names() == {3: Lying("04AA", "blue-a-4"), 5: Lying("04BB", None)}
    assert again.reader_state() == {3: "04AA", 5: "04BB", 6: "04CC"}
    again.close()


def test_an_outbox_from_before_names_were_kept_opens(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "o.sqlite"
    old = sqlite3.connect(str(path), isolation_level=None)
    old.executescript("CREATE TABLE readers (reader INTEGER PRIMARY KEY, uid TEXT NOT NULL);"
                      "INSERT INTO readers VALUES (3, '04AA');")
    old.close()
    box = Outbox(path)
    assert box.reader_state() == {3: "04AA"} and box.reader_names() == {}
    box.close()


def test_when_each_tag_was_last_laid_or_lifted_is_kept_with_its_events(tmp_path: Path) -> None:
    """`last_seen` (what a spare by kind goes by): a tag is seen when an event lays it on a
    reader and when one lifts it; kept across a restart, and not by a failed store."""
    import sqlite3

    import pytest

    path = tmp_path / "o.sqlite"
    box = Outbox(path)
    assert box.last_seen() == {}
    box.append("t", lambda s: b"placed 3", {3: "04AA"})
    box.append("t", lambda s: b"placed 5", {5: "04BB"})
    laid = box.last_seen()
    assert set(laid) == {"04AA", "04BB"} and laid["04AA"] <= laid["04BB"]
    box.append("t", lambda s: b"removed 3", {3: None})
    lifted = box.last_seen()
    assert lifted["04AA"] >= laid["04BB"] and lifted["04BB"] == laid["04BB"]
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("INSERT INTO events (seq, topic, payload, created) VALUES (4, 't', x'00', 0)")
    other.close()
    with pytest.raises(sqlite3.IntegrityError):
        box.append("t", lambda s: b"placed 6", {6: "04CC"})
    box.close()
    again = Outbox(path)
    assert again.last_seen() == lifted  # 04CC's event was not stored: nor its sighting
    again.close()

"""Fuzz: tag map files (``cauldron enroll`` writes them; a host may edit or copy them). Every
file loads into a map that only holds valid UIDs and catalogue card ids, one card per UID and
one UID per card, and survives a save and load unchanged; or it is refused with a
`TagMapError` naming the file, never another exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from engine.games.glastonbury.rules.cards import enrolment_order, is_card_id
from hub.errors import TagMapError
from hub.tagmap import TagMap, normalise_uid

CARDS = enrolment_order()
hex_uid = st.sampled_from([4, 7, 10]).flatmap(
    lambda n: st.binary(min_size=n, max_size=n).map(lambda b: b.hex()))
uids = (hex_uid | hex_uid.map(str.upper)
        | hex_uid.map(lambda h: ":".join(h[i:i + 2] for i in range(0, len(h), 2)))
        | st.text(max_size=22) | st.text(alphabet="0123456789abcdefABCDEF :", max_size=24))
cards = (st.sampled_from(CARDS) | st.sampled_from(["pawn-0", "pawn-3", "pawn-4", "corner-1"])
         | st.text(max_size=10))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids,
                                                              max_size=3),
    max_leaves=6)
tags = st.dictionaries(uids, cards | json_values, max_size=8)
documents = (st.fixed_dictionaries({"schema_version": st.just(1), "tags": tags})
             | st.fixed_dictionaries({"tags": tags | json_values})
             | st.dictionaries(st.text(max_size=8), json_values, max_size=3) | json_values)


def load_or_refuse(path: Path) -> TagMap | None:
    try:
        tagmap = TagMap.load(path)
    except TagMapError as exc:
        assert str(path) in str(exc), exc
        return None
    items = tagmap.items()
    assert len({uid for uid, _ in items}) == len({card for _, card in items}) == len(items)
    for uid, card in items:
        assert normalise_uid(uid) == uid
        assert is_card_id(card) or card in {f"pawn-{s}" for s in range(4)}
        assert not card.startswith("corner-")
        assert tagmap.card_for(uid) == card and tagmap.uid_for(card) == uid
    copy = path.with_name("copy.json")
    tagmap.save(copy)
    assert sorted(TagMap.load(copy).items()) == sorted(items)
    return tagmap


@given(data=documents)
def test_fuzz_tag_map_documents(tmp_path: Path, data: Any) -> None:
    path = tmp_path / "tagmap.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    load_or_refuse(path)


@given(raw=st.binary(max_size=300))
def test_fuzz_tag_map_bytes(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "tagmap.json"
    path.write_bytes(raw)
    load_or_refuse(path)


@given(entries=st.lists(st.tuples(hex_uid, st.sampled_from(CARDS)), max_size=6))
def test_fuzz_valid_maps_load_as_written(tmp_path: Path, entries: list[tuple[str, str]]) -> None:
    """A file a person could have written by hand (any UID spelling) loads exactly, unless it
    enrols a tag or a card twice."""
    path = tmp_path / "tagmap.json"
    path.write_text(json.dumps({"schema_version": 1, "tags": dict(entries)}), encoding="utf-8")
    tagmap = load_or_refuse(path)
    distinct = dict(entries)
    twice = (len({normalise_uid(u) for u in distinct}) < len(distinct)
             or len(set(distinct.values())) < len(distinct))
    assert (tagmap is None) == twice


def test_deeply_nested_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tagmap.json"
    path.write_text('{"tags": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    assert load_or_refuse(path) is None

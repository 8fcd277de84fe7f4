"""Actions on the wire: `to_wire()` / `action_from_wire()` round trips, and every bad wire
form refused with `InvalidWire` (never another exception)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.games.glastonbury.rules import (
    Action,
    Discard,
    InvalidWire,
    Keep,
    Pass,
    Refill,
    Take,
    UseDeclinatio,
    action_from_wire,
)
from engine.games.glastonbury.rules.actions import (
    DISCARD,
    KEEP,
    PASS,
    REFILLS,
    TAKES,
    USE_DECLINATIO,
)
from engine.games.glastonbury.rules.board import parse_cell
from engine.games.glastonbury.rules.cards import CARDS

EVERY_ACTION: tuple[Action, ...] = (*TAKES, USE_DECLINATIO, PASS, KEEP, DISCARD, *REFILLS.values())


def test_every_action_round_trips_through_json() -> None:
    assert len(EVERY_ACTION) == 36 + 4 + len(CARDS)
    for action in EVERY_ACTION:
        wire = json.loads(json.dumps(action.to_wire()))
        back = action_from_wire(wire)
        assert back == action
        assert back is action  # decoding hands out the interned instance


@pytest.mark.parametrize(
    ("wire", "action", "text"),
    [
        ({"type": "take", "cell": "1,2"}, Take(8), "take 1,2"),
        ({"type": "take", "cell": "5,4"}, Take(34), "take 5,4"),
        ({"type": "take", "cell": " 0 , 3 "}, Take(3), "take 0,3"),
        ({"type": "declinatio"}, UseDeclinatio(), "declinatio"),
        ({"type": "pass"}, Pass(), "pass"),
        ({"type": "refill", "card": "grey-b-1"}, Refill("grey-b-1"), "refill grey-b-1"),
        ({"type": "keep"}, Keep(), "keep"),
        ({"type": "discard"}, Discard(), "discard"),
    ],
)
def test_wire_forms(wire: dict[str, Any], action: Action, text: str) -> None:
    assert action_from_wire(wire) == action
    assert str(action) == text
    assert action.to_wire()["type"] == wire["type"]


@pytest.mark.parametrize(
    ("wire", "rule", "words"),
    [
        ("take 1,2", "G4", "JSON object"),
        (["take", "1,2"], "G4", "JSON object"),
        (None, "G4", "JSON object"),
        ({}, "G4", "unknown action type"),
        ({"type": "move"}, "G4", "unknown action type 'move'"),
        ({"type": ["take"]}, "G4", "unknown action type"),
        ({"type": "take"}, "G4", "exactly the fields"),
        ({"type": "take", "cell": "1,2", "extra": 1}, "G4", "exactly the fields"),
        ({"type": "take", "cell": 8}, "G3", "string 'r,c'"),
        ({"type": "take", "cell": "6,0"}, "G3", "outside the 6×6 square"),
        ({"type": "take", "cell": "1;2"}, "G3", "look like 'r,c'"),
        ({"type": "take", "cell": "-1,2"}, "G3", "look like 'r,c'"),
        ({"type": "take", "cell": "1,²"}, "G3", "look like 'r,c'"),
        ({"type": "refill"}, "G4", "a refill has exactly"),
        ({"type": "refill", "card": 3}, "G4", "a refill has exactly"),
        ({"type": "refill", "card": "blue-c-1"}, "G1", "unknown card id 'blue-c-1'"),
        ({"type": "pass", "seat": 1}, "G4", "only the field 'type'"),
        ({"type": "keep", "card": "x"}, "G4", "only the field 'type'"),
    ],
)
def test_bad_wire_forms_are_refused(wire: object, rule: str, words: str) -> None:
    with pytest.raises(InvalidWire) as err:
        action_from_wire(wire)
    assert err.value.rule == rule
    assert words in err.value.message
    assert err.value.to_wire() == {
        "rule": rule,
        "message": err.value.message,
        "error": "InvalidWire",
    }


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
# Near misses: the right keys with any values.
NEAR = st.fixed_dictionaries(
    {"type": st.sampled_from(["take", "refill", "pass", "keep", "discard", "declinatio"])},
    optional={"cell": JSON | st.text(alphabet="0123456789, ²-", max_size=6), "card": JSON},
)


@given(JSON | NEAR)
def test_fuzz_any_json_gives_an_action_or_invalid_wire(data: object) -> None:
    try:
        action = action_from_wire(data)
    except InvalidWire as exc:
        assert exc.rule in ("G1", "G3", "G4") and exc.message
    else:
        assert action in EVERY_ACTION
        assert action_from_wire(action.to_wire()) is action


@given(st.text(max_size=8))
def test_fuzz_cells(text: str) -> None:
    try:
        cell = parse_cell(text)
    except InvalidWire as exc:
        assert exc.rule == "G3"
    else:
        assert 0 <= cell < 36
        r, c = (int(p) for p in text.split(","))
        assert cell == r * 6 + c

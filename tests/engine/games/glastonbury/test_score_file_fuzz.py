"""Fuzz: `cauldron score FILE` with random JSON structures, near-valid score sheets (real
card ids, colours and recipes in wrong numbers and places) and random bytes. Each input is
scored (exit 0, JSON with every seat) or refused with exit 2 and exactly one line
``cauldron score: error: <file>...`` on stderr; never a traceback. test_score_cli.py checks
the wording of each known mistake; this looks for the unknown ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.app.cli import main
from engine.games.glastonbury.rules.cards import CARDS, PLAYER_COLOURS

CARD_IDS = sorted(CARDS)
RECIPES = ["A-orange", "A-blue", "B-fewest-spells", "B-last-card", "A-grey", "C-x"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids,
                                                              max_size=3),
    max_leaves=8)
cards = st.sampled_from(CARD_IDS) | st.text(max_size=8)
players = st.fixed_dictionaries(
    {"seat": st.integers(-1, 5) | json_values,
     "colour": st.sampled_from([*PLAYER_COLOURS, "orange", "pink"]) | json_values,
     "cauldron": st.lists(cards, max_size=12) | json_values},
    optional={"spells": st.lists(cards, max_size=3) | json_values,
              "recipes": st.lists(st.sampled_from(RECIPES) | st.text(max_size=6), max_size=3),
              "extra": json_values})
sheets = st.fixed_dictionaries(
    {"players": st.lists(players, max_size=5) | json_values},
    optional={"last_card_seat": st.none() | st.integers(-2, 6) | json_values,
              "options": st.fixed_dictionaries(
                  {}, optional={"second_player_bonus": st.booleans() | json_values,
                                "first_seat": st.integers(-2, 6) | json_values,
                                "x": json_values}) | json_values,
              "notes": json_values})


def score(tmp_path: Path, raw: bytes, capsys: pytest.CaptureFixture[str]) -> dict[str, Any] | None:
    path = tmp_path / "game.json"
    path.write_bytes(raw)
    code = main(["score", str(path), "--json"])
    out, err = capsys.readouterr()
    if code == 2:
        assert out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith(f"cauldron score: error: {path}"), err
        return None
    assert code == 0 and err == "", err
    result = json.loads(out)
    assert isinstance(result, dict) and result["winners"]
    return result


@given(sheet=sheets)
def test_fuzz_near_valid_score_sheets(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      sheet: dict[str, Any]) -> None:
    result = score(tmp_path, json.dumps(sheet).encode(), capsys)
    if result is not None:  # a scored sheet: every seat in it, and only those
        seats = sorted(p["seat"] for p in sheet["players"])
        assert sorted(s["seat"] for s in result["seats"]) == seats, result
        again = score(tmp_path, json.dumps(sheet).encode(), capsys)
        assert again == result  # scoring is a function of the sheet


@given(data=json_values)
def test_fuzz_any_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any) -> None:
    score(tmp_path, json.dumps(data).encode(), capsys)


@given(raw=st.binary(max_size=200))
def test_fuzz_any_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: bytes) -> None:
    score(tmp_path, raw, capsys)


@pytest.mark.parametrize("text", [
    '{"players": ' + "[" * 100_000 + "]" * 100_000 + "}",
    '{"players": [{"seat": 0, "colour": "blue", "cauldron": [], "\\n": 1}]}',
    '{"players": [{"seat": 1e400, "colour": "blue", "cauldron": []}]}',
    '{"players": [{"seat": 0, "colour": "blue", "cauldron": []}], "last_card_seat": NaN}',
])
def test_odd_sheets_exit_2_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       text: str) -> None:
    assert score(tmp_path, text.encode(), capsys) is None

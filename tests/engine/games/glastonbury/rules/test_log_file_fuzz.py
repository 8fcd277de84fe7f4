"""Fuzz: game log files through `cauldron replay FILE` (test_log_replay.py fuzzes
`GameLog.from_wire` with one value changed; here whole files: any JSON, any bytes, and logs
changed in several places at once, also as `cauldron selfplay --json` lines). Each file
replays (exit 0, the same game as `replay` builds) or is refused with exit 2 and one line on
stderr; never a traceback. A log that replays after the change is a game the rules accept:
written back out, it replays to the identical game."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.app.cli import main
from engine.games.glastonbury.rules import Game, GameConfig, GameLog, InvalidLog, replay

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.text(max_size=10),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids,
                                                              max_size=3),
    max_leaves=8,
)


def _log(seed: int, players: int) -> dict[str, Any]:
    rng = random.Random(seed)
    game = Game.new(GameConfig(colours=("yellow", "red", "green", "blue")[:players]), rng)
    while not game.is_over():
        game.apply(rng.choice(game.legal_actions()))
    return GameLog.of(game).to_wire()


BASES = [_log(1, 2), _log(2, 3), _log(3, 4)]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


PATHS = [[p for p in _paths(base) if p] for base in BASES]


def run_replay(tmp_path: Path, raw: bytes, capsys: pytest.CaptureFixture[str]) -> str | None:
    path = tmp_path / "log.json"
    path.write_bytes(raw)
    code = main(["replay", str(path), "--json"])
    out, err = capsys.readouterr()
    if code == 2:
        assert out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cauldron replay: error:"), err
        return None
    assert code == 0, err
    return out


@st.composite
def mutated_logs(draw: st.DrawFn) -> tuple[int, dict[str, Any]]:
    which = draw(st.integers(0, len(BASES) - 1))
    wire = copy.deepcopy(BASES[which])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS[which]))
        node: Any = wire
        try:
            for key in path[:-1]:
                node = node[key]
            last = path[-1]
            how = draw(st.sampled_from(["set", "delete", "duplicate"]))
            if how == "set":
                node[last] = draw(JSON)
            elif how == "delete":
                del node[last]
            elif isinstance(node, list):
                node.insert(last, copy.deepcopy(node[last]))
        except (KeyError, IndexError, TypeError):  # an earlier change moved this path
            continue
    return which, wire


@given(case=mutated_logs(), as_selfplay_line=st.booleans())
def test_fuzz_logs_changed_in_places(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     case: tuple[int, dict[str, Any]],
                                     as_selfplay_line: bool) -> None:
    _, wire = case
    doc = {"seed": 1, "log": wire} if as_selfplay_line else wire
    out = run_replay(tmp_path, json.dumps(doc).encode(), capsys)
    try:
        game = replay(GameLog.from_wire(wire))
    except InvalidLog as exc:
        assert out is None and exc.rule.startswith("G")
        return
    assert out is not None
    shown = json.loads(out)
    assert shown["view"] == json.loads(json.dumps(game.view_public()))
    again = replay(GameLog.from_wire(json.loads(json.dumps(GameLog.of(game).to_wire()))))
    assert again == game


@given(data=JSON)
def test_fuzz_any_json_log(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any) -> None:
    run_replay(tmp_path, json.dumps(data).encode(), capsys)


@given(raw=st.binary(max_size=200))
def test_fuzz_any_bytes_log(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            raw: bytes) -> None:
    run_replay(tmp_path, raw, capsys)


@pytest.mark.parametrize("raw", [
    b'{"schema_version": 1, "actions": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"log": "\xff\xfe"}',
    b"\xef\xbb\xbf{}",
])
def test_odd_log_files_exit_2_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          raw: bytes) -> None:
    assert run_replay(tmp_path, raw, capsys) is None


def test_unchanged_logs_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for wire in BASES:
        out = run_replay(tmp_path, json.dumps(wire).encode(), capsys)
        assert out is not None and json.loads(out)["view"]["over"] is True

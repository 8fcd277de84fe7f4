"""`cauldron selfplay` and `cauldron replay`, run as a user runs them (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.games.glastonbury.rules import GameLog, replay
from engine.games.glastonbury.rules.cards import CARDS

CAULDRON = Path(sys.executable).parent / "cauldron"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CAULDRON), *args], capture_output=True, text=True, input=stdin, timeout=120
    )


@pytest.fixture(scope="module")
def selfplay_lines() -> list[str]:
    result = run("selfplay", "--players", "3", "--seed", "5", "--games", "2", "--json")
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_selfplay_json_fields(selfplay_lines: list[str]) -> None:
    assert len(selfplay_lines) == 2
    games = [json.loads(line) for line in selfplay_lines]
    assert [g["seed"] for g in games] == [5, 6]
    for game in games:
        assert game["end_reason"] in ("line_emptied", "declinatio_blocked")
        assert isinstance(game["turns"], int) and game["turns"] > 10
        assert [s["seat"] for s in game["seats"]] == [0, 1, 2]
        assert [s["colour"] for s in game["seats"]] == ["yellow", "red", "green"]
        for seat in game["seats"]:
            assert all(CARDS[c].kind in ("ingredient", "immuto") for c in seat["cauldron"])
            assert all(CARDS[c].kind == "spell" for c in seat["spells"])
            assert isinstance(seat["score"], int)
        assert game["log"]["schema_version"] == 1
        # The log is the game: replaying it gives the same cauldrons and scores.
        replayed = replay(GameLog.from_wire(game["log"]))
        assert [s.total for s in replayed.scores().seats] == [s["score"] for s in game["seats"]]
        assert [list(c) for c in replayed.cauldrons] == [s["cauldron"] for s in game["seats"]]
        assert replayed.turns == game["turns"]


def test_selfplay_is_deterministic(selfplay_lines: list[str]) -> None:
    again = run("selfplay", "--players", "3", "--seed", "6", "--games", "1", "--json")
    assert again.stdout.splitlines() == selfplay_lines[1:]


def test_selfplay_text_output() -> None:
    result = run("selfplay", "--players", "2", "--seed", "1")
    assert result.returncode == 0
    assert "game over" in result.stdout and "winner(s):" in result.stdout


def _scores(out: dict[str, Any]) -> list[int]:
    return [s["score"] for s in out["seats"]]


def test_replay_of_a_selfplay_line_reproduces_the_scores(
    selfplay_lines: list[str], tmp_path: Path
) -> None:
    line = json.loads(selfplay_lines[0])
    as_line = tmp_path / "line.json"
    as_line.write_text(selfplay_lines[0])
    as_log = tmp_path / "log.json"
    as_log.write_text(json.dumps(line["log"]))
    for path in (as_line, as_log):
        result = run("replay", str(path), "--json")
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        assert _scores(out) == _scores(line)
        assert out["end_reason"] == line["end_reason"]
        assert out["view"]["over"] is True
    piped = run("replay", "-", stdin=selfplay_lines[0])
    assert piped.returncode == 0 and "winner(s):" in piped.stdout


@pytest.mark.parametrize(
    ("args", "stdin", "words"),
    [
        (("selfplay", "--players", "5"), None, "--players must be 2, 3 or 4"),
        (("selfplay", "--games", "0"), None, "--games must be at least 1"),
        (("replay", "/nonexistent/log.json"), None, "cannot read"),
        (("replay", "-"), "{not json", "is not JSON"),
        (("replay", "-"), "[1, 2]", "does not replay"),
        (("replay", "-"), '{"schema_version": 1, "actions": []}', "does not replay"),
    ],
)
def test_bad_input_exits_2_without_a_traceback(
    args: tuple[str, ...], stdin: str | None, words: str
) -> None:
    result = run(*args, stdin=stdin)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_corrupt_action_is_named(selfplay_lines: list[str]) -> None:
    line = json.loads(selfplay_lines[0])
    line["log"]["actions"][3] = {"type": "take", "cell": "0,0"}
    result = run("replay", "-", stdin=json.dumps(line))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "action #4" in result.stderr and "G3" in result.stderr


def test_argparse_errors_exit_2() -> None:
    result = run("selfplay", "--players", "three")
    assert result.returncode == 2 and "Traceback" not in result.stderr

"""`cauldron score FILE|- [--json]` (engine.games.glastonbury.score_cli)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from people_words import leaks

from engine.app.cli import main
from engine.games.glastonbury.rules.cards import CARDS, CATALOGUE

CAULDRON = Path(sys.executable).parent / "cauldron"

GAME: dict[str, Any] = {
    "players": [
        {
            "seat": 0,
            "colour": "blue",
            "cauldron": ["blue-a-4", "immuto-1", "green-a-3", "green-a-4"],
            "spells": ["accio-1"],
            "recipes": ["A-orange", "B-fewest-spells"],
        },
        {
            "seat": 1,
            "colour": "red",
            "cauldron": ["red-a-1", "red-a-2", "red-a-3", "red-a-4", "orange-b-1"],
            "recipes": ["B-last-card"],
        },
        {"seat": 2, "colour": "green", "cauldron": ["orange-a-1", "orange-a-2", "orange-a-3"]},
    ],
    "last_card_seat": 1,
    "options": {"second_player_bonus": True, "first_seat": 2},
}


def write(tmp_path: Path, data: Any) -> str:
    path = tmp_path / "game.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_score_json_output_has_the_breakdown_and_winners(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", write(tmp_path, GAME), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    seats = {s["seat"]: s for s in out["seats"]}
    # Seat 0: lone blue 4 + Immuto = 0 (worked example), green 3+4 = 0, no recipe won, and
    # the second-player bonus (first seat 2, so seat 0 plays second).
    assert seats[0]["ingredient_points"] == 0
    assert seats[0]["total"] == 2
    assert seats[0]["immuto_assignment"] == {"immuto-1": "blue-a"}
    assert [f["family"] for f in seats[0]["families"]] == ["green-a", "blue-a"]
    assert [(r["recipe"], r["points"]) for r in seats[0]["recipes"]] == [
        ("A-orange", 0),
        ("B-fewest-spells", 0),
    ]
    # Seat 1: red 1-4 doubled + 5 = 25, lone orange 1 = -1, last card +10.
    assert seats[1]["total"] == 25 - 1 + 10
    # Seat 2: orange 1+2+3 = 6.
    assert seats[2]["total"] == 6
    assert [s["second_player_bonus"] for s in out["seats"]] == [2, 0, 0]
    assert seats[0]["colour"] == "blue"
    assert out["winners"] == [1]


def test_score_text_output_names_things_for_people(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", write(tmp_path, GAME)]) == 0
    out = capsys.readouterr().out
    # The file's seat 1 is the second seat: "Seat 2" (README "Names people read").
    assert "Seat 2 (red): 34 points" in out
    assert "Seat 1 (blue): 2 points" in out and "Seat 3 (green): 6 points" in out
    assert "  Finger bones (red): +25" in out
    assert "Finger bones 1 (red), Finger bones 2 (red), Finger bones 3 (red)" in out
    # The score page's words (engine.games.glastonbury.rules.names.family_how).
    assert ("4 Finger bones cards: 1 + 2 + 3 + 4 = 10; own colour, doubled: 20; "
            "+ 5 for four cards: 25") in out
    assert "1 Bottles card: minus its value 1 = -1" in out
    assert "3 Egg cards: 1 + 2 + 3 = 6" in out
    assert "Immuto (Metamorphosis) joins Pumpkins (blue)" in out
    assert "1 Immuto (Metamorphosis) counted as a 0" in out
    assert "Recipe B (Take the last card): +10 (took the last card)" in out
    assert "Recipe A (orange): +0 (not the most orange cards: 0 vs 3)" in out
    assert "Second player: +2" in out and "Spells: Accio" in out
    assert out.rstrip().endswith("Winner: Seat 2 (red) with 34 points")
    assert not leaks(out), leaks(out)


def test_score_text_output_counts_seats_from_one_and_shows_no_card_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every card of the deck in some cauldron, four seats: no id and no seat 0 anywhere.
    deck = [c for c in CARDS if CARDS[c].kind in ("ingredient", "immuto")]
    colours = ["yellow", "red", "green", "blue"]
    players = [
        {"seat": s, "colour": colours[s], "cauldron": deck[s::4],
         "spells": [c for c in CARDS if CARDS[c].kind == "spell"][s::4],
         "recipes": [r["id"] for r in CATALOGUE["recipes"]["A"] + CATALOGUE["recipes"]["B"]][s::4]}
        for s in range(4)
    ]
    game = {"players": players, "last_card_seat": 3, "options": {"second_player_bonus": True}}
    assert main(["score", write(tmp_path, game)]) == 0
    out = capsys.readouterr().out
    assert not leaks(out), leaks(out)
    for seat in range(1, 5):
        assert f"Seat {seat} ({colours[seat - 1]}): " in out
    assert "Seat 4 (blue) took the last card" in out or "(took the last card)" in out


def test_score_reads_stdin_through_the_installed_command() -> None:
    result = subprocess.run(
        [str(CAULDRON), "score", "-", "--json"],
        input=json.dumps(GAME),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["winners"] == [1]


def player(**fields: Any) -> dict[str, Any]:
    return {"seat": 0, "colour": "blue", "cauldron": [], **fields}


BAD_INPUTS: list[tuple[str, Any, str]] = [
    ("not-json", "{players: nope", "is not valid JSON"),
    ("empty", "", "is not valid JSON"),
    ("top-list", [], "the top level must be a JSON object"),
    ("no-players", {}, "players: Field required"),
    ("no-seats", {"players": []}, "players: List should have at least 1 item"),
    ("missing-cauldron", {"players": [{"seat": 0, "colour": "blue"}]}, "cauldron: Field required"),
    (
        "seat-text",
        {"players": [player(seat="0")]},
        'players[0].seat: Input should be a valid integer (got "0")',
    ),
    (
        "seat-bool",
        {"players": [player(seat=True)]},
        "players[0].seat: Input should be a valid integer",
    ),
    (
        "cauldron-text",
        {"players": [player(cauldron="blue-a-1")]},
        "players[0].cauldron: Input should be a valid list",
    ),
    (
        "card-number",
        {"players": [player(cauldron=[7])]},
        "players[0].cauldron[0]: Input should be a valid string",
    ),
    (
        "typo-key",
        {"players": [player(recipe=["A-grey"])]},
        "players[0].recipe: Extra inputs are not permitted",
    ),
    (
        "bonus-int",
        {"players": [player()], "options": {"second_player_bonus": 1}},
        "options.second_player_bonus",
    ),
    (
        "unknown-card",
        {"players": [player(cauldron=["blue-a-9"])]},
        "unknown card id 'blue-a-9' in the cauldron (rule G1)",
    ),
    (
        "card-twice",
        {
            "players": [
                player(cauldron=["red-a-1"]),
                {"seat": 1, "colour": "red", "cauldron": ["red-a-1"]},
            ]
        },
        "card 'red-a-1' appears twice (seat 0 and seat 1)",
    ),
    (
        "spell-in-cauldron",
        {"players": [player(cauldron=["accio-1"])]},
        "'accio-1' is a spell card and cannot be in a cauldron",
    ),
    ("not-a-spell", {"players": [player(spells=["blue-a-1"])]}, "not a spell card (rule G1)"),
    (
        "wrong-colour",
        {"players": [player(colour="purple")]},
        "colour 'purple' is not a player colour",
    ),
    (
        "non-player-colour",
        {"players": [player(colour="orange")]},
        "colour 'orange' is not a player colour",
    ),
    (
        "same-colour",
        {"players": [player(), {"seat": 1, "colour": "blue", "cauldron": []}]},
        "colour 'blue' is already taken by seat 0 (rule G2)",
    ),
    (
        "same-seat",
        {"players": [player(), {"seat": 0, "colour": "red", "cauldron": []}]},
        "seat 0 is listed twice",
    ),
    ("unknown-recipe", {"players": [player(recipes=["A-blue"])]}, "unknown recipe id 'A-blue'"),
    (
        "last-card-seat",
        {"players": [player()], "last_card_seat": 3},
        "last_card_seat 3 is not one of the seats",
    ),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_score_bad_input_exits_2_with_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: Any, message: str
) -> None:
    path = write(tmp_path, data)
    assert main(["score", path, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"cauldron score: error: {path}")
    assert message in lines[0]


def test_score_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.json"
    assert main(["score", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no such file" in err and "- for stdin" in err
    assert main(["score", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_score_not_utf8_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "game.json"
    path.write_bytes(b'{"players": "\xff\xfe"}')
    assert main(["score", str(path)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{oops", "standard input is not valid JSON"),
        (json.dumps({"players": [player(cauldron=["blue-a-1", "blue-a-1"])]}), "appears twice"),
        (json.dumps({"players": [player(colour="pink")]}), "'pink' is not a player colour"),
        (json.dumps({"players": [player(cauldron=["zebra"])]}), "unknown card id 'zebra'"),
    ],
)
def test_score_bad_stdin_through_the_installed_command(data: str, message: str) -> None:
    result = subprocess.run(
        [str(CAULDRON), "score", "-"],
        input=data,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_score_missing_file_through_the_installed_command(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(CAULDRON), "score", str(tmp_path / "absent.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "no such file" in result.stderr

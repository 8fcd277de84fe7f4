"""Score-only mode's count (dashboard.count): refusals, undo/remove, the seat being counted,
persistence, and the score always equal to `cauldron score` on the same cards."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.count import CountDesk
from engine.app.cli import main as cauldron
from engine.games.base import CountRefused
from engine.games.glastonbury.count import CountSession, CountSetup
from engine.games.glastonbury.rules.cards import PLAYING_CARDS, RECIPES
from engine.games.glastonbury.rules.scoring import score_game
from engine.games.glastonbury.score_cli import _parse as parse_score_input


def session(*colours: str, **options: object) -> CountSession:
    return CountSession(CountSetup(tuple(colours or ("yellow", "red", "green", "blue")),
                                   **options))  # type: ignore[arg-type]


def cauldron_score(data: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
                   ) -> dict[str, Any]:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert cauldron(["score", str(path), "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_a_card_counted_for_another_seat_is_refused_naming_that_seat() -> None:
    count = session()
    count.tap("blue-a-4", 1)
    with pytest.raises(CountRefused, match=r"already counted for Seat 2 \(red\)") as refused:
        count.tap("blue-a-4", 3)
    assert refused.value.code == "duplicate" and refused.value.seat == 1
    assert count.seats[3].cards() == []
    with pytest.raises(CountRefused, match="already counted for Seat 2") as again:
        count.tap("blue-a-4", 1)
    assert again.value.code == "already_here"
    assert count.seats[1].cards() == ["blue-a-4"]


def test_cards_that_cannot_be_in_this_game_are_refused() -> None:
    two = session("yellow", "red")
    assert two.setup.removed == "green"
    with pytest.raises(CountRefused, match="with 2 players the green cards are out of the box"):
        two.tap("green-b-2", 0)
    two.tap("blue-b-2", 0)  # the other unused colour stays in a 2-player game
    with pytest.raises(CountRefused, match="recipe variant is off"):
        two.tap("A-orange", 0)
    with pytest.raises(CountRefused, match="corner cards"):
        two.tap("corner-1", 0)
    with pytest.raises(CountRefused, match="not a card of the box"):
        two.tap("purple-a-9", 0)
    with pytest.raises(CountRefused, match="pawn"):
        two.tap("pawn-1", 0)
    chosen = session("yellow", "red", removed_colour="blue")
    chosen.tap("green-a-1", 0)
    with pytest.raises(CountRefused, match="blue cards are out"):
        chosen.tap("blue-a-1", 0)
    assert two.seats[0].cards() == ["blue-b-2"]


def test_undo_and_remove() -> None:
    count = session()
    for card in ("red-a-1", "red-a-2", "accio-1"):
        count.tap(card, 0)
    assert count.undo(0).card == "accio-1"
    assert count.remove(0, "red-a-1").card == "red-a-1"
    assert count.seats[0].cards() == ["red-a-2"]
    count.tap("accio-1", 2)  # free again once removed
    with pytest.raises(CountRefused, match="nothing to undo"):
        count.undo(1)
    with pytest.raises(CountRefused, match="not counted for Seat 1"):
        count.remove(0, "red-a-1")


def test_reader_taps_go_to_the_seat_being_counted_and_done_moves_on() -> None:
    count = session()
    assert count.tap("red-a-1")[0] == 0
    count.set_done(0)
    assert count.active == 1
    assert count.tap("red-a-2")[0] == 1
    count.set_active(3)
    count.tap("red-a-3")
    for seat in range(4):
        count.set_done(seat)
    assert count.finished and count.active is None
    with pytest.raises(CountRefused, match="every seat is done"):
        count.tap("red-a-4")
    count.set_done(2, False)
    assert count.active == 2 and not count.finished


def test_setup_is_checked() -> None:
    for colours, message in ((("red",), "2 to 4 players"), (("red", "red"), "same colour"),
                             (("red", "grey"), "not a player colour")):
        with pytest.raises(CountRefused, match=message):
            CountSetup(colours)
    with pytest.raises(CountRefused, match="last card"):
        CountSetup(("red", "blue"), last_card_seat=2)
    with pytest.raises(CountRefused, match="only a 2-player game removes a colour"):
        CountSetup(("red", "blue", "green"), removed_colour="yellow")


def test_the_desk_keeps_the_count_across_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "count.json"
    desk = CountDesk(path)
    desk.start(CountSetup(("yellow", "red", "green"), recipes=True, last_card_seat=2))
    desk.tap("blue-a-4", 1, "manual")
    desk.reader_tap("04AABBCCDDEEFF", "immuto-1")
    desk.tap("B-last-card", 2)
    again = CountDesk(path)
    assert again.state()["count"] == desk.state()["count"]
    assert again.session is not None
    assert again.session.seats[0].taps[0].source == "tag"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"setup": {"colours": ["red"]}}',
                                  '{"setup": {"colours": ["red", "blue"]}, "seats": '
                                  '[{"seat": 0, "taps": [{"card": "nope"}]}]}'])
def test_a_damaged_saved_count_is_kept_aside_not_overwritten(tmp_path: Path, text: str) -> None:
    path = tmp_path / "count.json"
    path.write_text(text)
    desk = CountDesk(path)
    assert desk.session is None and (tmp_path / "count.bad").read_text() == text
    assert desk.state()["message"]["text"].startswith("The saved count could not be read")
    desk.start(CountSetup(("red", "blue")))
    assert CountDesk(path).session is not None


def test_a_count_that_cannot_be_saved_goes_on_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    desk = CountDesk(tmp_path / "file" / "count.json")  # its folder is a file
    desk.start(CountSetup(("red", "blue")))
    desk.reader_tap("04AABBCCDDEEFF", "red-a-1")
    state = desk.state()
    assert "cannot be saved" in state["save_error"]
    assert state["count"]["seats"][0]["taps"][0]["card"] == "red-a-1"


def test_an_unknown_tag_says_so_and_counts_nothing() -> None:
    desk = CountDesk()
    desk.start(CountSetup(("yellow", "red")))
    desk.reader_tap("04AABBCCDDEEFF", None)
    state = desk.state()
    assert state["message"]["kind"] == "unknown_tag"
    assert "not enrolled" in state["message"]["text"] and state["message"]["link"] == "#enrol"
    assert all(s["taps"] == [] for s in state["count"]["seats"])


def test_recipes_and_options_score_like_cauldron_score(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    count = session("yellow", "red", "green", recipes=True, second_player_bonus=True,
                    first_seat=2, last_card_seat=1)
    for seat, cards in enumerate((["orange-a-1", "orange-a-2", "immuto-1", "A-orange"],
                                  ["red-a-4", "red-a-3", "red-b-1", "B-last-card", "vanesco-2"],
                                  ["orange-b-4", "B-fewest-spells", "accio-2"])):
        for card in cards:
            count.tap(card, seat)
    expected = {
        "players": [
            {"seat": 0, "colour": "yellow", "cauldron": ["orange-a-1", "orange-a-2", "immuto-1"],
             "recipes": ["A-orange"]},
            {"seat": 1, "colour": "red", "cauldron": ["red-a-4", "red-a-3", "red-b-1"],
             "spells": ["vanesco-2"], "recipes": ["B-last-card"]},
            {"seat": 2, "colour": "green", "cauldron": ["orange-b-4"], "spells": ["accio-2"],
             "recipes": ["B-fewest-spells"]},
        ],
        "last_card_seat": 1,
        "options": {"second_player_bonus": True, "first_seat": 2},
    }
    assert count.score().to_json() == cauldron_score(expected, tmp_path, capsys)


@settings(max_examples=max(5, settings().max_examples // 2))  # tests/conftest.py profile
@given(seed=st.integers(0, 2**32 - 1), players=st.sampled_from([2, 3, 4]),
       recipes=st.booleans())
def test_any_count_scores_as_cauldron_score_on_the_same_cards(
        seed: int, players: int, recipes: bool) -> None:
    rng = random.Random(seed)
    colours = tuple(rng.sample(["yellow", "red", "green", "blue"], players))
    count = session(*colours, recipes=recipes, last_card_seat=rng.randrange(players))
    cards = list(PLAYING_CARDS) + (list(RECIPES) if recipes else [])
    rng.shuffle(cards)
    accepted = 0
    for card in cards[:rng.randrange(40)]:
        try:
            count.tap(card, rng.randrange(players))
            accepted += 1
        except CountRefused as exc:
            assert exc.code == "impossible"
    assert sum(len(s.taps) for s in count.seats) == accepted
    # The page's score and `cauldron score`'s reading of the same cards (its own parser).
    seats, options = parse_score_input(json.dumps(count.score_input()), "count")
    assert count.score() == score_game(seats, **options)

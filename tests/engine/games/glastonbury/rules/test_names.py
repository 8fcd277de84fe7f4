"""engine.games.glastonbury.rules.names: the words for a family's score are the score page's (one
wording in
two runtimes: the dashboard's JavaScript reads dashboard/i18n/en.json, the command lines
read engine.games.glastonbury.rules.names.SCORE_WORDS; this keeps them equal)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.games.glastonbury.rules.names import (
    REASON_WORDS,
    SCORE_WORDS,
    action_label,
    card_name,
    family_how,
    family_label,
    recipe_name,
)
from engine.games.glastonbury.rules.scoring import FamilyScore, SeatCards, score_game

EN = Path(__file__).resolve().parents[5] / "dashboard" / "i18n" / "en.json"


def test_score_words_are_the_score_pages_words() -> None:
    page = json.loads(EN.read_text(encoding="utf-8"))
    for key, text in SCORE_WORDS.items():
        assert page[key] == text, key
    for key, text in REASON_WORDS.items():  # a recipe's reason
        assert page[key] == text, key


def _families(colour: str, *cards: str) -> dict[str, FamilyScore]:
    score = score_game([SeatCards(0, colour, tuple(cards))])
    return {f.family: f for f in score.seats[0].families}


def test_family_how_says_how_each_count_scores() -> None:
    fams = _families("red", "yellow-a-1", "yellow-a-3", "yellow-a-4",
                     "red-a-1", "red-a-2", "red-a-3", "red-a-4",
                     "green-a-2", "blue-a-1", "blue-a-2")
    assert family_how(fams["yellow-a"]) == "3 Sulphur scent cards: 1 + 3 + 4 = 8"
    assert family_how(fams["red-a"]) == (
        "4 Finger bones cards: 1 + 2 + 3 + 4 = 10; own colour, doubled: 20; "
        "+ 5 for four cards: 25")
    assert family_how(fams["green-a"]) == "1 Jar of eyes card: minus its value 2 = -2"
    assert family_how(fams["blue-a"]) == "2 Pumpkins cards: two cards score 0"


def test_family_how_names_immutos_and_cards_past_four() -> None:
    fams = _families("yellow", "yellow-a-1", "yellow-a-2", "yellow-a-3", "yellow-a-4",
                     "immuto-1")
    how = family_how(fams["yellow-a"])
    assert how.startswith("4 Sulphur scent cards: ")
    assert "own colour, doubled" in how and "+ 5 for four cards" in how
    assert how.endswith("more card adds nothing)"), how


def test_labels_name_families_and_recipes_not_ids() -> None:
    assert family_label("red-a") == "Finger bones (red)"
    assert recipe_name("A-orange") == "Recipe A (orange)"
    assert recipe_name("B-last-card").startswith("Recipe B (")
    assert recipe_name("C-nothing") == "an unknown card"
    assert card_name("B-last-card") == recipe_name("B-last-card")
    assert card_name("dragon-1") == "an unknown card"


def test_action_label_says_what_to_do() -> None:
    from engine.games.glastonbury.rules.actions import (
        DISCARD,
        KEEP,
        PASS,
        USE_DECLINATIO,
        Refill,
        Take,
    )
    from engine.games.glastonbury.rules.board import parse_cell

    take = Take(parse_cell("5,2"))
    assert action_label(take, "orange-a-2") == "take Egg 2 (orange) from row 6, column 3"
    assert action_label(take) == "take the card on row 6, column 3"
    assert action_label(Refill("accio-1")) == "refill the hole with Accio"
    labels = [action_label(a) for a in (USE_DECLINATIO, PASS, KEEP, DISCARD)]
    assert labels == ["use Declinatio", "pass (keep Declinatio for later)",
                      "keep the last card", "discard the last card"]

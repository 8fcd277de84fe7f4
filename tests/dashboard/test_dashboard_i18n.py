"""Every UI string exists in French, English and German, and every key the pages use is
defined."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest

from dashboard.config import Lang
from dashboard.i18n import negotiate
from engine.games.glastonbury.rules.board import CORNER_POSITIONS
from engine.games.glastonbury.rules.scoring import REASON_CODES, Measure
from hub.enroll import WORDS

DASH = Path(__file__).resolve().parents[2] / "dashboard"


def strings(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((DASH / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


def test_same_keys_in_every_language() -> None:
    fr, en, de = strings("fr"), strings("en"), strings("de")
    assert set(fr) == set(en) == set(de)
    for key in en:
        placeholders = set(re.findall(r"\{(\w+)\}", en[key]))
        assert placeholders == set(re.findall(r"\{(\w+)\}", fr[key])), key
        assert placeholders == set(re.findall(r"\{(\w+)\}", de[key])), key
        assert fr[key].strip() and de[key].strip(), key


def test_every_key_used_by_the_pages_is_defined() -> None:
    keys = set(strings("en"))
    used: set[str] = set()
    counted: set[str] = set()
    # Glastonbury's page fragments speak the shell's words (dashboard/i18n) still.
    glastonbury = DASH.parent / "engine" / "games" / "glastonbury"
    for path in [*(DASH / "static").glob("*.js"), *(glastonbury / "static").glob("*.js")]:
        text = path.read_text("utf-8")
        # t / tn, and gameT / gameTn (a shell text as the hub's game words it)
        used |= set(re.findall(r"""\b(?:t|gameT)\(\s*"([a-z0-9_]+)\"""", text))
        counted |= set(re.findall(r"""\b(?:tn|gameTn)\(\s*"([a-z0-9_]+)\"""", text))
    assert counted, "the pages use counted (plural) strings"
    # Enrolment's lines are counted by their `n` (core.js enrolWords), by code (hub WORDS).
    counted |= {f"enrol_{code}" for code in WORDS if f"enrol_{code}#other" in keys}
    for key in counted:  # every counted string has the forms the three languages need
        assert {f"{key}#one", f"{key}#other"} <= keys, key
    assert not {k.partition("#")[0] for k in keys if "#" in k} - counted, "unused plurals"
    for path in [*(DASH / "templates").glob("*.html"), *(glastonbury / "templates").glob("*.html")]:
        used |= set(re.findall(r"\bt\.([a-z0-9_]+)", path.read_text("utf-8")))
    assert used, "the pages use translated strings"
    prefixes = {k for k in used if k.endswith("_")}  # t("phase_" + phase) and the like
    assert used - prefixes <= keys, sorted(used - prefixes - keys)
    families: dict[str, list[str]] = {
        "phase_": ["take", "declinatio", "refill", "last_card", "over"],
        "health_": ["ok", "silent", "flicker", "absent"],
        "end_reason_": ["line_emptied", "declinatio_blocked", "host"],
        # a recipe's reason on the score page (engine/games/glastonbury/rules/scoring.py
        # ReasonCode, Measure)
        "recipe_reason_": list(REASON_CODES),
        "recipe_what_": list(get_args(Measure)),
        "sev_": ["error", "warning", "info"],
        "via_": ["accio", "declinatio"],
        "deal_next_": ["set_aside", "lay_cards", "fix_wrong", "starting"],
        # the host form's start corners: the perimeter positions G2 allows (geometry)
        "start_corner_": [str(p) for p in sorted(CORNER_POSITIONS)],
    }
    assert prefixes <= set(families)
    for prefix, values in families.items():
        assert {prefix + v for v in values} <= keys, prefix


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_a_games_own_words_replace_shell_texts_that_exist_with_the_same_placeholders(
        lang: Lang) -> None:
    """A game's page catalogue words some shell texts its own way (`words`: Quacks'
    enrolment speaks of chips): each is a real key of the shell, with its placeholders, and
    Quacks' never says card."""
    from engine import games

    shell = strings(lang)
    card = {"en": "card", "fr": "carte", "de": "Karte"}[lang]
    for game in games.games():
        words = game.page_catalogue(lang).get("words", {})
        for key, text in words.items():
            assert key in shell, (game.id, key)
            want = set(re.findall(r"\{(\w+)\}", shell[key]))
            assert set(re.findall(r"\{(\w+)\}", text)) == want, (game.id, key)
    quacks = games.get("quacks").page_catalogue(lang)["words"]
    assert {"enrol_pad", "enrol_enrolling", "enrol_spare_piece", "enrol_ended"} <= set(quacks)
    assert not [k for k, v in quacks.items() if card in re.sub(r"\{\w+\}", "", v).lower()]


@pytest.mark.parametrize(("query", "cookie", "accept", "want"), [
    (None, None, None, "fr"),
    ("de", None, "en", "de"),
    ("xx", "en", "de", "en"),
    (None, None, "it-IT,de;q=0.7,en;q=0.9", "en"),
    (None, None, "de-CH", "de"),
    (None, None, "en;q=garbage, de", "de"),
])
def test_language_choice(query: str | None, cookie: str | None, accept: str | None,
                         want: str) -> None:
    assert negotiate(query, cookie, accept, "fr") == want

"""Every text of Quacks' page fragments exists in en, fr and de (issue 23): the same keys in
the three files; every key the fragments name, and every code they word (phases, questions,
asks, options, evaluation events, refusals, die faces); the editions' titles (Q27, Q35)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.games.quacks.definition import CAT, DEFINITION, strings
from engine.games.quacks.rules.game import CHOICE_KINDS, Phase
from engine.games.quacks.rules.sensing import RULES, WORDS
from engine.games.quacks.table import EVALUATION

HERE = Path(DEFINITION.fragments.static)
LANGS = ("en", "fr", "de")
SCRIPTS = "\n".join(p.read_text("utf-8") for p in sorted(HERE.glob("*.js")))


def plain(lang: str) -> set[str]:
    return {k.split("#")[0] for k in strings(lang)}  # type: ignore[arg-type]


def test_the_three_languages_have_the_same_keys_and_no_empty_text() -> None:
    files = {lang: json.loads((HERE.parent / "i18n" / f"{lang}.json").read_text("utf-8"))
             for lang in LANGS}  # fmt: skip
    assert files["en"].keys() == files["fr"].keys() == files["de"].keys()
    assert all(text.strip() for data in files.values() for text in data.values())


def test_every_literal_key_the_fragments_name_exists_in_every_language() -> None:
    literal = set(re.findall(r"\btn?\(\"(q_[a-z0-9_]+[a-z0-9])\"", SCRIPTS))  # not prefixes
    assert len(literal) > 60
    for lang in LANGS:
        assert literal <= plain(lang), (lang, sorted(literal - plain(lang)))


@pytest.mark.parametrize("lang", LANGS)
def test_every_code_the_fragments_word_exists(lang: str) -> None:
    have = plain(lang)
    need = {f"q_phase_{p.value}" for p in Phase}
    need |= {f"q_refuse_{code}" for code in WORDS}
    worded_apart = {"rubies", "vp", "step", "round_started", "fortune_revealed", "auto_choice"}
    need |= {f"q_ev_{code}" for code in EVALUATION - worded_apart}
    need |= {"q_ev_rubies_gain", "q_ev_rubies_spend", "q_ev_vp", "q_ev_auto", "q_ev_auto_buy"}
    need |= {f"q_question_{q}" for q in ("offer", "red", "yellow", "stirred", "restart",
                                         "strong", "flea", "less")}  # fmt: skip
    need |= {f"q_{yn}_{q}" for q in ("red", "yellow", "stirred", "restart") for yn in ("yes", "no")}
    need |= {f"q_asked_{a}" for a in (*CHOICE_KINDS, "die", "buy", "coins", "spend")}
    need |= {f"q_die_{face}" for face in CAT.die}
    need |= {f"q_option_{o}" for o in ("rubies", "none", "vp", "white", "rats", "droplet",
                                       "purple")}  # fmt: skip
    need |= {f"q_colour_{c}" for c in ("white", "orange", "green", "blue", "red", "yellow",
                                       "purple", "black")}  # fmt: skip
    need |= {f"q_card_{c.id}" for c in CAT.fortune}
    assert need <= have, sorted(need - have)
    assert set(RULES) == set(WORDS)


def test_Q27_Q35_each_language_names_its_own_edition() -> None:
    assert DEFINITION.titles == {"en": "The Quacks of Quedlinburg",
                                 "de": "Die Quacksalber von Quedlinburg",
                                 "fr": "Les Charlatans de Belcastel"}  # fmt: skip
    assert strings("fr")["q_colour_white"] == "claque-doigt"  # the seed's word (Q35)
    assert strings("de")["q_colour_white"] == "Knallerbse"
    assert strings("en")["q_card_FB5"] == "Portentous Potables"  # North Star (P3)

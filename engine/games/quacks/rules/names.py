"""Names of chips and fortune cards in en/fr/de (`names.json`, Q27, Q35)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from engine.games.quacks.rules.catalogue import colour_of, value_of

LANGUAGES = ("en", "fr", "de")


@cache
def _names() -> dict[str, Any]:
    text = resources.files("engine.games.quacks.rules").joinpath("names.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def chip_name(chip: str, lang: str = "en") -> str:
    """`red-2` -> "toadstool 2" / "Fliegenpilz 2"."""
    if lang not in LANGUAGES:
        lang = "en"
    return f"{_names()['chips'][colour_of(chip)][lang]} {value_of(chip)}"


def card_name(card_id: str, lang: str = "en") -> str:
    if lang not in LANGUAGES:
        lang = "en"
    return str(_names()["fortune"][card_id][lang])


def placeholders() -> list[str]:
    """Names still to be confirmed from a printed copy (Q36.5)."""
    data = _names()
    out = [f"chips.{c}.fr" for c, n in data["chips"].items() if n.get("fr_status") == "placeholder"]
    out += [f"fortune.{c}.fr" for c, n in data["fortune"].items()
            if isinstance(n, dict) and n.get("fr_status") == "placeholder"]  # fmt: skip
    return out


def colour_name(colour: str, lang: str = "en") -> str:
    """`red` -> "toadstool" / "Fliegenpilz": the ingredient a colour stands for."""
    if lang not in LANGUAGES:
        lang = "en"
    return str(_names()["chips"][colour][lang])

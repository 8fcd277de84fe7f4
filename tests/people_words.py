"""The scan for texts worded for machines, not people (issue 11, README "Names people read"):
0-based seats, cells, lines and positions, wire places and raw card ids. Shared by the tests
that read what the engine, the hub and the command lines tell people."""

from __future__ import annotations

import re

from engine.games.glastonbury.rules.cards import CARDS, CATALOGUE

_IDS = [*CARDS, *(r["id"] for kind in ("A", "B") for r in CATALOGUE["recipes"][kind])]
_CARD_ID = re.compile(
    r"(?<![\w-])(?:" + "|".join(re.escape(c) for c in sorted(_IDS, key=len, reverse=True))
    + r")(?![\w-])"
)
_ZERO_BASED = re.compile(
    r"\bseat \d|\bSeat 0\b|\bcell \d|(?<![\w.])[0-5],[0-5](?![\d])|\b(?:row|column|position) 0\b"
    r"|\bpad:\d|\bpos \d"
)


def leaks(text: str) -> list[str]:
    """What in `text` is worded for machines, not people (card and recipe ids count)."""
    return _ZERO_BASED.findall(text) + _CARD_ID.findall(text)

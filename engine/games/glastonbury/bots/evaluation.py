"""Card values for bots: exact gains with `score_cauldron`, and a fast tally for rollouts.

`card_gain` is exact (the rules' own scoring, Immuto assignment included) and is what the
greedy bot and the hints use. `Tally` is an approximation for the search bot's rollouts,
where thousands of positions are scored per decision: it is exact for cauldrons without
Immuto and places Immutos one at a time where each gains most (`tests` check both).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.games.glastonbury.rules.cards import CARDS, FAMILIES, FAMILY_COLOUR
from engine.games.glastonbury.rules.scoring import FAMILY_POINTS, FULL_FAMILY, score_cauldron

FAMILY_COUNT: Final = len(FAMILIES)
_FAMILY_INDEX: Final = {family: i for i, family in enumerate(FAMILIES)}
# Ingredient id -> (family index, value).
INGREDIENT: Final[dict[str, tuple[int, int]]] = {
    cid: (_FAMILY_INDEX[c.family], c.value)
    for cid, c in CARDS.items()
    if c.kind == "ingredient" and c.family is not None
}
IMMUTO: Final = frozenset(c for c, v in CARDS.items() if v.kind == "immuto")
IN_CAULDRON: Final = frozenset(INGREDIENT) | IMMUTO
SPELL_OF: Final[dict[str, str]] = {c: v.spell for c, v in CARDS.items() if v.spell is not None}
FAMILY_OF: Final[dict[str, str]] = {
    cid: c.family for cid, c in CARDS.items() if c.family is not None
}
COLOUR_OF: Final[dict[str, str]] = {
    cid: c.colour for cid, c in CARDS.items() if c.colour is not None
}
_DOUBLED: Final[dict[str, tuple[bool, ...]]] = {
    colour: tuple(FAMILY_COLOUR[f] == colour for f in FAMILIES)
    for colour in set(FAMILY_COLOUR.values())
}



def cauldron_points(colour: str, cauldron: Sequence[str]) -> int:
    """Exact ingredient points of a cauldron (G10), as the rules score it."""
    points, _, _ = score_cauldron(colour, tuple(cauldron))
    return points


def card_gain(colour: str, cauldron: Sequence[str], card: str) -> int:
    """Exact change of a cauldron's points when `card` is laid on it (0 for a spell)."""
    if card not in IN_CAULDRON:
        return 0
    return cauldron_points(colour, (*cauldron, card)) - cauldron_points(colour, cauldron)


def top_loss(colour: str, cauldron: Sequence[str]) -> int:
    """What a seat of `colour` loses (positive) if its top card is taken away (Vanesco)."""
    if not cauldron:
        return 0
    return cauldron_points(colour, cauldron) - cauldron_points(colour, cauldron[:-1])


class Tally:
    """Family counts of one cauldron, for fast approximate scoring in rollouts.

    Exact without Immuto. With Immutos, each one adds the best single-card gain of a
    different family (two Immutos in the same family are not considered): close enough to
    steer a rollout, and cheap.
    """

    __slots__ = ("counts", "doubled", "immutos", "sums")

    def __init__(self, colour: str, cauldron: Sequence[str] = ()) -> None:
        self.doubled = _DOUBLED[colour]
        counts = [0] * FAMILY_COUNT
        sums = [0] * FAMILY_COUNT
        immutos = 0
        ingredient = INGREDIENT
        for card in cauldron:
            info = ingredient.get(card)
            if info is None:
                immutos += 1  # a cauldron holds only ingredients and Immutos
            else:
                counts[info[0]] += 1
                sums[info[0]] += info[1]
        self.counts = counts
        self.sums = sums
        self.immutos = immutos

    def add(self, card: str) -> None:
        info = INGREDIENT.get(card)
        if info is None:
            if card in IMMUTO:
                self.immutos += 1
            return
        index, value = info
        self.counts[index] += 1
        self.sums[index] += value

    def _marginal(self, index: int) -> int:
        """What one more value-0 card (an Immuto) adds to family `index`."""
        n = self.counts[index]
        if n == 0 or n >= FULL_FAMILY:
            return 0
        s, d = self.sums[index], self.doubled[index]
        return FAMILY_POINTS[d][n + 1][s] - FAMILY_POINTS[d][n][s]

    def _immuto_bonus(self, skip: int = -1, replace: int = 0) -> int:
        """Sum of the `immutos` best marginals (family `skip`'s marginal is `replace`)."""
        first = second = 0
        for i in range(FAMILY_COUNT):
            m = replace if i == skip else self._marginal(i)
            if m > first:
                first, second = m, first
            elif m > second:
                second = m
        return first if self.immutos == 1 else first + second

    def points(self) -> int:
        counts, sums, doubled = self.counts, self.sums, self.doubled
        total = 0
        for i in range(FAMILY_COUNT):
            n = counts[i]
            if n:
                total += FAMILY_POINTS[doubled[i]][n if n < FULL_FAMILY else FULL_FAMILY][sums[i]]
        if self.immutos:
            total += self._immuto_bonus()
        return total

    def gain(self, card: str) -> int:
        """Change of `points()` if `card` were added (0 for a spell)."""
        info = INGREDIENT.get(card)
        if info is None:
            if card not in IMMUTO or self.immutos >= 2:
                return 0
            best = max(self._marginal(i) for i in range(FAMILY_COUNT))
            if self.immutos == 0:
                return best
            return self._immuto_bonus_with_one_more() - self._immuto_bonus()
        index, value = info
        n = self.counts[index]
        s = self.sums[index]
        d = self.doubled[index]
        row = FAMILY_POINTS[d]
        gain = row[n + 1][s + value] - row[n][s]
        if self.immutos:
            before = self._immuto_bonus()
            after_m = 0 if n + 1 >= FULL_FAMILY else row[n + 2][s + value] - row[n + 1][s + value]
            gain += self._immuto_bonus(index, after_m) - before
        return gain

    def _immuto_bonus_with_one_more(self) -> int:
        self.immutos += 1
        try:
            return self._immuto_bonus()
        finally:
            self.immutos -= 1

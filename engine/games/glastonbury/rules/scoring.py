"""End-of-game scoring (G10) and the recipe variant (G11). Pure: no I/O, no clock.

`score_cauldron` scores one cauldron; `score_game` scores every seat, the recipes and the
optional second-player bonus, and names the winners. Every result carries its breakdown
(per family, where each Immuto went, each recipe with a reason) so a person can check it.
`score_totals` and `cauldron_points` compute the same numbers without building the
breakdown, for hot loops (self-play, benchmarks, bots). Bad input raises `ScoringError`
naming the rule (G1 card ids, G2 seats and colours, G10/G10a options, G11 recipes).

Decisions taken here (RULES.md leaves them open):
- **Immuto assignment (G10).** The engine tries every way of placing the Immutos (each joins
  one family as a value-0 card; several may join the same family) and keeps one with the
  highest ingredient score. Among assignments with that same score it prefers, in order:
  (1) more Immutos in families of a colour named by one of the seat's own A recipes (this
  never lowers the ingredient score and can only help the owner's recipe); (2) more Immutos
  in families that already hold ingredient cards; (3) the earliest families in catalogue
  order. Immutos are matched to the chosen families in id order (immuto-1 first). Adding an
  Immuto never lowers a family's points, so an Immuto lands in an empty family only when
  nothing scores better (e.g. a cauldron without ingredients) or rule (1) asks for it;
  that family is then listed with the lone Immuto and 0 points.
- **Assignment and recipes (G11).** RULES.md's decision maximises the *player's* score, and
  recipe A counts each Immuto as a card of the colour of the family it joined, so with
  recipes an Immuto may be worth more in the recipe's colour than where it scores most as
  an ingredient. Each seat holding an A recipe and Immutos then takes, against the other
  seats' assignments, the assignment with the highest ingredient + recipe A points; the
  ingredient-best one above is kept unless another is strictly better (then the earliest
  families in catalogue order among equals). Seats settle in seat order, again until none
  changes (at most `_RECIPE_ROUNDS` rounds: moving an Immuto can change another seat's
  majority). B-fewest-ingredients counts
  ingredient cards plus Immutos; B-fewest-fours and B-most-ones count ingredient cards of
  value 4 / 1 (an Immuto is worth 0); B-fewest-spells counts every spell card collected.
- **Recipe points.** A: the owner gains 1 point per card of that colour (2 with 4 players)
  if they strictly have the most among all seats; B: 10 points if strictly fewest / most;
  a tie gives nothing. B-last-card: 10 points if the owner is `last_card_seat`.
- **Second-player bonus (optional, off by default).** +2 for the seat after `first_seat` in
  clockwise order among the seats present (the next higher seat number, wrapping round).
- **Ties** for the highest total are shared: `winners` lists every seat on it.
- **Validation.** Recipe ids may appear at most once in a game (one physical card each);
  seats may own any number of them. A game has 1-4 seats (one seat is allowed so a host can
  check a single cauldron with its recipes).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from engine.games.glastonbury.rules.cards import (
    CARDS,
    COLOURS,
    FAMILIES,
    FAMILY_COLOUR,
    PLAYER_COLOURS,
    RECIPE_A,
    RECIPES,
    VALUES,
    family_name,
)
from engine.games.glastonbury.rules.errors import RulesError
from engine.games.glastonbury.rules.names import recipe_reason

FULL_FAMILY: Final[int] = 4  # cards counted at most per family; the fifth adds nothing
FULL_FAMILY_BONUS: Final[int] = 5
OWN_COLOUR_FACTOR: Final[int] = 2
RECIPE_B_POINTS: Final[int] = 10
SECOND_PLAYER_BONUS: Final[int] = 2
MAX_SEAT: Final[int] = 3

_FAMILY_INDEX: Final[dict[str, int]] = {family: i for i, family in enumerate(FAMILIES)}
_RECIPE_INDEX: Final[dict[str, int]] = {recipe: i for i, recipe in enumerate(RECIPES)}
# Ingredient id -> (family, value); Immuto ids; spell card ids.
_INGREDIENT: Final[dict[str, tuple[str, int]]] = {
    cid: (card.family, card.value)
    for cid, card in CARDS.items()
    if card.kind == "ingredient" and card.family is not None
}
_INGREDIENT_INDEX: Final[dict[str, tuple[int, int]]] = {
    cid: (_FAMILY_INDEX[family], value) for cid, (family, value) in _INGREDIENT.items()
}
_IMMUTO: Final[frozenset[str]] = frozenset(c for c, v in CARDS.items() if v.kind == "immuto")
_SPELL: Final[frozenset[str]] = frozenset(c for c, v in CARDS.items() if v.kind == "spell")
_CARDS_OF_VALUE: Final[dict[int, frozenset[str]]] = {
    value: frozenset(c for c, (_family, v) in _INGREDIENT.items() if v == value) for value in VALUES
}
_CAULDRON_CARDS: Final[frozenset[str]] = frozenset(_INGREDIENT) | _IMMUTO
_KIND: Final[dict[str, str]] = {
    "ingredient": "an ingredient",
    "immuto": "an Immuto",
    "spell": "a spell",
    "corner": "a corner",
}


class ScoringError(RulesError):
    """Input that cannot be scored (unknown card, card twice, wrong colour, ...)."""


@dataclass(frozen=True, slots=True)
class SeatCards:
    """What one seat ends the game with: the input of `score_game`."""

    seat: int
    colour: str  # a player colour: yellow, red, green, blue
    cauldron: tuple[str, ...]  # bottom first; ingredient and Immuto card ids
    spells: tuple[str, ...] = ()  # every spell card collected (held or spent)
    recipes: tuple[str, ...] = ()  # "A-orange", "B-most-ones", ...


@dataclass(frozen=True, slots=True)
class FamilyScore:
    """One family of one cauldron: `points = base * (2 if doubled else 1) + bonus`."""

    family: str
    colour: str
    cards: tuple[str, ...]  # ingredient ids, by value
    immutos: tuple[str, ...]  # Immuto ids assigned to this family
    counted: int  # min(cards + immutos, 4)
    base: int  # -value for 1 card, 0 for 2, sum of values for 3-4 (before doubling)
    doubled: bool  # the seat's own colour
    bonus: int  # 5 for 4 counted cards, never doubled
    points: int

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "name": family_name(self.family),
            "colour": self.colour,
            "cards": list(self.cards),
            "immutos": list(self.immutos),
            "counted": self.counted,
            "base": self.base,
            "doubled": self.doubled,
            "bonus": self.bonus,
            "points": self.points,
        }


# Why a recipe scored what it did: a code, with `ReasonParams`, that the dashboard words in
# each language (dashboard/i18n "reason_<code>") and names.recipe_reason words in English.
# most/fewest: the owner strictly leads (`other` = the best other seat); *_alone: no other
# seat to compare; tie_*: level with the best other seat; not_*: behind it; no_cards: an A
# recipe's colour is missing everywhere; last_card_*: B-last-card (`seat` took it).
ReasonCode = Literal[
    "most", "fewest", "most_alone", "fewest_alone", "tie_most", "tie_fewest", "not_most",
    "not_fewest", "no_cards", "last_card_own", "last_card_other", "last_card_unknown",
]
REASON_CODES: Final[tuple[ReasonCode, ...]] = get_args(ReasonCode)
# What a recipe compares: cards of its colour (A), or ingredient cards with Immuto, value-4
# cards, spell cards, value-1 cards (B).
Measure = Literal["colour", "cards", "fours", "spells", "ones"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasonParams:
    """The numbers behind a recipe's reason; a field that does not apply is None."""

    measure: Measure | None = None  # None for B-last-card
    colour: str | None = None  # an A recipe's colour
    own: int | None = None  # the owner's count
    other: int | None = None  # the best count among the other seats
    rate: int | None = None  # A: points per card (1, or 2 with 4 players) when achieved
    seat: int | None = None  # B-last-card: the seat that took the last card (0-based)
    seat_colour: str | None = None  # that seat's colour

    def to_json(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "colour": self.colour,
            "own": self.own,
            "other": self.other,
            "rate": self.rate,
            "seat": self.seat,
            "seat_colour": self.seat_colour,
        }


@dataclass(frozen=True, slots=True)
class RecipeScore:
    recipe: str
    achieved: bool
    points: int
    reason_code: ReasonCode
    reason_params: ReasonParams

    @property
    def reason(self) -> str:
        """The reason in English, for a person: "most orange cards: 3 vs 2"."""
        return recipe_reason(self.reason_code, self.reason_params, self.points)

    def to_json(self) -> dict[str, Any]:
        return {
            "recipe": self.recipe,
            "achieved": self.achieved,
            "points": self.points,
            "reason": self.reason,
            "reason_code": self.reason_code,
            "reason_params": self.reason_params.to_json(),
        }


@dataclass(frozen=True, slots=True)
class SeatScore:
    seat: int
    colour: str
    families: tuple[FamilyScore, ...]  # catalogue order, only families holding a card
    immuto_assignment: tuple[tuple[str, str], ...]  # (immuto id, family), by immuto id
    ingredient_points: int
    recipes: tuple[RecipeScore, ...]  # catalogue order
    second_player_bonus: int
    total: int

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "colour": self.colour,
            "total": self.total,
            "ingredient_points": self.ingredient_points,
            "families": [f.to_json() for f in self.families],
            "immuto_assignment": dict(self.immuto_assignment),
            "recipes": [r.to_json() for r in self.recipes],
            "second_player_bonus": self.second_player_bonus,
        }


@dataclass(frozen=True, slots=True)
class GameScore:
    seats: tuple[SeatScore, ...]  # by seat number
    winners: tuple[int, ...]  # every seat with the highest total (ties are shared)

    def to_json(self) -> dict[str, Any]:
        return {"seats": [s.to_json() for s in self.seats], "winners": list(self.winners)}

    def seat(self, seat: int) -> SeatScore:
        for score in self.seats:
            if score.seat == seat:
                return score
        raise KeyError(seat)


# --- one cauldron (G10) -------------------------------------------------------------------


def family_points(cards: int, value_sum: int, doubled: bool) -> int:
    """Points of a family of `cards` cards (Immutos included) whose values add to `value_sum`
    (the one owner: the bots' tallies look these up too).

    Immutos are worth 0 and a family has at most 4 ingredients, so `value_sum` is both the
    lone card's value (1 card) and the sum of the counted cards (3 or more).
    """
    if cards == 2 or cards == 0:
        return 0
    base = -value_sum if cards == 1 else value_sum
    points = base * OWN_COLOUR_FACTOR if doubled else base
    return points + FULL_FAMILY_BONUS if cards >= FULL_FAMILY else points


def _base(value_sum: int, counted: int) -> int:
    if counted == 1:
        return -value_sum
    return 0 if counted == 2 else value_sum


# FAMILY_POINTS[doubled][min(cards, 4)][value_sum]: hot loops look points up instead.
_MAX_SUM: Final[int] = sum(VALUES)
FAMILY_POINTS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(
        tuple(family_points(cards, value_sum, doubled) for value_sum in range(_MAX_SUM + 1))
        for cards in range(FULL_FAMILY + 1)
    )
    for doubled in (False, True)
)
# Per player colour, for each family index: 1 if the family is of that colour.
_DOUBLED: Final[dict[str, tuple[int, ...]]] = {
    colour: tuple(int(FAMILY_COLOUR[f] == colour) for f in FAMILIES) for colour in PLAYER_COLOURS
}
_COLOUR_FAMILY_INDICES: Final[dict[str, tuple[int, ...]]] = {
    colour: tuple(i for i, f in enumerate(FAMILIES) if FAMILY_COLOUR[f] == colour)
    for colour in COLOURS
}
_FAMILY_COUNT: Final[int] = len(FAMILIES)


def _check_colour(colour: str, where: str) -> None:
    if colour not in PLAYER_COLOURS:
        raise ScoringError(
            "G2",
            f"{where}: colour {colour!r} is not a player colour "
            f"(one of {', '.join(PLAYER_COLOURS)})",
        )


def _check_cauldron(cauldron: Sequence[str], where: str) -> None:
    if not _CAULDRON_CARDS.issuperset(cauldron):
        for card_id in cauldron:
            if card_id in _CAULDRON_CARDS:
                continue
            if not isinstance(card_id, str) or card_id not in CARDS:
                raise ScoringError("G1", f"{where}: unknown card id {card_id!r} in the cauldron")
            raise ScoringError(
                "G1",
                f"{where}: {card_id!r} is {_KIND[CARDS[card_id].kind]} card and cannot be in a "
                "cauldron (only ingredients and Immuto)",
            )
    if len(set(cauldron)) != len(cauldron):
        twice = next(c for c in cauldron if cauldron.count(c) > 1)
        raise ScoringError("G1", f"{where}: card {twice!r} appears twice in the cauldron")


def _check_spells(spells: Sequence[str], where: str) -> None:
    if not _SPELL.issuperset(spells):
        for card_id in spells:
            if card_id in _SPELL:
                continue
            if not isinstance(card_id, str) or card_id not in CARDS:
                raise ScoringError("G1", f"{where}: unknown card id {card_id!r} in the spells")
            raise ScoringError(
                "G1", f"{where}: {card_id!r} is {_KIND[CARDS[card_id].kind]} card, not a spell card"
            )
    if len(set(spells)) != len(spells):
        twice = next(c for c in spells if spells.count(c) > 1)
        raise ScoringError("G1", f"{where}: card {twice!r} appears twice in the spells")


_FAMILY_COLOURS: Final[tuple[str, ...]] = tuple(FAMILY_COLOUR[f] for f in FAMILIES)
_CAPPED: Final[tuple[int, ...]] = tuple(min(n, FULL_FAMILY) for n in range(FULL_FAMILY + 3))
_INDEX_LIMIT: Final[int] = 32  # family indices are packed in 5 bits
assert _FAMILY_COUNT <= _INDEX_LIMIT


def _best_assignment(
    counts: list[int],
    sums: list[int],
    immuto_count: int,
    colour: str,
    prefer_colours: Collection[str],
) -> tuple[int, ...]:
    """The family indices the Immutos join, in catalogue order (rules: module docstring).

    An assignment ranks by (total gain, Immutos in preferred colours, Immutos in families
    holding cards), then by the earliest families. The first three parts add up over
    families, and integer vectors keep their lexicographic order under addition, so the best
    two different families are simply the two best families on their own. Each part is
    packed into one integer (pref and filled add up to at most 2 each, so they fit in 4
    bits; an index fits in 5), which keeps this hot path to plain integer comparisons.

    Only families holding cards and the first empty family of each colour are tried: empty
    families of one colour differ only in catalogue order.
    """
    if immuto_count > 2:
        # Validation keeps card ids unique, so a cauldron holds at most the box's 2 Immutos.
        raise ScoringError("G1", f"{immuto_count} Immutos in one cauldron; the box holds 2")
    doubled_of = _DOUBLED[colour]
    empty_colours: set[str] = set()
    first = second = together = -(1 << 62)  # packed keys of the best options so far
    for index in range(_FAMILY_COUNT):
        fam_colour = _FAMILY_COLOURS[index]
        n = counts[index]
        if n == 0:
            if fam_colour in empty_colours:
                continue
            empty_colours.add(fam_colour)
            gain1 = gain2 = 0  # Immutos alone: 1 or 2 value-0 cards score 0
            filled = 0
        else:
            row = FAMILY_POINTS[doubled_of[index]]
            value_sum = sums[index]
            start = row[n][value_sum]
            gain1 = row[_CAPPED[n + 1]][value_sum] - start
            gain2 = row[_CAPPED[n + 2]][value_sum] - start
            filled = 1
        rank = (4 if fam_colour in prefer_colours else 0) + filled
        order = _INDEX_LIMIT - 1 - index  # earlier family, higher key
        single = ((gain1 << 4) + rank) * _INDEX_LIMIT + order
        if single > first:
            first, second = single, first
        elif single > second:
            second = single
        both = (((gain2 << 4) + 2 * rank) * _INDEX_LIMIT + order) * _INDEX_LIMIT + order
        if both > together:
            together = both
    first_index = _INDEX_LIMIT - 1 - first % _INDEX_LIMIT
    if immuto_count == 1:
        return (first_index,)
    together_index = _INDEX_LIMIT - 1 - together % _INDEX_LIMIT
    if second < -(1 << 61):  # only one family to try
        return (together_index, together_index)
    second_index = _INDEX_LIMIT - 1 - second % _INDEX_LIMIT
    low, high = sorted((first_index, second_index))
    apart_value = (first // _INDEX_LIMIT) + (second // _INDEX_LIMIT)
    apart = (apart_value * _INDEX_LIMIT + _INDEX_LIMIT - 1 - low) * _INDEX_LIMIT + (
        _INDEX_LIMIT - 1 - high
    )
    if together >= apart:
        return (together_index, together_index)
    return (low, high)


@dataclass(slots=True)
class _Cauldron:
    """One cauldron worked out, before it is turned into the public breakdown."""

    colour: str
    cauldron: Sequence[str]
    counts: list[int]  # ingredient cards per family index
    sums: list[int]  # sum of their values per family index
    joined: list[int]  # Immutos per family index
    assignment: tuple[tuple[str, str], ...]
    points: int

    def colour_cards(self, colour: str) -> int:
        """Cards of `colour`, Immutos counted where they joined (recipe A)."""
        return sum(self.counts[i] + self.joined[i] for i in _COLOUR_FAMILY_INDICES[colour])

    def value_cards(self, value: int) -> int:
        return len(_CARDS_OF_VALUE[value].intersection(self.cauldron))

    def families(self) -> tuple[FamilyScore, ...]:
        cards: list[list[str]] = [[] for _ in range(_FAMILY_COUNT)]
        for card_id in sorted(self.cauldron):  # ids of one family sort by value
            info = _INGREDIENT_INDEX.get(card_id)
            if info is not None:
                cards[info[0]].append(card_id)
        immutos: dict[int, list[str]] = {}
        for immuto, family in self.assignment:
            immutos.setdefault(_FAMILY_INDEX[family], []).append(immuto)
        doubled_of = _DOUBLED[self.colour]
        result: list[FamilyScore] = []
        for index in range(_FAMILY_COUNT):
            n = self.counts[index] + self.joined[index]
            if n == 0:
                continue
            counted = _CAPPED[n]
            value_sum = self.sums[index]
            doubled = doubled_of[index] == 1
            result.append(
                FamilyScore(
                    FAMILIES[index],
                    _FAMILY_COLOURS[index],
                    tuple(cards[index]),
                    tuple(immutos.get(index, ())),
                    counted,
                    _base(value_sum, counted),
                    doubled,
                    FULL_FAMILY_BONUS if counted == FULL_FAMILY else 0,
                    FAMILY_POINTS[doubled][counted][value_sum],
                )
            )
        return tuple(result)


def _work_out(colour: str, cauldron: Sequence[str], prefer_colours: Collection[str]) -> _Cauldron:
    """Score a cauldron already checked by `_check_cauldron`."""
    counts = [0] * _FAMILY_COUNT
    sums = [0] * _FAMILY_COUNT
    immutos: list[str] = []
    for card_id in cauldron:
        info = _INGREDIENT_INDEX.get(card_id)
        if info is None:
            immutos.append(card_id)
        else:
            counts[info[0]] += 1
            sums[info[0]] += info[1]
    joined = [0] * _FAMILY_COUNT
    assignment: tuple[tuple[str, str], ...] = ()
    if immutos:
        immutos.sort()
        chosen = _best_assignment(counts, sums, len(immutos), colour, prefer_colours)
        assignment = tuple(zip(immutos, (FAMILIES[i] for i in chosen), strict=True))
        for index in chosen:
            joined[index] += 1
    doubled = _DOUBLED[colour]
    points = 0
    for index in range(_FAMILY_COUNT):
        n = counts[index] + joined[index]
        if n:
            capped = n if n < FULL_FAMILY else FULL_FAMILY
            points += FAMILY_POINTS[doubled[index]][capped][sums[index]]
    return _Cauldron(colour, cauldron, counts, sums, joined, assignment, points)


def score_cauldron(
    colour: str, cauldron: Sequence[str], *, prefer_colours: Collection[str] = ()
) -> tuple[int, tuple[FamilyScore, ...], tuple[tuple[str, str], ...]]:
    """Ingredient points of one cauldron (G10) for a player of `colour`.

    Returns (points, families in catalogue order, Immuto assignment as (immuto, family)).
    `prefer_colours` only breaks ties between equally scoring Immuto assignments.
    Raises ScoringError for an unknown or misplaced card, a card twice, a wrong colour.
    """
    _check_colour(colour, "cauldron")
    _check_cauldron(cauldron, "cauldron")
    worked = _work_out(colour, cauldron, prefer_colours)
    return worked.points, worked.families(), worked.assignment


def cauldron_points(
    colour: str, cauldron: Sequence[str], *, prefer_colours: Collection[str] = ()
) -> int:
    """`score_cauldron(...)[0]` without building the breakdown, for hot loops (bots)."""
    _check_colour(colour, "cauldron")
    _check_cauldron(cauldron, "cauldron")
    return _work_out(colour, cauldron, prefer_colours).points


# --- a whole game (G10, G11) --------------------------------------------------------------


def _validate_seats(seats: Sequence[SeatCards]) -> None:
    if not seats:
        raise ScoringError("G2", "no seats to score")
    seat_numbers: set[int] = set()
    colours: dict[str, int] = {}
    recipes: dict[str, int] = {}
    for entry in seats:
        seat = entry.seat
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat <= MAX_SEAT:
            raise ScoringError("G2", f"seat {seat!r} is not a seat number 0-{MAX_SEAT}")
        if seat in seat_numbers:
            raise ScoringError("G2", f"seat {seat} is listed twice")
        seat_numbers.add(seat)
        where = f"seat {seat}"
        _check_colour(entry.colour, where)
        if entry.colour in colours:
            raise ScoringError(
                "G2",
                f"{where}: colour {entry.colour!r} is already taken by seat "
                f"{colours[entry.colour]}",
            )
        colours[entry.colour] = seat
        _check_cauldron(entry.cauldron, where)
        _check_spells(entry.spells, where)
        for recipe in entry.recipes:
            if recipe not in _RECIPE_INDEX:
                raise ScoringError(
                    "G11",
                    f"{where}: unknown recipe id {recipe!r} (one of {', '.join(RECIPES)})",
                )
            if recipe in recipes:
                other = recipes[recipe]
                also = "" if other == seat else f" and seat {other}"
                raise ScoringError(
                    "G11",
                    f"recipe {recipe!r} appears twice (seat {seat}{also}); "
                    "each recipe card exists once",
                )
            recipes[recipe] = seat
    # Across seats (each seat is already free of repeats): every card exists once.
    every = [c for entry in seats for c in (*entry.cauldron, *entry.spells)]
    if len(set(every)) != len(every):
        owner: dict[str, int] = {}
        for entry in seats:
            for card_id in (*entry.cauldron, *entry.spells):
                if card_id in owner:
                    raise ScoringError(
                        "G1",
                        f"card {card_id!r} appears twice (seat {owner[card_id]} and seat "
                        f"{entry.seat}); every card exists once",
                    )
                owner[card_id] = entry.seat


_B_RECIPES: Final[dict[str, tuple[Measure, bool]]] = {
    # recipe -> (what is compared, fewest?)
    "B-fewest-ingredients": ("cards", True),
    "B-fewest-fours": ("fours", True),
    "B-fewest-spells": ("spells", True),
    "B-most-ones": ("ones", False),
}


def _measure(worked: _Cauldron, entry: SeatCards, what: str) -> int:
    if what == "cards":
        return len(entry.cauldron)
    if what == "fours":
        return worked.value_cards(4)
    if what == "ones":
        return worked.value_cards(1)
    return len(entry.spells)


_Outcome = tuple[bool, int, ReasonCode, ReasonParams]


def _score_recipe(
    recipe: str,
    owner: SeatCards,
    seats: Sequence[SeatCards],
    worked: dict[int, _Cauldron],
    last_card_seat: int | None,
) -> _Outcome:
    """(achieved, points, reason code, reason params) of one recipe for its owner."""
    if recipe == "B-last-card":
        if last_card_seat is None:
            return False, 0, "last_card_unknown", ReasonParams()
        taker = next(s for s in seats if s.seat == last_card_seat)
        taken = ReasonParams(seat=taker.seat, seat_colour=taker.colour)
        if last_card_seat == owner.seat:
            return True, RECIPE_B_POINTS, "last_card_own", taken
        return False, 0, "last_card_other", taken
    if recipe in _B_RECIPES:
        what, fewest = _B_RECIPES[recipe]
        own = _measure(worked[owner.seat], owner, what)
        others = [_measure(worked[s.seat], s, what) for s in seats if s.seat != owner.seat]
        if not others:
            return (True, RECIPE_B_POINTS, "fewest_alone" if fewest else "most_alone",
                    ReasonParams(measure=what, own=own))
        best_other = min(others) if fewest else max(others)
        params = ReasonParams(measure=what, own=own, other=best_other)
        if own == best_other:
            return False, 0, "tie_fewest" if fewest else "tie_most", params
        if (own < best_other) == fewest:
            return True, RECIPE_B_POINTS, "fewest" if fewest else "most", params
        return False, 0, "not_fewest" if fewest else "not_most", params
    colour = recipe.removeprefix("A-")
    rate = 2 if len(seats) >= 4 else 1
    own = worked[owner.seat].colour_cards(colour)
    others = [worked[s.seat].colour_cards(colour) for s in seats if s.seat != owner.seat]
    best = max(others) if others else None
    params = ReasonParams(measure="colour", colour=colour, own=own, other=best)
    if own > 0 and (best is None or own > best):
        won = ReasonParams(measure="colour", colour=colour, own=own, other=best, rate=rate)
        return True, own * rate, "most" if best is not None else "most_alone", won
    if own == best:
        return False, 0, "tie_most", params
    if best is None:
        return False, 0, "no_cards", params
    return False, 0, "not_most", params


def second_seat(seat_numbers: Collection[int], first_seat: int) -> int:
    """The seat that plays second: the next seat clockwise after `first_seat`."""
    ordered = sorted(seat_numbers)
    return ordered[(ordered.index(first_seat) + 1) % len(ordered)]


@dataclass(slots=True)
class _Worked:
    seats: list[SeatCards]  # by seat number
    cauldrons: dict[int, _Cauldron]
    recipes: dict[int, list[tuple[str, bool, int, ReasonCode, ReasonParams]]]
    bonus: dict[int, int]
    totals: dict[int, int]
    winners: tuple[int, ...]


_RECIPE_ROUNDS: Final[int] = 4
# Every way of placing 1 or 2 Immutos (family indices, catalogue order).
_PLACEMENTS: Final[dict[int, tuple[tuple[int, ...], ...]]] = {
    1: tuple((i,) for i in range(_FAMILY_COUNT)),
    2: tuple((i, j) for i in range(_FAMILY_COUNT) for j in range(i, _FAMILY_COUNT)),
}


def _placed(worked: _Cauldron, chosen: tuple[int, ...]) -> _Cauldron:
    """The same cauldron with its Immutos joining the families `chosen`."""
    joined = [0] * _FAMILY_COUNT
    for index in chosen:
        joined[index] += 1
    doubled = _DOUBLED[worked.colour]
    points = 0
    for index in range(_FAMILY_COUNT):
        n = worked.counts[index] + joined[index]
        if n:
            points += FAMILY_POINTS[doubled[index]][_CAPPED[n]][worked.sums[index]]
    immutos = sorted(card for card in worked.cauldron if card in _IMMUTO)
    assignment = tuple(zip(immutos, (FAMILIES[i] for i in chosen), strict=True))
    return _Cauldron(worked.colour, worked.cauldron, worked.counts, worked.sums, joined,
                     assignment, points)


def _recipe_a_points(own: int, others: list[int], rate: int) -> int:
    """Recipe A (G11): own cards x rate for a strict majority, else 0."""
    return own * rate if own > 0 and (not others or own > max(others)) else 0


def _settle_recipe_assignments(
    ordered: Sequence[SeatCards], cauldrons: dict[int, _Cauldron]
) -> None:
    """Let each seat with an A recipe and Immutos place them for its best total (module
    docstring, "Assignment and recipes"); changes `cauldrons` in place."""
    rate = 2 if len(ordered) >= 4 else 1
    holders = []
    for entry in ordered:
        colours = [r.removeprefix("A-") for r in entry.recipes if r in RECIPE_A]
        count = sum(cauldrons[entry.seat].joined)
        if colours and count:
            holders.append((entry.seat, colours, _PLACEMENTS[count]))
    if not holders:
        return

    def total(seat: int, colours: list[str], worked: _Cauldron) -> tuple[int, int]:
        recipe = sum(
            _recipe_a_points(worked.colour_cards(colour),
                             [c.colour_cards(colour) for s, c in cauldrons.items() if s != seat],
                             rate)
            for colour in colours
        )
        return worked.points + recipe, worked.points

    for _ in range(_RECIPE_ROUNDS):
        changed = False
        for seat, colours, placements in holders:
            best = cauldrons[seat]
            best_key = total(seat, colours, best)
            for chosen in placements:
                candidate = _placed(best, chosen)
                key = total(seat, colours, candidate)
                if key > best_key:
                    best, best_key = candidate, key
            if best is not cauldrons[seat]:
                cauldrons[seat] = best
                changed = True
        if not changed:
            return


def _work_out_game(
    seats: Sequence[SeatCards],
    last_card_seat: int | None,
    first_seat: int,
    second_player_bonus: bool,
    validate: bool = True,
) -> _Worked:
    if validate:
        _validate_seats(seats)
    seat_numbers = [entry.seat for entry in seats]
    if last_card_seat is not None and last_card_seat not in seat_numbers:
        raise ScoringError(
            "G10a", f"last_card_seat {last_card_seat!r} is not one of the seats {seat_numbers}"
        )
    bonus_seat: int | None = None
    if second_player_bonus:
        if first_seat not in seat_numbers:
            raise ScoringError(
                "G10", f"first_seat {first_seat!r} is not one of the seats {seat_numbers}"
            )
        bonus_seat = second_seat(seat_numbers, first_seat)
    ordered = sorted(seats, key=lambda entry: entry.seat)
    cauldrons: dict[int, _Cauldron] = {}
    for entry in ordered:
        prefer = [r.removeprefix("A-") for r in entry.recipes if r in RECIPE_A]
        cauldrons[entry.seat] = _work_out(entry.colour, entry.cauldron, prefer)
    _settle_recipe_assignments(ordered, cauldrons)
    recipes: dict[int, list[tuple[str, bool, int, ReasonCode, ReasonParams]]] = {}
    bonus: dict[int, int] = {}
    totals: dict[int, int] = {}
    for entry in ordered:
        results = [
            (recipe, *_score_recipe(recipe, entry, ordered, cauldrons, last_card_seat))
            for recipe in sorted(entry.recipes, key=_RECIPE_INDEX.__getitem__)
        ]
        recipes[entry.seat] = results
        bonus[entry.seat] = SECOND_PLAYER_BONUS if entry.seat == bonus_seat else 0
        totals[entry.seat] = (
            cauldrons[entry.seat].points + sum(r[2] for r in results) + bonus[entry.seat]
        )
    top = max(totals.values())
    winners = tuple(seat for seat, total in totals.items() if total == top)
    return _Worked(ordered, cauldrons, recipes, bonus, totals, winners)


def score_game(
    seats: Sequence[SeatCards],
    *,
    last_card_seat: int | None = None,
    first_seat: int = 0,
    second_player_bonus: bool = False,
) -> GameScore:
    """Score every seat (G10), its recipes (G11) and the optional +2; name the winners.

    Raises ScoringError (with the rule id) for input that cannot come from a real game.
    """
    worked = _work_out_game(seats, last_card_seat, first_seat, second_player_bonus)
    scores = []
    for entry in worked.seats:
        cauldron = worked.cauldrons[entry.seat]
        scores.append(
            SeatScore(
                seat=entry.seat,
                colour=entry.colour,
                families=cauldron.families(),
                immuto_assignment=cauldron.assignment,
                ingredient_points=cauldron.points,
                recipes=tuple(RecipeScore(*r) for r in worked.recipes[entry.seat]),
                second_player_bonus=worked.bonus[entry.seat],
                total=worked.totals[entry.seat],
            )
        )
    return GameScore(tuple(scores), worked.winners)


def score_totals(
    seats: Sequence[SeatCards],
    *,
    last_card_seat: int | None = None,
    first_seat: int = 0,
    second_player_bonus: bool = False,
    validate: bool = True,
) -> tuple[dict[int, int], tuple[int, ...]]:
    """The same scoring as `score_game` without the breakdown: ({seat: total}, winners).

    For hot loops (self-play, benchmarks), where building the breakdown would dominate.
    `validate=False` skips the input checks, for cauldrons the rules engine itself built.
    """
    worked = _work_out_game(seats, last_card_seat, first_seat, second_player_bonus, validate)
    return worked.totals, worked.winners

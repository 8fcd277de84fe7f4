"""Names for people, the one owner of them (README "Names people read"): seats are
"Seat 1".."Seat 4" with their colour, cells "row R, column C" with R, C = 1..6 (top-left is
row 1, column 1), lines "row 1".."column 6", perimeter positions 1..20 clockwise from the
top-left corner; never a raw 0-based number or a raw card id (the wire keeps "r,c" 0-based,
seats 0..3, lines 0..11, positions 0..19)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.games.glastonbury.rules.actions import Action, Refill, Take
from engine.games.glastonbury.rules.board import SIZE, parse_cell
from engine.games.glastonbury.rules.cards import CARDS, CATALOGUE, Lang, card_label, family_name
from engine.games.glastonbury.rules.errors import RulesError

if TYPE_CHECKING:
    from engine.games.glastonbury.rules.scoring import FamilyScore, ReasonParams

_COLOUR_NAMES = {c["id"]: c["names"] for c in CATALOGUE["colours"]}
_SEAT_WORD = {"en": "Seat", "fr": "Place", "de": "Platz"}


def seat_name(seat: int, colour: str | None = None, lang: Lang = "en") -> str:
    """'Seat 1' for seat 0; 'Seat 1 (yellow)' with its colour."""
    name = f"{_SEAT_WORD[lang]} {seat + 1}"
    if colour in _COLOUR_NAMES:
        return f"{name} ({_COLOUR_NAMES[colour][lang]})"
    return name


def pad_label(seat: int, colour: str | None = None) -> str:
    """"Seat 2's pad" for seat 1 (with its colour: "Seat 2 (blue)'s pad")."""
    return f"{seat_name(seat, colour)}'s pad"


def cell_label(cell: int | str) -> str:
    """``"1,2"`` or 8 -> ``"row 2, column 3"``."""
    index = parse_cell(cell) if isinstance(cell, str) else cell
    return f"row {index // SIZE + 1}, column {index % SIZE + 1}"


def line_label(line: int) -> str:
    """Line 0 -> "row 1", line 6 -> "column 1" (lines 0-5 are rows, 6-11 columns)."""
    return f"row {line + 1}" if line < SIZE else f"column {line - SIZE + 1}"


def position_label(position: int) -> str:
    """Perimeter position 0 -> "position 1" (1..20 clockwise from the top-left corner)."""
    return f"position {position + 1}"


def place_label(where: str) -> str:
    """A place of the wire (``"r,c"``, ``"pad:<seat>"``, ``"pile"``) for people."""
    if where == "pile":
        return "the draw pile"
    if where.startswith("pad:") and where[4:].isdigit():
        return pad_label(int(where[4:]))
    try:
        return cell_label(where)
    except (ValueError, RulesError):
        return where


def card_name(card: str) -> str:
    """A card for people ("Bottles 3 (orange)", "Recipe A (orange)"); never a raw id."""
    if card in CARDS:
        return card_label(card)
    return recipe_name(card)  # recipe cards are in the box too; else "an unknown recipe"


def action_label(action: Action, card: str | None = None) -> str:
    """An action for people: "take Egg 2 (orange) from row 6, column 3", "keep the last card"
    (`card` is the card a take concerns, when the caller knows it)."""
    if isinstance(action, Take):
        cell = cell_label(action.cell)
        return f"take {card_name(card)} from {cell}" if card else f"take the card on {cell}"
    if isinstance(action, Refill):
        return f"refill the hole with {card_name(action.card)}"
    return {"declinatio": "use Declinatio", "pass": "pass (keep Declinatio for later)",
            "keep": "keep the last card", "discard": "discard the last card"}[action.TYPE]


_FAMILY_COLOUR = {f["id"]: f["colour"] for f in CATALOGUE["families"]}


def family_label(family: str) -> str:
    """A family with its colour: "Finger bones (red)" for red-a."""
    return f"{family_name(family)} ({_COLOUR_NAMES[_FAMILY_COLOUR[family]]['en']})"


def recipe_name(recipe: str) -> str:
    """A recipe card for people: "Recipe A (orange)", "Recipe B (Take the last card)"."""
    for entry in CATALOGUE["recipes"]["A"]:
        if entry["id"] == recipe:
            return f"Recipe A ({_COLOUR_NAMES[entry['colour']]['en']})"
    for entry in CATALOGUE["recipes"]["B"]:
        if entry["id"] == recipe:
            return f"Recipe B ({entry['names']['en']})"
    return "an unknown card"


# The dashboard's words for a family's points (dashboard/i18n/en.json, same keys; a test keeps
# them equal), so `cauldron score` explains a score the way the score page does.
SCORE_WORDS = {
    "family_cards#one": "{n} {family} card",
    "family_cards#other": "{n} {family} cards",
    "score_one": "minus its value {value} = {points}",
    "score_two": "two cards score 0",
    "score_doubled": "own colour, doubled: {points}",
    "score_bonus": "+ {bonus} for four cards: {points}",
    "immuto_counted#one": "{n} {immuto} counted as a 0",
    "immuto_counted#other": "{n} {immuto} counted as 0s",
    "extra_cards#one": "{n} more card adds nothing",
    "extra_cards#other": "{n} more cards add nothing",
}


def _counted(key: str, n: int, **params: object) -> str:
    return SCORE_WORDS[f"{key}#{'one' if n == 1 else 'other'}"].format(n=n, **params)


def family_how(family: FamilyScore) -> str:
    """How a family scored, in words: "3 Eggs cards: 1 + 3 + 4 = 8; own colour, doubled: 16"
    (the score page's familyHow in dashboard/static/scoring.js says the same)."""
    values = [CARDS[c].value for c in family.cards] + [0] * len(family.immutos)
    values = values[: family.counted]
    how = _counted("family_cards", family.counted, family=family_name(family.family)) + ": "
    if family.counted == 1:
        how += SCORE_WORDS["score_one"].format(value=values[0], points=family.base)
    elif family.counted == 2:
        how += SCORE_WORDS["score_two"]
    else:
        how += " + ".join(str(v) for v in values) + f" = {family.base}"
    points = family.base
    if family.doubled:
        points *= 2
        how += "; " + SCORE_WORDS["score_doubled"].format(points=points)
    if family.bonus:
        points += family.bonus
        how += "; " + SCORE_WORDS["score_bonus"].format(bonus=family.bonus, points=points)
    if family.immutos:
        immuto = CATALOGUE["immuto"]["names"]["en"]
        how += f" ({_counted('immuto_counted', len(family.immutos), immuto=immuto)})"
    extra = len(family.cards) + len(family.immutos) - family.counted
    if extra > 0:
        how += f" ({_counted('extra_cards', extra)})"
    return how


# Why a recipe scored (scoring.ReasonCode): the score page's words (dashboard/i18n/en.json,
# same keys; a test keeps them equal), so `cauldron score` and the page say the same.
REASON_WORDS = {
    "recipe_reason_most": "most {what}: {own} vs {other}",
    "recipe_reason_fewest": "fewest {what}: {own} vs {other}",
    "recipe_reason_most_alone": "most {what}: {own}, no other seat",
    "recipe_reason_fewest_alone": "fewest {what}: {own}, no other seat",
    "recipe_reason_tie_most": "tie for most {what}: {own} vs {other}",
    "recipe_reason_tie_fewest": "tie for fewest {what}: {own} vs {other}",
    "recipe_reason_not_most": "not the most {what}: {own} vs {other}",
    "recipe_reason_not_fewest": "not the fewest {what}: {own} vs {other}",
    "recipe_reason_no_cards": "no {colour} cards",
    "recipe_reason_last_card_own": "took the last card",
    "recipe_reason_last_card_other": "{seat} took the last card",
    "recipe_reason_last_card_unknown": "no last-card taker recorded",
    "recipe_what_colour": "{colour} cards",
    "recipe_what_cards": "ingredient cards (Immuto included)",
    "recipe_what_fours": "value-4 cards",
    "recipe_what_spells": "spell cards",
    "recipe_what_ones": "value-1 cards",
    "recipe_points#one": "{n} card × {rate} = {points}",
    "recipe_points#other": "{n} cards × {rate} = {points}",
}


def recipe_reason(code: str, params: ReasonParams, points: int = 0) -> str:
    """A recipe's reason in English: "most orange cards: 3 vs 2; 3 cards ×
    1 = 3", "Seat 2 (red) took the last card" (the score page's recipeReason says the same)."""
    colour = _COLOUR_NAMES[params.colour]["en"] if params.colour in _COLOUR_NAMES else ""
    what = REASON_WORDS[f"recipe_what_{params.measure}"].format(colour=colour) \
        if params.measure else ""
    seat = seat_name(params.seat, params.seat_colour) if params.seat is not None else ""
    text = REASON_WORDS[f"recipe_reason_{code}"].format(
        what=what, own=params.own, other=params.other, colour=colour, seat=seat)
    if params.rate is not None and params.own is not None:
        form = "one" if params.own == 1 else "other"
        text += "; " + REASON_WORDS[f"recipe_points#{form}"].format(
            n=params.own, rate=params.rate, points=points)
    return text

"""The greedy bot: the best immediate change of its own score, with denial as tie-break.

Every legal action gets a `Rating`:

- taking an ingredient or Immuto: the exact change of the bot's cauldron points
  (`score_cauldron`), minus a small cost when it spends an Accio use (G6);
- when own gains tie, denial decides: prefer a card an opponent would gain most from,
  a 1 of an opponent's own colour, or the card that would give an opponent a family of 3;
- Accio and Declinatio cards are worth a little (flexibility later); Vanesco is worth what
  the opponents lose from their top cards (G8); Perluceo is worth almost nothing (G9);
- at a corner it uses Declinatio only if the line it would reach offers a card worth it;
- the last card is kept when it adds points, discarded otherwise.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Final

from engine.games.glastonbury.bots.base import BotError, Observation
from engine.games.glastonbury.bots.evaluation import (
    COLOUR_OF,
    FAMILY_OF,
    IN_CAULDRON,
    INGREDIENT,
    SPELL_OF,
    card_gain,
    top_loss,
)
from engine.games.glastonbury.bots.texts import colour_name, label, text
from engine.games.glastonbury.rules.actions import Action, Discard, Keep, Pass, Take, UseDeclinatio
from engine.games.glastonbury.rules.board import FACED_LINE, LINES, PERIMETER
from engine.games.glastonbury.rules.cards import Lang
from engine.games.glastonbury.rules.game import Phase
from engine.games.glastonbury.rules.names import seat_name

ACCIO_USE_COST: Final = 2.5  # an Accio use is worth keeping for a better card
ACCIO_CARD_VALUE: Final = 2.0
DECLINATIO_CARD_VALUE: Final = 1.0
DECLINATIO_USE_COST: Final = 1.0
PERLUCEO_VALUE: Final = 0.1
SPELL_RECIPE_PENALTY: Final = 3.0  # holding B-fewest-spells: every spell card hurts


@dataclass(slots=True)
class Rating:
    action: Action
    value: float  # own gain in points (the greedy choice maximises it)
    denial: float = 0.0  # tie-break: what taking it keeps from opponents
    reasons: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    card: str | None = None
    cell: int | None = None

    @property
    def key(self) -> tuple[float, float]:
        return (round(self.value, 6), self.denial)


def _denial(
    observation: Observation, card: str
) -> tuple[float, list[tuple[str, dict[str, object]]]]:
    """How much taking `card` keeps from the opponents, and why."""
    if card not in IN_CAULDRON:
        return 0.0, []
    best = 0.0
    reasons: list[tuple[str, dict[str, object]]] = []
    info = INGREDIENT.get(card)
    for seat in range(observation.players):
        if seat == observation.seat:
            continue
        colour = observation.config.colours[seat]
        stack = observation.known_stack(seat)
        gain = card_gain(colour, stack, card)
        score = float(max(gain, 0))
        why: list[tuple[str, dict[str, object]]] = []
        if gain > 0:
            why.append(("deny", {"colour": colour, "points": gain}))
        if info is not None and info[1] == 1 and COLOUR_OF[card] == colour:
            score += 2.0
            why = [("deny_one", {"colour": colour})]
        if info is not None:
            family = FAMILY_OF[card]
            same = sum(1 for c in stack if FAMILY_OF.get(c) == family)
            if same == 2:
                score += 3.0
        if score > best:
            best, reasons = score, why
    return best, reasons


def _take_rating(observation: Observation, action: Take, faced: frozenset[int]) -> Rating:
    card = observation.grid_card(action.cell)
    assert card is not None
    colour = observation.colour
    own = observation.own_stack
    accio = observation.phase is Phase.TAKE and action.cell not in faced
    rating = Rating(action, 0.0, card=card, cell=action.cell)
    spell = SPELL_OF.get(card)
    if spell is None:
        gain = card_gain(colour, own, card)
        rating.value = float(gain)
        family = FAMILY_OF.get(card)
        if family is not None:
            count = 1 + sum(1 for c in own if FAMILY_OF.get(c) == family)
            rating.reasons.append(("gain_family", {"card": card, "count": count, "gain": gain}))
        else:
            rating.reasons.append(("gain", {"card": card, "gain": gain}))
        rating.denial, why = _denial(observation, card)
        rating.reasons.extend(why)
    elif spell == "vanesco":
        losses = [
            top_loss(observation.config.colours[s], observation.known_stack(s))
            for s in range(observation.players)
            if s != observation.seat
        ]
        loss = sum(losses) / len(losses)
        rating.value = loss
        rating.reasons.append(("vanesco", {"points": sum(losses)}))
    elif spell == "perluceo":
        rating.value = PERLUCEO_VALUE
        rating.reasons.append(("perluceo", {}))
    elif spell == "accio":
        rating.value = ACCIO_CARD_VALUE
        rating.reasons.append(("accio", {}))
    else:
        rating.value = DECLINATIO_CARD_VALUE
        rating.reasons.append(("declinatio", {}))
    if spell is not None and "B-fewest-spells" in observation.recipes:
        rating.value -= SPELL_RECIPE_PENALTY
    if accio:
        rating.value -= ACCIO_USE_COST
        rating.reasons.append(("with_accio", {}))
    return rating


def declinatio_target(observation: Observation) -> tuple[str | None, int]:
    """The best card (and its gain) in the line a Declinatio would reach."""
    shadow = observation.shadow
    position = (shadow.pawns[observation.seat] + shadow.move_value) % PERIMETER
    line = FACED_LINE[position]
    best: tuple[str | None, int] = (None, -(10**6))
    if line is None:
        return best
    for cell in LINES[line]:
        card = shadow.grid[cell]
        if card is None or SPELL_OF.get(card) in ("vanesco", "perluceo"):
            continue
        gain = card_gain(observation.colour, observation.own_stack, card)
        if SPELL_OF.get(card) == "accio":
            gain = int(ACCIO_CARD_VALUE)
        if gain > best[1]:
            best = (card, gain)
    return best


def rate_actions(observation: Observation) -> list[Rating]:
    """A rating for every legal action of the observing seat (empty if not its turn)."""
    shadow = observation.shadow
    line = FACED_LINE[shadow.pawns[observation.seat]]
    faced = frozenset(LINES[line]) if line is not None else frozenset()
    ratings: list[Rating] = []
    for action in observation.legal:
        if isinstance(action, Take):
            ratings.append(_take_rating(observation, action, faced))
        elif isinstance(action, UseDeclinatio | Pass):
            card, gain = declinatio_target(observation)
            if isinstance(action, UseDeclinatio):
                value = gain - DECLINATIO_USE_COST if card is not None else -100.0
                reasons: list[tuple[str, dict[str, object]]] = (
                    [("use_declinatio", {"card": card, "gain": gain})] if card else []
                )
                ratings.append(Rating(action, value, reasons=reasons, card=card))
            else:
                ratings.append(Rating(action, 0.0, reasons=[("pass", {})]))
        elif isinstance(action, Keep | Discard):
            assert shadow.last_card is not None
            card = shadow.last_card[1]
            gain = card_gain(observation.colour, observation.own_stack, card)
            keep_value = float(gain)
            if card not in IN_CAULDRON and "B-fewest-spells" in observation.recipes:
                keep_value -= SPELL_RECIPE_PENALTY
            if isinstance(action, Keep):
                ratings.append(
                    Rating(action, keep_value, reasons=[("keep", {"gain": gain})], card=card)
                )
            else:
                ratings.append(
                    Rating(action, 0.0, reasons=[("discard", {"gain": gain})], card=card)
                )
        else:  # a Refill is the table's move, never a seat's choice
            ratings.append(Rating(action, -1000.0))
    return ratings


def reason_text(rating: Rating, lang: Lang = "en") -> str:
    parts = []
    for key, params in rating.reasons:
        shown = dict(params)
        if isinstance(shown.get("card"), str):
            shown["card"] = label(str(shown["card"]), lang)
        if isinstance(shown.get("colour"), str):
            shown["colour"] = colour_name(str(shown["colour"]), lang)
        parts.append(text(key, lang, **shown))
    return " ".join(parts) if parts else str(rating.action)


class GreedyBot:
    name = "greedy"

    def choose(self, observation: Observation, rng: random.Random) -> Action:
        ratings = rate_actions(observation)
        if not ratings:
            raise BotError(f"{seat_name(observation.seat)} has nothing to do now")
        best = max(r.key for r in ratings)
        choices = [r.action for r in ratings if r.key == best]
        return choices[rng.randrange(len(choices))] if len(choices) > 1 else choices[0]

    def explain(self, observation: Observation, action: Action, lang: Lang = "en") -> str:
        for rating in rate_actions(observation):
            if rating.action == action:
                return reason_text(rating, lang)
        return str(action)

"""Sensing: what a chip tapped on a seat's draw pad means (enrolling the chips by kind, and
their spares, is the hub's: `hub.enroll`).

Pure like the rest of the package: a tap is `(seat, chip)` (the hub's tag map turned the
sticker's UID into the physical chip id `<kind>-<nn>`, Q2), and `tap()` answers with the
`Action` to apply, a `Refusal` naming the rule and what to do, or "taken into the basket"
(a purchase waits for its second chip or the phone's "done"). The refusals carry a `code`
and parameters the pages word in en/fr/de (`i18n/*.json`, `q_refuse_<code>`).

What a tap means depends on what the seat is asked (RULES-QUACKS.md):
- brewing, a blue offer, FB7, FP8, FP13 draws: the chip is drawn (`Draw(seat, chip)`), and
  it must come from that seat's bag (Q12);
- its turn to buy (E, Q22): the chip goes from the supply into its bag, checked at the tap
  for price, colour, unlock round and supply; the purchase (`Buy`) is made when no other
  chip fits (2 chips, or no coins left for another colour), or when the phone says done;
- anything else: refused, with what the table waits for.

Two phone buttons complete the sensing (`untapped_draw`, `undo_last_draw`): "I drew a
chip I did not tap" places a chip of the kind the player names (a *stand-in*: the engine's
id may not be the physical chip's), and "undo my last draw" takes that seat's last draw
back without touching the other seats' brewing (N1: they are independent).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from engine.games.quacks.rules.actions import Action, Buy, Draw
from engine.games.quacks.rules.catalogue import colour_of, kind_of
from engine.games.quacks.rules.errors import IllegalAction
from engine.games.quacks.rules.game import Game, Phase
from engine.games.quacks.rules.log import replay, restart
from engine.games.quacks.rules.names import chip_name, colour_name

# English wording of each refusal code; the pages word the same codes in their language.
# fmt: off
WORDS: dict[str, str] = {
    "unknown_chip": "{chip} is not a chip of this box: enrol its tag (host page)",
    "chip_in_supply": "{chip_name} is from the supply, not from Seat {n}'s bag: put it back "
                      "on the supply",
    "chip_in_pot": "{chip_name} is already in Seat {owner_n}'s pot: draw a new chip from the bag",
    "chip_in_hand": "{chip_name} is already drawn (in Seat {owner_n}'s hand): lay it down, "
                    "then draw from the bag",
    "chip_in_other_bag": "{chip_name} belongs in Seat {owner_n}'s bag, not Seat {n}'s: give it "
                         "back to Seat {owner_n}",
    "not_now": "Seat {n} draws nothing now ({phase}): put the chip back in the bag",
    "must_answer": "Seat {n} must first answer on the phone ({question})",
    "stopped": "Seat {n} has stopped this round: put the chip back in the bag",
    "exploded": "Seat {n}'s pot has exploded: put the chip back in the bag",
    "wait_turn": "Seat {buyer_n} buys now; Seat {n} buys in turn: put the chip back",
    "not_for_sale": "{chip_name} is not in the supply ({where}): only supply chips are bought",
    "white_not_sold": "Cherry bombs are never bought: put it back on the supply",
    "colour_locked": "{colour} can be bought from round {first}, this is round {round}",
    "book_not_in_play": "{chip_name} is not sold with the books on the table",
    "same_colour": "Two chips bought must be of different colours: put {chip_name} back",
    "over_budget": "{chip_name} costs {price} coins; Seat {n} has {left} coins left of {coins}: "
                   "put it back",
    "basket_full": "At most 2 chips are bought: put {chip_name} back",
    "not_in_bag": "Seat {n}'s bag holds no {kind_name}",
    "nothing_to_undo": "Seat {n} has no draw to undo this round",
    "too_late": "Too late to undo: the round's brewing is over",
    "not_drawing": "Seat {n} draws nothing now",
    "nothing_to_buy": "Seat {n} is not buying now",
}
# fmt: on

# The rule each code breaks: tests and messages cite "Q12", never a bare code.
RULES: dict[str, str] = {
    "unknown_chip": "Q2", "chip_in_supply": "Q12", "chip_in_pot": "Q12", "chip_in_hand": "Q12",
    "chip_in_other_bag": "Q12", "not_now": "Q9", "must_answer": "Q15", "stopped": "Q12",
    "exploded": "Q13", "wait_turn": "Q22", "not_for_sale": "Q28", "white_not_sold": "Q22",
    "colour_locked": "Q22", "book_not_in_play": "Q3", "same_colour": "Q22", "over_budget": "Q22",
    "basket_full": "Q22", "not_in_bag": "Q12", "nothing_to_undo": "Q12", "too_late": "Q16",
    "not_drawing": "Q12", "nothing_to_buy": "Q22",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Refusal:
    """A tap or a button the table cannot take: the game is unchanged."""

    code: str
    seat: int
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def rule(self) -> str:
        return RULES[self.code]

    def get(self, key: str) -> Any:
        return dict(self.params).get(key)

    def message(self) -> str:
        """The English words, for logs and the terminal (the pages word `code` themselves)."""
        p = dict(self.params)
        p.setdefault("n", self.seat + 1)
        if "kind" in p:
            p["chip_name"] = p["kind_name"] = chip_name(p["kind"])
        if "colour" in p:
            p["colour"] = colour_name(p["colour"])
        return f"{WORDS[self.code].format(**p)} ({self.rule})"

    def to_wire(self) -> dict[str, Any]:
        return {"code": self.code, "rule": self.rule, "seat": self.seat,
                "params": dict(self.params), "message": self.message()}  # fmt: skip


def refusal(code: str, seat: int, **params: Any) -> Refusal:
    assert code in WORDS, code
    return Refusal(code, seat, tuple(sorted(params.items())))


@dataclass(frozen=True, slots=True)
class PadState:
    """What the pads remember between taps (the game itself is the engine's): this round's
    stand-ins (chip ids placed for a draw nobody tapped) and the chips tapped for a purchase
    not yet made. Both belong to one round (`round`) and are dropped when it changes."""

    round: int = 0
    stand_ins: tuple[tuple[int, str], ...] = ()  # (seat, chip id the engine placed)
    basket: tuple[tuple[int, str], ...] = ()  # (seat, chip tapped for E)

    def current(self, game: Game) -> PadState:
        if self.round == game.round:
            return self
        return PadState(round=game.round)

    def basket_of(self, seat: int) -> tuple[str, ...]:
        return tuple(c for s, c in self.basket if s == seat)

    def stand_ins_of(self, seat: int) -> frozenset[str]:
        return frozenset(c for s, c in self.stand_ins if s == seat)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The answer to a tap or a phone button: `action` to apply to the game (then keep
    `state`), or `refusal`; neither means the chip went into the seat's basket."""

    state: PadState
    action: Action | None = None
    refusal: Refusal | None = None
    basket: tuple[str, ...] = ()


def _names(chip: str) -> dict[str, Any]:
    return {"chip": chip, "kind": kind_of(chip)}


def where_refusal(game: Game, seat: int, chip: str) -> Refusal | None:
    """Why `chip` cannot be drawn by `seat` (Q12): from the supply, a pot, a hand or another
    bag; None when it is in the seat's own bag."""
    where = game.where(chip)
    if where == f"bag:{seat}":
        return None
    if where == "unknown":
        return refusal("unknown_chip", seat, chip=chip)
    if where == "supply":
        return refusal("chip_in_supply", seat, **_names(chip))
    zone, owner = where.split(":")
    code = {"pot": "chip_in_pot", "hand": "chip_in_hand", "bag": "chip_in_other_bag"}[zone]
    return refusal(code, seat, owner=int(owner), owner_n=int(owner) + 1, **_names(chip))


def tap(game: Game, state: PadState, seat: int, chip: str) -> Outcome:
    """A chip tapped on `seat`'s draw pad."""
    state = state.current(game)
    ask = game.asks.get(seat)
    if ask is not None and ask.kind == "buy":
        return _tap_buy(game, state, seat, chip)
    if Draw(seat) in game.legal_actions(seat):
        return _tap_draw(game, state, seat, chip)
    return Outcome(state, refusal=_not_drawing(game, state, seat))


def _not_drawing(game: Game, state: PadState, seat: int) -> Refusal:
    p = game.players[seat]
    if game.phase is Phase.BUY:
        buyer = next((s for s, a in game.asks.items() if a.kind == "buy"), None)
        if buyer is not None and buyer != seat:
            return refusal("wait_turn", seat, buyer=buyer, buyer_n=buyer + 1)
    if p.question is not None and p.to_draw == 0:
        return refusal("must_answer", seat, question=p.question)
    if game.phase is Phase.BREW and p.status in ("stopped", "exploded"):
        return refusal(p.status, seat)
    return refusal("not_now", seat, phase=game.phase.value)


def _tap_draw(game: Game, state: PadState, seat: int, chip: str) -> Outcome:
    wrong = where_refusal(game, seat, chip)
    if wrong is None:
        return Outcome(state, action=Draw(seat, chip))
    # A stand-in's physical chip is still in the bag: this tap is a same-kind chip (E19).
    other = _lowest_in_bag(game, seat, kind_of(chip))
    if chip in state.stand_ins_of(seat) and wrong.get("owner") == seat and other is not None:
        stand_ins = [(s, c) for s, c in state.stand_ins if (s, c) != (seat, chip)]
        return Outcome(
            replace(state, stand_ins=(*stand_ins, (seat, other))), action=Draw(seat, other)
        )
    return Outcome(state, refusal=wrong)


def _lowest_in_bag(game: Game, seat: int, kind: str) -> str | None:
    chips = sorted(c for c in game.players[seat].bag if kind_of(c) == kind)
    return chips[0] if chips else None


def coins_of(game: Game, seat: int) -> int:
    return game.cat.track[game.scoring_space(seat)].coins


def _tap_buy(game: Game, state: PadState, seat: int, chip: str) -> Outcome:
    basket = state.basket_of(seat)
    wrong = buy_refusal(game, seat, basket, chip)
    if wrong is not None:
        return Outcome(state, refusal=wrong, basket=basket)
    basket = (*basket, chip)
    state = replace(state, basket=(*state.basket, (seat, chip)))
    if len(basket) == 2 or not _can_add(game, seat, basket):
        return _buy(state, seat, basket)
    return Outcome(state, basket=basket)


def buy_refusal(game: Game, seat: int, basket: tuple[str, ...], chip: str) -> Refusal | None:
    """Why `chip` cannot join `basket` in `seat`'s purchase (Q22, Q28), or None."""
    kind = kind_of(chip)
    if kind not in game.cat.counts:
        return refusal("unknown_chip", seat, chip=chip)
    where = game.where(chip)
    if where != "supply":
        return refusal("not_for_sale", seat, where=where, **_names(chip))
    colour = colour_of(kind)
    first = game.cat.unlock[colour]
    if first is None:
        return refusal("white_not_sold", seat, **_names(chip))
    if game.round < first:
        return refusal("colour_locked", seat, colour=colour, first=first, round=game.round,
                       **_names(chip))  # fmt: skip
    if kind not in game.cat.prices[game.config.book(colour)]:
        return refusal("book_not_in_play", seat, **_names(chip))
    if len(basket) >= 2:
        return refusal("basket_full", seat, **_names(chip))
    if any(colour_of(c) == colour for c in basket):
        return refusal("same_colour", seat, **_names(chip))
    coins = coins_of(game, seat)
    left = coins - sum(game.price(kind_of(c)) for c in basket)
    if game.price(kind) > left:
        return refusal("over_budget", seat, price=game.price(kind), left=left, coins=coins,
                       **_names(chip))  # fmt: skip
    return None


def _can_add(game: Game, seat: int, basket: tuple[str, ...]) -> bool:
    """Does any chip of the supply still fit beside `basket`?"""
    return any(
        pile and buy_refusal(game, seat, basket, pile[0]) is None for pile in game.supply.values()
    )


def _buy(state: PadState, seat: int, basket: tuple[str, ...]) -> Outcome:
    rest = tuple((s, c) for s, c in state.basket if s != seat)
    return Outcome(replace(state, basket=rest), action=Buy(seat, basket), basket=basket)


def finish_buying(game: Game, state: PadState, seat: int) -> Outcome:
    """The phone's "done buying": buy what was tapped (nothing is allowed, D17)."""
    state = state.current(game)
    ask = game.asks.get(seat)
    if ask is None or ask.kind != "buy":
        return Outcome(state, refusal=refusal("nothing_to_buy", seat))
    return _buy(state, seat, state.basket_of(seat))


def untapped_draw(game: Game, state: PadState, seat: int, kind: str) -> Outcome:
    """The phone's "I drew a chip I did not tap": a chip of `kind` from the seat's bag is
    placed (the lowest serial, N16); it is a stand-in until the real chip is tapped (E19)."""
    state = state.current(game)
    if Draw(seat) not in game.legal_actions(seat):
        return Outcome(state, refusal=_not_drawing(game, state, seat))
    chip = _lowest_in_bag(game, seat, kind)
    if chip is None:
        return Outcome(state, refusal=refusal("not_in_bag", seat, kind=kind))
    return Outcome(
        replace(state, stand_ins=(*state.stand_ins, (seat, chip))), action=Draw(seat, chip)
    )


def undo_last_draw(game: Game, state: PadState, seat: int) -> tuple[Game, PadState] | Refusal:
    """The phone's "undo my last draw": the game without that seat's last draw and what the
    seat did after it, the other seats' brewing kept (E20). Only while the round brews."""
    if game.phase is not Phase.BREW:
        return refusal("too_late", seat)
    since = _round_start(game)
    mine = [i for i in range(since, len(game.log))
            if game.log[i].seat == seat and isinstance(game.log[i], Draw)]  # fmt: skip
    if not mine:
        return refusal("nothing_to_undo", seat)
    cut = mine[-1]
    actions = game.log[:cut] + [a for a in game.log[cut + 1 :] if a.seat != seat]
    try:
        back = replay(game.config, list(game.start_deck), actions, game.cat)
    except IllegalAction:
        return refusal("too_late", seat)
    back.rng.setstate(game.rng.getstate())  # a simulation goes on from the same stream
    undone = game.log[cut]
    assert isinstance(undone, Draw) and undone.chip is not None
    state = state.current(game)
    stand_ins = tuple((s, c) for s, c in state.stand_ins if (s, c) != (seat, undone.chip))
    return back, replace(state, stand_ins=stand_ins)


def _round_start(game: Game) -> int:
    """The index in the log of this round's first brewing action (Draw/Stop/flask...)."""
    probe = restart(game)
    start = 0
    for i, action in enumerate(game.log):
        if probe.round != game.round or probe.phase is not Phase.BREW:
            start = i + 1
        probe.apply(action)
    return start

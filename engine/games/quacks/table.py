"""One table's Quacks game behind the seam: the pure game, what the pads remember, and what
each input means (the engine service's per-table interpreter, `GameDefinition.interpreter`).

Inputs are of three kinds, all answered with a `TableOutcome` (the events, or a refusal
naming the rule and a `code` the pages word in en/fr/de; a refusal never changes the game):
- `tap(seat, chip)`: a chip tapped on a seat's draw pad (`engine.games.quacks.rules.sensing`);
- `play(seat, verb, args)`: the phone's buttons (stop, flask, answers, choices, the die,
  "done buying", rubies, "I drew a chip I did not tap", "undo my last draw"), and on the
  virtual table `draw`, the virtual bag: the table draws at random (the game's seeded rng)
  and the player takes that chip;
- `undo()`: the host page's undo of the last draw or choice (E16).

The public view adds to the game's (`engine.games.quacks.rules.observer`) the evaluation so
far, step by step (this round's public events), and the chips each seat has tapped for its
purchase.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.games.quacks.rules import (
    Action,
    Answer,
    Buy,
    Choose,
    ChooseOffer,
    Draw,
    Game,
    IllegalAction,
    InvalidWire,
    QuacksConfig,
    RollDie,
    Spend,
    Stop,
    UseFlask,
    action_from_wire,
)
from engine.games.quacks.rules.events import Event, event
from engine.games.quacks.rules.log import log_to_wire, replay_wire, restart, restore_rng, undo
from engine.games.quacks.rules.log import rng_state as _rng_state
from engine.games.quacks.rules.observer import public_view, seat_view
from engine.games.quacks.rules.sensing import (
    Outcome,
    PadState,
    Refusal,
    finish_buying,
    tap,
    undo_last_draw,
    untapped_draw,
)

# Events that make "the evaluation step by step" on the big screen (public ones only).
EVALUATION = frozenset({
    "step", "die_rolled", "green", "black", "purple", "rubies", "vp", "droplet", "reward_chosen",
    "bought", "flask_refilled", "chip_gained", "supply_empty", "auto_choice", "exploded",
    "stopped", "rat_stone", "fortune_revealed", "round_started", "book_out", "less_is_more",
    "chip_removed", "game_over",
})  # fmt: skip

PHONE_VERBS = (
    "draw", "stop", "flask", "answer", "offer", "choose", "roll", "buy", "done_buying",
    "spend", "untapped", "undo_draw",
)  # fmt: skip


@dataclass(frozen=True)
class TableRefusal:
    """A refusal for the wire: the rule, a stable `code`, its parameters and English words."""

    code: str
    rule: str
    message: str
    seat: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {"code": self.code, "rule": self.rule, "message": self.message,
                "seat": self.seat, "params": dict(self.params)}  # fmt: skip


@dataclass(frozen=True)
class TableOutcome:
    events: tuple[Event, ...] = ()
    refusal: TableRefusal | None = None
    basket: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.refusal is None


def _from_sensing(r: Refusal) -> TableRefusal:
    return TableRefusal(r.code, r.rule, r.message(), r.seat, dict(r.params))


def _from_engine(exc: IllegalAction | InvalidWire, seat: int | None) -> TableRefusal:
    return TableRefusal("illegal" if isinstance(exc, IllegalAction) else "bad_action",
                        exc.rule, exc.message, seat)  # fmt: skip


class QuacksTable:
    """A table playing Quacks: `game` (the pure state), `pads`, this round's public events."""

    def __init__(
        self, config: QuacksConfig, rng: random.Random, show_odds: bool = True,
        bag_visible: bool = True, game: Game | None = None,
    ) -> None:  # fmt: skip
        self.game = game if game is not None else Game.new(config, rng)
        self.show_odds = show_odds
        self.bag_visible = bag_visible
        self.pads = PadState(round=self.game.round)
        self.round_events: list[Event] = []
        self._replace(self.game)

    # ---------------------------------------------------------------- inputs

    def tap(self, seat: int, chip: str) -> TableOutcome:
        """A chip tapped on `seat`'s draw pad."""
        if not 0 <= seat < self.game.config.players:
            return TableOutcome(refusal=TableRefusal(
                "no_seat", "Q8", f"there is no seat {seat + 1} at this table", seat))  # fmt: skip
        return self._outcome(tap(self.game, self.pads, seat, chip))

    def pad(self, seat: int, chip: str | None, placed: bool = True) -> TableOutcome:
        """A hub event on `seat`'s draw pad: a tag laid (`placed`) is a tap of `chip`, the
        tag map's physical chip id, or None for a tag not enrolled (E22); a tag lifted off
        the pad means nothing (E22: the chip goes on into the pot by hand)."""
        if not placed:
            return TableOutcome()
        if chip is None:
            words = (
                "a tag that is not enrolled: enrol it from the host page (by kind, or as a spare)"
            )
            return TableOutcome(refusal=TableRefusal("unknown_tag", "Q2", words, seat))
        return self.tap(seat, chip)

    def play(self, seat: int, verb: str, args: Mapping[str, Any] | None = None) -> TableOutcome:
        """A phone button (or a bot's move) of `seat`; `PHONE_VERBS` lists them."""
        args = dict(args or {})
        if not 0 <= seat < self.game.config.players:
            return TableOutcome(refusal=TableRefusal(
                "no_seat", "Q8", f"there is no seat {seat + 1} at this table", seat))  # fmt: skip
        try:
            if verb == "draw":  # the virtual bag: the table draws, the player takes it
                return self._apply(Draw(seat))
            if verb == "untapped":
                return self._outcome(untapped_draw(self.game, self.pads, seat, str(args["kind"])))
            if verb == "done_buying":
                return self._outcome(finish_buying(self.game, self.pads, seat))
            if verb == "undo_draw":
                return self._undo_draw(seat)
            action = self._action(seat, verb, args)
        except (KeyError, TypeError, ValueError) as exc:
            return TableOutcome(refusal=TableRefusal(
                "bad_args", "Q29", f"{verb}: missing or bad argument {exc}", seat))  # fmt: skip
        if action is None:
            words = f"no phone button {verb!r}; one of {PHONE_VERBS}"
            return TableOutcome(refusal=TableRefusal("unknown_verb", "Q29", words, seat))
        return self._apply(action)

    def apply_wire(self, data: Mapping[str, Any]) -> TableOutcome:
        """An action in the core's wire form (`rules.actions.to_wire`): the bots'."""
        try:
            action = action_from_wire(dict(data))
        except InvalidWire as exc:
            return TableOutcome(refusal=_from_engine(exc, None))
        return self._apply(action)

    def undo(self, count: int = 1) -> TableOutcome:
        """The host's undo: the last `count` actions of the log (E16)."""
        if not self.game.log:
            return TableOutcome(refusal=TableRefusal("nothing_to_undo", "Q29", "nothing to undo"))
        back = undo(self.game, min(count, len(self.game.log)))
        self._replace(back)
        return TableOutcome()

    # ---------------------------------------------------------------- persistence

    def observed(self) -> dict[str, Any]:
        """Everything to rebuild this table after a restart (JSON): the game's log (chance
        resolved, E16), the switches, and what the pads remember this round."""
        pads = self.pads.current(self.game)
        return {
            "log": log_to_wire(self.game),
            "show_odds": self.show_odds,
            "bag_visible": self.bag_visible,
            "rng": _rng_state(self.game),
            "pads": {"round": pads.round, "stand_ins": [list(p) for p in pads.stand_ins],
                     "basket": [list(p) for p in pads.basket]},
        }  # fmt: skip

    @classmethod
    def from_observed(cls, data: Mapping[str, Any]) -> QuacksTable:
        """The table `observed()` described; `InvalidWire`/`InvalidLog` for a bad one."""
        game = replay_wire(data["log"])
        restore_rng(game, data["rng"])
        table = cls(game.config, random.Random(), bool(data["show_odds"]),
                    bool(data["bag_visible"]), game=game)  # fmt: skip
        pads = data["pads"]
        table.pads = PadState(
            round=int(pads["round"]),
            stand_ins=tuple((int(s), str(c)) for s, c in pads["stand_ins"]),
            basket=tuple((int(s), str(c)) for s, c in pads["basket"]),
        ).current(game)
        return table

    # ---------------------------------------------------------------- views

    def public_view(self) -> dict[str, Any]:
        view = public_view(self.game, self.show_odds)
        self._board(view)
        view["evaluation"] = [e.to_wire() for e in self.round_events]
        view["baskets"] = {str(s): list(self.pads.current(self.game).basket_of(s))
                           for s in range(self.game.config.players)}  # fmt: skip
        return view

    def seat_view(self, seat: int) -> dict[str, Any]:
        view = seat_view(self.game, seat, self.show_odds, self.bag_visible)
        self._board(view)
        view["evaluation"] = [e.to_wire() for e in self.round_events]
        view["basket"] = list(self.pads.current(self.game).basket_of(seat))
        view["stand_ins"] = sorted(self.pads.current(self.game).stand_ins_of(seat))
        return view

    # ---------------------------------------------------------------- inside

    def _board(self, view: dict[str, Any]) -> None:
        """What the pages draw the boards with (the catalogue's pot track, rat tails, the
        cards' kinds) and the memory-aid switch."""
        cat = self.game.cat
        view["show_odds"] = self.show_odds
        view["track"] = [{"coins": s.coins, "vp": s.vp, "ruby": s.ruby} for s in cat.track]
        view["rat_tails_after"] = list(cat.rat_tails_after)
        view["cards"] = {c.id: c.kind for c in cat.fortune}

    def _action(self, seat: int, verb: str, args: dict[str, Any]) -> Action | None:
        if verb == "stop":
            return Stop(seat)
        if verb == "flask":
            return UseFlask(seat)
        if verb == "answer":
            return Answer(seat, str(args["question"]), bool(args["yes"]))
        if verb == "offer":
            chip = args.get("chip")
            return ChooseOffer(seat, None if chip is None else str(chip))
        if verb == "choose":
            return Choose(seat, str(args["option"]))
        if verb == "roll":
            face = args.get("face")
            return RollDie(seat, None if face is None else int(face))
        if verb == "buy":
            return Buy(seat, tuple(str(c) for c in args.get("chips", ())))
        if verb == "spend":
            return Spend(seat, droplet=int(args.get("droplet", 0)),
                         refill=bool(args.get("refill", False)), vp=int(args.get("vp", 0)),
                         coins_vp=int(args.get("coins_vp", 0)))  # fmt: skip
        return None

    def _apply(self, action: Action) -> TableOutcome:
        try:
            events = self.game.apply(action)
        except IllegalAction as exc:
            return TableOutcome(refusal=_from_engine(exc, action.seat))
        self.pads = self.pads.current(self.game)
        self._note(events)
        return TableOutcome(events=tuple(events))

    def _outcome(self, outcome: Outcome) -> TableOutcome:
        if outcome.refusal is not None:
            return TableOutcome(refusal=_from_sensing(outcome.refusal), basket=outcome.basket)
        if outcome.action is None:  # a chip into the basket: nothing happened to the game
            self.pads = outcome.state
            return TableOutcome(basket=outcome.basket)
        before = self.pads
        self.pads = outcome.state
        result = self._apply(outcome.action)
        if not result.ok:
            self.pads = before
        return result

    def _undo_draw(self, seat: int) -> TableOutcome:
        back = undo_last_draw(self.game, self.pads, seat)
        if isinstance(back, Refusal):
            return TableOutcome(refusal=_from_sensing(back))
        game, pads = back
        self._replace(game)
        self.pads = pads
        return TableOutcome()

    def _replace(self, game: Game) -> None:
        """A game from the log (undo): this round's events are rebuilt by replaying it."""
        self.game = game
        self.pads = self.pads.current(game)
        probe = restart(game)
        self.round_events = []
        # The first round's start is not returned by `Game()`: said here.
        self._note([event("round_started", None, round=1, start_player=probe.start_player)])
        if probe.card is not None:
            self._note([event("fortune_revealed", None, card=probe.card)])
        for action in game.log:
            self._note(probe.apply(action))

    def _note(self, events: list[Event]) -> None:
        for e in events:
            if e.private or e.code not in EVALUATION:
                continue
            if e.code == "round_started":
                self.round_events = []
            self.round_events.append(e)

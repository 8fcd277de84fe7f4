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
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from engine.games.base import (
    Changes,
    Followed,
    Lang,
    Refused,
    Sensed,
    TableStatus,
)
from engine.games.base import Outcome as TableOutcomeLike
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
    to_wire,
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
from engine.games.quacks.scoring import QuacksScores, breakdown

if TYPE_CHECKING:
    from engine.wire.api import NewGameBase, PlayArgs

# Events that make "the evaluation step by step" on the big screen (public ones only).
EVALUATION = frozenset({
    "step", "die_rolled", "green", "black", "purple", "rubies", "vp", "droplet", "reward_chosen",
    "bought", "flask_refilled", "chip_gained", "supply_empty", "auto_choice", "exploded",
    "stopped", "rat_stone", "fortune_revealed", "round_started", "book_out", "less_is_more",
    "chip_removed", "game_over",
})  # fmt: skip

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

    def pad(self, seat: int, chip: str | None, placed: bool = True, *, uid: str | None = None,
            retired: bool = False) -> TableOutcome:
        """A hub event on `seat`'s draw pad: a tag laid (`placed`) is a tap of `chip`, the
        tag map's physical chip id, or None for a tag not enrolled (E22; `uid`, and
        `retired`: a tag a spare replaced); a tag lifted off the pad means nothing (E22: the
        chip goes on into the pot by hand)."""
        if not placed:
            return TableOutcome()
        if chip is None:
            params = {"pad": seat, **({"uid": uid} if uid else {})}
            if retired:  # its chip has a new tag: this one is put aside, never enrolled
                words = f"tag {uid} is retired (a spare replaced it): put it aside"
                return TableOutcome(refusal=TableRefusal("retired_tag", "Q2", words, seat,
                                                         params))
            words = (
                "a tag that is not enrolled: enrol it from the host page (by kind, or as a spare)"
            )
            return TableOutcome(refusal=TableRefusal("unknown_tag", "Q2", words, seat, params))
        return self.tap(seat, chip)

    def play(self, seat: int, verb: str, args: Mapping[str, Any] | None = None) -> TableOutcome:
        """A phone button (or a bot's move) of `seat`, by name: `MOVES` lists them."""
        try:
            move = parse_move(verb, args)
        except MoveError as exc:
            return TableOutcome(refusal=TableRefusal(exc.code, "Q29", str(exc), seat))
        return self.move(seat, move)

    def move(self, seat: int, move: Move) -> TableOutcome:
        """A phone button's move, its arguments checked (`parse_move`)."""
        if not 0 <= seat < self.game.config.players:
            return TableOutcome(refusal=TableRefusal(
                "no_seat", "Q8", f"there is no seat {seat + 1} at this table", seat))  # fmt: skip
        return move.run(self, seat)

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
        cards' kinds), the memory-aid switch, and the breakdown so far (final once over)."""
        cat = self.game.cat
        view["over"] = self.game.is_over()
        view["scores"] = breakdown(self.game).model_dump(mode="json")
        view["show_odds"] = self.show_odds
        view["track"] = [{"coins": s.coins, "vp": s.vp, "ruby": s.ruby} for s in cat.track]
        view["rat_tails_after"] = list(cat.rat_tails_after)
        view["cards"] = {c.id: c.kind for c in cat.fortune}

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


# ---------------------------------------------------------------- the engine service's side


class Move(BaseModel):
    """A phone button's arguments (``cmd/play``'s ``args``): strict, no unknown key. Each
    button's model is the one description of it: it checks the arguments and runs itself
    on the table (`run`; most are one core action, `action`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    @abstractmethod
    def run(self, table: QuacksTable, seat: int) -> TableOutcome:
        """The button pressed by `seat` (a seat of the table's game)."""


class ActionMove(Move):
    """A button that is one action of the core (pydantic's metaclass is an ABCMeta)."""

    @abstractmethod
    def action(self, seat: int) -> Action:
        """The core's action for `seat`."""

    def run(self, table: QuacksTable, seat: int) -> TableOutcome:
        return table._apply(self.action(seat))


class DrawMove(ActionMove):
    """The virtual bag: the table draws (the game's seeded rng, E23), the player takes it."""

    def action(self, seat: int) -> Action:
        return Draw(seat)


class StopMove(ActionMove):
    def action(self, seat: int) -> Action:
        return Stop(seat)


class FlaskMove(ActionMove):
    def action(self, seat: int) -> Action:
        return UseFlask(seat)


class AnswerMove(ActionMove):
    question: str = Field(min_length=1, max_length=32)
    yes: bool

    def action(self, seat: int) -> Action:
        return Answer(seat, self.question, self.yes)


class OfferMove(ActionMove):
    chip: str | None = Field(default=None, max_length=40)

    def action(self, seat: int) -> Action:
        return ChooseOffer(seat, self.chip)


class ChooseMove(ActionMove):
    option: str = Field(min_length=1, max_length=40)

    def action(self, seat: int) -> Action:
        return Choose(seat, self.option)


class RollMove(ActionMove):
    face: int | None = Field(default=None, ge=1, le=6)

    def action(self, seat: int) -> Action:
        return RollDie(seat, self.face)


class BuyMove(ActionMove):
    chips: list[str] = Field(default_factory=list, max_length=2)

    def action(self, seat: int) -> Action:
        return Buy(seat, tuple(self.chips))


class DoneBuyingMove(Move):
    """Done buying: the chips tapped so far are the purchase (E21), or nothing (D17)."""

    def run(self, table: QuacksTable, seat: int) -> TableOutcome:
        return table._outcome(finish_buying(table.game, table.pads, seat))


class SpendMove(ActionMove):
    droplet: int = Field(default=0, ge=0, le=99)
    refill: bool = False
    vp: int = Field(default=0, ge=0, le=99)
    coins_vp: int = Field(default=0, ge=0, le=99)

    def action(self, seat: int) -> Action:
        return Spend(seat, droplet=self.droplet, refill=self.refill, vp=self.vp,
                     coins_vp=self.coins_vp)


class UntappedMove(Move):
    """"I drew a chip I did not tap": a stand-in of the kind named (E19)."""

    kind: str = Field(min_length=1, max_length=32, description="the kind of the chip drawn")

    def run(self, table: QuacksTable, seat: int) -> TableOutcome:
        return table._outcome(untapped_draw(table.game, table.pads, seat, self.kind))


class UndoDrawMove(Move):
    """"Undo my last draw": that seat's only (E20)."""

    def run(self, table: QuacksTable, seat: int) -> TableOutcome:
        return table._undo_draw(seat)


# The phone's buttons (``cmd/play``: ``verb`` and ``args``), one model each: the one list.
MOVES: Final[dict[str, type[Move]]] = {
    "draw": DrawMove, "stop": StopMove, "flask": FlaskMove, "answer": AnswerMove,
    "offer": OfferMove, "choose": ChooseMove, "roll": RollMove, "buy": BuyMove,
    "done_buying": DoneBuyingMove, "spend": SpendMove, "untapped": UntappedMove,
    "undo_draw": UndoDrawMove,
}  # fmt: skip


class MoveError(ValueError):
    """A phone button that is none, or its arguments refused: `code` for the wire."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def parse_move(verb: str, args: Mapping[str, Any] | None) -> Move:
    """The button `verb` with its `args`, checked by its model (the only way in)."""
    model = MOVES.get(verb)
    if model is None:
        raise MoveError(f"no phone button {verb!r}; one of {', '.join(MOVES)}", "unknown_move")
    try:
        return model.model_validate(dict(args or {}))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(map(str, first["loc"]))
        raise MoveError(f"play {verb}: {where + ': ' if where else ''}{first['msg']}",
                        "bad_args") from None


# Glastonbury's moments that Quacks has not.
NOT_QUACKS: Final = frozenset({"keep", "discard", "declinatio", "confirm"})


@dataclass(frozen=True, slots=True)
class _Wired:
    """A Quacks action as the service logs and follows it (`rules.actions.to_wire`)."""

    data: Mapping[str, JsonValue]

    def to_wire(self) -> Mapping[str, JsonValue]:
        return self.data


@dataclass(frozen=True, slots=True)
class QuacksAlert:
    """A refused tap or button, standing on the table until that seat's next input."""

    alert_id: str
    refusal: TableRefusal
    ts: float
    severity: str = "error"

    def wire(self) -> dict[str, JsonValue]:
        r = self.refusal
        return {"alert_id": self.alert_id, "rule": r.rule, "kind": "breach",
                "message": r.message[:500], "instruction": INSTRUCTIONS.get(r.code, ""),
                "severity": self.severity, "seat": r.seat,
                "params": {"code": r.code, **{k: v for k, v in r.params.items()
                                              if isinstance(v, str | int | bool)}},
                "ts": self.ts}  # fmt: skip


INSTRUCTIONS: Final[dict[str, str]] = {
    "unknown_tag": "enrol the chip from the host page, then tap it again",
    "retired_tag": "put that tag aside: its chip has a new tag; tap the chip with the new one",
}


class QuacksInterpreter:
    """One table playing Quacks for the engine service (`engine.games.base.Interpreter`):
    ``new_game`` (seeded by the engine, so a restart replays the same bag), hub taps on a
    seat's draw pad (`QuacksTable.pad`), ``play`` (a phone button, `MOVES`), ``undo`` (the
    host, E16) and ``end``. A refusal never changes the game: a command's is raised as
    `Refused`, a tap's stands as an alert on the table until that seat's next input."""

    plays = "quacks"

    def __init__(self, table: str = "table", observed: Mapping[str, object] | None = None) -> None:
        self.name = table
        self.table: QuacksTable | None = None
        self.options: dict[str, JsonValue] = {}
        self.status = TableStatus.IDLE
        self.game_id: str | None = None
        self.inputs = 0
        self.alerts: dict[int | None, QuacksAlert] = {}
        self._alert_counter = 0
        self._version = 0
        self._view: tuple[int, dict[str, JsonValue]] | None = None

    @property
    def game(self) -> Game | None:
        return self.table.game if self.table is not None else None

    @property
    def turn(self) -> int | None:
        return None  # every seat draws at once (Q12): no turn LED

    @property
    def seats(self) -> int:
        return self.table.game.config.players if self.table is not None else 0

    @property
    def active_alerts(self) -> list[QuacksAlert]:
        return list(self.alerts.values())

    # ---------------------------------------------------------------- inputs

    def sense(self, sensed: Sensed) -> Changes:
        self.inputs += 1
        place = sensed.place or ""
        table = self.table
        if (table is None or self.status is not TableStatus.PLAYING
                or sensed.kind == "button" or not place.startswith("pad:")):
            return Changes()  # no game, or nothing Quacks reads (a button, a cell)
        seat = int(place[4:])
        before = len(table.game.log)
        outcome = table.pad(seat, sensed.piece, sensed.kind == "placed", uid=sensed.uid,
                            retired=sensed.retired)
        if outcome.ok and not outcome.events and len(table.game.log) == before:
            if not outcome.basket:
                return Changes()
            self._changed()  # a chip into the basket: the shop's views show it
            return Changes(changed=True)
        return self._done(outcome, seat, sensed.ts, Changes(), before)

    def resync(self, seen: Mapping[str, str], pawns: Sequence[int] | None,
               ts: float) -> Changes:
        self.inputs += 1  # a pad holds nothing between taps (E22): nothing to take over
        return Changes(changed=True)

    def differs(self, seen: Mapping[str, str]) -> bool:
        return False

    def command(self, verb: str, args: Mapping[str, object] | BaseModel | None = None, *,
                seat: int | None = None, ts: float = 0.0) -> Changes:
        from engine.wire.api import GAME_API, BadArgs, NewGameBase, PlayArgs, parse_args

        if verb in NOT_QUACKS:
            raise Refused(f"{verb}: Quacks has no such moment (its phone buttons are "
                          f"cmd/play: {', '.join(MOVES)})", code="not_in_this_game")
        try:
            typed = parse_args(GAME_API, verb, args)
        except BadArgs as exc:
            raise Refused(exc.message, code=exc.code, rule=exc.rule) from None
        out = Changes(changed=True)
        if verb == "new_game":
            assert isinstance(typed, NewGameBase)
            self._new_game(typed, out)
        elif verb == "end":
            if self.status is not TableStatus.PLAYING:
                raise Refused("no game is in progress: nothing to end", code="no_game")
            self.status = TableStatus.ENDED
            out.ended = True
        elif verb == "undo":
            table = self._playing()
            before = len(table.game.log)
            self._check(table.undo(), None)
            out.undone = before - len(table.game.log)
            out.undone_text = f"took back the last action ({out.undone})"
            out.cleared.extend(self.alerts.values())  # (the screens take them down)
            self.alerts.clear()
        else:
            assert isinstance(typed, PlayArgs)
            self._play(typed, seat, ts, out)
        self.inputs += 1
        self._changed()
        return out

    def _new_game(self, args: NewGameBase, out: Changes) -> None:
        from engine.games.quacks.definition import DEFINITION, QuacksOptions, config_of

        if args.game != self.plays:
            raise Refused(f"this table's interpreter plays quacks, not {args.game}",
                          code="unknown_game")
        if self.status is TableStatus.PLAYING:
            raise Refused(f"game {self.game_id} is in progress: end it first (command end)",
                          code="game_in_progress")
        if not args.game_id:
            raise Refused("new_game needs a game_id", code="bad_args")
        if args.seed is None:
            raise Refused("new_game needs the engine's seed (the bag's draws)", code="bad_args")
        options = DEFINITION.check(args.config_wire())
        assert isinstance(options, QuacksOptions)
        rng = random.Random(args.seed)
        self.table = QuacksTable(config_of(options, rng), rng,
                                 show_odds=options.show_odds, bag_visible=options.bag_visible)
        self.options = options.wire()
        self.status = TableStatus.PLAYING
        self.game_id = args.game_id
        self.inputs = 0
        out.cleared.extend(self.alerts.values())
        self.alerts.clear()
        out.started = True

    def _play(self, args: PlayArgs, asking: int | None, ts: float, out: Changes) -> None:
        table = self._playing()
        if args.seat is not None and asking is not None and args.seat != asking:
            raise Refused(f"play {args.verb}: seat {asking + 1} cannot move for seat "
                          f"{args.seat + 1}", code="not_your_seat", rule="Q29")
        seat = args.seat if args.seat is not None else asking
        if seat is None:
            raise Refused(f"play {args.verb}: say which seat (args.seat)", code="bad_args",
                          rule="Q29")
        try:
            move = parse_move(args.verb, args.args)
        except MoveError as exc:
            raise Refused(str(exc), code=exc.code, rule="Q29") from None
        before = len(table.game.log)
        outcome = table.move(seat, move)
        self._check(outcome, seat)
        self._done(outcome, seat, ts, out, before)

    def _playing(self) -> QuacksTable:
        if self.table is None or self.status is not TableStatus.PLAYING:
            raise Refused("no game is in progress", code="no_game")
        return self.table

    @staticmethod
    def _check(outcome: TableOutcome, seat: int | None) -> None:
        r = outcome.refusal
        if r is not None:
            raise Refused(r.message, code=r.code, rule=r.rule)

    def _done(self, outcome: TableOutcome, seat: int, ts: float, out: Changes,
              before: int) -> Changes:
        """What a tap or button did (``before``: the log's length before it): its actions
        and events, or an undone draw, and the seat's alert."""
        table = self.table
        assert table is not None
        old = self.alerts.pop(seat, None)
        if old is not None:
            out.cleared.append(old)
        out.changed = True
        if outcome.refusal is not None:
            self._alert_counter += 1
            alert = QuacksAlert(f"{self.game_id or 'table'}-{self._alert_counter}",
                                outcome.refusal, ts)
            self.alerts[seat] = alert
            out.raised.append(alert)
        else:
            log = table.game.log
            if len(log) < before:  # "undo my last draw"
                out.undone = before - len(log)
            else:
                out.actions.extend(_Wired(to_wire(a)) for a in log[before:])
            out.events.extend(outcome.events)
            if table.game.is_over() and self.status is TableStatus.PLAYING:
                self.status = TableStatus.OVER
                out.ended = True
        self._changed()
        return out

    def _changed(self) -> None:
        self._version += 1

    # ---------------------------------------------------------------- what it says

    def observed(self) -> dict[str, JsonValue]:
        return {}  # a pad holds nothing between taps (E22)

    def prompt(self) -> dict[str, JsonValue]:
        table = self.table
        if self.status is TableStatus.IDLE or table is None:
            return {"code": "idle", "seat": None, "text": "No game: start one (new game)."}
        if self.status is not TableStatus.PLAYING:
            return {"code": self.status.value, "seat": None, "text": "The game is over."}
        game = table.game
        phase = game.phase.value
        return {"code": f"q_{phase}"[:32], "seat": None,
                "text": f"Round {game.round}: {phase.replace('_', ' ')}."}

    def rules_view(self) -> object:
        """The table's public view (`QuacksTable.public_view`, with ``game``), the same
        object while nothing changed."""
        if self.table is None:
            return {"game": self.plays, "status": self.status.value}
        cached = self._view
        if cached is None or cached[0] != self._version:
            view = self.table.public_view()
            view["game"] = self.plays
            cached = self._view = (self._version, view)
        return cached[1]

    def table_wire(self) -> dict[str, JsonValue]:
        return {"status": self.status.value, "game_id": self.game_id, "prompt": self.prompt(),
                "held": None, "vanesco_wait": [],
                "alerts": [a.wire() for a in self.alerts.values()], "dealing": None,
                "inputs": self.inputs, "pawns_sensed": None}  # fmt: skip

    def seat_view(self, seat: int) -> object | None:
        if self.table is None or not 0 <= seat < self.seats:
            return None
        view = self.table.seat_view(seat)
        view["game"] = self.plays
        view["seat"] = seat
        return view

    def seen_once(self, outcome: TableOutcomeLike) -> list[tuple[int, object]]:
        return []

    def followed(self, outcome: TableOutcomeLike) -> Followed | None:
        table = self.table
        if table is None or not (outcome.actions or outcome.started or outcome.undone
                                 or outcome.ended):
            return None
        return Followed(
            index=len(table.game.log) - len(outcome.actions),
            actions=[dict(a.to_wire()) for a in outcome.actions],
            events=[dict(e.to_wire()) for e in outcome.events if not e.private],  # public
            config=dict(self.options) if outcome.started else None)

    def history(self) -> list[Followed]:
        table = self.table
        if table is None:
            raise Refused("history: no game on this table yet", code="no_game")
        probe = restart(table.game)
        stream = [Followed(0, [], [], config=dict(self.options))]
        for number, action in enumerate(table.game.log):
            stream.append(Followed(number, [to_wire(action)],
                                   [e.to_wire() for e in probe.apply(action) if not e.private]))
        return stream

    def layouts(self, outcome: TableOutcomeLike) -> list[dict[str, JsonValue]]:
        return []  # the bags are the engine's (E23): a table has nothing to lay out

    def log(self) -> dict[str, JsonValue] | None:
        return log_to_wire(self.table.game) if self.table is not None else None

    def hint(self, seat: int, level: str, lang: Lang) -> dict[str, JsonValue]:
        from engine.games.quacks.definition import DEFINITION

        if level not in DEFINITION.bot_names():
            raise Refused(f"level {level!r}: Quacks' bots are "
                          f"{', '.join(DEFINITION.bot_names())}", code="bad_args")
        action = DEFINITION.hint(self._playing().game, seat, level, lang)["action"]
        verb = action.get("type") if isinstance(action, dict) else None
        return {"seat": seat, "level": level, "action": action, "card": None, "cell": None,
                "reason": f"the {level} bot would {verb}", "reasons": {}}

    def record(self, new: bool) -> tuple[dict[str, JsonValue] | None, dict[str, JsonValue] | None]:
        result = None
        if self.table is not None and self.status is TableStatus.OVER:
            result = breakdown(self.table.game).model_dump(mode="json")
        return (dict(self.options) if new else None), result


# ---------------------------------------------------------------- its views on the wire


class _View(BaseModel):
    """Base of Quacks' views on the wire: an unknown key is refused, so nothing that is not
    listed here (a bag's contents, a hand) can slip into a view unseen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Odds(_View):
    num: int = Field(ge=0)
    den: int = Field(ge=0)
    p: float = Field(ge=0, le=1)


class Space(_View):
    coins: int
    vp: int
    ruby: bool


class PotChip(_View):
    chip: str = Field(max_length=40)
    kind: str = Field(max_length=32)
    index: int = Field(ge=0)


class SeatPublic(_View):
    """One seat as everyone sees it: its pot, white sum against its limit, the sizes (not
    the contents) of its bag and hand, its track and, with the memory aid, the odds."""

    seat: int = Field(ge=0, lt=4)
    status: str = Field(max_length=32)
    pot: list[PotChip] = Field(max_length=64)
    white_sum: int
    limit: int
    bag_size: int = Field(ge=0)
    hand_size: int = Field(ge=0)
    droplet: int
    start: int
    rat_tails: int
    flask: str = Field(max_length=16)
    rubies: int
    vp: int
    scoring_space: int
    space: Space
    affordable: list[str] = Field(max_length=64)
    question: JsonValue = None
    asked: JsonValue = None
    reward: JsonValue = None
    history: list[dict[str, JsonValue]] = Field(max_length=16)
    explosion_chance: Odds | None = None


class QuacksPublicView(_View):
    """``game/public``'s ``view`` for a Quacks table (`QuacksTable.public_view`)."""

    game: Literal["quacks"]
    round: int = Field(ge=1, le=9)
    rounds: int
    phase: str = Field(max_length=32)
    start_player: int
    fortune: str | None = Field(max_length=16)
    fortune_discard: list[str] = Field(max_length=32)
    fortune_left: int
    books_out: list[str] = Field(max_length=16)
    prices: dict[str, int]
    books: dict[str, int]
    supply: dict[str, int]
    rubies_left: int
    die: list[dict[str, JsonValue]] = Field(max_length=8)
    seats: list[SeatPublic] = Field(max_length=4)
    winners: list[int] = Field(max_length=4)
    over: bool = Field(description="the game ended by its rules (after round 9, Q25)")
    scores: QuacksScores = Field(description="the breakdown per round so far; the final "
                                 "ranking once over (`engine.games.quacks.scoring`)")
    show_odds: bool
    track: list[Space] = Field(max_length=64)
    rat_tails_after: list[int] = Field(max_length=64)
    cards: dict[str, str]
    evaluation: list[dict[str, JsonValue]] = Field(max_length=512)
    baskets: dict[str, list[str]] = Field(default_factory=dict)  # (a seat: its own `basket`)


class QuacksSeatView(QuacksPublicView):
    """``game/seat/<n>``'s ``view``: the public view plus what only that seat sees: its
    hand, its bag's contents by kind (D30, never in draw order), its moves and question,
    the chips it tapped for its purchase."""

    seat: int = Field(ge=0, lt=4)
    me: int = Field(ge=0, lt=4)
    hand: list[str] = Field(max_length=64)
    bag: dict[str, int] | None = None
    options: list[dict[str, JsonValue]] = Field(max_length=4096)
    ask: dict[str, JsonValue] | None = None
    basket: list[str] = Field(max_length=8)
    stand_ins: list[JsonValue] = Field(max_length=64)

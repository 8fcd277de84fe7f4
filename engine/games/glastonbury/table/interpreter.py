"""The table interpreter: sensor events in, rules actions and alerts out (pure: no I/O, no clock).

It holds what the readers see (`cells`, `pads`) and what the game expects, and turns each
`SensorInput` into an `Outcome`:

- a card lifted from the line the pawn faces is a normal take, from elsewhere an Accio take
  (when legal), at a corner a take from the line reached by moving again is Declinatio; the
  card is then *held* until it is laid on the active seat's pad, which applies the take
  (ingredient/Immuto onto the stack, Accio/Declinatio kept, Vanesco/Perluceo resolved);
- a card laid into the hole is the refill (`Refill(card)`; its identity is learned there);
- after a Vanesco, each seat that lost its top taps that card on its pad (or the host
  confirms) before the next turn may take;
- the game's last card: laid on the pad = keep; the seat's button or a keep/discard command;
- at a corner, when Declinatio would face only Vanesco/Perluceo (the game then ends, G7):
  the seat taps its Declinatio card on its pad, or the ``declinatio`` command;
- anything else leaves the table different from what the game expects; every difference is
  an `Alert` (rule id, message, exact instruction, stable id) that clears itself when the
  table matches again. A lifted card put back where it was is no error.

Host commands (`command`): new_game (then the DEALING state reads the deal from the cells),
confirm, undo, keep, discard, declinatio, end. A command that does not fit raises `Refused`
and changes nothing. The same inputs in the same order always give the same state (crash recovery
replays them), so nothing here reads a clock or a random source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from pydantic import BaseModel, JsonValue

from engine.games.base import UNKNOWN_TAG, Followed, Lang, Refused, Sensed, TableStatus
from engine.games.base import Outcome as TableOutcome
from engine.games.glastonbury.rules import (
    Action,
    Game,
    GameConfig,
    GameLog,
    IllegalAction,
    InvalidSetup,
    Phase,
    Refill,
    Take,
    UseDeclinatio,
    replay,
)
from engine.games.glastonbury.rules.actions import (
    DISCARD,
    KEEP,
    PASS,
    TAKES,
    USE_DECLINATIO,
    Discard,
    Keep,
    Pass,
)
from engine.games.glastonbury.rules.board import (
    CELL_LINES,
    FACED_LINE,
    LINES,
    PERIMETER,
    TAKEABLE_CELLS,
    cell_name,
    parse_cell,
)
from engine.games.glastonbury.rules.cards import CARDS, RECIPES, deck_for
from engine.games.glastonbury.rules.errors import RulesError
from engine.games.glastonbury.rules.events import Event, PerluceoReveal, VanescoResolved
from engine.games.glastonbury.rules.names import (
    card_name,
    cell_label,
    line_label,
    pad_label,
    position_label,
    seat_name,
)
from engine.games.glastonbury.rules.observer import (
    PublicView,
    SeatView,
    dealing_view,
    physical_layout,
    pile_size,
    public_view,
    refill_refusal,
    returned_to_cauldrons,
    seat_view,
    where_is,
)
from engine.games.glastonbury.table.deal_guide import deal_guidance
from engine.games.glastonbury.table.pawn_check import PawnSensing, pawn_problems, start_positions
from engine.wire.api import GAME_API, GAME_CHANGING_VERBS, BadArgs, NewGameBase, parse_args
from engine.wire.contract import PublicTableView, TableAlert, TableInfo

SensorKind = Literal["placed", "removed", "button"]
UNKNOWN_PREFIX: Final = UNKNOWN_TAG
# Vanesco and Perluceo: never taken with Declinatio (G7).
_RESOLVED_SPELLS: Final = frozenset(
    c for c, v in CARDS.items() if v.spell in ("vanesco", "perluceo")
)


# The table's states are every game's (DEALING: reading the dealt grid from the cells).
Status = TableStatus


@dataclass(frozen=True, slots=True)
class SensorInput:
    """One change seen by the table (converted from a hub event).

    Exactly one of ``cell`` (a grid cell index, ``r * 6 + c``), ``pad`` (a seat's scan pad) or
    ``position`` (a perimeter position whose pawn sensor changed) for ``placed``/``removed``;
    ``card`` is the card id, None for a tag not in the tag map (``uid`` then says which).
    ``button`` events: ``confirm`` with ``seat``, or ``undo``.
    """

    kind: SensorKind
    cell: int | None = None
    pad: int | None = None
    card: str | None = None
    uid: str | None = None
    button: Literal["confirm", "undo"] | None = None
    seat: int | None = None
    ts: float = 0.0
    position: int | None = None  # a sensed pawn (Hall switch): placed/removed there
    retired: bool = False  # an unknown tag the hub retired (a spare replaced it)

    @property
    def seen(self) -> str:
        """What the reader holds: the card id, or ``uid:<UID>`` for an unknown tag."""
        return self.card if self.card is not None else f"{UNKNOWN_PREFIX}{self.uid or '?'}"


def lift(cell: int | str, card: str, ts: float = 0.0) -> SensorInput:
    return SensorInput("removed", cell=_cell(cell), card=card, ts=ts)


def lay(cell: int | str, card: str | None, ts: float = 0.0, uid: str | None = None) -> SensorInput:
    return SensorInput("placed", cell=_cell(cell), card=card, uid=uid, ts=ts)


def pad_lay(seat: int, card: str | None, ts: float = 0.0, uid: str | None = None) -> SensorInput:
    return SensorInput("placed", pad=seat, card=card, uid=uid, ts=ts)


def pad_lift(seat: int, card: str | None, ts: float = 0.0, uid: str | None = None) -> SensorInput:
    return SensorInput("removed", pad=seat, card=card, uid=uid, ts=ts)


def press(
    button: Literal["confirm", "undo"], seat: int | None = None, ts: float = 0.0
) -> SensorInput:
    return SensorInput("button", button=button, seat=seat, ts=ts)


def _cell(cell: int | str) -> int:
    return parse_cell(cell) if isinstance(cell, str) else cell


@dataclass(frozen=True, slots=True)
class Alert:
    """Something on the table differs from what the game expects, and how to put it right."""

    alert_id: str
    rule: str
    code: str
    message: str
    instruction: str
    severity: Literal["info", "warning", "error"] = "error"
    seat: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    ts: float = 0.0
    kind: Literal["breach", "notice"] = "breach"  # notice: informs, no rule was broken

    def to_wire(self) -> dict[str, Any]:
        return self.table_alert().model_dump(mode="json")

    def table_alert(self) -> TableAlert:
        """As the wire carries it (`engine.wire.contract.AlertFields`, the one definition)."""
        return TableAlert.model_validate(self.wire())

    def wire(self) -> dict[str, Any]:
        """`table_alert`'s data, not validated (`TableInterpreter.table_wire`)."""
        return {
            "alert_id": self.alert_id,
            "rule": self.rule,
            "kind": self.kind,
            "message": self.message,
            "instruction": self.instruction,
            "severity": self.severity,
            "seat": self.seat,
            "params": {"code": self.code, **self.params},
            "ts": self.ts,
        }


@dataclass(frozen=True, slots=True)
class _Reason:
    rule: str
    code: str
    message: str
    instruction: str
    severity: Literal["info", "warning", "error"] = "error"
    seat: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    kind: Literal["breach", "notice"] = "breach"


@dataclass(slots=True)
class Held:
    """A card lifted for a legal take, not yet laid on the active seat's pad."""

    cell: int
    card: str
    plan: tuple[Action, ...]  # (Take,) or (UseDeclinatio, Take)
    ends_game: bool  # the last card of a line with the pile empty (G10a): keep or discard

    def to_wire(self) -> dict[str, Any]:
        via = "declinatio" if len(self.plan) == 2 else "take"
        return {"cell": cell_name(self.cell), "card": self.card, "via": via,
                "last_card": self.ends_game}


@dataclass
class Outcome:
    """What one input or command did."""

    actions: list[Action] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    raised: list[Alert] = field(default_factory=list)
    cleared: list[Alert] = field(default_factory=list)
    changed: bool = False  # the public/seat views differ
    instructions: list[str] = field(default_factory=list)  # undo: how to put cards back
    undone: int = 0  # undo: how many rules actions were taken back
    started: bool = False
    ended: bool = False
    note: str | None = None  # why an input did nothing (a button that fits no moment)
    undone_text: str | None = None  # undo: what was taken back, in a host's words
    undone_codes: list[dict[str, Any]] = field(default_factory=list)  # the same, as codes
    undo_steps: list[dict[str, Any]] = field(default_factory=list)  # `instructions`, as codes

    @property
    def private_events(self) -> list[Event]:
        return [e for e in self.events if e.private]


def where(cell: int) -> str:
    """A cell for people: "row 3, column 4" (engine.games.glastonbury.rules.names)."""
    return cell_label(cell)


def label(card: str) -> str:
    """What a reader holds, for people: a card's name, or the unknown tag's UID (to enrol it)."""
    if card.startswith(UNKNOWN_PREFIX):
        return f"an unknown tag ({card[len(UNKNOWN_PREFIX):]})"
    return card_name(card)


def seat_words(game: Game | None, seat: int) -> str:
    """A seat for people, with its colour when the game knows it: "Seat 2 (blue)"."""
    colours = game.config.colours if game is not None else ()
    return seat_name(seat, colours[seat] if 0 <= seat < len(colours) else None)


def pad_words(game: Game | None, seat: int) -> str:
    """"Seat 2 (blue)'s pad"."""
    colours = game.config.colours if game is not None else ()
    return pad_label(seat, colours[seat] if 0 <= seat < len(colours) else None)


class TableInterpreter:
    """Follows one physical table. Feed `handle()` sensor inputs and `command()` host
    commands in order; read `status`, `game`, `alerts`, `public_view()`, `seat_view()`."""

    def __init__(self, table: str = "table") -> None:
        self.table = table
        self.cells: dict[int, str] = {}  # observed: cell -> card id or "uid:…"
        self.pads: dict[int, str] = {}
        self.status = Status.IDLE
        self.game: Game | None = None
        self.game_id: str | None = None
        self.config: GameConfig | None = None
        self.recipe_cards: tuple[tuple[str, ...], ...] = ()
        self.held: Held | None = None
        self.vanesco_wait: list[tuple[int, str]] = []
        # Refused lifts, by cell: the card lifted. Why it was refused is derived anew from the
        # table as it is now each time the alerts are (`_refused_lift`): never a stale order.
        self._lift_reasons: dict[int, str] = {}
        self._place_reasons: dict[int, _Reason] = {}  # refused placements (refill), by cell
        self._pad_reasons: dict[int, _Reason] = {}
        # A pile card laid on a pad (a seat reading the pile): stands, even once lifted off,
        # until the game's next action (by seat: the count of actions then, the alert).
        self._pile_on_pad: dict[int, tuple[int, _Reason]] = {}
        self._undo_note: _Reason | None = None
        self._undo_steps: list[UndoStep] = []
        self.retired_tags: set[str] = set()  # UIDs the hub said are retired (spares)
        self.alerts: dict[tuple[Any, ...], Alert] = {}
        self._alert_counter = 0
        self.inputs = 0
        self.last_ts = 0.0
        self._view_cache: tuple[Game, int, PublicView] | None = None
        self.pawn_sensing = PawnSensing()  # sensed pawn positions (None: no pawn sensors)

    # ------------------------------------------------------------------ persistence helpers

    def observed(self) -> dict[str, Any]:
        """What the readers see now (stored with each new game, to rebuild from there)."""
        return {
            "cells": {cell_name(c): v for c, v in sorted(self.cells.items())},
            "pads": {str(p): v for p, v in sorted(self.pads.items())},
        }

    @classmethod
    def from_observed(cls, table: str, observed: dict[str, Any]) -> TableInterpreter:
        interp = cls(table)
        interp.cells = {parse_cell(k): str(v) for k, v in observed.get("cells", {}).items()}
        interp.pads = {int(k): str(v) for k, v in observed.get("pads", {}).items()}
        return interp

    plays = "glastonbury"

    def resync(self, seen: Mapping[str, str], pawns: Sequence[int] | None = None,
               ts: float = 0.0) -> Outcome:
        """What every reader sees, all at once (the hub's snapshot, when this table's events
        cannot be followed from the start): replaces the observed state, infers nothing.
        ``pawns``: the sensed pawn positions (None: the table has no pawn sensors)."""
        cells, pads = readers_of(seen)
        out = Outcome(changed=True)
        self.cells = dict(cells)
        self.pads = dict(pads)
        self.pawn_sensing.sensed = None if pawns is None else frozenset(pawns)
        self.inputs += 1
        self.last_ts = ts
        if self.status is Status.DEALING:
            self._start_when_dealt(out)
        self._refresh_alerts(out, ts)
        return out

    def seen(self) -> dict[str, str]:
        """What the readers hold, by place id (as a hub snapshot says it: `resync`)."""
        return {**{cell_name(c): v for c, v in self.cells.items()},
                **{f"pad:{p}": v for p, v in self.pads.items()}}

    def differs(self, seen: Mapping[str, str]) -> bool:
        """The same readers hold other cards than this interpreter believes (the hub's tag
        map changed under cards lying on the table)."""
        cells, pads = readers_of(seen)
        if cells.keys() != self.cells.keys() or pads.keys() != self.pads.keys():
            return False
        return cells != self.cells or pads != self.pads

    # ------------------------------------------------------------------ sensor inputs

    def sense(self, sensed: Sensed) -> Outcome:
        """A hub event (`Sensed`) as this table's `SensorInput`."""
        return self.handle(sensor_input(sensed))


    def handle(self, inp: SensorInput) -> Outcome:
        """Take one sensor input; never raises for anything a table can do."""
        out = Outcome()
        self.inputs += 1
        self.last_ts = inp.ts
        if inp.retired and inp.uid:
            self.retired_tags.add(inp.uid)
        if inp.kind == "button":
            self._button(inp, out)
        elif inp.position is not None:  # a pawn sensor (table/pawn_check.py)
            self.pawn_sensing.update(inp.position, inp.kind == "placed")
        elif inp.kind == "placed" and self._already_seen(inp):
            # A reader reporting again what it reported before, with no removal between (a
            # restarted hub reads every card anew): nothing moved.
            out.note = "that card was already seen there"
        elif inp.cell is not None:
            if inp.kind == "placed":
                self._cell_placed(inp.cell, inp.seen, out)
            else:
                self._cell_removed(inp.cell, out)
        elif inp.pad is not None:
            if inp.kind == "placed":
                self._pad_placed(inp.pad, inp.seen, out)
            else:
                self.pads.pop(inp.pad, None)
                self._pad_reasons.pop(inp.pad, None)
        out.changed = True
        self._refresh_alerts(out, inp.ts)
        return out

    def _playing(self) -> Game | None:
        return self.game if self.status is Status.PLAYING else None

    def _cell_removed(self, cell: int, out: Outcome) -> None:
        seen = self.cells.pop(cell, None)
        self._place_reasons.pop(cell, None)
        game = self._playing()
        if game is None or seen is None or seen != game.grid[cell]:
            return  # not a game card leaving its cell: the alerts tell what is left to do
        if not self._lift(game, cell, seen):
            self._lift_reasons[cell] = seen

    def _lift(self, game: Game, cell: int, card: str) -> bool:
        """A game card lifted from its cell: hold it for a legal take (True), or not."""
        if self.held is None and not self.vanesco_wait and game.phase is not Phase.REFILL:
            plan = self._plan_take(game, cell)
            if plan is not None:  # the common case: a legal take, nothing to explain
                self.held = Held(cell, card, plan, self._ends_game(game, cell))
                return True
        return False

    def _refused_lift(self, game: Game, cell: int, card: str) -> _Reason:
        """Why a card lifted from its cell is not a take, from the table as it is now: only
        what remains to be done (a refill done since the lift is no longer asked for)."""
        seat = game.seat
        back = f"Put {label(card)} back on {where(cell)}."
        params = (("card", card), ("cell", cell_name(cell)))
        if self.held is not None:
            held = self.held
            return _Reason("G4", "one_card_per_turn",
                           f"Only one card per turn: {seat_words(game, seat)} already took "
                           f"{label(held.card)} from {where(held.cell)}.", back, seat=seat,
                           params=(*params, ("seat", seat), ("held_card", held.card),
                                   ("held_cell", cell_name(held.cell))))
        if self.vanesco_wait:
            victim, top = self.vanesco_wait[0]
            return _Reason("G8", "vanesco_pending",
                           f"The Vanesco is not finished: {seat_words(game, victim)} must first "
                           f"tap {label(top)} on their pad and put it under the draw pile.",
                           back, seat=victim,
                           params=(*params, ("victim", victim), ("top", top)))
        if game.phase is Phase.REFILL:
            hole = game.refill_cell
            assert hole is not None
            return _Reason("G4", "refill_first",
                           f"First refill {where(hole)} with the top card of the draw pile.",
                           f"{back} Then lay the top card of the draw pile on {where(hole)}.",
                           params=(*params, ("hole", cell_name(hole))))
        if self._plan_take(game, cell) is not None:
            # Lifted too early; now it would be a take: laying it on the pad takes it.
            return _Reason("G4", "lifted_early", f"{label(card)} was lifted from {where(cell)} "
                           "before it could be taken.",
                           f"{back[:-1]}, or lay it on {pad_words(game, seat)} to take it.",
                           seat=seat, params=(*params, ("pad", seat)))
        if game.phase is Phase.TAKE and FACED_LINE[game.pawns[seat]] is None:
            line = self._declinatio_line(game)
            reach = line_label(line) if line is not None else "-"
            return _Reason("G7", "corner_declinatio_line",
                           f"{seat_words(game, seat)}'s pawn stands at a corner: with Declinatio a "
                           f"card can only come from {reach}; {where(cell)} is not in it.", back,
                           seat=seat, params=(*params, ("seat", seat), ("line", line)))
        error = game.why_illegal(TAKES[cell]) or IllegalAction("G4", "this card cannot be taken")
        return _Reason(error.rule, "illegal_take", f"{label(card)} cannot be taken: "
                       f"{error.message}.", back, seat=seat, params=(*params, ("seat", seat)))

    def _declinatio_blocked(self, game: Game) -> bool:
        """At a corner, Declinatio would face only Vanesco/Perluceo: using it ends the game
        at once (G7). Only a tap of the Declinatio card or a command can say so."""
        if (self.held is not None or self.vanesco_wait or game.phase is not Phase.TAKE
                or USE_DECLINATIO not in game.legal_actions()):
            return False
        probe = game.copy()
        probe.apply(USE_DECLINATIO)
        return probe.is_over()

    @staticmethod
    def _declinatio_line(game: Game) -> int | None:
        return FACED_LINE[(game.pawns[game.seat] + game.move_value) % PERIMETER]

    def _plan_take(self, game: Game, cell: int) -> tuple[Action, ...] | None:
        legal = game.legal_actions()
        take = TAKES[cell]
        if take in legal:
            return (take,)
        if game.phase is Phase.TAKE and USE_DECLINATIO in legal:
            line = self._declinatio_line(game)
            card = game.grid[cell]
            if line is not None and cell in LINES[line] and card not in _RESOLVED_SPELLS:
                return (USE_DECLINATIO, take)
        return None

    @staticmethod
    def _ends_game(game: Game, cell: int) -> bool:
        if pile_size(game):
            return False
        grid = game.grid
        return any(
            all(grid[c] is None or c == cell for c in LINES[line]) for line in CELL_LINES[cell]
        )

    def _already_seen(self, inp: SensorInput) -> bool:
        if inp.cell is not None:
            return self.cells.get(inp.cell) == inp.seen
        return inp.pad is not None and self.pads.get(inp.pad) == inp.seen

    def _cell_placed(self, cell: int, seen: str, out: Outcome) -> None:
        self.cells[cell] = seen
        self._place_reasons.pop(cell, None)
        if self.status is Status.DEALING:
            self._start_when_dealt(out)
            return
        game = self._playing()
        if game is None or seen.startswith(UNKNOWN_PREFIX):
            return
        held = self.held
        if held is not None and held.card == seen:
            if held.cell == cell:
                self.held = None  # put back where it was: nothing happened
            return
        if cell in self._lift_reasons and game.grid[cell] == seen:
            del self._lift_reasons[cell]  # a refused lift put right
            return
        if game.phase is Phase.REFILL and cell == game.refill_cell:
            twin = next((c for c in TAKEABLE_CELLS if c != cell and game.grid[c] == seen), None)
            if twin is not None and self.cells.get(twin) == seen:
                self._place_reasons[cell] = _Reason(
                    "G1", "card_twice", f"{label(seen)} lies on {where(twin)} and on "
                    f"{where(cell)}: one card, two tags.", f"Lift the copy from {where(cell)} "
                    "(its tag copies another card's) and lay the top card of the draw pile "
                    "there.", params=(("card", seen), ("cell", cell_name(cell)),
                                      ("other", cell_name(twin))))
                return
            why = refill_refusal(game, seen)
            if why is None:
                self._apply(game, (Refill(seen),), out)
                return
            self._place_reasons[cell] = _Reason(
                "G4", "bad_refill", f"{label(seen)} cannot be the refill: {why}.",
                f"Lift {label(seen)} from {where(cell)} and lay the top card of the draw pile "
                "there instead.", params=(("card", seen), ("cell", cell_name(cell))))

    def _pad_placed(self, seat: int, seen: str, out: Outcome) -> None:
        self.pads[seat] = seen
        game = self._playing()
        if game is None:
            return
        off = f"Lift {label(seen)} from {pad_words(game, seat)}."
        params = (("card", seen), ("pad", seat))
        if seen.startswith(UNKNOWN_PREFIX):
            self._pad_reasons[seat] = self._retired(
                seen, pad_words(game, seat), off, params) or _Reason(
                "G1", "unknown_tag", f"{label(seen)} lies on {pad_words(game, seat)}: it is "
                "not in the tag map.", f"{off} If it is a game card, enrol its tag "
                "(host page: Tag enrolment, or `cauldron enroll`).", params=params)
            return
        if (seat, seen) in self.vanesco_wait:
            self.vanesco_wait.remove((seat, seen))
            return
        owed = [card for victim, card in self.vanesco_wait if victim == seat]
        if owed:
            self._pad_reasons[seat] = _Reason(
                "G8", "wrong_tap", f"{seat_words(game, seat)} lost {label(owed[0])} to the "
                f"Vanesco, not {label(seen)}.", f"{off} Tap {label(owed[0])} on the pad "
                "instead, then put it under the draw pile.", seat=seat,
                params=(*params, ("owed", owed[0])))
            return
        if self.held is None and seat == game.seat:
            for cell in list(self._lift_reasons):
                # Refused when lifted, but a take now (another card was put back, the
                # turn moved on): laying it on the pad takes it.
                if game.grid[cell] == seen and self._lift(game, cell, seen):
                    del self._lift_reasons[cell]
                    break
        if (self.held is None and seat == game.seat and seen in CARDS
                and CARDS[seen].spell == "declinatio"
                and any(slot[0] == seen for slot in game.spells[seat])):
            if self._declinatio_blocked(game):
                # No lift can say "Declinatio onto a line of spells only": the tap does (G7).
                self._apply(game, (USE_DECLINATIO,), out)
                return
            if game.phase is Phase.TAKE and USE_DECLINATIO in game.legal_actions():
                line = self._declinatio_line(game)
                self._pad_reasons[seat] = _Reason(
                    "G7", "declinatio_by_take", "Declinatio is used by taking a card from "
                    f"{line_label(line) if line is not None else '-'}, not by tapping it.",
                    f"{off} Then take a card from that line.", severity="warning", seat=seat,
                    params=(*params, ("line", line)))
                return
        held = self.held
        if held is not None and held.card == seen:
            if seat == game.seat:
                plan = held.plan + ((KEEP,) if held.ends_game else ())
                self.held = None
                self._apply(game, plan, out)
                return
            self._pad_reasons[seat] = _Reason(
                "G4", "wrong_pad", f"It is {seat_words(game, game.seat)}'s turn: {label(seen)} is "
                f"taken for {seat_words(game, game.seat)}, not {seat_words(game, seat)}.",
                f"{off} Lay it on {pad_words(game, game.seat)}, or put it back on "
                f"{where(held.cell)}.",
                seat=seat, params=(*params, ("turn", game.seat),
                                   ("held_cell", cell_name(held.cell))))
            return
        for cell, lifted in self._lift_reasons.items():
            reason = self._refused_lift(game, cell, lifted)
            if game.grid[cell] == seen and seat != game.seat:
                self._pad_reasons[seat] = _Reason(
                    "G4", "not_your_turn", f"It is {seat_words(game, game.seat)}'s turn, not "
                    f"{seat_words(game, seat)}'s.",
                    f"{off} Put {label(seen)} back on {where(cell)}.", seat=seat,
                    params=(*params, ("turn", game.seat), ("from", cell_name(cell))))
                return
            if game.grid[cell] == seen:
                # One fault, one alert: the cell's alert says it (see _desired).
                self._pad_reasons[seat] = _Reason(
                    reason.rule, "not_taken", f"{label(seen)} was not taken: {reason.message}",
                    f"{off} Put it back on {where(cell)}.", seat=seat,
                    params=(*params, ("from", cell_name(cell))))
                return
        if refill_refusal(game, seen) is None:
            # Never names the card: it is face down for everyone else.
            self._pile_on_pad[seat] = (len(game.actions), _Reason(
                "G4", "pile_card_on_pad", f"A card from the draw pile was laid on "
                f"{pad_words(game, seat)}: the top card of the pile goes straight into the "
                "hole, unseen by any seat.", f"Lift the card from {pad_words(game, seat)} "
                "and lay it in the hole.", seat=seat,
                params=(("pad", seat),)))
            return
        self._pad_reasons[seat] = _Reason(
            "G4", "unexpected_pad", f"Nothing is to be laid on {pad_words(game, seat)} now "
            f"({label(seen)}).", off, severity="warning", seat=seat, params=params)

    def _button(self, inp: SensorInput, out: Outcome) -> None:
        if inp.button == "undo":
            try:
                self._undo(out)
            except Refused as exc:
                out.note = exc.message
            return
        seat = inp.seat
        if self.status is Status.DEALING:
            try:
                self._start(out)
            except Refused as exc:
                out.note = exc.message
            return
        game = self._playing()
        if game is None:
            out.note = "no game in progress"
            return
        held = self.held
        if held is not None and held.ends_game and seat == game.seat:
            self.held = None
            self._apply(game, (*held.plan, DISCARD), out)
        elif held is None and PASS in game.legal_actions() and seat == game.seat:
            self._apply(game, (PASS,), out)
        else:
            who = "this" if seat is None else f"{seat_words(game, seat)}'s"
            out.note = f"{who} button has nothing to confirm now"

    # ------------------------------------------------------------------ applying actions

    def _apply(self, game: Game, plan: tuple[Action, ...], out: Outcome) -> None:
        for action in plan:
            events = game.push(action)  # planned from legal_actions(): cannot be refused
            out.actions.append(action)
            out.events.extend(events)
            for event in events:
                if isinstance(event, VanescoResolved):
                    self.vanesco_wait = list(event.removed)
        self._undo_note = None
        if game.is_over():
            self.status = Status.OVER
            self.vanesco_wait = []
            self.held = None
            out.ended = True
            return
        hole = game.refill_cell
        if game.phase is Phase.REFILL and hole is not None and hole in self.cells:
            # The refill was laid before the taken card reached the pad: take it now.
            self._cell_placed(hole, self.cells[hole], out)

    # ------------------------------------------------------------------ commands

    def command(self, verb: str, args: Mapping[str, object] | BaseModel | None = None, *,
                seat: int | None = None, ts: float = 0.0) -> Outcome:
        """A host/dashboard command (`GAME_CHANGING_VERBS`, args as `engine.wire.api`
        types them; a mapping, e.g. from the table's log, is parsed the same way). Raises
        `Refused` (and changes nothing) when it does not fit the moment or its arguments are
        wrong."""
        handler = _COMMANDS.get(verb)
        if handler is None:
            raise Refused(f"unknown command {verb!r}", code="unknown_command")
        try:
            typed = parse_args(GAME_API, verb, args)
        except BadArgs as exc:
            raise Refused(exc.message, code=exc.code, rule=exc.rule) from None
        out = Outcome()
        handler(self, typed, seat, out)
        self.inputs += 1
        self.last_ts = ts
        out.changed = True
        self._refresh_alerts(out, ts)
        return out

    @staticmethod
    def _play(args: Any) -> None:
        raise Refused(f"play {args.verb}: Glastonbury's moves are read from the table "
                      "(and keep, discard, declinatio, confirm)", code="unknown_move")

    def _end(self, out: Outcome) -> None:
        if self.status not in (Status.DEALING, Status.PLAYING):
            raise Refused("no game is in progress: nothing to end", code="no_game")
        self.status = Status.ENDED
        self.held = None
        self.vanesco_wait = []
        out.ended = True

    def _new_game(self, args: NewGameBase, out: Outcome) -> None:
        if args.game != "glastonbury":  # a table changes its game with its engine's interpreter
            raise Refused(f"this table plays glastonbury, not {args.game}", code="unknown_game")
        if self.status in (Status.DEALING, Status.PLAYING):
            raise Refused(f"game {self.game_id} is in progress: end it first (command end)",
                          code="game_in_progress")
        game_id = args.game_id
        if not game_id:
            raise Refused("new_game needs a game_id", code="bad_args")
        recipe_cards = args.recipe_cards or []
        try:
            config = GameConfig.from_wire(args.config_wire())
        except InvalidSetup as exc:
            raise Refused(exc.message, code="bad_config", rule=exc.rule) from None
        if not isinstance(recipe_cards, list) or not all(
            isinstance(pair, list) and all(r in RECIPES for r in pair) for pair in recipe_cards
        ):
            raise Refused("recipe_cards must list each seat's [A, B] recipe ids", rule="G11",
                          code="bad_config")
        if config.recipes and len(recipe_cards) != config.players:
            raise Refused("the recipe variant needs recipe_cards: one [A, B] per seat",
                          rule="G11", code="bad_config")
        self.status = Status.DEALING
        self.game = None
        self.game_id = game_id
        self.config = config
        self.recipe_cards = tuple(tuple(pair) for pair in recipe_cards)
        self.held = None
        self.vanesco_wait = []
        self._lift_reasons.clear()
        self._place_reasons.clear()
        self._pad_reasons.clear()
        self._pile_on_pad.clear()
        self._undo_note = None
        self.alerts.clear()
        self._alert_counter = 0
        self.inputs = 0  # counts from the new game: the same live and after a rebuild
        self._start_when_dealt(out)

    def _start_when_dealt(self, out: Outcome) -> None:
        """The game starts by itself once the 32 cells hold a deal that fits the box."""
        if self._deal_state()[0] == len(TAKEABLE_CELLS) and not self._deal_problems():
            self._start(out)

    def _deal_guidance(self) -> dict[str, Any]:
        """The deal guided for the table view (`engine.games.glastonbury.table.deal_guide`)."""
        assert self.config is not None
        wrong = {cell: reason.message for cell, reason in self._deal_problems().items()}
        seen = {cell: self.cells[cell] for cell in TAKEABLE_CELLS if cell in self.cells}
        return deal_guidance(self.config, seen, wrong)

    def _deal_state(self) -> tuple[int, list[str]]:
        missing = [cell_name(c) for c in TAKEABLE_CELLS if c not in self.cells]
        return len(TAKEABLE_CELLS) - len(missing), missing

    def _deal_problems(self) -> dict[int, _Reason]:
        assert self.config is not None
        deck = frozenset(deck_for(self.config.removed))
        problems: dict[int, _Reason] = {}
        first_seen: dict[str, int] = {}
        for cell in TAKEABLE_CELLS:
            seen = self.cells.get(cell)
            if seen is None:
                continue
            if seen.startswith(UNKNOWN_PREFIX):
                code = "unknown_tag"
            elif seen not in deck:
                code = "not_in_deck"
            elif seen in first_seen:
                code = "card_twice"
            else:
                first_seen[seen] = cell
                continue
            problems[cell] = self._deal_problem(code, cell, seen, first_seen.get(seen))
        return problems

    def _deal_problem(self, code: str, cell: int, seen: str, other: int | None) -> _Reason:
        assert self.config is not None
        off = f"Lift {label(seen)} from {where(cell)}"
        params: tuple[tuple[str, Any], ...] = (("card", seen), ("cell", cell_name(cell)))
        if code == "unknown_tag":
            return self._retired(seen, where(cell), f"{off}.", params) or _Reason(
                "G1", code, f"{label(seen)} lies on {where(cell)}: it is not in the tag map.",
                f"{off}; enrol it (host page: Tag enrolment, or `cauldron enroll`) if it is a "
                "game card.", params=params)
        if code == "not_in_deck":
            if seen in CARDS and CARDS[seen].colour == self.config.removed:
                why = f"the {self.config.removed} ingredients are removed with 2 players"
            else:
                why = "it is not one of the cards dealt into the square"
            return _Reason("G2", code, f"{label(seen)} cannot be dealt: {why}.",
                           f"{off} and put it back in the box; deal another card there.",
                           params=params)
        assert other is not None
        params = (*params, ("other", cell_name(other)))
        return _Reason("G1", code, f"{label(seen)} lies on {where(other)} and on {where(cell)}: "
                       "one card, two tags.", f"{off}; its tag copies another card's.",
                       params=params)

    def _start(self, out: Outcome) -> None:
        if self.status is not Status.DEALING or self.config is None:
            raise Refused("no deal to confirm: start one with new_game", code="not_dealing")
        filled, missing = self._deal_state()
        problems = self._deal_problems()
        if problems:
            first = next(iter(problems.values()))
            raise Refused(f"the deal is not right: {first.message} {first.instruction}",
                          rule=first.rule, code="bad_deal")
        if missing:
            empty = "; ".join(cell_label(c) for c in missing)
            raise Refused(f"the square holds {filled} of 32 cards; empty: {empty}",
                          rule="G2", code="deal_incomplete")
        grid = [self.cells[c] for c in TAKEABLE_CELLS]
        try:
            game = Game.from_deal(self.config, grid, None, self.recipe_cards)
        except RulesError as exc:
            raise Refused(exc.message, rule=exc.rule, code="bad_deal") from None
        self.game = game
        self.status = Status.PLAYING
        out.events.extend(game.opening_events)
        out.started = True

    def _confirm(self, seat: int | None, out: Outcome) -> None:
        """The host (no seat) or a seat confirms: start the dealt game, end a Vanesco wait
        (host only), or pass at a corner (the host or the active seat)."""
        if self.status is Status.DEALING:
            self._start(out)
            return
        game = self._playing()
        if game is not None and self.vanesco_wait and seat is None:
            self.vanesco_wait = []  # the host vouches that the tops went under the pile
            return
        if game is not None and self.held is None and PASS in game.legal_actions():
            if seat is not None and seat != game.seat:
                raise Refused(f"confirm: it is {seat_words(game, game.seat)}'s turn, not "
                              f"{seat_words(game, seat)}'s",
                              rule="G4", code="wrong_seat")
            self._apply(game, (PASS,), out)
            return
        raise Refused("nothing to confirm now", code="nothing_to_confirm")

    def _declinatio_command(self, seat: int | None, out: Outcome) -> None:
        game = self._playing()
        if game is None:
            raise Refused("declinatio: no game in progress", code="no_game")
        if seat is not None and seat != game.seat:
            raise Refused(f"declinatio: it is {seat_words(game, game.seat)}'s turn, not "
                          f"{seat_words(game, seat)}'s",
                          rule="G4", code="wrong_seat")
        if not self._declinatio_blocked(game):
            raise Refused("declinatio: only when Declinatio would face a line of Vanesco/"
                          "Perluceo only (it then ends the game); otherwise use it by taking a "
                          "card from the line it reaches", rule="G7", code="declinatio_not_blocked")
        self._apply(game, (USE_DECLINATIO,), out)

    def _keep_or_discard(self, keep: bool, seat: int | None, out: Outcome) -> None:
        game = self._playing()
        held = self.held
        verb = "keep" if keep else "discard"
        if game is None or (game.phase is not Phase.LAST_CARD
                            and not (held is not None and held.ends_game)):
            raise Refused(f"{verb}: no game is ending; keep/discard only apply to the game's "
                          "last card", rule="G10a", code="not_last_card")
        if seat is not None and seat != game.seat:
            raise Refused(f"{verb}: the last card is {seat_words(game, game.seat)}'s, not "
                          f"{seat_words(game, seat)}'s",
                          rule="G10a", code="wrong_seat")
        decision = KEEP if keep else DISCARD
        if game.phase is Phase.LAST_CARD:
            self._apply(game, (decision,), out)
        else:
            assert held is not None
            self.held = None
            self._apply(game, (*held.plan, decision), out)

    def _undo(self, out: Outcome) -> None:
        game = self.game
        if game is None or self.status not in (Status.PLAYING, Status.OVER):
            raise Refused("undo: no game to undo in", code="nothing_to_undo")
        actions = game.actions
        if not actions:
            raise Refused("undo: nothing to undo yet (no move was made)", code="nothing_to_undo")
        count = 1
        if isinstance(actions[-1], Refill | Keep | Discard):
            count = 2
        if (len(actions) > count and isinstance(actions[-count], Take)
                and isinstance(actions[-count - 1], UseDeclinatio)):
            count += 1
        previous = game.copy()  # the game stepped back: its snapshots, not a replay
        for _ in range(count):
            previous.pop()
        out.instructions = [step.text for step in undo_steps(game, previous)]
        out.undone = count
        self.game = previous
        self.status = Status.PLAYING
        self.held = None
        self.vanesco_wait = []
        self._lift_reasons.clear()
        self._place_reasons.clear()
        undone = "; ".join(undone_text(a) for a in actions[-count:])
        out.undone_text = f"Undone: {undone}."
        self._undo_steps = undo_steps(game, previous)
        out.undone_codes = [undone_wire(a) for a in actions[-count:]]
        out.undo_steps = [step.to_wire() for step in self._undo_steps]
        self._undo_note = _Reason("G4", "undone", f"Undone: {undone}.",
                                  "Nothing to put back.", severity="info", kind="notice",
                                  params=(("undone", [undone_wire(a) for a in actions[-count:]]),))

    # ------------------------------------------------------------------ alerts

    def _desired(self) -> dict[tuple[Any, ...], _Reason]:
        wanted: dict[tuple[Any, ...], _Reason] = {}
        if self.status is Status.DEALING:
            for cell, reason in self._deal_problems().items():
                wanted[("deal", cell, reason.code, self.cells.get(cell))] = reason
            return wanted
        game = self._playing()
        if game is None:
            return wanted
        held = self.held
        # A refused card laid on the pad is the same fault as its lift: one alert, whose
        # instruction now starts from the pad.
        on_pads = {
            cell_name(cell): (seat, r) for seat, r in self._pad_reasons.items()
            for cell in self._lift_reasons
            if r.code == "not_taken" and dict(r.params).get("from") == cell_name(cell)
            and self.cells.get(cell) is None}
        for cell in TAKEABLE_CELLS:
            expected = game.grid[cell]
            if held is not None and held.cell == cell:
                expected = None
            seen = self.cells.get(cell)
            if seen == expected:
                continue
            reason = self._cell_reason(game, cell, expected, seen)
            if seen is None and cell in self._lift_reasons and cell_name(cell) in on_pads:
                reason = replace(reason, instruction=on_pads[cell_name(cell)][1].instruction)
            wanted[("cell", cell, reason.code, expected, seen)] = reason
        for seat, reason in self._pad_reasons.items():
            if reason.code == "not_taken" and any(s == seat for s, _ in on_pads.values()):
                continue  # said by the cell's alert
            wanted[("pad", seat, reason.code, self.pads.get(seat))] = reason
        for seat, (actions, reason) in list(self._pile_on_pad.items()):
            if actions != len(game.actions):
                del self._pile_on_pad[seat]  # the game moved on (the refill was laid)
            else:
                wanted[("pile_on_pad", seat)] = reason
        note = self._undo_note
        if note is not None:
            steps = self._undo_steps
            done = [step.done(self.cells) for step in steps]
            lines = [f"{n}. {'✓ ' if ok else ''}{step.text}"
                     for n, (step, ok) in enumerate(zip(steps, done, strict=True), 1)]
            wanted[("undo", game.turns, len(game.actions))] = _Reason(
                note.rule, note.code, note.message, " ".join(lines) or note.instruction,
                note.severity, note.seat,
                (("steps", [{"n": n, "text": st.text, "done": ok, "seen": st.cell is not None,
                             **st.to_wire()}
                            for n, (st, ok) in enumerate(zip(steps, done, strict=True), 1)]),
                 *note.params),
                note.kind)
        for problem in pawn_problems(game, self.pawn_sensing.sensed):
            wanted[("pawn", problem.code, problem.message)] = _Reason(
                problem.rule, problem.code, problem.message, problem.instruction,
                seat=problem.seat, params=problem.params)
        return wanted

    def _retired(self, seen: str, here: str, off: str,
                 params: tuple[tuple[str, Any], ...]) -> _Reason | None:
        """An unknown tag the hub retired (a spare replaced it): put aside, never enrolled.
        None for any other tag."""
        if seen[len(UNKNOWN_PREFIX):] not in self.retired_tags:
            return None
        return _Reason("G1", "retired_tag", f"{label(seen)} lies on {here}: it is retired (a "
                       "spare tag replaced it).", f"{off} Put that tag aside: it is never "
                       "enrolled again.", params=params)

    def _cell_reason(self, game: Game, cell: int, expected: str | None,
                     seen: str | None) -> _Reason:
        here = where(cell)
        params: tuple[tuple[str, Any], ...] = (("cell", cell_name(cell)),
                                               ("expected", expected), ("seen", seen))
        if seen is None:
            assert expected is not None
            lifted = self._lift_reasons.get(cell)
            if lifted is not None:
                return self._refused_lift(game, cell, lifted)
            return _Reason("G4", "card_missing", f"{label(expected)} is missing from {here}.",
                           f"Put {label(expected)} back on {here}.",
                           params=(*params, ("card", expected)))
        if seen.startswith(UNKNOWN_PREFIX):
            back = f"Lift it from {here}" + (f" and put {label(expected)} back there."
                                             if expected else ".")
            return self._retired(seen, here, back, params) or _Reason(
                "G1", "unknown_tag", f"{label(seen)} lies on {here}: it is not in the tag "
                "map.", f"{back} Enrol the tag (host page: Tag enrolment, or `cauldron "
                "enroll`) if it is a game card.", params=params)
        if cell in self._place_reasons:
            return self._place_reasons[cell]
        held = self.held
        if held is not None and held.cell == cell and seen != held.card:
            return _Reason("G4", "pad_first", f"{label(seen)} lies in the hole on {here} before "
                           f"{label(held.card)} reached {pad_words(game, game.seat)}.",
                           f"Lay {label(held.card)} on {pad_words(game, game.seat)}.",
                           severity="warning", seat=game.seat,
                           params=(*params, ("held_card", held.card), ("pad", game.seat)))
        if held is not None and seen == held.card:
            return _Reason("G4", "moved_card", f"{label(seen)} was taken from "
                           f"{where(held.cell)}; it does not go on {here}.",
                           f"Lift it from {here} and lay it on {pad_words(game, game.seat)}, or "
                           f"put it back on {where(held.cell)}.", seat=game.seat,
                           params=(*params, ("held_cell", cell_name(held.cell)),
                                   ("pad", game.seat)))
        home = self._home(game, seen)
        if expected is None:
            if game.phase is not Phase.REFILL and not pile_size(game):
                return _Reason("G10a", "pile_empty", f"The draw pile is empty: holes stay "
                               f"empty; {label(seen)} does not go on {here}.",
                               f"Lift {label(seen)} from {here}{home}.", params=params)
            return _Reason("G4", "cell_should_be_empty", f"{label(seen)} lies on {here}, "
                           "which should be empty.", f"Lift {label(seen)} from {here}{home}.",
                           params=params)
        return _Reason("G4", "wrong_card", f"{here.capitalize()} holds {label(seen)}; it should "
                       f"hold {label(expected)}.", f"Lift {label(seen)} from {here}{home}, "
                       f"and put {label(expected)} back on {here}.", params=params)

    @staticmethod
    def _home(game: Game, card: str) -> str:
        """Where a card seen out of place belongs, as the end of an instruction. Never names
        a covered cauldron card's place (hidden information)."""
        if card not in CARDS:
            return " (it is not a card of this game)"
        place = where_is(game, card)
        if place is None:
            return " and keep it out of the game"
        if place.kind == "grid" and place.cell is not None:
            return f" (it belongs on {where(place.cell)}: a card cannot lie twice)"
        if place.kind == "top" and place.seat is not None:
            return f" and put it back on top of {seat_words(game, place.seat)}'s cauldron"
        if place.kind == "spells" and place.seat is not None:
            return f" and put it back beside {seat_words(game, place.seat)}'s cauldron"
        if place.kind == "pile":
            return " and put it back in the draw pile"
        return " and keep it out of the game"

    def _refresh_alerts(self, out: Outcome, ts: float) -> None:
        wanted = self._desired()
        for key in [k for k in self.alerts if k not in wanted]:
            out.cleared.append(self.alerts.pop(key))
        for key, reason in wanted.items():
            current = self.alerts.get(key)
            if current is not None and (current.message, current.instruction) == (
                reason.message, reason.instruction):
                continue
            if current is None:
                self._alert_counter += 1
                alert_id = f"{self.game_id or self.table}-a{self._alert_counter}"
            else:
                alert_id = current.alert_id
            alert = Alert(alert_id, reason.rule, reason.code, reason.message, reason.instruction,
                          reason.severity, reason.seat, dict(reason.params), ts, reason.kind)
            self.alerts[key] = alert
            out.raised.append(alert)

    @property
    def active_alerts(self) -> list[Alert]:
        return list(self.alerts.values())

    # ------------------------------------------------------------------ views

    def prompt(self) -> dict[str, Any]:
        """What the table waits for now, for the dashboard (code + English text)."""
        if self.status is Status.IDLE:
            return {"code": "idle", "seat": None, "text": "No game: start one (new game)."}
        if self.status is Status.DEALING:
            filled, _ = self._deal_state()
            return {"code": "dealing", "seat": None,
                    "text": f"Deal 32 cards face up into the square ({filled}/32 read)."}
        game = self.game
        if self.status is not Status.PLAYING or game is None:
            return {"code": self.status.value, "seat": None, "text": "The game is over."}
        seat = game.seat
        who = seat_words(game, seat)
        if self.vanesco_wait:
            victim, top = self.vanesco_wait[0]
            return {"code": "vanesco_tap", "seat": victim,
                    "text": f"{seat_words(game, victim)}: tap {label(top)} on your pad and put it "
                            "under the draw pile."}
        held = self.held
        if held is not None:
            if held.ends_game:
                return {"code": "last_card", "seat": seat,
                        "text": f"{who}: lay {label(held.card)} on your pad to keep it, "
                                "or press your button to discard it."}
            return {"code": "lay_on_pad", "seat": seat,
                    "text": f"{who}: lay {label(held.card)} on your pad."}
        if game.phase is Phase.REFILL:
            assert game.refill_cell is not None
            return {"code": "refill", "seat": seat,
                    "text": f"Lay the top card of the draw pile on {where(game.refill_cell)}."}
        line = FACED_LINE[game.pawns[seat]]
        if line is None and self._declinatio_blocked(game):
            blocked = line_label(self._declinatio_line(game) or 0)
            return {"code": "corner_blocked", "seat": seat,
                    "text": f"{who}: at a corner. With Declinatio the pawn would face "
                            f"{blocked}, which holds only Vanesco/Perluceo: using it ends the "
                            "game (G7). Tap your Declinatio card on your pad to do so, or "
                            "press your button to pass."}
        if line is None:
            return {"code": "corner", "seat": seat,
                    "text": f"{who}: at a corner. Take from "
                            f"{line_label(self._declinatio_line(game) or 0)} with Declinatio, "
                            "or press your button to pass."}
        return {"code": "take", "seat": seat,
                "text": f"{who}: move your pawn to "
                        f"{position_label(game.pawns[seat])} and take a card from "
                        f"{line_label(line)}."}

    def table_view(self) -> TableInfo:
        return TableInfo.model_validate(self.table_wire())

    def table_wire(self) -> dict[str, Any]:
        """`table_view` as plain JSON data, not validated again (the engine publishes it
        for every input; tests check that it validates as `table_view` does)."""
        filled, missing = self._deal_state()
        dealing = None
        if self.status is Status.DEALING:
            dealing = {"filled": filled, "missing": missing, **self._deal_guidance()}
        return {
            "status": self.status.value,
            "game_id": self.game_id,
            "prompt": self.prompt(),
            "held": self.held.to_wire() if self.held else None,
            "vanesco_wait": [{"seat": s, "card": c} for s, c in self.vanesco_wait],
            "alerts": [a.wire() for a in self.alerts.values()],
            "dealing": dealing,
            "inputs": self.inputs,
            "pawns_sensed": self.pawn_sensing.to_wire(),
        }

    def rules_view(self) -> PublicView:
        """The observer's public view of the game as the table shows it now (`public_view`
        without the table's state): the same object while no action is applied."""
        game = self.game
        if game is not None and self.status is not Status.DEALING:
            # The rules view changes only when an action is applied (or undone: a new Game).
            cache = self._view_cache
            if cache is None or cache[0] is not game or cache[1] != len(game.actions):
                cache = self._view_cache = (game, len(game.actions), public_view(game))
            view = cache[2]
            held = self.held
            if held is not None and held.ends_game and self.status is Status.PLAYING:
                # The last card is in the seat's hand: what remains is keep or discard
                # (G10a). The take is applied with that decision; show the moment as such.
                last = Phase.LAST_CARD.value
                view = dataclasses.replace(view, phase=last, expected=dataclasses.replace(
                    view.expected, phase=last, last_card=held.card, take=(), accio=(),
                    declinatio=False, can_pass=False))
            return view
        return dealing_view(self._observed_grid(), self.config)

    def public_view(self) -> PublicTableView:
        """The observer's public view plus the table's state (`table`). Never a covered
        card."""
        return PublicTableView.of(self.rules_view(), self.table_view())

    def seat_view(self, seat: int, reveal: tuple[str, ...] | None = None) -> SeatView | None:
        """What only `seat` may see (the observer's `SeatView`): its colour, recipes, and its
        own stack when the table's memory aid is on; `reveal`, a Perluceo reveal."""
        game = self.game
        if game is None or self.status is Status.DEALING or not 0 <= seat < game.players:
            return None
        return seat_view(game, seat, reveal)

    def _observed_grid(self) -> tuple[tuple[str | None, ...], ...]:
        rows: list[tuple[str | None, ...]] = []
        for r in range(6):
            row: list[str | None] = []
            for c in range(6):
                seen = self.cells.get(r * 6 + c)
                row.append(None if seen is None or seen.startswith(UNKNOWN_PREFIX) else seen)
            rows.append(tuple(row))
        return tuple(rows)

    def physical_layout(self) -> dict[str, Any] | None:
        """Where every card of the game lies now, as a simulated table lays it out
        (``hub/cmd/layout``): the square, each cauldron (bottom first), the spells
        beside it, the pile's cards (unordered part, then those sent under it). Covered
        cards included: this goes to the simulated hub only, never to a public view."""
        game = self.game
        if game is None or self.status not in (Status.PLAYING, Status.OVER):
            return None
        return physical_layout(game)

    @property
    def turn(self) -> int | None:
        game = self._playing()
        return game.seat if game is not None else None

    # ------------------------------------------------------------------ for the service

    @property
    def seats(self) -> int:
        game = self.game
        return game.players if game is not None and self.status is not Status.DEALING else 0

    def seen_once(self, outcome: TableOutcome) -> list[tuple[int, object]]:
        """A Perluceo reveal: that seat's view with the cauldron it looked at, once (G9)."""
        once: list[tuple[int, object]] = []
        for seat in range(self.seats):
            reveals = [e.cauldron for e in outcome.events
                       if isinstance(e, PerluceoReveal) and e.seat == seat]
            view = self.seat_view(seat, reveals[-1]) if reveals else None
            if view is not None:
                once.append((seat, view))
        return once

    def followed(self, outcome: TableOutcome) -> Followed | None:
        if not (outcome.actions or outcome.started or outcome.undone or outcome.ended):
            return None
        game = self.game
        if game is None:
            return None
        started = outcome.started
        return Followed(
            index=len(game.actions) - len(outcome.actions),
            actions=[dict(a.to_wire()) for a in outcome.actions],
            events=[dict(e.to_wire()) for e in outcome.events if not e.private],  # public
            config=game.config.to_wire() if started else None,
            grid=list(game.deal.grid) if started else None)

    def history(self) -> list[Followed]:
        game = self.game
        if game is None:
            raise Refused("history: no game on this table yet", code="no_game")
        replayed = replay(GameLog.of(game).without_last(len(game.actions)))
        stream = [Followed(0, [], [e.to_wire() for e in replayed.opening_events
                                   if not e.private],
                           config=game.config.to_wire(), grid=list(game.deal.grid))]
        for number, action in enumerate(game.actions):
            stream.append(Followed(number, [action.to_wire()],
                                   [e.to_wire() for e in replayed.apply(action) if not e.private]))
        return stream

    def layouts(self, outcome: TableOutcome) -> list[dict[str, JsonValue]]:
        """After an undo carried out physically, or a game's end, the cards where the game
        holds them; at a start with pawn sensors, the pawns at their start."""
        out: list[dict[str, JsonValue]] = []
        if outcome.undone or outcome.ended:
            layout = self.physical_layout()
            if layout is not None:
                out.append({"layout": layout, "pawns": None})
        if outcome.started and self.game is not None and self.pawn_sensing.sensed is not None:
            pawns: list[JsonValue] = list(start_positions(self.game))
            out.append({"layout": None, "pawns": pawns})
        return out

    def log(self) -> dict[str, JsonValue] | None:
        from engine.games.glastonbury.definition import DEFINITION

        return DEFINITION.log_to_wire(self.game) if self.game is not None else None

    def hint(self, seat: int, level: str, lang: Lang) -> dict[str, JsonValue]:
        from engine.games.glastonbury.bots.hints import LEVELS
        from engine.games.glastonbury.definition import DEFINITION

        game = self.game
        if game is None or self.status is not Status.PLAYING:
            raise Refused("no game is in progress: there is nothing to hint", code="no_game")
        if level not in LEVELS:
            raise Refused(f"level {level!r}: Glastonbury's hints are {' or '.join(LEVELS)}",
                          code="bad_args")
        return DEFINITION.hint(game, seat, level, lang)

    def record(self, new: bool) -> tuple[dict[str, JsonValue] | None, dict[str, JsonValue] | None]:
        result = None
        if self.game is not None and self.status is Status.OVER:
            result = self.game.scores().to_json()
        config = (self.config.to_wire() if self.config else {}) if new else None
        return config, result


def readers_of(seen: Mapping[str, str]) -> tuple[dict[int, str], dict[int, str]]:
    """What the readers hold (place id -> card or ``uid:…``) as cells and pads."""
    cells: dict[int, str] = {}
    pads: dict[int, str] = {}
    for place, piece in seen.items():
        if place.startswith("pad:"):
            pads[int(place[4:])] = piece
        elif "," in place:
            cells[parse_cell(place)] = piece
    return cells, pads


def sensor_input(sensed: Sensed) -> SensorInput:
    """A hub event (`Sensed`) as this table's input: a cell, a pad, a pawn sensor (a
    magnet, no tag: table/pawn_check.py) or a seat's button."""
    if sensed.kind == "button":
        button: Literal["confirm", "undo"] = "undo" if sensed.button == "undo" else "confirm"
        return SensorInput("button", button=button, seat=sensed.seat, ts=sensed.ts)
    place = sensed.place or ""
    if place.startswith("pos:"):
        return SensorInput(sensed.kind, position=int(place[4:]), ts=sensed.ts)
    if place.startswith("pad:"):
        return SensorInput(sensed.kind, pad=int(place[4:]), card=sensed.piece, uid=sensed.uid,
                           retired=sensed.retired, ts=sensed.ts)
    return SensorInput(sensed.kind, cell=parse_cell(place), card=sensed.piece, uid=sensed.uid,
                       retired=sensed.retired, ts=sensed.ts)


@dataclass(frozen=True, slots=True)
class UndoStep:
    """One numbered step of the way back after an undo; `cell`/`card`: what the readers see
    once it is done (None: a step they cannot see, e.g. a card back on a cauldron)."""

    text: str
    cell: int | None = None
    card: str | None = None
    gone: bool = False  # done once `card` no longer lies on `cell` (a lift)
    code: str = ""  # for the pages' words: to_pile, put_back, to_cauldron
    seat: int | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"code": self.code, "card": self.card,
                "cell": cell_name(self.cell) if self.cell is not None else None,
                "seat": self.seat}

    def done(self, cells: dict[int, str]) -> bool:
        if self.cell is None:
            return True
        return (cells.get(self.cell) != self.card) if self.gone else (
            cells.get(self.cell) == self.card)


# verb -> handler (interpreter, args, seat, outcome): the game-changing verbs of `GAME_API`.
_COMMANDS: Final[dict[str, Callable[[TableInterpreter, Any, int | None, Outcome], None]]] = {
    "new_game": lambda it, args, _seat, out: it._new_game(args, out),
    "confirm": lambda it, _args, seat, out: it._confirm(seat, out),
    "undo": lambda it, _args, _seat, out: it._undo(out),
    "keep": lambda it, _args, seat, out: it._keep_or_discard(True, seat, out),
    "discard": lambda it, _args, seat, out: it._keep_or_discard(False, seat, out),
    "declinatio": lambda it, _args, seat, out: it._declinatio_command(seat, out),
    "end": lambda it, _args, _seat, out: it._end(out),
    "play": lambda it, args, _seat, out: it._play(args),
}
assert set(_COMMANDS) == set(GAME_CHANGING_VERBS), "one handler per game-changing verb"


def undone_text(action: Action) -> str:
    """An undone action in a host's words (rows and columns counted from 1)."""
    if isinstance(action, Take):
        return f"the card taken from {cell_label(action.cell)}"
    if isinstance(action, Refill):
        return f"the refill with {label(action.card)}"
    return {UseDeclinatio: "the Declinatio", Pass: "the pass", Keep: "keeping the last card",
            Discard: "discarding the last card"}.get(type(action), str(action))


def undone_wire(action: Action) -> dict[str, Any]:
    """An undone action for the pages' words (`undone_text` says it in English)."""
    if isinstance(action, Take):
        return {"code": "take", "cell": cell_name(action.cell)}
    if isinstance(action, Refill):
        return {"code": "refill", "card": action.card}
    return {"code": {UseDeclinatio: "declinatio", Pass: "pass", Keep: "keep",
                     Discard: "discard"}.get(type(action), "other")}


def undo_steps(before: Game, after: Game) -> list[UndoStep]:
    """How to put the cards back after an undo: what differs between the two games."""
    steps: list[UndoStep] = []
    for cell in TAKEABLE_CELLS:
        now, then = before.grid[cell], after.grid[cell]
        if now == then:
            continue
        if now is not None:
            steps.append(UndoStep(f"Lift {label(now)} from {where(cell)} and put it back on top "
                                  "of the draw pile.", cell, now, gone=True, code="to_pile"))
        if then is not None:
            steps.append(UndoStep(f"Put {label(then)} back on {where(cell)}.", cell, then,
                                  code="put_back"))
    for seat, card in returned_to_cauldrons(before, after):
        steps.append(UndoStep(f"Take {label(card)} from under the draw pile and put it back "
                              f"on top of {seat_words(after, seat)}'s cauldron.", card=card,
                              code="to_cauldron", seat=seat))
    return steps

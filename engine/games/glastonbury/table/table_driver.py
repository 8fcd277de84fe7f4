"""From rules actions to what a person does at the table (pure).

`gestures_for(interp, decision)` lists the gestures a person makes to play one decision of
the active seat, given what the interpreter expects now (the simulated table's words:
lift, lay, slide, tap, and a seat's button); `inputs_for` the sensor inputs they make:

- ``(Take(c),)`` / ``(UseDeclinatio(), Take(c))``: lift the card from ``c``, lay it on the
  seat's pad and slide it off; after a Vanesco each seat that lost its top taps it on its
  pad; then the next pile card (``refill``) is laid into the hole;
- ``(…, Take(c), Keep())``: the last card laid on the pad; ``(…, Discard())``: the seat's
  button;
- ``(Pass(),)``: the seat's button; ``(Refill(card),)``: the card laid into the hole;
- ``(UseDeclinatio(),)`` alone (Declinatio onto a line of Vanesco/Perluceo only, which ends
  the game, G7): the seat taps its Declinatio card on its pad.

`scripted_game` plays a whole random game this way against a reference `Game` with a known
(seeded) pile: used by the tests, the benchmark, the demo's bots and the virtual table.
`to_sim_args` turns an input into the hub's ``sim`` command arguments.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.games.glastonbury.rules import (
    Action,
    Discard,
    Game,
    GameConfig,
    Keep,
    Pass,
    Phase,
    Refill,
    Take,
    UseDeclinatio,
)
from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, cell_name
from engine.games.glastonbury.rules.cards import CARDS, PLAYER_COLOURS
from engine.games.glastonbury.rules.names import action_label, cell_label, seat_name
from engine.games.glastonbury.rules.observer import public_view
from engine.games.glastonbury.table.interpreter import (
    SensorInput,
    TableInterpreter,
    lay,
    lift,
    pad_lay,
    pad_lift,
    press,
)

Decision = tuple[Action, ...]


class DriverError(Exception):
    """A decision that no physical gesture expresses at this moment."""


GestureKind = Literal["lift", "lay", "slide", "tap", "press"]


@dataclass(frozen=True, slots=True)
class Gesture:
    """One thing a person does at the table, in the simulated table's words (`hub.backends.
    sim`: lift, lay, slide, tap; and a seat's button): `where` a cell or a seat's pad."""

    kind: GestureKind
    seat: int  # whose hand makes it (the pad's seat for a pad)
    card: str | None = None
    cell: int | None = None  # None: on the seat's pad (lay, slide, tap)

    def inputs(self, ts: float = 0.0) -> list[SensorInput]:
        """The sensor inputs the gesture makes (as many as `GESTURE_INPUTS` says)."""
        if self.kind == "press":
            return [press("confirm", self.seat, ts)]
        if self.kind == "lift":
            assert self.cell is not None and self.card is not None
            return [lift(self.cell, self.card, ts)]
        if self.kind == "lay" and self.cell is not None:
            return [lay(self.cell, self.card, ts)]
        if self.kind == "lay":
            return [pad_lay(self.seat, self.card, ts)]
        if self.kind == "slide":  # the card goes on from the pad to the cauldron or beside it
            return [pad_lift(self.seat, self.card, ts)]
        return [pad_lay(self.seat, self.card, ts), pad_lift(self.seat, self.card, ts)]  # tap


def gestures_for(
    interp: TableInterpreter, decision: Sequence[Action], refill: str | None = None,
) -> list[Gesture]:
    """The gestures a person makes for one decision of the active seat (see the module
    doc); raises `DriverError` for a decision no gesture expresses now."""
    game = interp.game
    if game is None:
        raise DriverError("no game in progress")
    seat = game.seat
    first = decision[0]
    if isinstance(first, Pass):
        return [Gesture("press", seat)]
    if isinstance(first, UseDeclinatio) and len(decision) == 1:
        # Declinatio onto a line of spells only ends the game (G7): tap the card on the pad.
        spell = next((slot[0] for slot in game.spells[seat]
                      if CARDS[slot[0]].spell == "declinatio" and slot[1] > 0), None)
        if spell is None:
            raise DriverError(f"{seat_name(seat, game.config.colours[seat])} holds no "
                              "Declinatio with uses left: choose another move")
        return [Gesture("tap", seat, spell)]
    if isinstance(first, Refill):
        if game.refill_cell is None:
            raise DriverError("no hole to refill")
        return [Gesture("lay", seat, first.card, game.refill_cell)]
    takes = [a for a in decision if isinstance(a, Take)]
    if not takes:
        said = ", then ".join(action_label(a) for a in decision)
        raise DriverError(f"{said}: nothing a person does at the table expresses it")
    cell = takes[0].cell
    card = game.grid[cell]
    if card is None:
        raise DriverError(f"{cell_label(cell)} is empty: there is no card to take there")
    steps = [Gesture("lift", seat, card, cell)]
    last = decision[-1]
    if isinstance(last, Discard):
        return [*steps, Gesture("press", seat)]
    steps += [Gesture("lay", seat, card), Gesture("slide", seat, card)]
    if isinstance(last, Keep):
        return steps
    if CARDS[card].spell == "vanesco":
        seats = public_view(game).seats  # the tops are face up
        for k in range(1, game.players):
            victim = (seat + k) % game.players
            top = seats[victim].top
            if top is not None:
                steps.append(Gesture("tap", victim, top))
    if refill is not None:
        steps.append(Gesture("lay", seat, refill, cell))
    return steps


def inputs_for(
    interp: TableInterpreter, decision: Sequence[Action], refill: str | None = None,
    ts: float = 0.0,
) -> list[SensorInput]:
    """The sensor inputs of the decision's gestures (`gestures_for`), in order."""
    return [inp for gesture in gestures_for(interp, decision, refill)
            for inp in gesture.inputs(ts)]


def deal_inputs(grid: Sequence[str], ts: float = 0.0) -> list[SensorInput]:
    """Laying the 32 dealt cards (in `TAKEABLE_CELLS` order) into the square."""
    return [lay(cell, card, ts) for cell, card in zip(TAKEABLE_CELLS, grid, strict=True)]


def to_sim_args(inp: SensorInput) -> dict[str, Any] | None:
    """The hub ``sim`` command arguments for an input (None: a button, not simulated)."""
    if inp.kind == "button":
        return None
    where = cell_name(inp.cell) if inp.cell is not None else f"pad:{inp.pad}"
    if inp.kind == "placed":
        args: dict[str, Any] = {"action": "place", "where": where}
        if inp.card is not None:
            args["card_id"] = inp.card
        else:
            args["uid"] = inp.uid
        return args
    return {"action": "remove", "where": where}


Chooser = Callable[[Game, random.Random], Action]


def random_choice(game: Game, rng: random.Random) -> Action:
    return rng.choice(game.legal_actions())


@dataclass
class ScriptedGame:
    """A whole game as table gestures: ``new_game`` args, the deal, then one list of
    inputs per decision, and the reference game (known pile) that made the decisions."""

    new_game_args: dict[str, Any]
    deal: list[SensorInput]
    turns: list[list[SensorInput]] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    reference: Game | None = None


def next_decision(ref: Game, rng: random.Random, choose: Chooser = random_choice) -> Decision:
    """The reference game's next decision (applied to `ref`), as a gesture-sized tuple."""
    action = choose(ref, rng)
    decision: list[Action] = [action]
    ref.apply(action)
    if isinstance(action, UseDeclinatio) and not ref.is_over():
        take = choose(ref, rng)
        ref.apply(take)
        decision.append(take)
    if isinstance(decision[-1], Take) and ref.phase is Phase.LAST_CARD:
        end = choose(ref, rng)
        ref.apply(end)
        decision.append(end)
    return tuple(decision)


def scripted_game(
    players: int, seed: int, *, game_id: str = "g1", memory_aid: bool = False,
    choose: Chooser = random_choice, max_decisions: int | None = None,
) -> ScriptedGame:
    """A random game (reproducible from `seed`) driven through a private interpreter."""
    rng = random.Random(seed)
    config = GameConfig(colours=PLAYER_COLOURS[:players], first_seat=rng.randrange(players),
                        memory_aid=memory_aid)
    ref = Game.new(config, rng)
    args = {"game_id": game_id, **{k: v for k, v in config.to_wire().items()
                                   if k not in ("start_positions", "removed_colour")}}
    script = ScriptedGame(args, deal_inputs(ref.deal.grid), reference=ref)
    interp = TableInterpreter("script")
    for inp in script.deal:
        interp.handle(inp)
    interp.command("new_game", dict(args))
    while not ref.is_over():
        if max_decisions is not None and len(script.decisions) >= max_decisions:
            break
        decision = next_decision(ref, rng, choose)
        refill = refill_of(ref, decision)
        steps = inputs_for(interp, decision, refill)
        for inp in steps:
            interp.handle(inp)
        script.decisions.append(decision)
        script.turns.append(steps)
    return script


def refill_of(ref: Game, decision: Decision) -> str | None:
    """The card a known-pile reference game laid into the hole after `decision`'s take."""
    takes = [a for a in decision if isinstance(a, Take)]
    if not takes or isinstance(decision[-1], Keep | Discard):
        return None
    return ref.grid[takes[-1].cell]

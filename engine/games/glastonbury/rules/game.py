"""The Glastonbury game model: pure state, legal actions, events and views.

Like python-chess's `Board` or an OpenSpiel `State`: `legal_actions()` lists what the
active seat may do, `apply(action)` changes the state and returns the events, `view(seat)`
and `view_public()` are the only way state leaves the engine. No I/O, no clock, no global
randomness: `Game.new()` takes a seeded `random.Random`.

Decisions taken where the rules are unclear are documented in RULES.md and in
`engine/games/glastonbury/rules/README.md`; the rule ids (G1…G11) appear in every error.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, NamedTuple

from engine.games.glastonbury.rules import board
from engine.games.glastonbury.rules.actions import (
    DISCARD,
    KEEP,
    PASS,
    REFILLS,
    TAKES,
    USE_DECLINATIO,
    Action,
    Discard,
    Keep,
    Pass,
    Refill,
    Take,
    UseDeclinatio,
)
from engine.games.glastonbury.rules.board import (
    CELL_LINES,
    CORNER_CELLS,
    CORNER_ORDER,
    CORNER_POSITIONS,
    DEFAULT_START_POSITIONS,
    FACED_LINE,
    LINES,
    PERIMETER,
    TAKEABLE_CELLS,
    cell_name,
)
from engine.games.glastonbury.rules.cards import (
    CARDS,
    CORNER_CARDS,
    EMPTY_CAULDRON_MOVE,
    PLAYER_COLOURS,
    RECIPE_A,
    RECIPE_B,
    RECIPES,
    SPELL_USES,
    deck_for,
)
from engine.games.glastonbury.rules.errors import IllegalAction, InvalidSetup
from engine.games.glastonbury.rules.events import (
    CardTaken,
    CardToCauldron,
    DeclinatioUsed,
    Event,
    GameEnded,
    LastCardResolved,
    LastCardTaken,
    PerluceoReveal,
    PerluceoUsed,
    Refilled,
    SpellKept,
    TurnPassed,
    TurnStarted,
    VanescoResolved,
)
from engine.games.glastonbury.rules.names import card_name, cell_label, line_label
from engine.games.glastonbury.rules.pile import Pile, PileSnapshot
from engine.games.glastonbury.rules.scoring import GameScore, SeatCards, score_game, score_totals

SCHEMA_VERSION: Final = 1
_LINE_SETS: Final = tuple(frozenset(cells) for cells in LINES)
_MOVE: Final[dict[str, int]] = {c: (v.move_value or 0) for c, v in CARDS.items()}
_SPELL: Final[dict[str, str | None]] = {c: v.spell for c, v in CARDS.items()}
_GOES_IN_CAULDRON: Final = frozenset(
    c for c, v in CARDS.items() if v.kind in ("ingredient", "immuto")
)
# Vanesco and Perluceo may not be taken with Accio or after Declinatio (G6, G7).
_NOT_WITH_SPELL: Final = frozenset(
    c for c, v in CARDS.items() if v.spell in ("vanesco", "perluceo")
)


class Phase(StrEnum):
    TAKE = "take"  # the pawn has moved; take from the faced line (or Accio; at a corner G7)
    DECLINATIO = "declinatio"  # moved again with Declinatio: take from the faced line
    REFILL = "refill"  # lay the pile's top card into the hole
    LAST_CARD = "last_card"  # keep or discard the game's last card (G10a)
    OVER = "over"


@dataclass(frozen=True, slots=True)
class GameConfig:
    """How a game is set up (G2). Seat i plays `colours[i]`; seats go clockwise."""

    colours: tuple[str, ...]
    first_seat: int = 0
    start_positions: tuple[int, ...] | None = None  # default: seat i beside corner i
    removed_colour: str | None = None  # 2 players: default, the first unused player colour
    recipes: bool = False  # recipe variant (G11)
    second_player_bonus: bool = False  # optional house rule (G10)
    memory_aid: bool = False  # each seat's private view shows its own stack (table setting)

    @property
    def players(self) -> int:
        return len(self.colours)

    @property
    def positions(self) -> tuple[int, ...]:
        if self.start_positions is not None:
            return self.start_positions
        return DEFAULT_START_POSITIONS[: self.players]

    @property
    def removed(self) -> str | None:
        """The colour whose 8 ingredients are out of the game (2 players only)."""
        if self.players != 2:
            return None
        if self.removed_colour is not None:
            return self.removed_colour
        return next(c for c in PLAYER_COLOURS if c not in self.colours)

    def validate(self) -> None:
        if not 2 <= self.players <= 4:
            raise InvalidSetup("G2", f"Glastonbury is for 2 to 4 players, not {self.players}")
        for colour in self.colours:
            if colour not in PLAYER_COLOURS:
                raise InvalidSetup(
                    "G2", f"{colour!r} is not a player colour ({', '.join(PLAYER_COLOURS)})"
                )
        if len(set(self.colours)) != self.players:
            raise InvalidSetup("G2", "two seats have the same colour")
        if not 0 <= self.first_seat < self.players:
            raise InvalidSetup("G4", f"first seat {self.first_seat} is not a seat")
        if len(self.positions) != self.players or any(
            p not in CORNER_POSITIONS for p in self.positions
        ):
            raise InvalidSetup(
                "G2", "each pawn starts beside a corner: position 1 (top-left), 6 (top-right), "
                "11 (bottom-right) or 16 (bottom-left); one position per seat"
            )
        if self.removed_colour is not None and (
            self.players != 2
            or self.removed_colour not in PLAYER_COLOURS
            or self.removed_colour in self.colours
        ):
            raise InvalidSetup(
                "G2",
                "only a 2-player game removes a colour, and it must be an unused player colour",
            )

    def to_wire(self) -> dict[str, Any]:
        return {
            "colours": list(self.colours),
            "first_seat": self.first_seat,
            "start_positions": list(self.positions),
            "removed_colour": self.removed,
            "recipes": self.recipes,
            "second_player_bonus": self.second_player_bonus,
            "memory_aid": self.memory_aid,
        }

    @classmethod
    def from_wire(cls, data: Any) -> GameConfig:
        if not isinstance(data, dict):
            raise InvalidSetup("G2", "the game configuration must be a JSON object")
        allowed = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - allowed
        if unknown:
            raise InvalidSetup(
                "G2", f"unknown configuration field(s): {', '.join(sorted(unknown))}"
            )
        colours = data.get("colours")
        if not isinstance(colours, list) or not all(isinstance(c, str) for c in colours):
            raise InvalidSetup("G2", "'colours' must be a list of player colours, one per seat")
        positions = data.get("start_positions")
        if positions is not None and (
            not isinstance(positions, list) or not all(type(p) is int for p in positions)
        ):
            raise InvalidSetup("G2", "'start_positions' must be a list of perimeter positions")
        flags = {}
        for name in ("recipes", "second_player_bonus", "memory_aid"):
            value = data.get(name, False)
            if not isinstance(value, bool):
                raise InvalidSetup("G2", f"'{name}' must be true or false")
            flags[name] = value
        first = data.get("first_seat", 0)
        if type(first) is not int:
            raise InvalidSetup("G4", "'first_seat' must be a seat number")
        removed = data.get("removed_colour")
        if removed is not None and not isinstance(removed, str):
            raise InvalidSetup("G2", "'removed_colour' must be a colour")
        config = cls(
            colours=tuple(colours),
            first_seat=first,
            start_positions=tuple(positions) if positions is not None else None,
            removed_colour=removed,
            **flags,
        )
        config.validate()
        return config


@dataclass(frozen=True, slots=True)
class Deal:
    """The opening layout: 32 cards in `board.TAKEABLE_CELLS` order, the pile top first
    (None at a real table, where the order is unknown) and each seat's (A, B) recipes."""

    grid: tuple[str, ...]
    pile: tuple[str, ...] | None
    recipes: tuple[tuple[str, ...], ...] = field(default=())

    def to_wire(self) -> dict[str, Any]:
        return {
            "grid": {cell_name(c): card for c, card in zip(TAKEABLE_CELLS, self.grid, strict=True)},
            "pile": list(self.pile) if self.pile is not None else None,
            "recipes": [list(r) for r in self.recipes],
        }

    @classmethod
    def from_wire(cls, data: Any) -> Deal:
        if not isinstance(data, dict):
            raise InvalidSetup("G2", "the deal must be a JSON object")
        grid = data.get("grid")
        if not isinstance(grid, dict):
            raise InvalidSetup("G2", "'grid' must map every non-corner cell 'r,c' to a card id")
        try:
            by_cell = {board.parse_cell(k): v for k, v in grid.items()}
        except Exception as exc:
            raise InvalidSetup("G2", f"bad cell in the deal: {exc}") from None
        if len(by_cell) != len(grid):  # "0,1" and " 0, 1" name the same cell
            raise InvalidSetup("G2", "a cell is given twice in the deal")
        missing = [cell_name(c) for c in TAKEABLE_CELLS if c not in by_cell]
        if missing or set(by_cell) & CORNER_CELLS:
            raise InvalidSetup(
                "G2", f"the deal must fill the 32 non-corner cells exactly (missing: {missing})"
            )
        cards = tuple(by_cell[c] for c in TAKEABLE_CELLS)
        if not all(isinstance(c, str) for c in cards):
            raise InvalidSetup("G2", "every dealt cell must hold a card id")
        pile = data.get("pile")
        if pile is not None and (
            not isinstance(pile, list) or not all(isinstance(c, str) for c in pile)
        ):
            raise InvalidSetup("G2", "'pile' must be a list of card ids (top first) or null")
        recipes = data.get("recipes", [])
        if not isinstance(recipes, list) or not all(
            isinstance(r, list) and all(isinstance(x, str) for x in r) for r in recipes
        ):
            raise InvalidSetup("G11", "'recipes' must be a list of recipe id lists, one per seat")
        return cls(
            grid=cards,
            pile=tuple(pile) if pile is not None else None,
            recipes=tuple(tuple(r) for r in recipes),
        )


def shuffled_deal(config: GameConfig, rng: random.Random) -> Deal:
    """Shuffle the cards (and recipes) for `config` with the given seeded RNG (G2)."""
    cards = list(deck_for(config.removed))
    rng.shuffle(cards)
    recipes: tuple[tuple[str, ...], ...] = ()
    if config.recipes:
        a, b = list(RECIPE_A), list(RECIPE_B)
        rng.shuffle(a)
        rng.shuffle(b)
        recipes = tuple((a[i], b[i]) for i in range(config.players))
    n = len(TAKEABLE_CELLS)
    return Deal(grid=tuple(cards[:n]), pile=tuple(cards[n:]), recipes=recipes)


class Snapshot(NamedTuple):
    """Everything an action can change, immutable: `Game.push` keeps one per action, so
    `Game.pop` steps back without replaying the game from its deal (like python-chess's
    move stack). Shared, never copied, by the copies of a game."""

    grid: tuple[str | None, ...]
    pile: PileSnapshot
    pawns: tuple[int, ...]
    cauldrons: tuple[tuple[str, ...], ...]
    spells: tuple[tuple[tuple[str, int], ...], ...]
    uses: tuple[tuple[tuple[str, int], ...], ...]
    discarded: tuple[str, ...]
    out_of_game: tuple[str, ...]
    seat: int
    phase: Phase
    move_value: int
    turns: int
    refill_cell: int | None
    last_card: tuple[int, str, int] | None
    end_reason: str | None
    last_card_seat: int | None
    actions: int  # how many actions had been applied


class Game:
    """One game of Glastonbury. Create with `Game.new()` (shuffled) or `Game.from_deal()`."""

    config: GameConfig
    deal: Deal

    def __init__(self, config: GameConfig, deal: Deal) -> None:
        config.validate()
        self._check_deal(config, deal)
        self._set_up(config, deal)

    def _set_up(self, config: GameConfig, deal: Deal) -> None:
        self.config = config
        self.deal = deal
        n = config.players
        self._n = n
        self.grid: list[str | None] = [None] * board.CELLS
        for cell, card in zip(TAKEABLE_CELLS, deal.grid, strict=True):
            self.grid[cell] = card
        for cell, corner in zip(CORNER_ORDER, CORNER_CARDS, strict=True):
            self.grid[cell] = corner
        if deal.pile is not None:
            self.pile = Pile(order=deal.pile)
        else:
            in_grid = set(deal.grid)
            self.pile = Pile(unknown=(c for c in deck_for(config.removed) if c not in in_grid))
        self.pawns: list[int] = list(config.positions)
        self.cauldrons: list[list[str]] = [[] for _ in range(n)]
        # Spells beside each cauldron as [card, uses_left]; 0 uses = face down (spent).
        self.spells: list[list[list[Any]]] = [[] for _ in range(n)]
        self._uses: list[dict[str, int]] = [{} for _ in range(n)]  # spell -> uses left, summed
        self.recipes: tuple[tuple[str, ...], ...] = deal.recipes
        self.discarded: list[str] = []  # the last card, when discarded (G10a)
        self.out_of_game: list[str] = []  # Vanesco with an empty pile (G8)
        self.seat = config.first_seat
        self.phase = Phase.TAKE
        self.move_value = 0
        self.turns = 0  # turns started, corner passes included
        self.refill_cell: int | None = None
        self.last_card: tuple[int, str, int] | None = None  # (cell, card, line)
        self.end_reason: str | None = None
        self.last_card_seat: int | None = None
        self.actions: list[Action] = []
        self._history: list[Snapshot] = []  # before each pushed action (`push`, `pop`)
        self._legal: tuple[Action, ...] | None = None
        self._score: GameScore | None = None
        self.opening_events: list[Event] = []
        self._start_turn(self.opening_events)

    # ----- construction -------------------------------------------------------------------

    @classmethod
    def new(cls, config: GameConfig, rng: random.Random) -> Game:
        """A simulated game: the deal is shuffled with `rng` (a seeded `random.Random`)."""
        config.validate()
        game = cls.__new__(cls)
        game._set_up(config, shuffled_deal(config, rng))  # a shuffle of the box: nothing to check
        return game

    @classmethod
    def from_deal(
        cls,
        config: GameConfig,
        grid: dict[str, str] | list[str] | tuple[str, ...],
        pile: list[str] | tuple[str, ...] | None = None,
        recipes: tuple[tuple[str, ...], ...] = (),
    ) -> Game:
        """A game from a given layout. `grid` maps 'r,c' to card ids (or lists the 32 cards
        in row order); `pile` None means a real table: the order of the pile is unknown."""
        if isinstance(grid, dict):
            deal = Deal.from_wire({"grid": grid, "pile": list(pile) if pile is not None else None})
            deal = Deal(deal.grid, deal.pile, recipes)
        else:
            deal = Deal(tuple(grid), tuple(pile) if pile is not None else None, recipes)
        return cls(config, deal)

    @staticmethod
    def _check_deal(config: GameConfig, deal: Deal) -> None:
        deck = deck_for(config.removed)
        if len(deal.grid) != len(TAKEABLE_CELLS):
            raise InvalidSetup("G2", f"the square holds 32 cards, the deal has {len(deal.grid)}")
        seen: set[str] = set()
        for card in (*deal.grid, *(deal.pile or ())):
            if card not in CARDS:
                raise InvalidSetup("G1", f"unknown card id {card!r}")
            if card in seen:
                raise InvalidSetup("G1", f"card {card} is dealt twice")
            seen.add(card)
        deck_set = set(deck)
        stray = sorted(seen - deck_set)
        if stray:
            why = (
                f"the {config.removed} ingredients are removed with 2 players"
                if config.removed and CARDS[stray[0]].colour == config.removed
                else "it is not a playing card"
            )
            raise InvalidSetup("G2", f"{stray[0]} cannot be dealt: {why}")
        if deal.pile is not None and len(seen) != len(deck):
            raise InvalidSetup(
                "G2", f"grid and pile must hold all {len(deck)} cards, they hold {len(seen)}"
            )
        if config.recipes:
            if len(deal.recipes) != config.players:
                raise InvalidSetup("G11", "the recipe variant deals one A and one B per seat")
            dealt = [r for pair in deal.recipes for r in pair]
            if len(set(dealt)) != len(dealt) or any(r not in RECIPES for r in dealt):
                raise InvalidSetup("G11", "recipes must be distinct recipe ids")
            for pair in deal.recipes:
                if sorted(r[0] for r in pair) != ["A", "B"]:
                    raise InvalidSetup("G11", "each seat gets one recipe A and one recipe B")
        elif deal.recipes:
            raise InvalidSetup("G11", "recipes are dealt only in the recipe variant")

    def copy(self, *, history: bool = True) -> Game:
        """An independent copy (for search: bots play out copies). `history=False`: one
        that cannot `pop()` back past this point (a search's sampled world needs none)."""
        new = Game.__new__(Game)
        new.__dict__.update(self.__dict__)
        new.grid = list(self.grid)
        new.pile = self.pile.copy()
        new.pawns = list(self.pawns)
        new.cauldrons = [list(c) for c in self.cauldrons]
        new.spells = [[list(s) for s in seat] for seat in self.spells]
        new._uses = [dict(u) for u in self._uses]
        new.discarded = list(self.discarded)
        new.out_of_game = list(self.out_of_game)
        new.actions = list(self.actions)
        new._history = list(self._history) if history else []
        new._legal = None
        return new

    # ----- queries ------------------------------------------------------------------------

    @property
    def players(self) -> int:
        return self._n

    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def faced_line(self, seat: int | None = None) -> int | None:
        return FACED_LINE[self.pawns[self.seat if seat is None else seat]]

    def spell_uses(self, seat: int, spell: str) -> int:
        """Uses left of `spell` ("accio" or "declinatio") over every such card held."""
        return self._uses[seat].get(spell, 0)

    def legal_actions(self) -> tuple[Action, ...]:
        """Every action the active seat may take now (empty once the game is over)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> tuple[Action, ...]:
        phase = self.phase
        grid = self.grid
        if phase is Phase.TAKE:
            line = FACED_LINE[self.pawns[self.seat]]
            if line is None:  # at a corner, holding a Declinatio (G7)
                return (USE_DECLINATIO, PASS)
            acts: list[Action] = [TAKES[c] for c in LINES[line] if grid[c] is not None]
            if self._uses[self.seat].get("accio"):
                faced = _LINE_SETS[line]
                acts.extend(
                    TAKES[c]
                    for c in TAKEABLE_CELLS
                    if c not in faced and grid[c] is not None and grid[c] not in _NOT_WITH_SPELL
                )
            return tuple(acts)
        if phase is Phase.DECLINATIO:
            line = FACED_LINE[self.pawns[self.seat]]
            assert line is not None
            return tuple(
                TAKES[c]
                for c in LINES[line]
                if grid[c] is not None and grid[c] not in _NOT_WITH_SPELL
            )
        if phase is Phase.REFILL:
            return tuple(REFILLS[c] for c in self.pile.possible_next())
        if phase is Phase.LAST_CARD:
            return (KEEP, DISCARD)
        return ()

    def why_illegal(self, action: Action) -> IllegalAction | None:
        """None if `action` is legal now, else the error naming the rule it breaks."""
        legal = self._legal if self._legal is not None else self.legal_actions()
        if action in legal:
            return None
        return self._explain(action)

    def _explain(self, action: Action) -> IllegalAction:
        phase = self.phase
        seat = self.seat
        if phase is Phase.OVER:
            return IllegalAction("G10a", "the game is over")
        expected = {
            Phase.REFILL: f"refill the hole at {cell_label(self.refill_cell or 0)} first",
            Phase.LAST_CARD: "keep or discard the last card first",
            Phase.TAKE: "take a card",
            Phase.DECLINATIO: "take a card from the line faced after Declinatio",
        }[phase]
        if isinstance(action, Refill):
            if phase is not Phase.REFILL:
                return IllegalAction("G4", f"no hole to refill now: {expected}")
            reason = self.pile.why_not_next(action.card)
            return IllegalAction("G4", f"cannot refill with {card_name(action.card)}: {reason}")
        if isinstance(action, Keep | Discard):
            return IllegalAction(
                "G10a", f"only the last card of the game is kept or discarded: {expected}"
            )
        if isinstance(action, UseDeclinatio | Pass):
            if phase is not Phase.TAKE:
                return IllegalAction("G7", f"not now: {expected}")
            if FACED_LINE[self.pawns[seat]] is not None:
                what = (
                    "Declinatio is used only at a corner"
                    if isinstance(action, UseDeclinatio)
                    else ("a pawn facing a line must take a card")
                )
                return IllegalAction("G7" if isinstance(action, UseDeclinatio) else "G4", what)
            return IllegalAction("G7", "no Declinatio with uses left")
        if not isinstance(action, Take):
            return IllegalAction("G4", f"{action!r} is not an action of this game")
        if type(action.cell) is not int or not 0 <= action.cell < board.CELLS:
            return IllegalAction("G3", f"cell {action.cell!r} is outside the 6×6 square")
        if phase not in (Phase.TAKE, Phase.DECLINATIO):
            return IllegalAction("G4", f"no take now: {expected}")
        cell = action.cell
        card = self.grid[cell]
        if cell in CORNER_CELLS:
            return IllegalAction(
                "G3", f"{cell_label(cell)} holds a corner card: it is never taken"
            )
        if card is None:
            return IllegalAction(
                "G4", f"{cell_label(cell)} is empty: there is nothing to take"
            )
        line = FACED_LINE[self.pawns[seat]]
        if line is None:
            return IllegalAction(
                "G4", "the pawn stands at a corner: nothing is taken (Declinatio, G7)"
            )
        in_line = cell in _LINE_SETS[line]
        if phase is Phase.DECLINATIO:
            if not in_line:
                return IllegalAction("G7", f"after Declinatio take from {line_label(line)}")
            return IllegalAction(
                "G7", f"after Declinatio, {card_name(card)} (Vanesco/Perluceo) may not be taken"
            )
        if self.spell_uses(seat, "accio") == 0:
            return IllegalAction(
                "G6",
                f"{cell_label(cell)} is not in {line_label(line)}, the line the pawn "
                "faces; "
                "taking elsewhere needs an Accio with uses left",
            )
        return IllegalAction(
            "G6", f"{card_name(card)} (Vanesco/Perluceo) may not be taken with Accio"
        )

    # ----- applying actions ---------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Apply the active seat's `action`; returns the events. Raises `IllegalAction`
        (naming the rule) and leaves the game unchanged if the action is not legal."""
        events: list[Event] = []
        self._do(action, events)
        return events

    def push(self, action: Action) -> list[Event]:
        """`apply()`, keeping a snapshot of the state before it, so that `pop()` can take
        the action back. Raises `IllegalAction` like `apply()`, keeping nothing."""
        snapshot = self.snapshot()
        events: list[Event] = []
        self._do(action, events)
        self._history.append(snapshot)
        return events

    def pop(self) -> Action:
        """Take back the last action, which `push()` applied; returns it. Raises
        `IllegalAction` when it was not pushed (applied with `apply()`/`play()`, or the
        game is a copy made with `history=False`) or there is none."""
        history = self._history
        if not self.actions:
            raise IllegalAction("G4", "no action to take back: the game has not started")
        if not history or history[-1].actions != len(self.actions) - 1:
            raise IllegalAction("G4", "the last action was not kept with push(): it cannot "
                                "be taken back without a replay")
        action = self.actions[-1]
        self.restore(history.pop())
        return action

    def snapshot(self) -> Snapshot:
        """The state as it is now (see `Snapshot`)."""
        return Snapshot(
            tuple(self.grid),
            self.pile.snapshot(),
            tuple(self.pawns),
            tuple(tuple(c) for c in self.cauldrons),
            tuple(tuple((slot[0], slot[1]) for slot in seat) for seat in self.spells),
            tuple(tuple(u.items()) for u in self._uses),
            tuple(self.discarded),
            tuple(self.out_of_game),
            self.seat,
            self.phase,
            self.move_value,
            self.turns,
            self.refill_cell,
            self.last_card,
            self.end_reason,
            self.last_card_seat,
            len(self.actions),
        )

    def restore(self, snapshot: Snapshot) -> None:
        """Back to `snapshot`, taken earlier in this game: later actions are forgotten
        (and the snapshots kept after it)."""
        if snapshot.actions > len(self.actions):
            raise IllegalAction("G4", "a snapshot from later in the game cannot be restored")
        self.grid = list(snapshot.grid)
        self.pile = Pile.restored(snapshot.pile)
        self.pawns = list(snapshot.pawns)
        self.cauldrons = [list(c) for c in snapshot.cauldrons]
        self.spells = [[[card, uses] for card, uses in seat] for seat in snapshot.spells]
        self._uses = [dict(u) for u in snapshot.uses]
        self.discarded = list(snapshot.discarded)
        self.out_of_game = list(snapshot.out_of_game)
        self.seat = snapshot.seat
        self.phase = snapshot.phase
        self.move_value = snapshot.move_value
        self.turns = snapshot.turns
        self.refill_cell = snapshot.refill_cell
        self.last_card = snapshot.last_card
        self.end_reason = snapshot.end_reason
        self.last_card_seat = snapshot.last_card_seat
        del self.actions[snapshot.actions:]
        history = self._history
        while history and history[-1].actions >= snapshot.actions:
            history.pop()
        self._legal = None
        self._score = None

    def play(self, action: Action) -> None:
        """`apply()` without building events: the same rules, for search and benchmarks
        (like python-chess's `push`). Raises `IllegalAction` the same way."""
        self._do(action, None)

    def _do(self, action: Action, events: list[Event] | None) -> None:
        legal = self._legal if self._legal is not None else self._compute_legal()
        for candidate in legal:  # identity first: legal_actions() hands out interned actions
            if candidate is action:
                break
        else:
            if action not in legal:
                self._legal = legal
                raise self._explain(action)
        self._legal = None
        kind = type(action)
        if kind is Take:
            self._take(action.cell, events)  # type: ignore[union-attr]
        elif kind is Refill:
            assert self.refill_cell is not None
            self._refill(self.refill_cell, action.card, events)  # type: ignore[union-attr]
        elif kind is UseDeclinatio:
            self._declinatio(events)
        elif kind is Pass:
            if events is not None:
                events.append(TurnPassed(self.seat, "corner"))
            self._next_turn(events)
        else:
            self._resolve_last_card(keep=kind is Keep, events=events)
        self.actions.append(action)

    def _spend(self, seat: int, spell: str) -> tuple[str, int]:
        """Spend one use of the card of `spell` with the fewest uses left (decision)."""
        best: list[Any] | None = None
        for slot in self.spells[seat]:
            if _SPELL[slot[0]] == spell and slot[1] > 0 and (best is None or slot[1] < best[1]):
                best = slot
        assert best is not None
        best[1] -= 1
        self._uses[seat][spell] -= 1
        return best[0], best[1]

    def _take(self, cell: int, events: list[Event] | None) -> None:
        seat = self.seat
        grid = self.grid
        card = grid[cell]
        assert card is not None
        grid[cell] = None
        line = FACED_LINE[self.pawns[seat]]
        assert line is not None
        spell_card: str | None = None
        uses_left: int | None = None
        if self.phase is Phase.DECLINATIO:
            via = "declinatio"
        elif cell in _LINE_SETS[line]:
            via = "line"
        else:
            via = "accio"
            spell_card, uses_left = self._spend(seat, "accio")
        if events is not None:
            events.append(CardTaken(seat, cell, card, via, spell_card, uses_left))

        ended_line: int | None = None
        if not self.pile.size:
            for candidate in CELL_LINES[cell]:
                if all(grid[c] is None for c in LINES[candidate]):
                    ended_line = candidate
                    break

        spell = _SPELL[card]
        if spell == "vanesco":
            self._vanesco(seat, card, events)
        elif spell == "perluceo":
            if events is not None:
                events.append(PerluceoUsed(seat, card))
            if events is not None:
                events.append(PerluceoReveal(seat, card, tuple(self.cauldrons[seat])))

        if ended_line is not None:
            self.phase = Phase.LAST_CARD
            self.last_card = (cell, card, ended_line)
            self.last_card_seat = seat
            if events is not None:
                events.append(LastCardTaken(seat, card, ended_line))
            return
        if card in _GOES_IN_CAULDRON:  # inlined `_place`: the hot path of every game
            cauldron = self.cauldrons[seat]
            cauldron.append(card)
            if events is not None:
                events.append(CardToCauldron(seat, card, len(cauldron)))
        else:
            self._place(seat, card, events)
        pile = self.pile
        if not pile.size:
            self._next_turn(events)
        elif pile.known:
            # Simulation: the shuffle (the deal) was the chance event; the refill follows.
            refill = pile.pop_top()
            grid[cell] = refill
            if events is not None:
                events.append(Refilled(cell, refill, pile.size))
            self.seat = (seat + 1) % self._n
            self._start_turn(events)
        else:
            # A real table: wait for the card observed in the hole (a `Refill` action).
            self.phase = Phase.REFILL
            self.refill_cell = cell

    def _refill(self, cell: int, card: str, events: list[Event] | None) -> None:
        self.pile.draw(card)
        self.grid[cell] = card
        self.refill_cell = None
        if events is not None:
            events.append(Refilled(cell, card, self.pile.size))
        self._next_turn(events)

    def _place(self, seat: int, card: str, events: list[Event] | None) -> None:
        if card in _GOES_IN_CAULDRON:
            cauldron = self.cauldrons[seat]
            cauldron.append(card)
            if events is not None:
                events.append(CardToCauldron(seat, card, len(cauldron)))
        else:
            spell = _SPELL[card] or ""
            uses = SPELL_USES[spell]
            self.spells[seat].append([card, uses])
            if uses:
                held = self._uses[seat]
                held[spell] = held.get(spell, 0) + uses
            if events is not None:
                events.append(SpellKept(seat, card, uses))

    def _vanesco(self, seat: int, card: str, events: list[Event] | None) -> None:
        to_pile = bool(self.pile)  # decided at the moment Vanesco is activated (G8)
        removed: list[tuple[int, str]] = []
        for k in range(1, self._n):
            victim = (seat + k) % self._n
            cauldron = self.cauldrons[victim]
            if cauldron:
                top = cauldron.pop()
                removed.append((victim, top))
                if to_pile:
                    self.pile.put_under(top)
                else:
                    self.out_of_game.append(top)
        if events is not None:
            events.append(VanescoResolved(seat, card, tuple(removed), to_pile))

    def _declinatio(self, events: list[Event] | None) -> None:
        seat = self.seat
        spell_card, uses_left = self._spend(seat, "declinatio")
        start = self.pawns[seat]
        position = (start + self.move_value) % PERIMETER
        self.pawns[seat] = position
        line = FACED_LINE[position]
        assert line is not None  # a move of 1-4 from a corner never ends at a corner (G7)
        if events is not None:
            events.append(DeclinatioUsed(seat, spell_card, uses_left, start, position, line))
        self.phase = Phase.DECLINATIO
        grid = self.grid
        if not any(grid[c] is not None and grid[c] not in _NOT_WITH_SPELL for c in LINES[line]):
            # Only Vanesco/Perluceo in the line: nothing can be taken, the game ends (G7).
            self._end("declinatio_blocked", None, events)

    def _resolve_last_card(self, keep: bool, events: list[Event] | None) -> None:
        assert self.last_card is not None
        _, card, _ = self.last_card
        seat = self.seat
        if events is not None:
            events.append(LastCardResolved(seat, card, keep))
        if keep:
            self._place(seat, card, events)
        else:
            self.discarded.append(card)
        self._end("line_emptied", seat, events)

    def _end(self, reason: str, last_card_seat: int | None, events: list[Event] | None) -> None:
        self.phase = Phase.OVER
        self.end_reason = reason
        self.last_card_seat = last_card_seat
        # Only the winners here: the full breakdown (`scores()`) is built when asked for.
        _, winners = score_totals(
            self.seat_cards(),
            last_card_seat=last_card_seat,
            first_seat=self.config.first_seat,
            second_player_bonus=self.config.second_player_bonus,
            validate=False,  # the rules built these cauldrons
        )
        if events is not None:
            events.append(GameEnded(reason, last_card_seat, winners))

    def _move_value_for(self, seat: int) -> int:
        cauldron = self.cauldrons[seat]
        if not cauldron:
            return EMPTY_CAULDRON_MOVE
        value = _MOVE[cauldron[-1]]
        if value == 0 and self.pawns[seat] in CORNER_POSITIONS:
            # Immuto on top while at a corner: the first non-Immuto card under it (G5).
            for card in reversed(cauldron):
                if _MOVE[card]:
                    return _MOVE[card]
            return EMPTY_CAULDRON_MOVE
        return value

    def _start_turn(self, events: list[Event] | None) -> None:
        while True:
            seat = self.seat
            cauldron = self.cauldrons[seat]
            value = _MOVE[cauldron[-1]] if cauldron else EMPTY_CAULDRON_MOVE
            if value == 0:
                value = self._move_value_for(seat)  # Immuto on top: maybe at a corner (G5)
            start = self.pawns[seat]
            position = (start + value) % PERIMETER
            self.pawns[seat] = position
            self.move_value = value
            self.turns += 1
            line = FACED_LINE[position]
            if events is not None:
                events.append(TurnStarted(seat, value, start, position, line))
            self.phase = Phase.TAKE
            if line is not None or self._uses[seat].get("declinatio"):
                return
            # At a corner with no Declinatio: nothing to take, the turn ends (G4).
            if events is not None:
                events.append(TurnPassed(seat, "corner"))
            self.seat = (seat + 1) % self._n

    def _next_turn(self, events: list[Event] | None) -> None:
        self.seat = (self.seat + 1) % self._n
        self._start_turn(events)

    # ----- scoring ------------------------------------------------------------------------

    def seat_cards(self) -> list[SeatCards]:
        return [
            SeatCards(
                seat=s,
                colour=self.config.colours[s],
                cauldron=tuple(self.cauldrons[s]),
                spells=tuple(slot[0] for slot in self.spells[s]),
                recipes=self.recipes[s] if self.recipes else (),
            )
            for s in range(self._n)
        ]

    def scores(self) -> GameScore:
        """The score as it stands (final once the game is over), with its breakdown."""
        if self._score is not None and self.is_over():
            return self._score
        result = score_game(
            self.seat_cards(),
            last_card_seat=self.last_card_seat,
            first_seat=self.config.first_seat,
            second_player_bonus=self.config.second_player_bonus,
        )
        if self.is_over():
            self._score = result
        return result

    # ----- views: the only way state leaves the engine ------------------------------------

    def view_public(self) -> dict[str, Any]:
        """`observer.public_view(self)` as JSON data. Never a covered cauldron card."""
        from engine.games.glastonbury.rules.observer import public_view

        return public_view(self).to_wire()

    def view(self, seat: int) -> dict[str, Any]:
        """What `seat` may see, as JSON data: the public view plus ``you``, the observer's
        `seat_view` (its colour, recipes, and its own stack with the memory aid)."""
        from engine.games.glastonbury.rules.observer import seat_view

        you = seat_view(self, seat).to_wire()  # raises for a seat not at the table
        return {**self.view_public(), "you": you}

    # ----- comparison (replay checks) -----------------------------------------------------

    def state_key(self) -> tuple[object, ...]:
        """Every piece of state, for checking that a replay rebuilt the same game."""
        config = self.config
        return (
            # The configuration as it plays (defaults resolved), so that a log read back
            # from its wire form, which spells the defaults out, compares equal.
            (config.colours, config.first_seat, config.positions, config.removed),
            (config.recipes, config.second_player_bonus, config.memory_aid),
            # What actions change (the spells' summed uses follow from the spells).
            self.snapshot()._replace(uses=()),
            self.recipes,
            tuple(self.actions),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.state_key() == other.state_key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<Game {self._n} players, turn {self.turns}, seat {self.seat}, "
            f"phase {self.phase.value}, pile {len(self.pile)}>"
        )


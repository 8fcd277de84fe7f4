"""The observer: the one way game state leaves the rules engine (like OpenSpiel's Observer).

`public_view(game)` is what everyone at the table may see, `seat_view(game, seat)` what one
seat may see besides. Both are frozen, typed dataclasses; the wire contract uses them as its
payload types (pydantic validates and serialises them), and the dashboard's ``*Public``
models extend them. Nothing here holds a covered cauldron card in a public view.

The table interpreter is the table's referee: it must compare what the readers see with the
hidden state. It asks the narrow questions at the end of this module (`where_is`,
`refill_refusal`, `returned_to_cauldrons`) instead of reading the hidden stacks or the pile.

Adding a field to a view: add it to the dataclass *with a default* (old payloads still
parse), fill it in `public_view` / `seat_view`, and test it in
tests/engine/games/glastonbury/rules/test_observer.py. The wire contract and the dashboard pick it
up.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final

from engine.games.glastonbury.rules.actions import PASS, USE_DECLINATIO, Take
from engine.games.glastonbury.rules.board import (
    FACED_LINE,
    LINES,
    PERIMETER,
    SIZE,
    TAKEABLE_CELLS,
    cell_name,
)
from engine.games.glastonbury.rules.cards import CARDS, family_name
from engine.games.glastonbury.rules.errors import IllegalAction
from engine.games.glastonbury.rules.names import seat_name
from engine.games.glastonbury.rules.scoring import Measure, ReasonCode

if TYPE_CHECKING:
    from engine.games.glastonbury.rules.game import Game, GameConfig
    from engine.games.glastonbury.rules.scoring import GameScore

# Read by pydantic when a view is a field of a wire model: unknown keys are refused.
_STRICT: Final[dict[str, Any]] = {"extra": "forbid"}
_LINE_SETS: Final = tuple(frozenset(cells) for cells in LINES)
_ONE_SPELL_A_TURN: Final = frozenset({"vanesco", "perluceo"})  # never taken with Declinatio


@dataclass(frozen=True, slots=True, kw_only=True)
class SpellView:
    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    card: str
    uses_left: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatPublicView:
    """One seat as everyone sees it: the top of its cauldron only, and how many cards."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    seat: int
    colour: str
    pawn: int
    faced_line: int | None = None
    top: str | None = None
    cauldron_size: int = 0
    spells: tuple[SpellView, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigView:
    """The game's set-up (G2), defaults spelled out."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    colours: tuple[str, ...] = ()
    first_seat: int = 0
    start_positions: tuple[int, ...] = ()
    removed_colour: str | None = None
    recipes: bool = False
    second_player_bonus: bool = False
    memory_aid: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedView:
    """What the active seat must do next, for the table screen and the interpreter."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    seat: int | None = None
    phase: str | None = None
    faced_line: int | None = None
    take: tuple[str, ...] = ()  # cells of the faced line that may be taken
    accio: tuple[str, ...] = ()  # cells only Accio reaches
    declinatio: bool = False
    # At a corner with Declinatio: the line the pawn would then face and the cells it could
    # take there (no Vanesco/Perluceo: one spell per turn), for the screens.
    declinatio_line: int | None = None
    declinatio_take: tuple[str, ...] = ()
    can_pass: bool = False
    refill_cell: str | None = None
    last_card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FamilyScoreView:
    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    family: str
    name: str
    colour: str
    cards: tuple[str, ...]
    immutos: tuple[str, ...]
    counted: int
    base: int
    doubled: bool
    bonus: int
    points: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasonParamsView:
    """The numbers behind a recipe's reason (scoring.ReasonParams); None where not used."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    measure: Measure | None = None
    colour: str | None = None
    own: int | None = None
    other: int | None = None
    rate: int | None = None
    seat: int | None = None  # 0-based, as on the wire; pages name it 1-based
    seat_colour: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecipeScoreView:
    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    recipe: str
    achieved: bool
    points: int
    reason: str  # in English, for the command line and older readers
    reason_code: ReasonCode  # pages word it in their language (i18n "recipe_reason_<code>")
    reason_params: ReasonParamsView


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatScoreView:
    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    seat: int
    colour: str
    total: int
    ingredient_points: int
    families: tuple[FamilyScoreView, ...]
    immuto_assignment: dict[str, str]  # Immuto id -> family
    recipes: tuple[RecipeScoreView, ...]
    second_player_bonus: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoresView:
    """The score breakdown of a finished game (cauldrons are face up by then)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    seats: tuple[SeatScoreView, ...]
    winners: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class EndView:
    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    reason: str | None = None
    last_card_seat: int | None = None
    line: int | None = None  # the row or column whose last card ended the game (0-11)
    scores: ScoresView | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PublicView:
    """What everyone at the table may see. Never a covered cauldron card (until the game
    is over, when cauldrons are turned face up for scoring). While a game is being dealt
    only the grid (and the set-up) is known: the other fields keep their defaults."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    grid: tuple[tuple[str | None, ...], ...]
    players: int = 0
    config: ConfigView | None = None
    pile_size: int = 0
    seats: tuple[SeatPublicView, ...] = ()
    turn: int | None = None
    turns: int = 0
    phase: str = "dealing"
    move_value: int = 0
    expected: ExpectedView = field(default_factory=ExpectedView)
    discarded: tuple[str, ...] = ()
    out_of_game: tuple[str, ...] = ()
    over: bool = False
    end: EndView | None = None

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatView:
    """What `seat` alone may see: its colour, its recipes, its own stack (bottom first)
    when the table's memory aid is on, and a Perluceo reveal (G9), sent once."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    seat: int
    colour: str
    recipes: tuple[str, ...] = ()
    stack: tuple[str, ...] | None = None
    reveal: tuple[str, ...] | None = None

    def to_wire(self) -> dict[str, Any]:
        return to_wire(self)


def to_wire(view: Any) -> dict[str, Any]:
    """A view as plain JSON data (lists, dicts), as the wire carries it."""
    out = _plain(view)
    assert isinstance(out, dict)
    return out


_FIELDS: dict[type[Any], tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    # Hand-rolled rather than dataclasses.asdict (which deep-copies): views are made often.
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    names = _FIELDS.get(type(value))
    if names is None:
        names = _FIELDS[type(value)] = tuple(f.name for f in dataclasses.fields(value))
    return {name: _plain(getattr(value, name)) for name in names}


# ----- building the views -----------------------------------------------------------------


def config_view(config: GameConfig) -> ConfigView:
    return ConfigView(
        colours=tuple(config.colours),
        first_seat=config.first_seat,
        start_positions=tuple(config.positions),
        removed_colour=config.removed,
        recipes=config.recipes,
        second_player_bonus=config.second_player_bonus,
        memory_aid=config.memory_aid,
    )


def public_view(game: Game) -> PublicView:
    """What everyone at the table may see of `game`."""
    over = game.is_over()
    seats = tuple(
        SeatPublicView(
            seat=s,
            colour=game.config.colours[s],
            pawn=game.pawns[s],
            faced_line=FACED_LINE[game.pawns[s]],
            top=cauldron[-1] if cauldron else None,
            cauldron_size=len(cauldron),
            spells=tuple(SpellView(card=c, uses_left=u) for c, u in game.spells[s]),
        )
        for s, cauldron in enumerate(game.cauldrons)
    )
    return PublicView(
        players=game.players,
        config=config_view(game.config),
        grid=tuple(tuple(game.grid[r * SIZE + c] for c in range(SIZE)) for r in range(SIZE)),
        pile_size=len(game.pile),
        seats=seats,
        turn=game.seat,
        turns=game.turns,
        phase=game.phase.value,
        move_value=game.move_value,
        expected=expected_view(game),
        discarded=tuple(game.discarded),
        out_of_game=tuple(game.out_of_game),
        over=over,
        end=EndView(reason=game.end_reason, last_card_seat=game.last_card_seat,
                    line=game.last_card[2] if game.last_card is not None
                    and game.end_reason == "line_emptied" else None,
                    scores=scores_view(game.scores())) if over else None,
    )


def dealing_view(grid: tuple[tuple[str | None, ...], ...],
                 config: GameConfig | None) -> PublicView:
    """The view while a game is being dealt: the cards read so far, and the set-up."""
    return PublicView(grid=grid, config=config_view(config) if config is not None else None)


def expected_view(game: Game) -> ExpectedView:
    legal = game.legal_actions()
    line = FACED_LINE[game.pawns[game.seat]]
    faced = _LINE_SETS[line] if line is not None else frozenset()
    takes = [a.cell for a in legal if type(a) is Take]
    declinatio = USE_DECLINATIO in legal
    decl_line = (FACED_LINE[(game.pawns[game.seat] + game.move_value) % PERIMETER]
                 if declinatio else None)
    decl_take = tuple(
        cell_name(c) for c in (LINES[decl_line] if decl_line is not None else ())
        if (card := game.grid[c]) is not None and CARDS[card].spell not in _ONE_SPELL_A_TURN
    )
    return ExpectedView(
        seat=None if game.is_over() else game.seat,
        phase=game.phase.value,
        faced_line=line,
        take=tuple(cell_name(c) for c in takes if c in faced),
        accio=tuple(cell_name(c) for c in takes if c not in faced),
        declinatio=declinatio,
        declinatio_line=decl_line,
        declinatio_take=decl_take,
        can_pass=PASS in legal,
        refill_cell=cell_name(game.refill_cell) if game.refill_cell is not None else None,
        last_card=game.last_card[1] if game.last_card else None,
    )


def scores_view(score: GameScore) -> ScoresView:
    return ScoresView(
        seats=tuple(
            SeatScoreView(
                seat=s.seat,
                colour=s.colour,
                total=s.total,
                ingredient_points=s.ingredient_points,
                families=tuple(
                    FamilyScoreView(family=f.family, name=family_name(f.family),
                                    colour=f.colour, cards=f.cards, immutos=f.immutos,
                                    counted=f.counted, base=f.base, doubled=f.doubled,
                                    bonus=f.bonus, points=f.points)
                    for f in s.families
                ),
                immuto_assignment=dict(s.immuto_assignment),
                recipes=tuple(
                    RecipeScoreView(recipe=r.recipe, achieved=r.achieved, points=r.points,
                                    reason=r.reason, reason_code=r.reason_code,
                                    reason_params=ReasonParamsView(**r.reason_params.to_json()))
                    for r in s.recipes
                ),
                second_player_bonus=s.second_player_bonus,
            )
            for s in score.seats
        ),
        winners=tuple(score.winners),
    )


def seat_view(game: Game, seat: int, reveal: tuple[str, ...] | None = None) -> SeatView:
    """What `seat` may see besides the public view; `reveal` is a Perluceo reveal (the
    private event) to pass on once."""
    if not 0 <= seat < game.players:
        raise IllegalAction("G2", f"{seat_name(seat)} is not at this table "
                            f"(seats 1 to {game.players})")
    return SeatView(
        seat=seat,
        colour=game.config.colours[seat],
        recipes=tuple(game.recipes[seat]) if game.recipes else (),
        stack=tuple(game.cauldrons[seat]) if game.config.memory_aid else None,
        reveal=reveal,
    )


# ----- the referee's narrow questions (the table interpreter, never a view) ---------------


@dataclass(frozen=True, slots=True)
class Place:
    """Where a card is in the game: ``kind`` is grid, top (of a cauldron), cauldron
    (covered), spells, pile, discarded or out; ``cell`` (grid) or ``seat`` says which."""

    kind: str
    cell: int | None = None
    seat: int | None = None


def where_is(game: Game, card: str) -> Place | None:
    """Where `card` is in the game, or None when it is in none of its places."""
    for cell in TAKEABLE_CELLS:
        if game.grid[cell] == card:
            return Place("grid", cell=cell)
    for seat, cauldron in enumerate(game.cauldrons):
        if cauldron and cauldron[-1] == card:
            return Place("top", seat=seat)  # face up: public
        if card in cauldron:
            return Place("cauldron", seat=seat)
    for seat, spells in enumerate(game.spells):
        if any(slot[0] == card for slot in spells):
            return Place("spells", seat=seat)
    if card in game.pile:
        return Place("pile")
    if card in game.discarded:
        return Place("discarded")
    if card in game.out_of_game:
        return Place("out")
    return None


def pile_size(game: Game) -> int:
    return len(game.pile)


def refill_refusal(game: Game, card: str) -> str | None:
    """Why `card` cannot be the pile's next card (a refill), or None when it may be (the
    order is known only when the pile was shuffled by the engine)."""
    return game.pile.why_not_next(card)


def returned_to_cauldrons(before: Game, after: Game) -> list[tuple[int, str]]:
    """(seat, card) for each card that an undo from `before` to `after` puts back on a
    cauldron (cards a Vanesco sent under the pile), bottom first."""
    out: list[tuple[int, str]] = []
    for seat in range(after.players):
        now, then = before.cauldrons[seat], after.cauldrons[seat]
        if len(then) > len(now):
            out += [(seat, card) for card in then[len(now):]]
    return out


def physical_layout(game: Game) -> dict[str, Any]:
    """Where every card of the game lies, as a simulated table lays it out (its ``restore``
    gesture, after an undo): the square, each cauldron (bottom first), the spells beside it,
    the pile's cards (unordered part, then those Vanesco sent under it, top first), the
    pawns (one position per seat). Covered
    cards included: for the simulated hub only, never for a view."""
    _, order, unknown, bottom = game.pile.state()
    assert isinstance(order, tuple) and isinstance(unknown, frozenset)
    assert isinstance(bottom, tuple)
    return {
        "cells": {cell_name(c): game.grid[c] for c in TAKEABLE_CELLS
                  if game.grid[c] is not None},
        "stacks": [list(s) for s in game.cauldrons],
        "beside": [[slot[0] for slot in spells] for spells in game.spells],
        "pile": sorted([*order, *unknown]),
        "pile_bottom": list(bottom),
        "pawns": list(game.pawns),  # a table with pawn sensors lays them there too
    }

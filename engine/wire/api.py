"""The typed API map: every command's arguments and result, each defined once.

`engine.wire.contract` says which topic carries which envelope (`CommandRequest` with its
``args``, `CommandResponse` with its ``data``); this module says what ``args`` and ``data``
are, verb by verb:

- `GAME_API`: ``cmd/<verb>`` (engine service; `GAME_VERBS`),
- `HUB_API`: ``hub/cmd/<verb>`` (hub; `HUB_VERBS`), whose ``sim`` verb takes one of the
  simulated table's gestures (`Gesture`, one model per ``action``, `GESTURES`).

A service builds its verb -> handler map with `Command.bind` and `handler_map` (which
checks that the map covers the verbs exactly), then `dispatch` refuses an unknown verb or
malformed arguments in one place, raising `BadArgs` with a stable ``code`` (and the rule
id where one applies), before any handler runs. `api_schemas` exports the map as JSON
Schema (``cauldron schema``), from which the pages' JSDoc types are generated
(`dashboard.jsdoc`).

A new command touches: its verb in `GAME_VERBS`/`HUB_VERBS` (the topics), its args and result
models and its `Command` entry here, and its handler where the map is bound
(`EngineService.handlers`, the interpreter's `_COMMANDS` for a verb that changes the game,
or `Hub._bind_handlers`); a missing or extra handler stops the service at start. A caller
sends the typed args (`Bridge.command(api.KEEP, SeatArgs(seat=1))`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Final, Generic, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    RootModel,
    TypeAdapter,
    ValidationError,
    create_model,
    field_validator,
)

from engine.games import DEFAULT_GAME, game_ids
from engine.games import games as get_games
from engine.games import get as get_game
from engine.games.base import UnknownGame
from engine.wire.contract import (
    CARD_ID_PATTERN,
    CELL_PATTERN,
    GAME_VERBS,
    HUB_VERBS,
    MAX_SEQ,
    N_PERIMETER,
    N_SEATS,
    SCHEMA_VERSION,
    GameEvents,
    Prompt,
    ReaderSeen,
    WireError,
    game_title,
)

Seat = Annotated[int, Field(ge=0, lt=N_SEATS)]
Position = Annotated[int, Field(ge=0, lt=N_PERIMETER)]
# A place on the simulated table: a cell "r,c", a pad "pad:<seat>" or a pawn "pos:<n>".
Where = Annotated[str, Field(max_length=16)]
# The hand a gesture is made with: the host's or a seat's ("0".."3").
Owner = Literal["host", "0", "1", "2", "3"]


class BadArgs(WireError):
    """An unknown verb or malformed arguments: refused before any handler runs.
    ``code`` is the refusal's stable id, ``rule`` the rule id (G…) where one applies."""

    def __init__(self, message: str, *, code: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.rule = rule


class Args(BaseModel):
    """Base of a command's arguments: strict types, no unknown key, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class Result(BaseModel):
    """Base of a command's result (``data`` of an ok response). Not strict: a stored
    answer read back from a table's log is JSON."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoArgs(Args):
    """A verb that takes no arguments."""


class StoredAnswer(RootModel[dict[str, JsonValue]]):
    """The answer of a command that ran before (its transaction is in the table's log),
    read back and given again as it was."""


# ---------------------------------------------------------------- game commands (cmd/<verb>)


class NewGameBase(Args):
    """``cmd/new_game``: ``game`` (its id in the registry, `engine.games`; the default game
    when not sent), that game's set-up options (the fields of its ONE options model,
    `GameDefinition.options`, copied in by `new_game_args`; its rules check them) and, for
    Glastonbury's recipe variant, each seat's recipe cards (G11; dealt by the engine when
    not given). ``game_id`` is the engine's: a client never sends it (the log keeps it with
    the command)."""

    game: str = Field(default=DEFAULT_GAME, min_length=1, max_length=32,
                      description="the game's id (engine.games)")
    recipe_cards: list[list[str]] | None = Field(default=None, max_length=8)
    game_id: str | None = Field(default=None, min_length=1, max_length=64)
    seed: int | None = Field(default=None, ge=0, lt=2**63, description="the seed of the "
                             "game's own chance (a virtual bag's draws): the engine's, stored "
                             "with the command so a restart replays the same game")

    @field_validator("game")
    @classmethod
    def _known_game(cls, game: str) -> str:
        if game not in game_ids():
            raise ValueError(str(UnknownGame(game, game_ids())))
        return game

    def config_wire(self) -> dict[str, JsonValue]:
        """The game's options as given (its wire form): the set-up fields sent."""
        given = self.model_dump(mode="json",
                                exclude={"recipe_cards", "game_id", "game", "seed"})
        return {k: v for k, v in given.items() if k in self.model_fields_set}


def new_game_args(game: str) -> type[NewGameBase]:
    """``cmd/new_game``'s arguments for ``game``: `NewGameBase` plus every field of the
    game's options model (defaults, bounds, descriptions), so a new option reaches the
    engine without being listed here."""
    options = get_game(game).options
    fields: dict[str, Any] = {name: (info.annotation, info)
                              for name, info in options.model_fields.items()}
    model = create_model(f"NewGameArgs{'' if game == DEFAULT_GAME else game_title(game)}",
                         __base__=NewGameBase, __doc__=NewGameBase.__doc__, **fields)
    return model


NEW_GAME_ARGS: Final[dict[str, type[NewGameBase]]] = {g: new_game_args(g) for g in game_ids()}
NewGameArgs: Final = NEW_GAME_ARGS[DEFAULT_GAME]


class SeatArgs(Args):
    """``keep`` / ``discard`` / ``declinatio``: the request's ``seat`` is what counts; the
    pages also name it here."""

    seat: Seat | None = None


class ConfirmArgs(Args):
    """``cmd/confirm``: the active seat's confirm, or with ``hub_id`` the host accepting a
    new hub for the table (`ServiceState.pending_hub`)."""

    hub_id: str | None = Field(default=None, min_length=1, max_length=64)


class PlayArgs(Args):
    """``cmd/play``: a move of the table's game by a seat (a phone's button, a bot's move):
    ``verb`` and its ``args``, typed by the game's own model (`GameDefinition.moves`),
    checked by its interpreter (``unknown_move``, ``bad_args``, its rule's refusal)."""

    seat: int | None = Field(default=None, ge=0, lt=N_SEATS,
                             description="the seat moving (default: the request's seat)")
    verb: str = Field(min_length=1, max_length=32, description="one of the game's moves")
    args: dict[str, JsonValue] = Field(default_factory=dict, max_length=16)


class HintArgs(Args):
    """``cmd/hint`` (read-only; the request's seat asks)."""

    level: str = Field(default="greedy", min_length=1, max_length=32,
                       description="a bot of the table's game (GameDefinition.bot_names)")
    lang: Literal["fr", "en", "de"] = "en"

    @field_validator("level")
    @classmethod
    def _a_bot(cls, level: str) -> str:
        names = sorted({n for g in get_games() for n in g.bot_names()})
        if level not in names:
            raise ValueError(f"no bot of that name: one of {', '.join(names)}")
        return level


class GameAnswer(Result):
    """What a game command did: the rules actions it applied (wire form), what an undo
    took back (words and codes) and how to put the cards back, and the new prompt."""

    table: str
    game_id: str | None
    status: str
    actions: list[dict[str, JsonValue]]
    instructions: list[str]
    undone: str | None
    undone_codes: list[dict[str, JsonValue]]
    steps: list[dict[str, JsonValue]]
    prompt: Prompt


class HubAccepted(Result):
    """``confirm {"hub_id"}``: the table's hub is now this one."""

    table: str
    hub_id: str


class HintAnswer(Result):
    """What a bot suggests to the asking seat, seeing only what it sees."""

    seat: int
    level: str
    action: dict[str, JsonValue]
    card: str | None
    cell: str | None
    reason: str
    reasons: dict[str, JsonValue]


class HistoryAnswer(Result):
    """The current game's public action stream from its start (`GameEvents` each,
    without their null fields)."""

    messages: list[dict[str, JsonValue]]


# ---------------------------------------------------------------- hub commands (hub/cmd/<verb>)


class TurnArgs(Args):
    """``hub/cmd/turn``: light that seat's turn LED (None: all off)."""

    seat: Seat | None = None


class TurnResult(Result):
    seat: int | None


class BuzzArgs(Args):
    """``hub/cmd/buzz``: sound the buzzer (an illegal move) for ``ms``."""

    ms: int = Field(default=300, gt=0, le=5000)


class BuzzResult(Result):
    ms: int


class SnapshotResult(Result):
    """``hub/cmd/snapshot``: republished ``hub/snapshot``, as of this seq."""

    last_seq: int


class ReplayArgs(Args):
    """``hub/cmd/replay``: republish the kept events of ``epoch`` (a gap in seq numbers)."""

    epoch: str = Field(min_length=1, max_length=64)
    from_seq: int = Field(ge=1, le=MAX_SEQ)
    to_seq: int | None = Field(default=None, ge=0, le=MAX_SEQ)


class ReplayResult(Result):
    replayed: int
    first_kept: int | None
    last_seq: int


class ReadersResult(Result):
    """``hub/cmd/readers``: what every reader sees now (card ids and UIDs)."""

    hub_id: str
    backend: str
    pads: int
    tags_known: int
    readers: list[ReaderSeen]


class EnrolArgs(Args):
    """``hub/cmd/enrol``: start enrolling on ``pad`` (``write``: also write the card id into
    each tag), undo or skip the last card, stop, or just say how far it got; or ``spare``:
    the next tag laid on ``pad`` becomes ``piece``'s (a piece id, or a kind of a game that
    enrols by kind), its old tag retired. A spare may be asked at any time, a game running."""

    action: Literal["start", "status", "undo", "skip", "stop", "spare"] = "status"
    pad: int = 0
    write: bool = False
    piece: str | None = Field(default=None, min_length=1, max_length=32,
                              description="spare: the lost piece, or its kind")


class EnrolSaid(Result):
    """One thing enrolment says (hub/enroll.py `WORDS`): the pages word ``code`` in their
    language (i18n ``enrol_<code>``) with ``params``."""

    code: str
    params: dict[str, str | int] = {}


class EnrolStatus(Result):
    """Enrolment progress (also in `HubSnapshot.enrolment`); a key is absent when it does
    not apply (no enrolment ran: only ``active``)."""

    active: bool
    pad: int | None = None
    message: str | None = None  # the English of `said` (the terminal's)
    said: list[EnrolSaid] | None = None
    enrolled: int | None = None
    done: int | None = None
    total: int | None = None
    next: str | None = None
    next_label: str | None = None
    skipped: list[str] | None = None
    enrolled_now: int | None = None
    spare: str | None = None  # the piece whose new tag the pad waits for
    spares: int | None = None  # spares enrolled since the hub started


# ---------------------------------------------------------------- gestures (hub/cmd/sim)


class Gesture(Args):
    """One ``hub/cmd/sim`` action on the simulated table (`hub.backends.sim`), made with
    ``owner``'s hand. Every gesture takes ``where``, ``seat`` and ``owner``; the ones named
    in `NEEDS_WHERE` / `NEEDS_SEAT` need them."""

    NEEDS_WHERE: ClassVar[bool] = False
    NEEDS_SEAT: ClassVar[bool] = False
    # A malformed low-level action (tests, the engine's restore) is bad_sim_args; a person's
    # gesture is sim_refused, like a gesture the table cannot do.
    BAD_CODE: ClassVar[str] = "sim_refused"

    owner: Owner = "host"
    where: Where | None = None
    seat: Seat | None = None

    @property
    def place(self) -> str:
        assert self.where is not None, "checked by parse (NEEDS_WHERE)"
        return self.where

    @property
    def seat_no(self) -> int:
        assert self.seat is not None, "checked by parse (NEEDS_SEAT)"
        return self.seat


class Lift(Gesture):
    """Pick up the card at ``where`` (a cell or a pad)."""

    action: Literal["lift"]
    NEEDS_WHERE: ClassVar[bool] = True


class Lay(Gesture):
    """Put the card in hand on ``where`` (a cell or a pad)."""

    action: Literal["lay"]
    NEEDS_WHERE: ClassVar[bool] = True


class Slide(Gesture):
    """Slide the card on pad ``seat`` onto that seat's cauldron (or beside it, a spell)."""

    action: Literal["slide"]
    NEEDS_SEAT: ClassVar[bool] = True


class Draw(Gesture):
    """Take the pile's top card into the hand (a refill)."""

    action: Literal["draw"]


class Drop(Gesture):
    """Put the card in hand under the pile."""

    action: Literal["drop"]


class Tap(Gesture):
    """Tap the top card of seat ``seat``'s cauldron on its pad (Vanesco)."""

    action: Literal["tap"]
    NEEDS_SEAT: ClassVar[bool] = True


class Vanesco(Gesture):
    """The same as `Tap`, named after the spell."""

    action: Literal["vanesco"]
    NEEDS_SEAT: ClassVar[bool] = True


class TakeCard(Gesture):
    """One tap: lift the card at ``where`` and lay it on seat ``seat``'s pad."""

    action: Literal["take"]
    NEEDS_WHERE: ClassVar[bool] = True
    NEEDS_SEAT: ClassVar[bool] = True


class Refill(Gesture):
    """One tap: draw the pile's top card and lay it into the hole ``where``."""

    action: Literal["refill"]
    NEEDS_WHERE: ClassVar[bool] = True


class Deal(Gesture):
    """Shuffle the box and lay 32 cards face up (G2); ``seed`` repeats a shuffle."""

    action: Literal["deal"]
    removed_colour: str | None = Field(default=None, max_length=16)
    # JSON numbers: any integer a client sends (not the rules' bounded ones).
    seed: int | None = None


class RestoreLayout(Args):
    """What the engine's game holds, for the simulated table to lay out (an undo, a
    restart): ``cells`` {"r,c": card}, ``stacks`` and ``beside`` per seat (bottom first),
    ``pile`` (any order), ``pile_bottom`` (top first), ``pawns`` one position per seat."""

    cells: dict[Annotated[str, Field(pattern=CELL_PATTERN)],
                Annotated[str, Field(pattern=CARD_ID_PATTERN)]] = Field(default_factory=dict)
    stacks: list[list[str]] = Field(default_factory=list, max_length=N_SEATS)
    beside: list[list[str]] = Field(default_factory=list, max_length=N_SEATS)
    pile: list[str] = Field(default_factory=list, max_length=200)
    pile_bottom: list[str] = Field(default_factory=list, max_length=200)
    pawns: list[int] | None = Field(default=None, max_length=N_SEATS)


class Restore(Gesture):
    """Lay the table out as ``layout`` says."""

    action: Literal["restore"]
    layout: RestoreLayout


class ViewTable(Gesture):
    """The public view (no covered card, no pile order)."""

    action: Literal["view"]


class SeatStack(Gesture):
    """What only seat ``seat`` may see: its own stack."""

    action: Literal["seat"]
    NEEDS_SEAT: ClassVar[bool] = True


class Place(Gesture):
    """Low level: a tag (``card_id``'s made-up UID, or ``uid``) lies down at ``where``."""

    action: Literal["place"]
    NEEDS_WHERE: ClassVar[bool] = True
    BAD_CODE: ClassVar[str] = "bad_sim_args"
    card_id: str | None = Field(default=None, max_length=40)
    uid: str | None = Field(default=None, max_length=20)


class Remove(Gesture):
    """Low level: whatever lies at ``where`` is lifted."""

    action: Literal["remove"]
    NEEDS_WHERE: ClassVar[bool] = True
    BAD_CODE: ClassVar[str] = "bad_sim_args"


class Clear(Gesture):
    """Low level: everything off the table."""

    action: Literal["clear"]
    BAD_CODE: ClassVar[str] = "bad_sim_args"


class State(Gesture):
    """Low level: what really lies where (the physical truth; covered cards too)."""

    action: Literal["state"]
    BAD_CODE: ClassVar[str] = "bad_sim_args"


class MovePawn(Gesture):
    """Pawn sensors: one pawn moves from one perimeter position to another."""

    action: Literal["pawn"]
    BAD_CODE: ClassVar[str] = "bad_sim_args"
    from_: Position = Field(alias="from")
    to: Position


class SetPawns(Gesture):
    """Pawn sensors: every pawn at once (a game's start)."""

    action: Literal["pawns"]
    BAD_CODE: ClassVar[str] = "bad_sim_args"
    positions: list[Position] = Field(max_length=N_SEATS)


GESTURES: Final[tuple[type[Gesture], ...]] = (
    Lift, Lay, Slide, Draw, Drop, Tap, Vanesco, TakeCard, Refill, Deal, Restore, ViewTable,
    SeatStack, Place, Remove, Clear, State, MovePawn, SetPawns,
)
# What a person does at the table (the virtual table's pages and the bots); the rest are
# the hub's own (view, seat) or low level (tests, the engine's restore).
GestureAction = Literal["lift", "lay", "draw", "tap", "slide", "drop", "take", "refill",
                        "vanesco"]
AnyGesture = Annotated[
    Lift | Lay | Slide | Draw | Drop | Tap | Vanesco | TakeCard | Refill | Deal | Restore
    | ViewTable | SeatStack | Place | Remove | Clear | State | MovePawn | SetPawns,
    Field(discriminator="action"),
]
_BY_ACTION: Final[dict[str, type[Gesture]]] = {
    g.model_fields["action"].annotation.__args__[0]: g  # type: ignore[union-attr]
    for g in GESTURES
}


class SimArgs(RootModel[AnyGesture]):
    """``hub/cmd/sim``: one gesture (the request's args are the gesture itself)."""

    model_config = ConfigDict(frozen=True)

    @property
    def gesture(self) -> Gesture:
        return self.root


class SimResult(Result):
    """What a gesture did; only the keys of its kind are present: ``card`` (the card it
    moved), ``grid`` (deal), ``moved`` (restore), the public view's fields (view), ``seat``
    and ``stack`` (seat), ``uid`` (place, remove), ``lying`` (state), ``pawns``; and
    ``view``, the public view after it (gestures)."""

    card: str | None = None
    grid: list[str] | None = None
    moved: int | None = None
    seat: int | None = None
    stack: list[str] | None = None
    uid: str | None = None
    lying: dict[str, str] | None = None
    pawns: list[int] | None = None
    dealt: bool | None = None
    cells: dict[str, str] | None = None
    pads: dict[str, str] | None = None
    hands: dict[str, JsonValue] | None = None
    pile_size: int | None = None
    tops: dict[str, str | None] | None = None
    sizes: dict[str, int] | None = None
    beside: dict[str, list[str]] | None = None
    view: dict[str, JsonValue] | None = None


class LayoutArgs(Args):
    """``hub/cmd/layout``: the game changed without the readers (an undo, a game's end:
    ``layout``; a start: ``pawns``). A back-end that lays its table out itself (capability
    ``lay_out``, announced in ``HubSnapshot.capabilities``) does so; the engine asks no
    other."""

    layout: RestoreLayout | None = None
    pawns: list[Position] | None = Field(default=None, max_length=N_SEATS)


# ---------------------------------------------------------------- the map

A = TypeVar("A", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)
C = TypeVar("C")


def _where_of(loc: tuple[int | str, ...]) -> str:
    # A key the sender made up is shown escaped: a refusal is one printable line.
    return ".".join(str(p) if str(p).isprintable() else repr(p) for p in loc) or "args"


@dataclass(frozen=True)
class Command(Generic[A, R]):
    """One verb: its arguments' model, its result's model, and how a malformed request is
    refused (``code``; ``codes`` per argument name; ``rule`` / ``rules`` per argument)."""

    verb: str
    args: type[A]
    result: type[R] | tuple[type[BaseModel], ...]
    doc: str
    code: str = "bad_args"
    codes: Mapping[str, str] = field(default_factory=dict)
    rule: str | None = None
    rules: Mapping[str, str] = field(default_factory=dict)
    changes_game: bool = False  # a game command the interpreter applies (stored in the log)

    def parse(self, raw: Mapping[str, object] | A | None) -> A:
        """The typed arguments, or `BadArgs` naming the first problems."""
        if isinstance(raw, self.args):
            return raw
        if self.args is NewGameArgs and isinstance(raw, NewGameBase):
            return raw  # (each game has its own NewGameBase)
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise BadArgs(f"{self.verb}: args must be a JSON object, got {type(raw).__name__}",
                          code=self.code, rule=self.rule)
        if self.args is SimArgs:
            return self._parse_gesture(raw)
        if self.args is NewGameArgs:  # the options are the game's: parsed by its model
            game = raw.get("game", DEFAULT_GAME)
            model = NEW_GAME_ARGS.get(game, NewGameArgs) if isinstance(game, str) else NewGameArgs
            try:
                return model.model_validate(dict(raw))  # type: ignore[return-value]
            except ValidationError as exc:
                raise self._refusal(exc, self.verb) from None
        try:
            return self.args.model_validate(dict(raw))
        except ValidationError as exc:
            raise self._refusal(exc, self.verb) from None

    def _parse_gesture(self, raw: Mapping[str, object]) -> A:
        action = raw.get("action")
        kind = _BY_ACTION.get(action) if isinstance(action, str) else None
        if kind is None:
            raise BadArgs(f"unknown gesture {action!r}", code=self.code)
        try:
            gesture = kind.model_validate(dict(raw))
        except ValidationError as exc:
            raise self._refusal(exc, f"{self.verb} {action}", kind.BAD_CODE) from None
        if kind.NEEDS_WHERE and gesture.where is None:
            raise BadArgs(f"{action} needs 'where': a cell 'r,c' or a pad 'pad:<seat>'",
                          code=kind.BAD_CODE)
        if kind.NEEDS_SEAT and gesture.seat is None:
            raise BadArgs(f"{action} needs 'seat': a seat 0..{N_SEATS - 1}", code=kind.BAD_CODE)
        args = SimArgs(gesture)  # type: ignore[arg-type]  # one of AnyGesture
        assert isinstance(args, self.args)
        return args

    def _refusal(self, exc: ValidationError, what: str, code: str | None = None) -> BadArgs:
        parts = []
        first: str | None = None
        for err in exc.errors(include_url=False)[:3]:
            loc = tuple(err.get("loc", ()))
            name = _where_of(loc)
            first = first or (str(loc[0]) if loc else None)
            given = "" if err.get("type") == "missing" else f" {err.get('input')!r:.60}"
            parts.append(f"{name}{given}: {err.get('msg', 'invalid')}")
        message = f"{what}: " + "; ".join(parts)
        return BadArgs(message, code=code or self.codes.get(first or "", self.code),
                       rule=self.rules.get(first or "", self.rule))

    def bind(self, handler: Callable[[C, A], R | StoredAnswer]) -> Bound[C]:
        """This verb with its handler: parses the args, runs it, dumps the result."""

        def run(ctx: C, raw: Mapping[str, object] | BaseModel | None) -> dict[str, JsonValue]:
            args = self.parse(raw)  # type: ignore[arg-type]  # a model: checked by parse
            return dump(handler(ctx, args))

        return Bound(self.verb, self, run)


def dump(result: BaseModel) -> dict[str, JsonValue]:
    """A result as the response's ``data``: its fields as JSON, a top-level field left
    unset left out (a status that does not apply), nested models whole."""
    if isinstance(result, RootModel):
        root = result.root
        return dump(root) if isinstance(root, BaseModel) else dict(root)
    data: dict[str, JsonValue] = result.model_dump(mode="json", by_alias=True)
    given = {field.alias or name for name, field in type(result).model_fields.items()
             if name in result.model_fields_set}
    return {k: v for k, v in data.items() if k in given}


@dataclass(frozen=True)
class Bound(Generic[C]):
    """A verb bound to its handler (`Command.bind`)."""

    verb: str
    command: Command[Any, Any]
    run: Callable[[C, Mapping[str, object] | BaseModel | None], dict[str, JsonValue]]


def handler_map(api: Mapping[str, Command[Any, Any]], bound: Iterable[Bound[C]]
                ) -> dict[str, Bound[C]]:
    """The verb -> handler map, exactly the verbs of ``api`` (a missing or extra one is a
    programming error, caught when the service starts)."""
    handlers = {b.verb: b for b in bound}
    if set(handlers) != set(api) or any(api[v] is not b.command for v, b in handlers.items()):
        raise ValueError(f"handlers for {sorted(handlers)} do not match the API {sorted(api)}")
    return handlers


def dispatch(handlers: Mapping[str, Bound[C]], verb: str, ctx: C,
             raw: Mapping[str, object] | BaseModel | None) -> dict[str, JsonValue]:
    """Run ``verb``'s handler; an unknown verb or malformed args raise `BadArgs`."""
    bound = handlers.get(verb)
    if bound is None:
        raise BadArgs(f"unknown command {verb!r}", code="unknown_command")
    return bound.run(ctx, raw)


def _map(*commands: Command[Any, Any]) -> dict[str, Command[Any, Any]]:
    return {c.verb: c for c in commands}


# Each verb once, typed, so that binding a handler of the wrong types fails mypy.
NEW_GAME: Final = Command(
    "new_game", NewGameArgs, GameAnswer, "deal and start a game (G2)", code="bad_config",
    rule="G2", rules={"first_seat": "G4", "recipe_cards": "G11"},
    codes={"game_id": "bad_args", "game": "unknown_game"},
    changes_game=True)
UNDO: Final = Command("undo", NoArgs, GameAnswer, "take back the last action (the host)",
                      changes_game=True)
KEEP: Final = Command("keep", SeatArgs, GameAnswer, "keep the game's last card (G10a)",
                      changes_game=True)
DISCARD: Final = Command("discard", SeatArgs, GameAnswer,
                         "discard the game's last card (G10a)", changes_game=True)
DECLINATIO: Final = Command(
    "declinatio", SeatArgs, GameAnswer,
    "use Declinatio where it faces only Vanesco/Perluceo (ends the game, G7)",
    changes_game=True)
CONFIRM: Final[Command[ConfirmArgs, GameAnswer | HubAccepted]] = Command(
    "confirm", ConfirmArgs, (GameAnswer, HubAccepted),
    "the active seat confirms (passes), or the host accepts a new hub", changes_game=True)
END: Final = Command("end", NoArgs, GameAnswer, "end the game in progress", changes_game=True)
PLAY: Final = Command("play", PlayArgs, GameAnswer, "a seat's move of the table's game "
                      "(a phone's button: GameDefinition.moves)", changes_game=True)
HINT: Final = Command("hint", HintArgs, HintAnswer, "what a bot suggests to the asking seat")
HISTORY: Final = Command("history", NoArgs, HistoryAnswer,
                         "the current game's public action stream")

TURN: Final = Command("turn", TurnArgs, TurnResult, "light a seat's turn LED", code="bad_seat")
BUZZ: Final = Command("buzz", BuzzArgs, BuzzResult, "sound the buzzer", code="bad_duration")
SNAPSHOT: Final = Command("snapshot", NoArgs, SnapshotResult, "republish hub/snapshot now")
REPLAY: Final = Command("replay", ReplayArgs, ReplayResult, "republish kept events of an epoch",
                       code="bad_replay_range", codes={"epoch": "wrong_epoch"})
SIM: Final = Command("sim", SimArgs, SimResult, "a gesture on the simulated table",
                     code="sim_refused")
ENROL: Final = Command("enrol", EnrolArgs, EnrolStatus, "enrol tags on a pad",
                       code="bad_enrol_args", codes={"action": "bad_enrol_action"})
READERS: Final = Command("readers", NoArgs, ReadersResult, "what every reader sees now")
LAYOUT: Final = Command("layout", LayoutArgs, SimResult,
                        "lay the table out as the game holds it (a back-end that can)",
                        code="bad_layout")

GAME_API: Final[dict[str, Command[Any, Any]]] = _map(
    NEW_GAME, UNDO, KEEP, DISCARD, DECLINATIO, CONFIRM, END, PLAY, HINT, HISTORY)
HUB_API: Final[dict[str, Command[Any, Any]]] = _map(
    TURN, BUZZ, SNAPSHOT, REPLAY, SIM, ENROL, READERS, LAYOUT)

assert tuple(GAME_API) == GAME_VERBS and tuple(HUB_API) == HUB_VERBS, "one entry per verb"
# The verbs the interpreter applies (the rest are the service's: read-only ones).
GAME_CHANGING_VERBS: Final[tuple[str, ...]] = tuple(v for v, c in GAME_API.items()
                                                    if c.changes_game)


def parse_args(api: Mapping[str, Command[Any, Any]], verb: str,
               raw: Mapping[str, object] | BaseModel | None) -> BaseModel:
    """``verb``'s typed args: `BadArgs` for an unknown verb or malformed args."""
    command = api.get(verb)
    if command is None:
        raise BadArgs(f"unknown command {verb!r}", code="unknown_command")
    parsed: BaseModel = command.parse(raw)
    return parsed


def parse_gesture(raw: Mapping[str, object]) -> Gesture:
    """A gesture's typed args from its JSON form (`BadArgs` when malformed)."""
    args = HUB_API["sim"].parse(raw)
    assert isinstance(args, SimArgs)
    return args.gesture


# ---------------------------------------------------------------- JSON Schema


def _stem(name: str) -> str:
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def api_models() -> Iterator[tuple[str, type[BaseModel] | Any]]:
    """(name, model) of every argument and result model of the map, and the gestures."""
    seen: set[str] = set()
    for api in (GAME_API, HUB_API):
        for command in api.values():
            results = command.result if isinstance(command.result, tuple) else (command.result,)
            for model in (command.args, *results):
                if model.__name__ not in seen and model is not SimArgs:
                    seen.add(model.__name__)
                    yield model.__name__, model
    yield "Gesture", TypeAdapter(AnyGesture)
    for name, model in _move_models().items():  # cmd/play's args, each game's own
        yield name, model


def _move_models() -> dict[str, type[BaseModel]]:
    """Each game's ``cmd/play`` moves' models, by schema name (``QuacksAnswerMove``)."""
    out: dict[str, type[BaseModel]] = {}
    for game in get_games():
        for model in game.moves.values():
            out[f"{game_title(game.id)}{model.__name__}"] = model
    return out


def api_schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    """One JSON Schema per model: (file name, schema)."""
    for name, model in api_models():
        schema = (model.json_schema() if isinstance(model, TypeAdapter)
                  else model.model_json_schema())
        schema.setdefault("title", name)
        file_name = f"api-{_stem(name)}.schema.json"
        schema["$id"] = f"urn:cauldron-table:api:v{SCHEMA_VERSION}:{file_name}"
        yield file_name, schema


def write_api_schemas(out_dir: Path) -> list[Path]:
    """Write one JSON Schema file per argument, result and gesture model, and ``api.json``
    (verb -> its models), into ``out_dir`` (created); return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, schema in [*api_schemas(), ("api.json", api_document())]:
        path = out_dir / file_name
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written


def api_document() -> dict[str, Any]:
    """The map itself: verb -> its args' and result's model names, for the schema index."""
    def names(c: Command[Any, Any]) -> dict[str, Any]:
        results = c.result if isinstance(c.result, tuple) else (c.result,)
        args = "Gesture" if c.args is SimArgs else c.args.__name__
        return {"args": args, "result": [r.__name__ for r in results], "doc": c.doc,
                "refusal_code": c.code}

    return {"cmd": {v: names(c) for v, c in GAME_API.items()},
            "hub/cmd": {v: names(c) for v, c in HUB_API.items()},
            "gestures": {a: g.__name__ for a, g in _BY_ACTION.items()},
            "events": {"game/events": GameEvents.__name__},
            # cmd/play's moves, each game's: verb -> its args' model
            "moves": {g.id: {verb: f"{game_title(g.id)}{model.__name__}"
                             for verb, model in g.moves.items()} for g in get_games()}}

"""The game seam: what a game package gives the table's platform (issue 22).

The hub, the wire, the engine service and the dashboard shell know a game only through a
`GameDefinition` found in the registry (`engine.games.get(game_id)`), never by importing
the game's own modules. A definition is one object that answers:

- who it is: `id`, `titles` per language;
- how a game is set up: `options`, ONE pydantic model (`GameOptions`) of every set-up
  option with its default, bounds and description; the host's form, the dashboard's
  ``NewGameIn``, the demo's command line and the ``cmd/new_game`` arguments derive from it;
- what lies on the table: `catalogue` (the piece ids the hub enrols, by kind, and the
  places the hub reads and lays out: Glastonbury's 6x6 grid and one scan pad per seat,
  Quacks' one draw pad per seat);
- the rules: `new(options, rng)` makes the pure state; `legal_actions`, `apply`,
  `is_over`, `action_from_wire` / `action_to_wire` (a core's own `Game` keeps its own API:
  the definition adapts it);
- what each observer may see: `public_view` / `seat_view` (typed: the game's own
  dataclasses or models, as JSON by `to_wire`), and `scores`;
- names for people (`names`: pieces, places, seats, in en/fr/de);
- bots (`bot(spec)` and `hint`), and the engine service's sensor-to-action interpreter
  (`interpreter(...)`, the factory `engine.service` calls per table);
- its page fragments: `fragments` (static JS/CSS and templates the dashboard serves under
  ``/games/<id>/``).

Adding a member here is fine; renaming one breaks every game package.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Final, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

from engine.games.tournament import Progress, TournamentReport

Lang = Literal["fr", "en", "de"]
LANGS: tuple[Lang, ...] = ("fr", "en", "de")


class Refused(Exception):
    """Something that does not fit the game or the moment (a set-up, an action, a command);
    nothing was changed. ``rule`` names the game's rule (G2, Q22, …) when one applies;
    ``code`` is a stable id the pages translate. The engine service answers it as a
    refusal; a game's interpreter and definition raise it."""

    def __init__(self, message: str, *, code: str = "refused", rule: str | None = None) -> None:
        super().__init__(f"{message} ({rule})" if rule else message)
        self.message = message
        self.code = code
        self.rule = rule


class CountRefused(Refused):
    """A piece or a set-up a score-only count cannot take (`ScoreOnly`), nothing changed;
    ``seat``: the other seat that already holds the piece, for ``duplicate``."""

    def __init__(self, code: str, message: str, seat: int | None = None) -> None:
        super().__init__(message, code=code)
        self.seat = seat


class UnknownGame(KeyError):
    """No game of that id on this table (`engine.games.get`)."""

    def __init__(self, game_id: str, known: Sequence[str]) -> None:
        super().__init__(game_id)
        self.game_id = game_id
        self.known = tuple(known)
        self.code = "unknown_game"

    def __str__(self) -> str:
        return (f"unknown game {self.game_id!r}: this table offers "
                f"{', '.join(self.known) or 'no game'}")


class GameOptions(BaseModel):
    """Base of a game's set-up options: ONE model per game, every option with its default,
    bounds and ``description`` (the host form's help text). Unknown keys are refused, so a
    misspelt option is an error, never silently dropped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Options the host changes between games without asking (who begins, where the pawns
    # start): the demo does not carry them over from the host's last game.
    PER_GAME: ClassVar[frozenset[str]] = frozenset()

    def wire(self) -> dict[str, JsonValue]:
        """The options as JSON (``cmd/new_game``'s ``args`` for this game)."""
        data: dict[str, JsonValue] = self.model_dump(mode="json")
        return data


# ---------------------------------------------------------------- the catalogue


PlaceKind = Literal["cell", "pad", "pawn"]


@dataclass(frozen=True)
class Place:
    """A place the hub reads (one reader or sensor): ``id`` as on the wire (``"r,c"``,
    ``"pad:<seat>"``, ``"pos:<n>"``), its kind, and for a grid cell its row and column."""

    id: str
    kind: PlaceKind
    seat: int | None = None
    row: int | None = None
    col: int | None = None


@dataclass(frozen=True)
class Catalogue:
    """What lies on a table of this game: the piece ids (in enrolment order) with their
    kind (``ingredient``, ``spell``, ``chip``, …), and the places read. The hub enrols by
    this list and lays out by these places; it never parses a piece id itself."""

    pieces: tuple[str, ...]
    kinds: Mapping[str, str]
    places: tuple[Place, ...]
    seats: int  # most seats a game of it has (a pad each)
    grid: tuple[int, int] | None = None  # rows, columns of a grid of readers (None: no grid)
    perimeter: int = 0  # pawn positions sensed around the grid (0: none)
    pieces_per_place: Literal["one"] = "one"  # a reader reads one tag at a time
    tags: Mapping[str, str] = field(default_factory=dict)  # extra tag ids: "pawn-<seat>"
    # How the hub's enrolment asks for the pieces: one by one (each piece its own, named),
    # or kind by kind (identical pieces tapped in a row, each taking the kind's next id).
    enrol_by: Literal["piece", "kind"] = "piece"
    # What a piece is called in English, one and many (the hub's terminal and log texts).
    noun: tuple[str, str] = ("card", "cards")

    def is_piece(self, text: str) -> bool:
        return text in self.kinds or text in self.tags

    def kind_of(self, piece: str) -> str:
        return self.kinds.get(piece) or self.tags[piece]

    def places_of(self, kind: PlaceKind) -> tuple[Place, ...]:
        return tuple(p for p in self.places if p.kind == kind)


# ---------------------------------------------------------------- names


@runtime_checkable
class Names(Protocol):
    """A game's words for people (en/fr/de): pieces, places and seats."""

    def piece(self, piece: str, lang: Lang = "en") -> str: ...

    def place(self, where: str, lang: Lang = "en") -> str: ...

    def seat(self, seat: int, colour: str | None = None, lang: Lang = "en") -> str: ...


# ---------------------------------------------------------------- page fragments


@dataclass(frozen=True)
class Fragments:
    """A game's pages: ``static`` (JS/CSS, served at ``/games/<id>/static/``), its
    ``templates`` folder (Jinja, included by the shell's pages) and the scripts each page
    of the shell loads (``"table"``, ``"seat"``, ``"host"`` → file names in ``static``)."""

    static: Path
    templates: Path | None = None
    scripts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    styles: tuple[str, ...] = ()


# ---------------------------------------------------------------- its views on the wire


@dataclass(frozen=True)
class GameViews:
    """The types of a game's views on the wire: ``game/public``'s ``view`` (``public``; the
    wire adds the table's state as ``table``) and ``game/seat/<n>``'s (``seat``, with a
    ``seat`` field). Pydantic models or dataclasses: the wire's models validate a game's
    payloads with them (found through the registry), ``cauldron schema`` exports them.
    ``scores``: the type of the game's score breakdown (the score page's data), which the
    public view carries at the keys ``scores_at``; a view whose ``over`` is true holds the
    final one (`final_scores`)."""

    public: type[Any]
    seat: type[Any]
    scores: type[Any] | None = None
    scores_at: tuple[str, ...] = ()


def final_scores(views: GameViews, view: Any) -> Any | None:
    """The final score breakdown a public view holds (a typed view or its JSON), typed by
    ``views.scores``; None while the game is not over, or for a game without one."""
    def part(data: Any, key: str) -> Any:
        return data.get(key) if isinstance(data, Mapping) else getattr(data, key, None)

    if views.scores is None or not views.scores_at or not part(view, "over"):
        return None
    found = view
    for key in views.scores_at:
        found = part(found, key)
    if found is None or isinstance(found, views.scores):
        return found
    return TypeAdapter(views.scores).validate_python(found)


# ---------------------------------------------------------------- bots and the table


@runtime_checkable
class Bot(Protocol):
    """A bot of this game: sees only what its seat sees."""

    name: str


class TableStatus(StrEnum):
    """Where a table's game stands (the same words for every game)."""

    IDLE = "idle"  # no game yet
    DEALING = "dealing"  # new_game given: the table is being set up (a game may skip this)
    PLAYING = "playing"
    OVER = "over"  # the game ended by its rules
    ENDED = "ended"  # the host ended (abandoned) the game


# What a reader holds whose tag is not enrolled: ``uid:<the tag's UID>`` (to enrol it).
UNKNOWN_TAG: Final = "uid:"


@dataclass(frozen=True, slots=True)
class Sensed:
    """One hub event as a game hears it (the service makes it from the wire's `HubEvent`):
    a piece ``placed`` on or ``removed`` from a place of the game's catalogue (``"r,c"``,
    ``"pad:<seat>"``, ``"pos:<n>"``; `Place.id`), or a seat's ``button`` pressed.
    ``piece``: the hub's tag map's id (None: a tag not enrolled, then ``uid``; ``retired``:
    a tag a spare replaced, to put aside rather than enrol)."""

    kind: Literal["placed", "removed", "button"]
    place: str | None = None
    piece: str | None = None
    uid: str | None = None
    seat: int | None = None
    button: str | None = None
    ts: float = 0.0
    retired: bool = False


class WireItem(Protocol):
    """An action (or anything) the service puts on the wire as its JSON."""

    def to_wire(self) -> Mapping[str, JsonValue]: ...


class GameEvent(WireItem, Protocol):
    """A rules event; a ``private`` one never goes to a public topic."""

    @property
    def private(self) -> bool: ...


class TableAlertItem(Protocol):
    """A standing alert (the wire's ``TableAlert`` fields as `wire()` gives them)."""

    @property
    def severity(self) -> str: ...

    def wire(self) -> Mapping[str, JsonValue]: ...


class Outcome(Protocol):
    """What one input or command did, as the service publishes and stores it."""

    @property
    def actions(self) -> Sequence[WireItem]: ...  # rules actions applied (game/events, log)

    @property
    def events(self) -> Sequence[GameEvent]: ...

    @property
    def raised(self) -> Sequence[TableAlertItem]: ...

    @property
    def cleared(self) -> Sequence[TableAlertItem]: ...

    @property
    def changed(self) -> bool: ...  # the views differ

    @property
    def started(self) -> bool: ...

    @property
    def ended(self) -> bool: ...

    @property
    def undone(self) -> int: ...  # rules actions taken back

    @property
    def instructions(self) -> Sequence[str]: ...  # undo: how to put pieces back

    @property
    def undone_text(self) -> str | None: ...

    @property
    def undone_codes(self) -> Sequence[Mapping[str, JsonValue]]: ...

    @property
    def undo_steps(self) -> Sequence[Mapping[str, JsonValue]]: ...


@dataclass
class Changes:
    """An `Outcome` any game (or the service, merging a batch's) can make."""

    actions: list[WireItem] = field(default_factory=list)
    events: list[GameEvent] = field(default_factory=list)
    raised: list[TableAlertItem] = field(default_factory=list)
    cleared: list[TableAlertItem] = field(default_factory=list)
    changed: bool = False
    started: bool = False
    ended: bool = False
    undone: int = 0
    instructions: list[str] = field(default_factory=list)
    undone_text: str | None = None
    undone_codes: list[Mapping[str, JsonValue]] = field(default_factory=list)
    undo_steps: list[Mapping[str, JsonValue]] = field(default_factory=list)


@dataclass(frozen=True)
class Followed:
    """What ``game/events`` says of an outcome: actions from number ``index`` of the game,
    their public events, and at a start the game's set-up (``config``) and what was laid
    out face up (``grid``, a game with a dealt square)."""

    index: int
    actions: list[dict[str, JsonValue]]
    events: list[dict[str, JsonValue]]
    config: dict[str, JsonValue] | None = None
    grid: list[str] | None = None


@runtime_checkable
class Interpreter(Protocol):
    """The engine service's per-table interpreter (one per table and game), made by
    `GameDefinition.interpreter`: everything `engine.service` asks of a game. It owns the
    pure game and what the table's readers hold; the service feeds it hub events
    (`sense`, `resync`) and commands (`command`) in order, stores them (a restart feeds
    them again: the same inputs make the same table), and publishes what it says.
    Capabilities a game has not (a square of readers, pawn sensors) answer empty."""

    @property
    def plays(self) -> str: ...  # the registry id of its game

    @property
    def game_id(self) -> str | None: ...  # the game in hand (the engine names it)

    @property
    def status(self) -> TableStatus: ...

    @property
    def inputs(self) -> int: ...  # inputs and commands of this game

    @property
    def turn(self) -> int | None: ...  # the seat whose turn LED is lit (None: none)

    @property
    def seats(self) -> int: ...  # seats with a private view now

    @property
    def active_alerts(self) -> Sequence[TableAlertItem]: ...

    def sense(self, sensed: Sensed) -> Outcome:
        """One hub event; never raises for anything a table can do (an alert instead)."""
        ...

    def resync(self, seen: Mapping[str, str], pawns: Sequence[int] | None,
               ts: float) -> Outcome:
        """What every reader holds at once (a hub snapshot: place id -> piece, or
        ``uid:…``); ``pawns``: sensed pawn positions (None: no pawn sensors)."""
        ...

    def differs(self, seen: Mapping[str, str]) -> bool:
        """The same readers hold other pieces than believed (a tag map changed)."""
        ...

    def command(self, verb: str, args: Mapping[str, object] | BaseModel | None = None, *,
                seat: int | None = None, ts: float = 0.0) -> Outcome:
        """A game command (`engine.wire.api.GAME_API`'s game-changing verbs, ``play`` with
        a move of the game's own); `Refused` (nothing changed) when it does not fit."""
        ...

    def observed(self) -> dict[str, JsonValue]:
        """What the readers hold now (stored with a new game; `GameDefinition.interpreter`
        starts from it)."""
        ...

    def prompt(self) -> dict[str, JsonValue]:
        """What the table waits for (`Prompt`: code, seat, English text)."""
        ...

    def rules_view(self) -> object:
        """The game's public view (JSON data or dataclasses): the same object while the
        game does not change. Never a covered piece."""
        ...

    def table_wire(self) -> dict[str, JsonValue]:
        """The table's state (`TableInfo`): status, prompt, alerts, inputs, …"""
        ...

    def seat_view(self, seat: int) -> object | None:
        """What only ``seat`` may see (None: nothing now)."""
        ...

    def seen_once(self, outcome: Outcome) -> list[tuple[int, object]]:
        """Seat views sent once, not retained (a one-time look: Glastonbury's Perluceo)."""
        ...

    def followed(self, outcome: Outcome) -> Followed | None:
        """``game/events`` for ``outcome`` (None: nothing a follower sees)."""
        ...

    def history(self) -> list[Followed]:
        """The game's public action stream from its start, one action a `Followed`
        (the first with the set-up); `Refused` with ``no_game`` without a game."""
        ...

    def layouts(self, outcome: Outcome) -> list[dict[str, JsonValue]]:
        """``hub/cmd/layout`` args for a hub that lays its table out itself, after
        ``outcome`` (none for a game whose pieces the table does not hold)."""
        ...

    def log(self) -> dict[str, JsonValue] | None:
        """The game's log as JSON (`GameDefinition.log_to_wire`; None: no game yet)."""
        ...

    def hint(self, seat: int, level: str, lang: Lang) -> dict[str, JsonValue]:
        """A bot's suggestion for ``seat``, seeing only what it sees (`Refused`)."""
        ...

    def record(self, new: bool) -> tuple[dict[str, JsonValue] | None, dict[str, JsonValue] | None]:
        """The stored game row: its set-up (when ``new``) and its final scores (when over)."""
        ...


# ---------------------------------------------------------------- the score-only count


@dataclass(frozen=True)
class ScoreOnly:
    """A game's score-only count: after a game played with the real pieces, each seat taps
    its pieces on one reader and the exact score follows every tap. The game owns the
    session (pure: ``tap``, ``undo``, ``remove``, ``set_active``, ``set_done``,
    ``set_last_card``, ``finished``, ``name``, ``score_json``, ``score_input``,
    ``to_json``; each refusal a `CountRefused`); the dashboard's count desk keeps one."""

    setup: Callable[[Mapping[str, Any]], Any]  # the host's set-up, checked (CountRefused)
    new: Callable[[Any], Any]  # a new session of a set-up
    restore: Callable[[Mapping[str, Any]], Any]  # a saved session (its ``to_json``)


# ---------------------------------------------------------------- the definition


@runtime_checkable
class GameDefinition(Protocol):
    """One game behind the seam. Its modules are its package's; the platform uses this."""

    id: str
    titles: Mapping[Lang, str]
    options: type[GameOptions]
    catalogue: Catalogue
    names: Names
    fragments: Fragments
    rules_doc: str  # the rules' file, e.g. RULES.md (rule ids in refusals name it)
    score_only: ScoreOnly | None  # its score-only count, if it has one (`cauldron count`)
    # ``cmd/play``'s moves (a phone's buttons): verb -> its args' model (`cauldron schema`)
    moves: Mapping[str, type[BaseModel]]
    views: GameViews  # its views' types on the wire

    def new(self, options: GameOptions, rng: random.Random) -> Any:
        """A new game's pure state (shuffles with ``rng``; no other randomness)."""
        ...

    def check(self, options: Mapping[str, object]) -> GameOptions:
        """The typed options, checked by the game's rules (`Refused` naming the rule):
        the one place a set-up is validated."""
        ...

    def secret_setup(self, options: Mapping[str, JsonValue], rng: random.Random
                     ) -> dict[str, JsonValue]:
        """What the engine deals itself at a new game (Glastonbury's recipe cards, G11), so
        that no seat's secret crosses the broker in a command; stored with the command."""
        ...

    def page_catalogue(self, lang: Lang) -> dict[str, Any]:
        """What its pages need to draw its pieces, in one language (colours, names, …)."""
        ...

    def deck(self, setup: Mapping[str, JsonValue]) -> tuple[str, ...]:
        """The pieces a game of this set-up is dealt from, unshuffled (the simulated
        table's box)."""
        ...

    def legal_actions(self, state: Any, seat: int | None = None) -> Sequence[Any]: ...

    def apply(self, state: Any, action: Any) -> Sequence[Any]:
        """Apply ``action`` (events back); an illegal one raises `Refused`, and the
        state is unchanged."""
        ...

    def is_over(self, state: Any) -> bool: ...

    def action_from_wire(self, data: Mapping[str, object]) -> Any: ...

    def action_to_wire(self, action: Any) -> dict[str, JsonValue]: ...

    def log_to_wire(self, state: Any) -> dict[str, JsonValue]:
        """The game's log as JSON: its set-up and every action with its chance resolved,
        so it replays exactly (audit, ``cauldron games show --log``)."""
        ...

    def public_view(self, state: Any) -> Any:
        """What everyone may see (never a covered piece); `to_wire` gives its JSON."""
        ...

    def seat_view(self, state: Any, seat: int) -> Any: ...

    def scores(self, state: Any) -> Any: ...

    def to_wire(self, view: Any) -> dict[str, JsonValue]: ...

    def bot_names(self) -> tuple[str, ...]: ...

    def bot(self, spec: str) -> Bot:
        """A bot by ``name`` or ``name:key=value`` (`Refused` for an unknown one)."""
        ...

    def hint(self, state: Any, seat: int, level: str, lang: Lang) -> dict[str, JsonValue]:
        """What a bot suggests to ``seat``, seeing only what it sees (`Refused` when the
        seat has nothing to decide)."""
        ...

    def tournament(self, bots: Sequence[str], games: int, players: int, seed: int,
                   settings: Mapping[str, str], progress: Progress | None = None
                   ) -> TournamentReport:
        """Its bots against each other, seats rotated (`cauldron tournament`); `Refused`
        naming the problem for an unknown bot, a bad count or setting. ``settings`` are the
        game's own (Glastonbury: ``memory``)."""
        ...

    def interpreter(self, table: str, observed: Mapping[str, Any]) -> Interpreter:
        """The interpreter for one table, starting from what its readers hold
        (`Interpreter.observed`, stored with each new game; `engine.service` calls it)."""
        ...


# The JSON Schema key of an option that names a seat (`seat_option`): its value is the
# name of the option that counts the seats (e.g. ``players``).
SEAT_OF: Final = "x-seat-of"


def seat_option(default: int | None, *, seats: int, description: str,
                counted_by: str = "players") -> Any:
    """A set-up option naming a seat: 0-based on the wire, offered by the host form as seat
    1..N (N: the option ``counted_by``), and as "random" when the option's type allows
    None (the engine then draws the seat from the game's seed)."""
    extra: dict[str, JsonValue] = {SEAT_OF: counted_by}
    return Field(default=default, ge=0, le=seats - 1, description=description,
                 json_schema_extra=extra)


@dataclass(frozen=True)
class OptionField:
    """One set-up option as the host form shows it (`option_fields`): ``type`` is its JSON
    type (``"integer/null"``: None allowed), ``seat_of`` the option counting the seats when
    it names a seat (`seat_option`)."""

    name: str
    type: str
    default: JsonValue
    description: str
    bounds: Mapping[str, JsonValue]
    seat_of: str | None = None
    nullable: bool = False  # None is allowed


BOUNDS: Final = ("minimum", "maximum", "minItems", "maxItems", "enum", "maxLength")


def option_fields(options: type[GameOptions]) -> list[OptionField]:
    """The options model as form fields (name, JSON type, default, help, bounds, a seat's
    count): the host page and the demo's command line build their inputs from it."""
    schema = options.model_json_schema()
    out = []
    for name, prop in schema.get("properties", {}).items():
        kinds = prop.get("anyOf", [])
        kind = prop.get("type") or "/".join(str(p.get("type")) for p in kinds if "type" in p)
        bounds = {k: v for part in (*kinds, prop) for k, v in part.items() if k in BOUNDS}
        seat_of = prop.get(SEAT_OF)
        out.append(OptionField(name, str(kind), prop.get("default"), prop.get("description", ""),
                               bounds, str(seat_of) if seat_of else None,
                               "null" in str(kind).split("/")))
    return out


def options_schema(options: type[GameOptions]) -> dict[str, Any]:
    """The options model's JSON Schema (``cauldron schema``, the pages' JSDoc types)."""
    return options.model_json_schema()

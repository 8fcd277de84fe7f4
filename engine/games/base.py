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
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, JsonValue

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


# ---------------------------------------------------------------- bots and the table


@runtime_checkable
class Bot(Protocol):
    """A bot of this game: sees only what its seat sees."""

    name: str


@runtime_checkable
class Interpreter(Protocol):
    """The engine service's per-table sensor-to-action interpreter (one per table), made
    by `GameDefinition.interpreter`. The service feeds it hub events and commands; the
    interpreter owns the pure game and says what changed."""

    @property
    def game(self) -> Any: ...


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

    def interpreter(self, **kwargs: Any) -> Interpreter:
        """The sensor-to-action interpreter for one table (`engine.service` calls it)."""
        ...


@dataclass(frozen=True)
class OptionField:
    """One set-up option as the host form shows it (`option_fields`)."""

    name: str
    type: str
    default: JsonValue
    description: str
    bounds: Mapping[str, JsonValue]


def option_fields(options: type[GameOptions]) -> list[OptionField]:
    """The options model as form fields (name, JSON type, default, help, bounds): the host
    page and the demo's command line build their inputs from it."""
    schema = options.model_json_schema()
    out = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or "/".join(
            str(p.get("type")) for p in prop.get("anyOf", []) if "type" in p)
        bounds = {k: v for k, v in prop.items()
                  if k in ("minimum", "maximum", "minItems", "maxItems", "enum", "maxLength")}
        out.append(OptionField(name, str(kind), prop.get("default"), prop.get("description", ""),
                               bounds))
    return out


def options_schema(options: type[GameOptions]) -> dict[str, Any]:
    """The options model's JSON Schema (``cauldron schema``, the pages' JSDoc types)."""
    return options.model_json_schema()

"""Glastonbury behind the game seam (`engine.games.base.GameDefinition`): the one
definition of its set-up options (`GlastonburyOptions`), its catalogue and names, and the
adapters from the platform's calls to the pure rules, its bots and its table interpreter."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final

from pydantic import BaseModel, Field, JsonValue, model_validator

from engine.games.base import (
    Bot,
    Catalogue,
    Fragments,
    GameOptions,
    GameViews,
    Interpreter,
    Lang,
    Place,
    Refused,
    ScoreOnly,
)
from engine.games.glastonbury.count import SCORE_ONLY
from engine.games.glastonbury.rules import Game, GameConfig, GameLog, action_from_wire
from engine.games.glastonbury.rules.actions import Action
from engine.games.glastonbury.rules.board import PERIMETER, TAKEABLE_CELLS, cell_name
from engine.games.glastonbury.rules.cards import (
    CARDS,
    PLAYER_COLOURS,
    RECIPE_A,
    RECIPE_B,
    card_label,
    deck_for,
    enrolment_order,
)
from engine.games.glastonbury.rules.cards import (
    CATALOGUE as _CATALOGUE,
)
from engine.games.glastonbury.rules.errors import RulesError
from engine.games.glastonbury.rules.names import card_name, place_label, position_label, seat_name
from engine.games.glastonbury.rules.observer import (
    PublicView,
    ScoresView,
    SeatView,
    public_view,
    scores_view,
    seat_view,
    to_wire,
)
from engine.games.tournament import Progress, TournamentReport

MAX_SEATS: Final[int] = 4
HERE: Final[Path] = Path(__file__).resolve().parent


class GlastonburyOptions(GameOptions):
    """A Glastonbury game's set-up (G2): the one list of its options. The host form,
    ``NewGameIn``, the demo and ``cmd/new_game`` take these fields; the rules check them
    (`GlastonburyDefinition.check`)."""

    PER_GAME: ClassVar[frozenset[str]] = frozenset({"first_seat", "start_positions"})

    colours: list[str] = Field(min_length=2, max_length=MAX_SEATS,
                               description="one player colour per seat",
                               json_schema_extra={"items": {"enum": list(PLAYER_COLOURS)}})
    first_seat: int = Field(default=0, ge=0, le=MAX_SEATS - 1,
                            description="the seat that begins (G4)")
    start_positions: list[int] | None = Field(
        default=None, max_length=MAX_SEATS, description="each seat's starting perimeter "
        "position (0-19; default: seat i beside corner i)")
    removed_colour: str | None = Field(default=None, max_length=16,
                                       description="2 players: colour removed")
    recipes: bool = Field(default=False, description="the recipe variant (G11)")
    second_player_bonus: bool = Field(default=False,
                                      description="+2 for the second player (G10)")
    memory_aid: bool = Field(default=False,
                             description="each seat's phone shows its own stack")

    @model_validator(mode="before")
    @classmethod
    def _removed_with_two_only(cls, data: Any) -> Any:
        """A form sends every field: its removed colour counts with 2 players only (G2)."""
        if isinstance(data, dict) and isinstance(data.get("colours"), list) \
                and len(data["colours"]) != 2:
            return {**data, "removed_colour": None}
        return data


def _places() -> tuple[Place, ...]:
    cells = tuple(Place(cell_name(c), "cell", row=c // 6, col=c % 6) for c in TAKEABLE_CELLS)
    pads = tuple(Place(f"pad:{s}", "pad", seat=s) for s in range(MAX_SEATS))
    pawns = tuple(Place(f"pos:{p}", "pawn") for p in range(PERIMETER))
    return cells + pads + pawns


CATALOGUE: Final = Catalogue(
    pieces=tuple(enrolment_order()),
    kinds={c: card.kind for c, card in CARDS.items()},
    places=_places(),
    seats=MAX_SEATS,
    grid=(6, 6),
    perimeter=PERIMETER,
    tags={f"pawn-{s}": "pawn" for s in range(MAX_SEATS)},
)


class GlastonburyNames:
    """Glastonbury's words for people (`engine.games.glastonbury.rules.names`, the one owner)."""

    def piece(self, piece: str, lang: Lang = "en") -> str:
        return card_label(piece, lang) if piece in CARDS else card_name(piece)

    def place(self, where: str, lang: Lang = "en") -> str:
        if where.startswith("pos:") and where[4:].isdigit():
            return position_label(int(where[4:]))
        return place_label(where)

    def seat(self, seat: int, colour: str | None = None, lang: Lang = "en") -> str:
        return seat_name(seat, colour, lang)


class GlastonburyDefinition:
    """Glastonbury for the platform."""

    id = "glastonbury"
    titles: Mapping[Lang, str] = {"en": "Glastonbury", "fr": "Glastonbury", "de": "Glastonbury"}
    options: type[GameOptions] = GlastonburyOptions
    catalogue = CATALOGUE
    names = GlastonburyNames()
    fragments = Fragments(
        static=HERE / "static", templates=HERE / "templates",
        scripts={"table": ("glastonbury-table.js",), "seat": ("glastonbury-seat.js",),
                 "scores": ("glastonbury-scores.js",), "virtual": ("glastonbury-virtual.js",),
                 "host": ("glastonbury-host.js",)},
    )  # fmt: skip
    rules_doc = "RULES.md"
    score_only: ScoreOnly | None = SCORE_ONLY
    moves: Mapping[str, type[BaseModel]] = {}  # its moves are read from the table
    views = GameViews(public=PublicView, seat=SeatView, scores=ScoresView,
                      scores_at=("end", "scores"))
    player_colours: tuple[str, ...] = PLAYER_COLOURS

    def check(self, options: Mapping[str, object]) -> GlastonburyOptions:
        """The rules' own check of a set-up (G2): `Refused` naming the rule."""
        try:
            config = GameConfig.from_wire(dict(options))
            config.validate()
        except RulesError as exc:
            raise Refused(exc.message, rule=exc.rule, code="bad_config") from None
        return GlastonburyOptions.model_validate(config.to_wire())

    def config(self, options: GameOptions) -> GameConfig:
        try:
            return GameConfig.from_wire(options.wire())
        except RulesError as exc:
            raise Refused(exc.message, rule=exc.rule, code="bad_config") from None

    def new(self, options: GameOptions, rng: random.Random) -> Game:
        return Game.new(self.config(options), rng)

    def secret_setup(self, options: Mapping[str, JsonValue], rng: random.Random
                     ) -> dict[str, JsonValue]:
        """The recipe variant's cards (G11), one [A, B] per seat."""
        colours = options.get("colours")
        if not options.get("recipes") or not isinstance(colours, list):
            return {}
        a, b = rng.sample(RECIPE_A, len(RECIPE_A)), rng.sample(RECIPE_B, len(RECIPE_B))
        if len(colours) > min(len(a), len(b)):
            return {}
        return {"recipe_cards": [[a[i], b[i]] for i in range(len(colours))]}

    def page_catalogue(self, lang: Lang) -> dict[str, Any]:
        """Colours (name, symbol, pattern), families, spells, Immuto, corners, recipes, and
        the board's geometry (`pages.geometry`)."""
        from engine.games.glastonbury.pages import geometry

        return {
            "geometry": geometry(),
            "colours": {
                c["id"]: {"name": c["names"][lang], "symbol": c["symbol"], "pattern": c["pattern"]}
                for c in _CATALOGUE["colours"]
            },
            "families": {f["id"]: f["names"][lang] for f in _CATALOGUE["families"]},
            "spells": {
                s["id"]: {"name": s["names"][lang], "uses": s["uses"], "rule": s["rule"]}
                for s in _CATALOGUE["spells"]
            },
            "immuto": _CATALOGUE["immuto"]["names"][lang],
            "corner": _CATALOGUE["corners"]["names"][lang],
            "recipes": {
                **{r["id"]: r["colour"] for r in _CATALOGUE["recipes"]["A"]},
                **{r["id"]: r["names"][lang] for r in _CATALOGUE["recipes"]["B"]},
            },
        }


    def deck(self, setup: Mapping[str, JsonValue]) -> tuple[str, ...]:
        removed = setup.get("removed_colour")
        return deck_for(removed if isinstance(removed, str) else None)

    def legal_actions(self, state: Any, seat: int | None = None) -> Sequence[Action]:
        game: Game = state
        if seat is not None and game.seat != seat:
            return ()
        return game.legal_actions()

    def apply(self, state: Any, action: Any) -> Sequence[Any]:
        try:
            return list(state.apply(action))
        except RulesError as exc:
            raise Refused(exc.message, rule=exc.rule, code="illegal") from None

    def is_over(self, state: Any) -> bool:
        return bool(state.is_over())

    def action_from_wire(self, data: Mapping[str, object]) -> Action:
        try:
            return action_from_wire(dict(data))
        except RulesError as exc:
            raise Refused(exc.message, rule=exc.rule, code="bad_action") from None

    def action_to_wire(self, action: Any) -> dict[str, JsonValue]:
        wire: dict[str, JsonValue] = action.to_wire()
        return wire

    def log_to_wire(self, state: Any) -> dict[str, JsonValue]:
        wire: dict[str, JsonValue] = GameLog.of(state).to_wire()
        return wire

    def public_view(self, state: Any) -> Any:
        return public_view(state)

    def seat_view(self, state: Any, seat: int) -> Any:
        return seat_view(state, seat)

    def scores(self, state: Any) -> Any:
        return scores_view(state.scores())

    def to_wire(self, view: Any) -> dict[str, JsonValue]:
        wire: dict[str, JsonValue] = to_wire(view)
        return wire

    def bot_names(self) -> tuple[str, ...]:
        from engine.games.glastonbury.bots import BOT_NAMES

        return BOT_NAMES

    def bot(self, spec: str) -> Bot:
        from engine.games.glastonbury.bots import BotError, make_bot

        try:
            return make_bot(spec)
        except BotError as exc:
            raise Refused(str(exc), code="bad_bot") from None

    def tournament(self, bots: Sequence[str], games: int, players: int, seed: int,
                   settings: Mapping[str, str], progress: Progress | None = None
                   ) -> TournamentReport:
        from engine.games.glastonbury.bots import BotError, make_bot
        from engine.games.glastonbury.bots.base import MEMORIES
        from engine.games.glastonbury.bots.tournament import run_tournament

        unknown = sorted(set(settings) - {"memory"})
        if unknown:
            raise Refused(f"Glastonbury's tournament has no setting {unknown[0]!r}; it has: "
                          "memory=perfect|own", code="bad_setting")
        memory = settings.get("memory", "perfect")
        if memory not in MEMORIES:
            raise Refused(f"memory must be perfect or own, not {memory!r}", code="bad_setting")
        try:
            for label in bots:
                make_bot(label)
            return run_tournament(list(bots), make_bot, games, players=players, seed=seed,
                                  memory=memory, progress=progress)
        except BotError as exc:
            raise Refused(str(exc), code="bad_bot") from None

    def hint(self, state: Any, seat: int, level: str, lang: Lang) -> dict[str, JsonValue]:
        from engine.games.glastonbury.bots import BotError, hint

        try:
            answer: dict[str, JsonValue] = hint(state, seat, level=level,  # type: ignore[arg-type]
                                                lang=lang).to_json()
        except BotError as exc:
            raise Refused(str(exc), code="not_your_turn" if state.seat != seat
                          else "no_choice_now") from None
        return answer

    def interpreter(self, table: str, observed: Mapping[str, Any]) -> Interpreter:
        from engine.games.glastonbury.table.interpreter import TableInterpreter

        return TableInterpreter.from_observed(table, dict(observed))


DEFINITION: Final = GlastonburyDefinition()

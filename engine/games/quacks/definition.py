"""The Quacks of Quedlinburg behind the game seam (`engine.games.base.GameDefinition`): the
one definition of its set-up options (`QuacksOptions`), its catalogue (216 chips, one draw
pad per seat, no grid) and names, and the adapters from the platform's calls to the pure
core (`engine.games.quacks.rules`), its bots and its table (`QuacksTable`)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Final

from pydantic import BaseModel, Field, JsonValue

from engine.games.base import (
    LANGS,
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
    seat_option,
)
from engine.games.quacks.rules import (
    Game,
    IllegalAction,
    InvalidSetup,
    InvalidWire,
    QuacksConfig,
    action_from_wire,
    default_catalogue,
    to_wire,
)
from engine.games.quacks.rules.catalogue import COLOURS, kind_of
from engine.games.quacks.rules.names import card_name, chip_name, colour_name
from engine.games.quacks.scoring import QuacksScores
from engine.games.quacks.table import (
    MOVES,
    QuacksInterpreter,
    QuacksPublicView,
    QuacksSeatView,
    QuacksTable,
)
from engine.games.tournament import Progress, TournamentReport

MAX_SEATS: Final[int] = 4
SHELL: Final = "q_shell_"  # a shell's text (dashboard i18n) as Quacks words it
HERE: Final[Path] = Path(__file__).resolve().parent
CAT: Final = default_catalogue()


class QuacksOptions(GameOptions):
    """A Quacks game's set-up (Q8, Q31): the one list of its options. The host form, the
    demo and ``cmd/new_game`` take these fields; the rules check them (`check`)."""

    PER_GAME: ClassVar[frozenset[str]] = frozenset({"start_player"})

    players: int = Field(default=4, ge=2, le=MAX_SEATS, description="players (Q1: 2 to 4)")
    start_player: int | None = seat_option(
        0, seats=MAX_SEATS, description="the seat that starts (D31; None: drawn at random)")
    ingredient_set: int = Field(default=1, ge=1, le=4,
                                description="the ingredient books' set (Q3, Q30)")  # fmt: skip
    start_rubies: int = Field(default=1, ge=0, le=1,
                              description="rubies each player starts with (D2)")  # fmt: skip
    fortune_cards: bool = Field(default=True, description="play the fortune-teller cards (N29)")
    explosion_limit: int | None = Field(
        default=None, ge=1, le=20, description="house rule: the white limit (Q31)"
    )
    show_odds: bool = Field(default=True, description="memory aid: show the chance that the "
                            "next chip explodes the pot (off for competitive tables)")  # fmt: skip
    bag_visible: bool = Field(default=True, description="each phone lists its own bag (D30)")


def config_of(options: QuacksOptions, rng: random.Random | None = None) -> QuacksConfig:
    """The core's set-up; a random start player (None) is drawn from ``rng``, the game's
    seeded chance (D31), before the fortune deck is shuffled (without ``rng``: seat 0, for a
    check)."""
    start = options.start_player
    if start is None:
        start = rng.randrange(options.players) if rng is not None else 0
    return QuacksConfig(
        players=options.players, ingredient_set=options.ingredient_set,
        start_rubies=options.start_rubies, fortune_cards=options.fortune_cards,
        start_player=start, explosion_limit=options.explosion_limit,
    )  # fmt: skip


CATALOGUE: Final = Catalogue(
    pieces=CAT.all_chips(),
    kinds={c: kind_of(c) for c in CAT.all_chips()},  # enrolment by kind: "white-1", …
    places=tuple(Place(f"pad:{s}", "pad", seat=s) for s in range(MAX_SEATS)),
    seats=MAX_SEATS,
    enrol_by="kind",  # E18: 216 chips in 18 runs of taps
    noun=("chip", "chips"),
)


class QuacksNames:
    """Quacks' words for people (`engine.games.quacks.rules.names`, the one owner; Q27, Q35)."""

    def piece(self, piece: str, lang: Lang = "en") -> str:
        return chip_name(kind_of(piece), lang)

    def place(self, where: str, lang: Lang = "en") -> str:
        if where.startswith("pad:") and where[4:].isdigit():
            return _strings(lang)["q_pad_of"].replace("{n}", str(int(where[4:]) + 1))
        return where

    def seat(self, seat: int, colour: str | None = None, lang: Lang = "en") -> str:
        return _strings(lang)["q_seat_n"].replace("{n}", str(seat + 1))

    def colour(self, colour: str, lang: Lang = "en") -> str:
        return colour_name(colour, lang)

    def card(self, card: str, lang: Lang = "en") -> str:
        return card_name(card, lang)


@cache
def _strings(lang: Lang) -> dict[str, str]:
    """The fragments' words (``i18n/<lang>.json``) and the chips' and cards' names
    (``engine/quacks/names.json``, their one owner) as ``q_colour_<colour>``, ``q_card_<id>``."""
    data: dict[str, str] = json.loads((HERE / "i18n" / f"{lang}.json").read_text("utf-8"))
    data.update({f"q_colour_{c}": colour_name(c, lang) for c in COLOURS})
    data.update({f"q_card_{c.id}": card_name(c.id, lang) for c in CAT.fortune})
    data["q_title"] = QuacksDefinition.titles[lang]
    return data


def strings(lang: Lang) -> dict[str, str]:
    """The words of Quacks' page fragments (keys ``q_…``), to merge into a page's strings."""
    return dict(_strings(lang))


class QuacksDefinition:
    """The Quacks of Quedlinburg for the platform."""

    id = "quacks"
    # Q27, Q35: each language's edition: North Star (en), Schmidt (de), Schmidt's French
    # edition (fr; the seed itself is a French text of the Dutch 999 Games edition).
    titles: Mapping[Lang, str] = {
        "en": "The Quacks of Quedlinburg",
        "de": "Die Quacksalber von Quedlinburg",
        "fr": "Les Charlatans de Belcastel",
    }
    options: type[GameOptions] = QuacksOptions
    catalogue = CATALOGUE
    names = QuacksNames()
    fragments = Fragments(
        static=HERE / "static",
        scripts={"table": ("quacks-table.js",), "seat": ("quacks-seat.js",),
                 "scores": ("quacks-scores.js",)},
        styles=("quacks.css",),
    )  # fmt: skip
    rules_doc = "RULES-QUACKS.md"
    score_only: ScoreOnly | None = None  # no score-only count (yet)
    moves: Mapping[str, type[BaseModel]] = MOVES
    views = GameViews(public=QuacksPublicView, seat=QuacksSeatView, scores=QuacksScores,
                      scores_at=("scores",))

    def check(self, options: Mapping[str, object]) -> QuacksOptions:
        try:
            typed = QuacksOptions.model_validate(dict(options))
        except ValueError as exc:
            raise Refused(str(exc), rule="Q8", code="bad_config") from None
        try:
            config_of(typed).check(CAT)
        except InvalidSetup as exc:
            raise Refused(exc.message, rule=exc.rule, code="bad_config") from None
        return typed

    def secret_setup(
        self, options: Mapping[str, JsonValue], rng: random.Random
    ) -> dict[str, JsonValue]:
        """The seed of the game's chance (the fortune deck, the virtual bag's draws), the
        engine's: stored with the command, so a restart replays the same game."""
        return {"seed": rng.randrange(2**63)}

    def page_catalogue(self, lang: Lang) -> dict[str, Any]:
        """What the fragments need in `lang`: their words (``t``, keys ``q_…``, chip and card
        names included), the pot track, the rat tails and the cards' kinds; and ``words``,
        the shell's texts Quacks says its own way (``q_shell_<key>``: chips, not cards, in
        enrolment)."""
        words = strings(lang)
        return {
            "game": self.id,
            "t": words,
            "words": {k[len(SHELL):]: v for k, v in words.items() if k.startswith(SHELL)},
            # the host form's label of each set-up option (dashboard.game.host_games)
            "option_labels": {name: words[f"q_opt_{name}"]
                              for name in QuacksOptions.model_fields if f"q_opt_{name}" in words},
            "track": [{"coins": s.coins, "vp": s.vp, "ruby": s.ruby} for s in CAT.track],
            "rat_tails_after": list(CAT.rat_tails_after),
            "cards": {c.id: c.kind for c in CAT.fortune},
        }

    def deck(self, setup: Mapping[str, JsonValue]) -> tuple[str, ...]:
        """The box a simulated table holds: every chip (the bags are the engine's, E23)."""
        return CAT.all_chips()

    def table(self, options: GameOptions, rng: random.Random) -> QuacksTable:
        typed = self.check(options.wire())
        return QuacksTable(config_of(typed, rng), rng, show_odds=typed.show_odds,
                           bag_visible=typed.bag_visible)  # fmt: skip

    def new(self, options: GameOptions, rng: random.Random) -> Game:
        return Game.new(config_of(self.check(options.wire()), rng), rng)

    def legal_actions(self, state: Any, seat: int | None = None) -> Sequence[Any]:
        game: Game = _game(state)
        return game.legal_actions(seat)

    def apply(self, state: Any, action: Any) -> Sequence[Any]:
        try:
            return list(_game(state).apply(action))
        except IllegalAction as exc:
            raise Refused(exc.message, rule=exc.rule, code="illegal") from None

    def is_over(self, state: Any) -> bool:
        return _game(state).is_over()

    def action_from_wire(self, data: Mapping[str, object]) -> Any:
        try:
            return action_from_wire(dict(data))
        except InvalidWire as exc:
            raise Refused(exc.message, rule=exc.rule, code="bad_action") from None

    def action_to_wire(self, action: Any) -> dict[str, JsonValue]:
        wire: dict[str, JsonValue] = to_wire(action)
        return wire

    def log_to_wire(self, state: Any) -> dict[str, JsonValue]:
        from engine.games.quacks.rules.log import log_to_wire

        wire: dict[str, JsonValue] = log_to_wire(_game(state))
        return wire

    def public_view(self, state: Any) -> Any:
        if isinstance(state, QuacksTable):
            return state.public_view()
        from engine.games.quacks.rules.observer import public_view

        return public_view(state)

    def seat_view(self, state: Any, seat: int) -> Any:
        if isinstance(state, QuacksTable):
            return state.seat_view(seat)
        from engine.games.quacks.rules.observer import seat_view

        return seat_view(state, seat)

    def scores(self, state: Any) -> QuacksScores:
        from engine.games.quacks.scoring import breakdown

        return breakdown(_game(state))

    def to_wire(self, view: Any) -> dict[str, JsonValue]:
        if isinstance(view, BaseModel):
            return view.model_dump(mode="json")
        wire: dict[str, JsonValue] = json.loads(json.dumps(view))
        return wire

    def bot_names(self) -> tuple[str, ...]:
        from engine.games.quacks.bots.policies import BOT_NAMES

        return BOT_NAMES

    def bot(self, spec: str) -> Bot:
        from engine.games.quacks.bots.policies import BotError, make_bot

        try:
            return make_bot(spec)
        except BotError as exc:
            raise Refused(str(exc), code="bad_bot") from None

    def tournament(self, bots: Sequence[str], games: int, players: int, seed: int,
                   settings: Mapping[str, str], progress: Progress | None = None
                   ) -> TournamentReport:
        from engine.games.quacks.bots.policies import BotError, make_bot
        from engine.games.quacks.bots.tournament import run_tournament

        if settings:
            raise Refused(f"Quacks' tournament has no setting {sorted(settings)[0]!r}",
                          code="bad_setting")
        try:
            for label in bots:
                make_bot(label)
            return run_tournament(list(bots), make_bot, games, players=players, seed=seed,
                                  progress=progress)
        except BotError as exc:
            raise Refused(str(exc), code="bad_bot") from None

    def hint(self, state: Any, seat: int, level: str, lang: Lang) -> dict[str, JsonValue]:
        from engine.games.quacks.bots.policies import BotError, make_bot
        from engine.games.quacks.rules.observer import seat_view

        game = _game(state)
        legal = game.legal_actions(seat)
        if not legal:
            raise Refused(f"seat {seat + 1} has nothing to decide now", code="no_choice_now")
        try:
            bot = make_bot(level if level in self.bot_names() else "push")
        except BotError as exc:
            raise Refused(str(exc), code="bad_bot") from None
        choice = bot.choose(seat_view(game, seat), legal, random.Random(len(game.log)))
        # the wire's `HintAnswer` (its card and cell are Glastonbury's: none here)
        return {"seat": seat, "level": bot.name, "action": self.action_to_wire(choice),
                "card": None, "cell": None, "reason": f"the {bot.name} bot's choice",
                "reasons": {}}

    def interpreter(self, table: str, observed: Mapping[str, Any]) -> Interpreter:
        return QuacksInterpreter(table, observed)

    def languages(self) -> tuple[Lang, ...]:
        return LANGS


def _game(state: Any) -> Game:
    game: Game = state.game if isinstance(state, QuacksTable) else state
    return game


DEFINITION: Final = QuacksDefinition()

"""What a bot may know, and the `Bot` protocol.

A bot never looks at a `Game` that holds hidden information. It sees an `Observation`,
built for one seat by an `ObservationTracker` that is fed only what that seat sees at the
table: the public events of every turn (plus the seat's own private events: the Perluceo
reveal), the public actions, the opening layout and the seat's own recipes.

What a seat knows (documented for hosts and tested in tests/engine/games/glastonbury/bots):

- **Public**: the square, every pawn, every cauldron's size and top card, every spell held
  and its uses, the pile size, discarded and out-of-game cards: the public view.
- **Own recipes** (recipe variant); other seats' recipes are unknown.
- **Own cauldron, all of it**: the seat saw each card face up as it laid it, so by default
  its memory of its own stack is perfect (Perluceo then adds nothing; its reveals are
  still recorded in `perluceo_reveals`).
- **Other cauldrons**: every card in a cauldron was face up in the square and face up when
  it was laid, and Vanesco removals are public, so an observer with perfect memory knows
  every covered card. `memory="perfect"` (default) models that. `memory="own"` models a
  person who forgets other seats' covered cards: those slots are `None` and count as
  unseen cards (a search bot samples them).
- **The draw pile**: which cards are in it follows from the above (all cards minus those
  seen elsewhere), and the cards Vanesco sent under it lie at the bottom in a known order.
  The order of the rest is the hidden information: nobody at the table knows it.

One tracker follows a game (`PublicGame`): a "shadow" `Game` built with `pile=None` (the
engine's real-table mode: the pile is an unordered set plus the known bottom) on which the
public actions are pushed, refilling holes with the cards the public events show; an undo
pops them (the shadow's snapshots, no replay). `ObservationTracker` is one seat's view of
it, and `observe_public` reads one seat's `Observation` off any such shadow. Bots that
search copy the shadow and fill in the hidden parts by sampling
(`engine.games.glastonbury.bots.determinize`); they never see the real game.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from engine.games.glastonbury.rules.actions import REFILLS, Action
from engine.games.glastonbury.rules.board import SIZE, TAKEABLE_CELLS
from engine.games.glastonbury.rules.cards import RECIPE_A, RECIPE_B, Lang
from engine.games.glastonbury.rules.errors import IllegalAction
from engine.games.glastonbury.rules.events import Event, PerluceoReveal, Refilled
from engine.games.glastonbury.rules.game import Game, GameConfig, Phase
from engine.games.glastonbury.rules.names import action_label, seat_name

Memory = Literal["perfect", "own"]
MEMORIES: tuple[Memory, ...] = ("perfect", "own")


class BotError(Exception):
    """A bot was used wrongly (unknown bot, seat, memory model, or out-of-step events)."""


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything one seat may know at the moment it has to act (see the module docs)."""

    seat: int
    config: GameConfig
    memory: Memory
    # Game.view_public() of the shadow: equal to the real one (except the final scores in
    # the recipe variant, where the shadow holds stand-in recipes for the other seats).
    public: dict[str, Any]
    legal: tuple[Action, ...]  # the seat's legal actions (they follow from public info)
    recipes: tuple[str, ...]  # own recipes ((A, B) in the recipe variant, else ())
    stacks: tuple[tuple[str | None, ...], ...]  # per seat, bottom first; None = forgotten
    unseen: frozenset[str]  # cards this seat cannot place: pile (not the bottom) + forgotten
    pile_bottom: tuple[str, ...]  # cards Vanesco sent under the pile, top first
    pile_size: int
    perluceo_reveals: tuple[tuple[str, ...], ...]  # own cauldron as each Perluceo showed it
    shadow: Game = field(repr=False, compare=False)  # public-information model; pile unordered

    @property
    def colour(self) -> str:
        return self.config.colours[self.seat]

    @property
    def players(self) -> int:
        return self.config.players

    @property
    def to_move(self) -> int:
        return self.shadow.seat

    @property
    def phase(self) -> Phase:
        return self.shadow.phase

    @property
    def own_stack(self) -> tuple[str, ...]:
        """The seat's own cauldron, bottom first (always fully remembered)."""
        return tuple(c for c in self.stacks[self.seat] if c is not None)

    def known_stack(self, seat: int) -> tuple[str, ...]:
        """The cards of `seat`'s cauldron this seat remembers (forgotten ones left out)."""
        return tuple(c for c in self.stacks[seat] if c is not None)

    def grid_card(self, cell: int) -> str | None:
        return self.shadow.grid[cell]


class Bot(Protocol):
    """A player. `choose` must return one of `observation.legal`."""

    name: str

    def choose(self, observation: Observation, rng: random.Random) -> Action: ...

    def explain(self, observation: Observation, action: Action, lang: Lang = "en") -> str:
        """Why `action` is (or is not) a good move here, in plain words for a person."""
        ...


def visible_to(seat: int, events: Iterable[Event]) -> list[Event]:
    """The events `seat` sees: every public event and its own private ones."""
    return [e for e in events if not e.private or getattr(e, "seat", None) == seat]


def _placeholder_recipes(
    config: GameConfig, seat: int, own: Sequence[str]
) -> tuple[tuple[str, ...], ...]:
    """Recipes for the shadow game: the seat's own, others filled with stand-ins (the
    shadow's recipes of other seats mean nothing; a determinization samples them)."""
    if not config.recipes:
        return ()
    free_a = [r for r in RECIPE_A if r not in own]
    free_b = [r for r in RECIPE_B if r not in own]
    out: list[tuple[str, ...]] = []
    for s in range(config.players):
        if s == seat:
            out.append(tuple(own))
        else:
            out.append((free_a.pop(0), free_b.pop(0)))
    return tuple(out)


class PublicGame:
    """One game followed from what everyone at the table sees: the one game tracker.

    Its `shadow` is a `Game` in the engine's real-table mode (the pile an unordered set plus
    the known bottom), started from the opening layout with `recipes` (stand-ins for the
    recipes nobody here may know). `observe()` follows each action of the real game (and
    the refill its public events show); `rewind()` steps back by the shadow's snapshots
    (`Game.pop`), never by a replay. The bots' trackers (`ObservationTracker`) and the
    demo's follower of the public stream (`engine.app.demo.shadow`) are built on it.
    """

    def __init__(self, config: GameConfig, grid: Sequence[str],
                 recipes: tuple[tuple[str, ...], ...] = ()) -> None:
        self.config = config
        self.shadow = Game.from_deal(config, list(grid), None, recipes)
        self._marks: list[int] = []  # the shadow's action count before each observed one
        # Each Perluceo's reveal in the shadow: (observed action index, seat, cauldron).
        self._reveals: list[tuple[int, int, tuple[str, ...]]] = []

    @classmethod
    def of(cls, shadow: Game) -> PublicGame:
        """Follow on from `shadow` as it stands (a game in real-table mode; one observed
        action per action so far, which `rewind` can take back if they were pushed)."""
        public = cls.__new__(cls)
        public.config = shadow.config
        public.shadow = shadow
        public._marks = list(range(len(shadow.actions)))
        public._reveals = []
        return public

    @property
    def length(self) -> int:
        """How many of the real game's actions were observed."""
        return len(self._marks)

    def observe(self, action: Action, events: Iterable[Event] = ()) -> list[Event]:
        """Follow one action of the real game; `events`: the public events it produced (a
        simulated game's refill is one). Returns the shadow's own events. Raises
        `IllegalAction` (and changes nothing) for an action that does not follow."""
        shadow = self.shadow
        mark = len(shadow.actions)
        mine = shadow.push(action)
        for event in events:
            if type(event) is Refilled and shadow.phase is Phase.REFILL:
                mine += shadow.push(REFILLS[event.card])
        # At a real table (pile None) the refill is the next action and is observed then.
        index = len(self._marks)
        self._marks.append(mark)
        self._reveals += [(index, e.seat, tuple(e.cauldron)) for e in mine
                          if type(e) is PerluceoReveal]
        return mine

    def rewind(self, length: int) -> None:
        """Back to the game after its first `length` observed actions (an undo)."""
        if not 0 <= length <= len(self._marks):
            raise BotError(f"cannot rewind to action {length}: {len(self._marks)} observed")
        if length == len(self._marks):
            return
        shadow = self.shadow
        target = self._marks[length]
        while len(shadow.actions) > target:
            shadow.pop()
        del self._marks[length:]
        self._reveals = [r for r in self._reveals if r[0] < length]

    def reveals(self, seat: int) -> tuple[tuple[str, ...], ...]:
        """`seat`'s own cauldron as each of its Perluceos showed it."""
        return tuple(cauldron for _, s, cauldron in self._reveals if s == seat)

    def observation(self, seat: int, memory: Memory = "perfect",
                    recipes: Sequence[str] | None = None) -> Observation:
        """What `seat` knows now; `recipes`: its own (default: the shadow's for it)."""
        return observe_public(self.shadow, seat, memory, recipes, self.reveals(seat))


def observe_public(shadow: Game, seat: int, memory: Memory = "perfect",
                   recipes: Sequence[str] | None = None,
                   reveals: tuple[tuple[str, ...], ...] = ()) -> Observation:
    """The observation of `seat` from a public-information game (pile unknown, as a
    `PublicGame` follows it): no replay. `recipes`: the seat's own (default: the game's
    for that seat); the other seats' are stand-ins in the observation's shadow."""
    if memory not in MEMORIES:
        raise BotError(f"unknown memory model {memory!r}; use 'perfect' or 'own'")
    config = shadow.config
    if not 0 <= seat < config.players:
        raise BotError(f"{seat_name(seat)} is not at this {config.players}-player table "
                       f"(seats 1 to {config.players})")
    if recipes is None:
        recipes = shadow.recipes[seat] if shadow.recipes else ()
    own = tuple(recipes)
    unknown, bottom = pile_parts(shadow)
    unseen: set[str] = set(unknown)
    stacks: list[tuple[str | None, ...]] = []
    for s, cauldron in enumerate(shadow.cauldrons):
        if s == seat or memory == "perfect" or not cauldron:
            stacks.append(tuple(cauldron))
        else:
            unseen.update(cauldron[:-1])
            stacks.append((*([None] * (len(cauldron) - 1)), cauldron[-1]))
    copy = shadow.copy(history=False)
    placeholders = _placeholder_recipes(config, seat, own)
    if copy.recipes != placeholders:
        copy.recipes = placeholders  # other seats' recipes are not the seat's to know
    return Observation(
        seat=seat,
        config=config,
        memory=memory,
        public=copy.view_public(),
        legal=shadow.legal_actions() if shadow.seat == seat else (),
        recipes=own,
        stacks=tuple(stacks),
        unseen=frozenset(unseen),
        pile_bottom=bottom,
        pile_size=len(shadow.pile),
        perluceo_reveals=reveals,
        shadow=copy,
    )


class ObservationTracker:
    """Builds `Observation`s for one seat from what that seat sees, turn after turn.

    Start it from the opening public view (the 32 cards face up) and the seat's recipes;
    then call `observe(action, events)` after every action applied to the real game, with
    the events that action produced (they are filtered to what this seat sees here);
    `rewind(length)` follows an undo. The game itself is followed by a `PublicGame`.
    """

    def __init__(
        self,
        config: GameConfig,
        seat: int,
        opening_grid: Sequence[Sequence[str | None]],
        recipes: Sequence[str] = (),
        memory: Memory = "perfect",
    ) -> None:
        if memory not in MEMORIES:
            raise BotError(f"unknown memory model {memory!r}; use 'perfect' or 'own'")
        if not 0 <= seat < config.players:
            raise BotError(f"{seat_name(seat)} is not at this {config.players}-player table "
                           f"(seats 1 to {config.players})")
        self.config = config
        self.seat = seat
        self.memory: Memory = memory
        self.recipes = tuple(recipes)
        grid: list[str] = []
        for cell in TAKEABLE_CELLS:
            card = opening_grid[cell // SIZE][cell % SIZE]
            if card is None:
                raise BotError("the opening grid must show all 32 dealt cards")
            grid.append(card)
        self.public = PublicGame(config, grid, _placeholder_recipes(config, seat, self.recipes))

    @property
    def shadow(self) -> Game:
        return self.public.shadow

    @property
    def perluceo_reveals(self) -> tuple[tuple[str, ...], ...]:
        return self.public.reveals(self.seat)

    @classmethod
    def for_new_game(cls, game: Game, seat: int, memory: Memory = "perfect") -> ObservationTracker:
        """A tracker for `seat` of a game that has not started yet (no action applied),
        built from what the seat sees: the public view and its own recipes."""
        if game.actions:
            raise BotError("the game has started; use observe_game() to catch up")
        view = game.view(seat)
        return cls(game.config, seat, view["grid"], view["you"]["recipes"], memory)

    def observe(self, action: Action, events: Iterable[Event]) -> None:
        """Follow one action of the real game and the events it produced."""
        try:
            self.public.observe(action, visible_to(self.seat, events))
        except IllegalAction as exc:
            raise BotError(
                f"{seat_name(self.seat)}'s tracker is out of step with the game "
                f"({action_label(action)}: {exc}); "
                "feed it every action in order, or rebuild it with observe_game()"
            ) from None

    def rewind(self, length: int) -> None:
        """Back to the game after its first `length` actions (an undo), by snapshots."""
        self.public.rewind(length)

    def observation(self) -> Observation:
        return self.public.observation(self.seat, self.memory, self.recipes)


def pile_parts(shadow: Game) -> tuple[frozenset[str], tuple[str, ...]]:
    """The shadow pile's unordered cards and its known bottom (top first)."""
    known, _, unknown, bottom = shadow.pile.state()
    if known:
        raise BotError("a shadow game must not know the pile order")
    return cast(frozenset[str], unknown), cast(tuple[str, ...], bottom)


def tracker_for(game: Game, seat: int, memory: Memory = "perfect") -> ObservationTracker:
    """A tracker for `seat` caught up with a game in progress (or not yet started).

    The game is replayed from its log by a referee copy; the tracker receives only the
    events `seat` saw, so nothing hidden reaches it. Then feed it the next actions."""
    referee = Game(game.config, game.deal)
    view = referee.view(seat)
    tracker = ObservationTracker(game.config, seat, view["grid"], view["you"]["recipes"], memory)
    for action in game.actions:
        tracker.observe(action, referee.apply(action))
    return tracker


def observe_game(game: Game, seat: int, memory: Memory = "perfect") -> Observation:
    """The observation of `seat` in a game in progress (for hints and services)."""
    return tracker_for(game, seat, memory).observation()


class BotSeat:
    """A bot sitting at one seat of a live game: follows the game, acts on its turns.

    Usage: `bot_seat = BotSeat(make_bot("greedy"), game, 1)`; after every
    `events = game.apply(action)` call `bot_seat.observe(action, events)`; when
    `bot_seat.to_act(game)`, apply `bot_seat.act()` (and observe it like any action).
    """

    def __init__(
        self, bot: Bot, game: Game, seat: int, memory: Memory = "perfect", seed: int = 0
    ) -> None:
        self.bot = bot
        self.seat = seat
        self.tracker = tracker_for(game, seat, memory)
        self.rng = random.Random(seed * 7919 + seat)

    def observe(self, action: Action, events: Iterable[Event]) -> None:
        self.tracker.observe(action, events)

    def to_act(self, game: Game) -> bool:
        """True when the game waits for this seat's decision (not a refill, not over)."""
        return (
            not game.is_over()
            and game.seat == self.seat
            and game.phase in (Phase.TAKE, Phase.DECLINATIO, Phase.LAST_CARD)
        )

    def act(self) -> Action:
        return decide(self.bot, self.tracker.observation(), self.rng)

    def rewind(self, length: int) -> None:
        """Follow an undo: back to the game after its first `length` actions."""
        self.tracker.rewind(length)


def decide(bot: Bot, observation: Observation, rng: random.Random) -> Action:
    """`bot`'s choice for the seat `observation` is about, which must have one to make."""
    if not observation.legal:
        raise BotError(f"{seat_name(observation.seat)} has nothing to decide now")
    return bot.choose(observation, rng)

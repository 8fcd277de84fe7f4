"""The Quacks of Quedlinburg as a pure, deterministic state machine (RULES-QUACKS.md).

`Game.new(config, rng)` shuffles the fortune deck with the seeded `random.Random` it is
given, which also draws chips and rolls the die when an action leaves them open (a
simulation). `legal_actions()` lists what every seat may do now: brewing is simultaneous,
so several seats can have actions at once (N1); each action names its seat.
`apply(action)` returns the events, or raises `IllegalAction` naming the rule and leaves
the game unchanged. No I/O, no clock, no global randomness.

A round runs through steps: fortune (Q10), rats (Q11), rat stones, brew (Q12–Q16), FB2
gifts, FB7 draws, A die (Q17), B chips (Q18), C rubies + the exploded choice (Q19, Q20),
D victory points (Q21), E buying (Q22), F rubies (Q23), G clean-up + H next round (Q24),
I end (Q25).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import Enum
from fractions import Fraction
from itertools import combinations
from typing import Any

from engine.games.quacks.rules.actions import (
    Action,
    Answer,
    Buy,
    Choose,
    ChooseOffer,
    Draw,
    RollDie,
    Spend,
    Stop,
    UseFlask,
)
from engine.games.quacks.rules.catalogue import (
    Catalogue,
    colour_of,
    default_catalogue,
    kind_of,
    value_of,
)
from engine.games.quacks.rules.errors import IllegalAction, InvalidSetup
from engine.games.quacks.rules.events import Event, event

UPGRADE = {"1": "2", "2": "4"}  # FP13: the next higher value of a colour (N12)
TRADE_COLOURS = ("green", "blue", "red", "yellow")


class Phase(Enum):
    FORTUNE = "fortune"  # Q10
    RATS = "rats"  # Q11 (FP9 choices)
    RAT_STONES = "rat_stones"
    BREW = "brew"  # Q12–Q16
    GIFTS = "gifts"  # FB2 (N9)
    STRONG = "strong"  # FB7 (N7)
    DIE = "die"  # A, Q17
    CHIPS = "chips"  # B, Q18
    RUBIES = "rubies"  # C, Q19, and the exploded choice Q20 (N20)
    VP = "vp"  # D, Q21
    BUY = "buy"  # E, Q22 (round 9: coins -> VP, Q25)
    SPEND = "spend"  # F, Q23 (round 9: rubies -> VP, Q25)
    CLEANUP = "cleanup"  # G, H, Q24
    OVER = "over"  # I, Q25


STEPS = tuple(Phase)[:-1]
CHOICE_KINDS = ("fortune", "tails", "gift", "strong", "flea", "purple", "reward")


@dataclass(frozen=True, slots=True)
class QuacksConfig:
    players: int = 4
    ingredient_set: int = 1  # Q3, Q30: the set of every ingredient book...
    books: tuple[tuple[str, int], ...] = ()  # ...but these (colour, set) books (Q3: mixable)
    start_rubies: int = 1  # D2 (host option 0/1)
    fortune_cards: bool = True  # N29
    start_player: int = 0  # D31
    explosion_limit: int | None = None  # house rule (Q31); None: the catalogue's 7

    def book(self, colour: str) -> int:
        """The set of a colour's ingredient book (orange, white and black: the game's set)."""
        return dict(self.books).get(colour, self.ingredient_set)

    def check(self, catalogue: Catalogue) -> None:
        if not 2 <= self.players <= 4:
            raise InvalidSetup("Q1", f"the base game is for 2 to 4 players, not {self.players}")
        if self.ingredient_set not in catalogue.prices:
            raise InvalidSetup("Q3", f"no ingredient set {self.ingredient_set}")
        for colour, number in self.books:
            if colour not in catalogue.built:
                raise InvalidSetup("Q3", f"{colour!r} has no ingredient book to choose")
            if number not in catalogue.prices:
                raise InvalidSetup("Q3", f"no ingredient set {number}")
        for colour in catalogue.built:
            number = self.book(colour)
            if number not in catalogue.built[colour]:
                raise InvalidSetup(
                    "Q30",
                    f"the {colour} book of set {number} is data only: its effect is not built",
                )
        if self.start_rubies not in (0, 1):
            raise InvalidSetup("Q8", "starting rubies is 0 or 1 (D2)")
        if not 0 <= self.start_player < self.players:
            raise InvalidSetup("Q8", f"no seat {self.start_player} to start")
        if self.explosion_limit is not None and self.explosion_limit < 1:
            raise InvalidSetup("Q13", "the explosion limit must be positive")


@dataclass(slots=True)
class Ask:
    kind: str  # a CHOICE_KIND, "die", "buy", "coins" (round 9 E), "spend"
    options: tuple[str, ...] = ()
    count: int = 1  # die rolls left


@dataclass(slots=True)
class Player:
    bag: set[str] = field(default_factory=set)
    pot: list[tuple[str, int]] = field(default_factory=list)  # (chip, index), in order
    hand: list[str] = field(default_factory=list)  # drawn, on view, not placed (N22)
    droplet: int = 0
    start: int = 0  # droplet + rat tails this round
    flask: bool = True
    rubies: int = 0
    vp: int = 0
    status: str = "brewing"  # brewing / stopped / exploded
    question: str | None = None  # red / yellow / stirred / restart / offer / strong / flea / less
    to_draw: int = 0  # chips still to draw into the hand
    placements: int = 0  # N6
    stirred: bool = False  # FB10 decided (N5)
    second_chance: str = ""  # FB3: "" / offered / used / declined
    no_explode: bool = False  # FB7 placements (N7, D23)
    reward: str | None = None  # Q20: vp / buy
    tails: int = 0
    rats_for_vp: bool = False  # FP10 (N10)
    vp_at_start: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)

    def copy(self) -> Player:
        return replace(
            self,
            bag=set(self.bag),
            pot=list(self.pot),
            hand=list(self.hand),
            history=[dict(h) for h in self.history],
        )


class Game:
    def __init__(
        self,
        config: QuacksConfig,
        deck: list[str],
        rng: random.Random,
        catalogue: Catalogue | None = None,
    ) -> None:
        self.cat = catalogue or default_catalogue()
        config.check(self.cat)
        ids = {c.id for c in self.cat.fortune}
        if any(d not in ids for d in deck) or len(set(deck)) != len(deck):
            raise InvalidSetup("Q27", "the fortune deck must name distinct catalogue cards")
        self.config = config
        self.rng = rng
        self.deck = list(deck) if config.fortune_cards else []
        self.start_deck = tuple(self.deck)
        self.log: list[Action] = []  # every applied action, chance resolved (E16)
        self.discard: list[str] = []
        self.card: str | None = None
        self.round = 1
        self.start_player = config.start_player
        self.step = 0
        self.asks: dict[int, Ask] = {}
        self.queue: list[int] = []
        self.rolls: list[tuple[int, str]] = []  # (seat, face) this round, for the log
        self.winners: tuple[int, ...] = ()
        self.supply: dict[str, list[str]] = {k: list(self.cat.chips(k)) for k in self.cat.kinds}
        self.players = [Player() for _ in range(config.players)]
        self.turns = 0
        for p in self.players:  # N16: lowest serials, seats in order
            p.rubies = config.start_rubies
            for kind in self.cat.start_bag:
                p.bag.add(self.supply[kind].pop(0))
        self._events: list[Event] = []
        self._start_round()
        self._advance()
        self._events = []

    # ------------------------------------------------------------------ construction

    @classmethod
    def new(
        cls, config: QuacksConfig, rng: random.Random, catalogue: Catalogue | None = None
    ) -> Game:
        cat = catalogue or default_catalogue()
        deck = [c.id for c in cat.fortune]
        rng.shuffle(deck)
        return cls(config, deck, rng, cat)

    def copy(self) -> Game:
        other = object.__new__(Game)
        other.cat = self.cat
        other.config = self.config
        other.rng = random.Random()
        other.rng.setstate(self.rng.getstate())
        other.deck = list(self.deck)
        other.start_deck = self.start_deck
        other.log = list(self.log)
        other.discard = list(self.discard)
        other.card = self.card
        other.round = self.round
        other.start_player = self.start_player
        other.step = self.step
        other.asks = {s: Ask(a.kind, a.options, a.count) for s, a in self.asks.items()}
        other.queue = list(self.queue)
        other.rolls = list(self.rolls)
        other.winners = self.winners
        other.supply = {k: list(v) for k, v in self.supply.items()}
        other.players = [p.copy() for p in self.players]
        other.turns = self.turns
        other._events = []
        return other

    # ------------------------------------------------------------------ derived state

    @property
    def phase(self) -> Phase:
        return Phase.OVER if self.step >= len(STEPS) else STEPS[self.step]

    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def order(self) -> list[int]:
        """Seats from the start player, clockwise = increasing seat number (N28)."""
        n = self.config.players
        return [(self.start_player + i) % n for i in range(n)]

    def limit(self, seat: int | None = None) -> int:
        """The explosion limit; with Set 3 yellow it is the seat's own (8 after its 1st
        yellow, 9 after its 3rd, Q30). D27: the highest limit that applies."""
        limits = [self.config.explosion_limit or self.cat.explosion_limit]
        if self.card == "FB5":
            limits.append(9)
        if seat is not None and self.config.book("yellow") == 3:
            yellows = sum(1 for c, _ in self.players[seat].pot if colour_of(c) == "yellow")
            limits.append(9 if yellows >= 3 else 8 if yellows >= 1 else 0)
        return max(limits)

    def white_sum(self, seat: int) -> int:
        return sum(value_of(c) for c, _ in self.players[seat].pot if colour_of(c) == "white")

    def position(self, seat: int) -> int:
        p = self.players[seat]
        return p.pot[-1][1] if p.pot else p.start

    def scoring_space(self, seat: int) -> int:
        """Q16, Q4 (D11), N27: the space after the last chip; the spoon after index 52."""
        at = self.position(seat)
        return self.cat.spoon if at >= self.cat.last_space else at + 1

    def explosion_chance(self, seat: int) -> Fraction:
        """N23: the chance that the next single draw from the bag explodes the pot."""
        p = self.players[seat]
        if not p.bag:
            return Fraction(0)
        room = self.limit(seat) - self.white_sum(seat)
        bad = sum(1 for c in p.bag if colour_of(c) == "white" and value_of(c) > room)
        return Fraction(bad, len(p.bag))

    def unlocked(self, kind: str) -> bool:
        first = self.cat.unlock[colour_of(kind)]
        return first is not None and self.round >= first

    def price(self, kind: str) -> int:
        return self.cat.prices[self.config.book(colour_of(kind))][kind]

    def rubies_left(self) -> int:
        """D26: may go below 0; the host uses a substitute."""
        return self.cat.rubies_supply - sum(p.rubies for p in self.players)

    def flask_usable(self, seat: int) -> bool:
        p = self.players[seat]
        return (
            self.phase is Phase.BREW
            and p.status == "brewing"
            and p.flask
            and p.question is None
            and bool(p.pot)
            and colour_of(p.pot[-1][0]) == "white"
        )

    def where(self, chip: str) -> str:
        """Where a physical chip is: supply / bag:<seat> / pot:<seat> / hand:<seat> / unknown."""
        if chip in self.supply.get(kind_of(chip), ()):
            return "supply"
        for s, p in enumerate(self.players):
            if chip in p.bag:
                return f"bag:{s}"
            if any(c == chip for c, _ in p.pot):
                return f"pot:{s}"
            if chip in p.hand:
                return f"hand:{s}"
        return "unknown"

    def chip_count(self) -> Counter[str]:
        """Every chip in a zone (N22): bags + pots + hands + supply."""
        out: Counter[str] = Counter()
        for chips in self.supply.values():
            out.update(chips)
        for p in self.players:
            out.update(p.bag)
            out.update(c for c, _ in p.pot)
            out.update(p.hand)
        return out

    # ------------------------------------------------------------------ legal actions

    def actors(self) -> list[int]:
        """Seats that have something to do now."""
        return [s for s in range(self.config.players) if self._seat_actions(s)]

    def legal_actions(self, seat: int | None = None) -> list[Action]:
        seats = range(self.config.players) if seat is None else [seat]
        return [a for s in seats for a in self._seat_actions(s)]

    def _seat_actions(self, seat: int) -> list[Action]:
        if self.is_over() or not 0 <= seat < self.config.players:
            return []
        p = self.players[seat]
        if p.to_draw > 0:
            return [Draw(seat)]
        if p.question == "offer":
            return [ChooseOffer(seat, None), *(ChooseOffer(seat, c) for c in sorted(p.hand))]
        if p.question in ("red", "yellow", "stirred", "restart"):
            return [Answer(seat, p.question, True), Answer(seat, p.question, False)]
        ask = self.asks.get(seat)
        if ask is not None:
            if ask.kind in CHOICE_KINDS:
                return [Choose(seat, o) for o in ask.options]
            if ask.kind == "die":
                return [RollDie(seat)]
            if ask.kind == "buy":
                return [Buy(seat, combo) for combo in self._purchases(seat)]
            if ask.kind == "coins":
                coins = self.cat.track[self.scoring_space(seat)].coins
                return [Spend(seat, coins_vp=k) for k in range(coins // 5 + 1)]
            if ask.kind == "spend":
                return self._spends(seat)
        if self.phase is Phase.BREW and p.status == "brewing" and p.question is None:
            out: list[Action] = []
            if p.bag:
                out.append(Draw(seat))
            out.append(Stop(seat))
            if self.flask_usable(seat):
                out.append(UseFlask(seat))
            return out
        return []

    def affordable(self, coins: int) -> list[str]:
        """The kinds `coins` buy now: sold by a book that is out, in the supply (Q22)."""
        return [
            k
            for k in self.cat.kinds
            if self.unlocked(k)
            and self.supply[k]
            and k in self.cat.prices[self.config.book(colour_of(k))]
            and self.price(k) <= coins
        ]

    def _purchases(self, seat: int) -> list[tuple[str, ...]]:
        coins = self.cat.track[self.scoring_space(seat)].coins
        kinds = self.affordable(coins)
        out: list[tuple[str, ...]] = [()]
        out += [(k,) for k in kinds]
        out += [
            (a, b)
            for a, b in combinations(kinds, 2)
            if colour_of(a) != colour_of(b) and self.price(a) + self.price(b) <= coins
        ]
        return out

    def _spends(self, seat: int) -> list[Action]:
        rubies = self.players[seat].rubies
        if self.round == self.cat.rounds:
            return [Spend(seat, vp=k) for k in range(rubies // 2 + 1)]
        out: list[Action] = []
        refills = (False, True) if not self.players[seat].flask else (False,)
        for refill in refills:
            left = rubies - (2 if refill else 0)
            out += [Spend(seat, droplet=k, refill=refill) for k in range(left // 2 + 1)]
        return out

    # ------------------------------------------------------------------ apply

    def apply(self, action: Action) -> list[Event]:
        self._check(action)
        # Chance is resolved here and logged resolved, so a log replays without the rng.
        if isinstance(action, Draw) and action.chip is None:
            action = Draw(action.seat, self.rng.choice(sorted(self.players[action.seat].bag)))
        elif isinstance(action, RollDie) and action.face is None:
            action = RollDie(action.seat, self.rng.randrange(len(self.cat.die)) + 1)
        self.log.append(action)
        self._events = []
        self.turns += 1
        self._dispatch(action)
        self._advance()
        out, self._events = self._events, []
        return out

    def why_illegal(self, action: Action) -> IllegalAction | None:
        try:
            self._check(action)
        except IllegalAction as exc:
            return exc
        return None

    def _check(self, action: Action) -> None:
        seat = action.seat
        if not isinstance(seat, int) or not 0 <= seat < self.config.players:
            raise IllegalAction("Q8", f"there is no seat {seat!r} at this table")
        if self.is_over():
            raise IllegalAction("Q25", "the game is over (I)")
        legal = self._seat_actions(seat)
        if isinstance(action, Draw) and action.chip is not None:
            if Draw(seat) not in legal:
                raise self._explain(Draw(seat), legal)
            self._check_own_chip(seat, action.chip)
            return
        if isinstance(action, RollDie) and action.face is not None:
            if RollDie(seat) not in legal:
                raise self._explain(action, legal)
            if not 1 <= action.face <= len(self.cat.die):
                raise IllegalAction("Q7", f"the die has faces 1 to {len(self.cat.die)}")
            return
        if isinstance(action, Buy):
            self._check_buy(seat, action, legal)
            return
        if action not in legal:
            raise self._explain(action, legal)

    def _check_own_chip(self, seat: int, chip: str) -> None:
        where = self.where(chip)
        if where == f"bag:{seat}":
            return
        if where == "unknown":
            raise IllegalAction("Q2", f"{chip} is not a chip of the catalogue")
        if where == "supply":
            raise IllegalAction("Q12", f"{chip} is in the supply, not in seat {seat}'s bag")
        zone, other = where.split(":")
        if zone == "pot":
            raise IllegalAction("Q12", f"{chip} is already in seat {other}'s pot")
        if zone == "hand":
            raise IllegalAction("Q12", f"{chip} is already drawn (seat {other}'s hand)")
        raise IllegalAction("Q12", f"{chip} is in seat {other}'s bag, not in seat {seat}'s")

    def _check_buy(self, seat: int, action: Buy, legal: list[Action]) -> None:
        ask = self.asks.get(seat)
        if ask is None or ask.kind != "buy":
            raise IllegalAction("Q22", f"seat {seat} cannot buy now (E)")
        if len(action.chips) > 2:
            raise IllegalAction("Q22", "at most 2 chips can be bought (E)")
        kinds = tuple(kind_of(c) for c in action.chips)
        if any(k not in self.cat.counts for k in kinds):
            raise IllegalAction("Q2", f"unknown chip in {list(action.chips)}")
        for chip, kind in zip(action.chips, kinds, strict=True):
            if colour_of(kind) == "white":
                raise IllegalAction("Q22", "white chips are never bought (E)")
            first = self.cat.unlock[colour_of(kind)]
            if first is not None and self.round < first:
                raise IllegalAction(
                    "Q22", f"{colour_of(kind)} can be bought from round {first}, not {self.round}"
                )
            if chip != kind and self.where(chip) != "supply":
                raise IllegalAction("Q28", f"{chip} is not in the supply ({self.where(chip)})")
            if not self.supply[kind]:
                raise IllegalAction("Q22", f"no {kind} left in the supply (E)")
        if len(kinds) == 2 and colour_of(kinds[0]) == colour_of(kinds[1]):
            raise IllegalAction("Q22", "two chips bought must be of different colours (E)")
        if len(kinds) == 2 and kinds[0] == kinds[1] and len(self.supply[kinds[0]]) < 2:
            raise IllegalAction("Q22", f"not enough {kinds[0]} in the supply (E)")
        coins = self.cat.track[self.scoring_space(seat)].coins
        cost = sum(self.price(k) for k in kinds)
        if cost > coins:
            raise IllegalAction("Q22", f"the chips cost {cost} coins, seat {seat} has {coins} (E)")

    def _explain(self, action: Action, legal: list[Action]) -> IllegalAction:
        p = self.players[action.seat]
        phase = self.phase.value
        if isinstance(action, Draw | Stop | UseFlask):
            if isinstance(action, UseFlask):
                if not p.flask:
                    return IllegalAction("Q14", "the flask is empty")
                if self.phase is Phase.BREW and p.status == "brewing":
                    return IllegalAction("Q14", "the flask puts back only a last white chip")
            if self.phase is not Phase.BREW and p.to_draw == 0:
                return IllegalAction("Q12", f"no drawing now (phase {phase})")
            if p.status == "exploded":
                return IllegalAction("Q13", f"seat {action.seat}'s pot exploded: it must stop")
            if p.status == "stopped":
                return IllegalAction("Q12", f"seat {action.seat} has stopped this round")
            if p.question is not None:
                return IllegalAction("Q15", f"seat {action.seat} must first answer: {p.question}")
            if isinstance(action, Draw) and not p.bag:
                return IllegalAction("Q12", "the bag is empty: stop")
            if p.to_draw > 0:
                return IllegalAction("Q15", f"seat {action.seat} must draw {p.to_draw} more")
        if isinstance(action, Answer | ChooseOffer):
            return IllegalAction("Q15", f"seat {action.seat} is not asked that now")
        if isinstance(action, Choose):
            ask = self.asks.get(action.seat)
            if ask is None:
                return IllegalAction("Q9", f"seat {action.seat} has no choice to make now")
            return IllegalAction(
                "Q27" if ask.kind == "fortune" else "Q9",
                f"{action.option!r} is not an option; choose one of {list(ask.options)}",
            )
        if isinstance(action, RollDie):
            return IllegalAction("Q17", f"seat {action.seat} does not roll the die now (A)")
        if isinstance(action, Spend):
            ask = self.asks.get(action.seat)
            if ask is None or ask.kind not in ("spend", "coins"):
                return IllegalAction("Q23", f"seat {action.seat} cannot spend now (F)")
            if self.round == self.cat.rounds and (action.droplet or action.refill):
                return IllegalAction("Q25", "in round 9 rubies only become VP (D19)")
            return IllegalAction("Q23", "not enough rubies or coins for that (F)")
        return IllegalAction("Q9", f"{action} is not legal now (phase {phase})")

    def _dispatch(self, action: Action) -> None:
        seat = action.seat
        p = self.players[seat]
        if isinstance(action, Draw):
            chip = action.chip
            assert chip is not None  # resolved by apply()
            p.bag.remove(chip)
            if p.to_draw > 0:
                p.hand.append(chip)
                p.to_draw -= 1
                self._emit("chip_to_hand", seat, private=True, chip=chip, left=p.to_draw)
                if p.to_draw == 0:
                    self._hand_full(seat)
            else:
                self._emit("chip_drawn", seat, chip=chip)
                self._place(seat, chip)
        elif isinstance(action, Stop):
            p.status = "stopped"
            self._emit("stopped", seat, space=self.scoring_space(seat))
        elif isinstance(action, UseFlask):
            chip, at = p.pot.pop()
            p.bag.add(chip)
            p.flask = False
            self._emit("flask_used", seat, chip=chip, index=at)
            self._after_step(seat)
        elif isinstance(action, ChooseOffer):
            self._choose_offer(seat, action.chip)
        elif isinstance(action, Answer):
            self._answer(seat, action.question, action.yes)
        elif isinstance(action, Choose):
            ask = self.asks.pop(seat)
            self._resolve_choice(seat, ask.kind, action.option)
        elif isinstance(action, RollDie):
            face = action.face
            assert face is not None  # resolved by apply()
            ask = self.asks[seat]
            ask.count -= 1
            if ask.count == 0:
                del self.asks[seat]
            self._roll(seat, face)
        elif isinstance(action, Buy):
            del self.asks[seat]
            self._buy(seat, action.chips)
        elif isinstance(action, Spend):
            del self.asks[seat]
            self._spend(seat, action)

    # ------------------------------------------------------------------ flow

    def _emit(
        self, code: str, seat: int | None = None, private: bool = False, **params: Any
    ) -> None:
        self._events.append(event(code, seat, private, **params))

    def _busy(self) -> bool:
        """Is any seat still to act in this step?"""
        if self.asks:
            return True
        for p in self.players:
            if p.question is not None or p.to_draw > 0:
                return True
            if self.phase is Phase.BREW and p.status == "brewing":
                return True
        return False

    def _advance(self) -> None:
        while not self.is_over():
            single = [
                (s, a)
                for s, a in sorted(self.asks.items())
                if a.kind in CHOICE_KINDS and len(a.options) == 1
            ]
            if single:  # N2: one legal option is taken automatically, and logged
                seat, ask = single[0]
                del self.asks[seat]
                self._emit("auto_choice", seat, ask=ask.kind, option=ask.options[0])
                self._resolve_choice(seat, ask.kind, ask.options[0])
                continue
            if self._busy():
                return
            if self.queue:
                self._open_queued(self.queue.pop(0))
                continue
            self.step += 1
            if self.step >= len(STEPS):  # H: after G, the next round starts at fortune
                self.step = 0
                if not self._next_round():
                    return
            self._open_step()

    def _open_step(self) -> None:
        phase = self.phase
        self._emit("step", None, phase=phase.value, round=self.round)
        if phase is Phase.RATS:
            self._open_rats()
        elif phase is Phase.RAT_STONES:
            self._place_rats()
        elif phase is Phase.BREW:
            self._open_brew()
        elif phase is Phase.GIFTS:
            if self.card == "FB2":  # N9: the exploded seat's left neighbour, from the start player
                n = self.config.players
                self.queue = [
                    (s + 1) % n for s in self.order() if self.players[s].status == "exploded"
                ]
        elif phase is Phase.STRONG:
            if self.card == "FB7":
                self.queue = [s for s in self.order() if self.players[s].status == "stopped"]
        elif phase is Phase.DIE:
            self._open_die()
        elif phase is Phase.CHIPS:
            self._chip_actions()
        elif phase is Phase.RUBIES:
            self._rubies()
        elif phase is Phase.VP:
            self._victory_points()
        elif phase is Phase.BUY:
            self.queue = [
                s for s in self.order()
                if self.players[s].status != "exploded" or self.players[s].reward == "buy"
            ]  # fmt: skip
        elif phase is Phase.SPEND:
            for s in self.order():
                if self.players[s].rubies >= 2:
                    self.asks[s] = Ask("spend")
        elif phase is Phase.CLEANUP:
            self._cleanup()

    def _open_queued(self, seat: int) -> None:
        phase = self.phase
        p = self.players[seat]
        if phase is Phase.FORTUNE:  # FP13 (N12)
            p.to_draw = min(4, len(p.bag))
            p.question = "flea"
            if p.to_draw == 0:
                self._hand_full(seat)
        elif phase is Phase.GIFTS:  # FB2 (N9)
            options = self._gain_options("2")
            if options:
                self.asks[seat] = Ask("gift", tuple(options))
        elif phase is Phase.STRONG:  # FB7 (N7)
            p.to_draw = min(5, len(p.bag))
            p.question = "strong"
            p.no_explode = True
            if p.to_draw == 0:
                self._hand_full(seat)
        elif phase is Phase.BUY:
            if self.round == self.cat.rounds:
                if self.cat.track[self.scoring_space(seat)].coins >= 5:
                    self.asks[seat] = Ask("coins")
            elif len(self._purchases(seat)) > 1:
                self.asks[seat] = Ask("buy")
            else:  # N2: too few coins for any chip
                self._emit("auto_choice", seat, ask="buy", option="")

    # ------------------------------------------------------------------ round start

    def _start_round(self) -> None:
        for p in self.players:
            p.vp_at_start = p.vp
        self._emit("round_started", None, round=self.round, start_player=self.start_player)
        self.card = self.deck.pop(0) if self.deck else None
        self.rolls = []
        if self.card is None:
            return
        self._emit("fortune_revealed", None, card=self.card)
        card = self.card
        for s in self.order():
            p = self.players[s]
            if card == "FP1":
                opts = (["black-1"] if self.supply["black-1"] else []) + self._gain_options("2")
                self.asks[s] = Ask("fortune", (*opts, "rubies"))
            elif card == "FP2":
                self._move_droplet(s, 1)
            elif card == "FP3" and p.rubies >= 1:
                opts = [
                    k for k in self._gain_options("1") if colour_of(k) not in ("purple", "black")
                ]
                self.asks[s] = Ask("fortune", ("none", *opts))
            elif card == "FP6":
                has_white = any(kind_of(c) == "white-1" for c in p.bag)
                self.asks[s] = Ask("fortune", ("vp", "white") if has_white else ("vp",))
            elif card == "FP8":
                p.to_draw = min(5, len(p.bag))
                p.question = "less"
            elif card == "FP10":
                self.asks[s] = Ask("fortune", (*self._gain_options("4"), "rats"))
            elif card == "FP11":
                purple = self.unlocked("purple-1") and bool(self.supply["purple-1"])
                self.asks[s] = Ask("fortune", ("droplet", "purple") if purple else ("droplet",))
            elif card == "FP12":
                self.asks[s] = Ask("die")
        if card in ("FP4", "FP5"):
            attr = "rubies" if card == "FP4" else "vp"
            low = min(getattr(p, attr) for p in self.players)
            for s in self.order():
                if getattr(self.players[s], attr) == low:  # D25: every tied player
                    if card == "FP4":
                        self._add_rubies(s, 1)
                    else:
                        self._gain(s, "green-1")
        if card == "FP8" and all(p.to_draw == 0 for p in self.players):
            self._less_is_more()
        if card == "FP13":
            self.queue = self.order()

    def _gain_options(self, value: str) -> list[str]:
        """D22/N3: coloured chips of a value whose book is out and whose supply has one."""
        kinds = [f"{c}-{value}" for c in ("orange", *TRADE_COLOURS, "purple", "black")]
        return [k for k in kinds if k in self.cat.counts and self.unlocked(k) and self.supply[k]]

    def _next_round(self) -> bool:
        if self.round >= self.cat.rounds:
            self._finish()
            return False
        self.round += 1
        self.start_player = (self.start_player + 1) % self.config.players
        if self.round == 2:
            self._emit("book_out", None, colour="yellow")
        if self.round == 3:
            self._emit("book_out", None, colour="purple")
        if self.round == 6:  # Q9 turn indicator, N24
            for s in self.order():
                self._gain(s, self.cat.round_6_white)
        self._start_round()
        return True

    # ------------------------------------------------------------------ rats

    def _open_rats(self) -> None:
        leader = max(p.vp for p in self.players)
        for s in self.order():
            p = self.players[s]
            tails = self.cat.rat_tails_between(p.vp, leader)
            if self.card == "FP7":
                tails *= 2
            p.tails = tails
            if self.card == "FP9" and tails > 0:
                self.asks[s] = Ask("tails", tuple(str(k) for k in range(min(3, tails) + 1)))

    def _place_rats(self) -> None:
        for s in self.order():
            p = self.players[s]
            if p.rats_for_vp and p.tails:
                p.vp += p.tails
                self._emit("vp", s, gain=p.tails, why="FP10")
            p.start = min(self.cat.last_space, p.droplet + p.tails)  # Q11 clamp at 52
            self._emit("rat_stone", s, tails=p.tails, start=p.start)

    # ------------------------------------------------------------------ brewing

    def _open_brew(self) -> None:
        for s in self.order():
            p = self.players[s]
            p.status = "brewing"
            self._after_step(s)

    def _place(self, seat: int, chip: str) -> None:
        p = self.players[seat]
        colour, value = colour_of(chip), value_of(chip)
        move = value
        book = self.config.book(colour)
        if colour == "orange" and self.card == "FB6":
            move += 1
        if colour == "red" and book == 3 and p.pot and colour_of(p.pot[-1][0]) == "white":
            move += value_of(p.pot[-1][0])  # Q30 Set 3: plus the white just before
        if colour == "yellow" and book == 4:  # Q30 Set 4: 1st/2nd/3rd yellow +1/+2/+3
            move += min(3, 1 + sum(1 for c, _ in p.pot if colour_of(c) == "yellow"))
        if colour == "red" and book == 1:
            oranges = sum(1 for c, _ in p.pot if colour_of(c) == "orange")
            bonus = 0 if oranges == 0 else 1 if oranges <= 2 else 2
            if bonus:  # N4: the bonus may be declined
                p.hand.append(chip)
                p.question = "red"
                return
        self._put(seat, chip, move)

    def _put(self, seat: int, chip: str, move: int) -> None:
        p = self.players[seat]
        index = min(self.cat.last_space, self.position(seat) + move)
        p.pot.append((chip, index))
        p.placements += 1
        self._emit("chip_placed", seat, chip=chip, index=index, move=move)
        colour = colour_of(chip)
        if colour == "white":
            if not p.no_explode and self.white_sum(seat) > self.limit(seat):
                p.status = "exploded"
                self._emit("exploded", seat, white=self.white_sum(seat), limit=self.limit(seat))
                self._after_step(seat)
                return
            if self.card == "FB10" and not p.stirred and self.phase is Phase.BREW:
                p.stirred = True
                p.question = "stirred"
                return
        book = self.config.book(colour)
        if colour == "blue" and book in (3, 4) and self.cat.track[index].ruby:
            if book == 3:  # Q30 Set 3: a ruby at once
                self._add_rubies(seat, 1)
            else:  # Q30 Set 4: 1/2/4 VP at once
                p.vp += value_of(chip)
                self._emit("vp", seat, gain=value_of(chip), why="blue-4")
        if (
            colour == "yellow"
            and book == 1
            and len(p.pot) >= 2
            and colour_of(p.pot[-2][0]) == "white"
        ):
            p.question = "yellow"
            return
        if colour == "blue" and book == 1:
            k = min(value_of(chip), len(p.bag))  # D13: a short bag gives what is there
            if k:
                p.to_draw = k
                p.question = "offer"
                return
        self._after_step(seat)

    def _after_step(self, seat: int) -> None:
        """A step has fully resolved (N21): the FB3 offer, then a forced stop (N2)."""
        p = self.players[seat]
        if self.phase is not Phase.BREW:
            return
        if (
            self.card == "FB3"
            and p.second_chance == ""
            and (p.placements >= 5 or p.status == "exploded")
            and p.status != "stopped"
        ):
            p.second_chance = "offered"
            p.question = "restart"
            return
        if (
            p.status == "brewing"
            and p.question is None
            and not p.bag
            and not self.flask_usable(seat)
        ):
            p.status = "stopped"
            self._emit("stopped", seat, space=self.scoring_space(seat), forced=True)

    def _choose_offer(self, seat: int, chip: str | None) -> None:
        p = self.players[seat]
        back = [c for c in p.hand if c != chip]
        p.bag.update(back)
        p.hand = []
        p.question = None
        self._emit("offer_chosen", seat, chip=chip, back=len(back))
        if chip is None:
            self._after_step(seat)
        else:
            self._place(seat, chip)

    def _answer(self, seat: int, question: str, yes: bool) -> None:
        p = self.players[seat]
        p.question = None
        self._emit("answered", seat, question=question, yes=yes)
        if question == "red":
            chip = p.hand.pop()
            oranges = sum(1 for c, _ in p.pot if colour_of(c) == "orange")
            bonus = 1 if oranges <= 2 else 2
            self._put(seat, chip, value_of(chip) + (bonus if yes else 0))
            return
        if question == "yellow" and yes:
            chip, at = p.pot.pop(-2)
            p.bag.add(chip)
            self._emit("chip_returned", seat, chip=chip, index=at, why="yellow")
        if question == "stirred" and yes:
            chip, at = p.pot.pop()
            p.bag.add(chip)
            self._emit("chip_returned", seat, chip=chip, index=at, why="FB10")
        if question == "restart":
            if yes:  # D24: chips back; flask, rubies, VP stay
                p.bag.update(c for c, _ in p.pot)
                p.pot = []
                p.status = "brewing"
                p.placements = 0
                p.second_chance = "used"
                self._emit("restarted", seat)
            else:
                p.second_chance = "declined"
        self._after_step(seat)

    def _hand_full(self, seat: int) -> None:
        p = self.players[seat]
        if p.question == "offer":
            return  # ChooseOffer is now legal
        if p.question == "less":
            if all(q.to_draw == 0 for q in self.players):
                self._less_is_more()
            return
        if p.question == "strong":
            self.asks[seat] = Ask("strong", ("none", *sorted(p.hand)))
            return
        if p.question == "flea":
            options = [
                c for c in sorted(p.hand)
                if colour_of(c) in TRADE_COLOURS and str(value_of(c)) in UPGRADE
                and self.supply[f"{colour_of(c)}-{UPGRADE[str(value_of(c))]}"]
            ]  # fmt: skip
            if options:
                self.asks[seat] = Ask("flea", ("none", *options))
            else:  # N12: only a player who cannot trade gets the green 1
                self._return_hand(seat)
                self._gain(seat, "green-1")

    def _return_hand(self, seat: int) -> None:
        p = self.players[seat]
        p.bag.update(p.hand)
        p.hand = []
        p.question = None

    def _less_is_more(self) -> None:
        sums = {s: sum(value_of(c) for c in self.players[s].hand) for s in self.order()}  # N13
        low = min(sums.values())
        for s in self.order():
            self._emit("less_is_more", s, total=sums[s])
            self._return_hand(s)
        for s in self.order():
            if sums[s] == low:
                self._gain(s, "blue-2")
            else:
                self._add_rubies(s, 1)

    # ------------------------------------------------------------------ choices

    def _resolve_choice(self, seat: int, kind: str, option: str) -> None:
        p = self.players[seat]
        if kind == "fortune":
            card = self.card
            if option == "rubies":
                self._add_rubies(seat, 3)
            elif option == "vp":
                p.vp += 4
                self._emit("vp", seat, gain=4, why=card)
            elif option == "white":
                chip = min(c for c in p.bag if kind_of(c) == "white-1")
                p.bag.remove(chip)
                self._to_supply(chip)
                self._emit("chip_removed", seat, chip=chip)
            elif option == "rats":
                p.rats_for_vp = True
            elif option == "droplet":
                self._move_droplet(seat, 2)
            elif option == "purple":
                self._gain(seat, "purple-1")
            elif option != "none":
                if card == "FP3":
                    self._add_rubies(seat, -1)
                self._gain(seat, option)
        elif kind == "tails":
            k = int(option)
            p.tails -= k
            self._add_rubies(seat, k)
        elif kind == "gift":
            self._gain(seat, option)
        elif kind == "strong":
            placed = None if option == "none" else option
            if placed is not None:
                p.hand.remove(placed)
            self._return_hand(seat)
            if placed is not None:
                self._emit("chip_drawn", seat, chip=placed, why="FB7")
                self._place(seat, placed)
        elif kind == "flea":
            if option != "none":
                p.hand.remove(option)
                self._to_supply(option)
                self._emit("chip_removed", seat, chip=option, why="FP13")
                self._gain(seat, f"{colour_of(option)}-{UPGRADE[str(value_of(option))]}")
            self._return_hand(seat)
        elif kind == "purple":
            tier = int(option)
            if tier == 1:
                p.vp += 1
            elif tier == 2:
                p.vp += 1
                self._add_rubies(seat, 1)
            else:
                p.vp += 2
                self._move_droplet(seat, 1)
            self._emit("purple", seat, tier=tier)
        elif kind == "reward":
            p.reward = option
            self._emit("reward_chosen", seat, reward=option)

    # ------------------------------------------------------------------ evaluation

    def _open_die(self) -> None:
        alive = [s for s in self.order() if self.players[s].status != "exploded"]
        if not alive:
            return  # D15: nobody rolls
        best = max(self.scoring_space(s) for s in alive)
        for s in alive:
            if self.scoring_space(s) == best:
                self.asks[s] = Ask("die", count=2 if self.card == "FB4" else 1)

    def _roll(self, seat: int, face: int) -> None:
        result = self.cat.die[face - 1]
        p = self.players[seat]
        self.rolls.append((seat, result))
        self._emit("die_rolled", seat, face=face, result=result)
        if result in ("vp1", "vp2"):
            p.vp += int(result[-1])
        elif result == "ruby":
            self._add_rubies(seat, 1)
        elif result == "droplet":
            self._move_droplet(seat, 1)
        elif result == "orange":
            self._gain(seat, "orange-1")

    def _chip_actions(self) -> None:
        n = self.config.players
        blacks = [sum(1 for c, _ in p.pot if colour_of(c) == "black") for p in self.players]
        for s in self.order():
            p = self.players[s]
            if self.config.book("green") == 1:
                greens = sum(1 for c, _ in p.pot[-2:] if colour_of(c) == "green")
                if greens:
                    self._add_rubies(s, greens)
                    self._emit("green", s, rubies=greens)
            elif p.pot and self.white_sum(s) == 7:  # Q30 Set 3: the last chip moves on
                steps = sum(value_of(c) for c, _ in p.pot if colour_of(c) == "green")
                if steps:
                    chip, at = p.pot[-1]
                    p.pot[-1] = (chip, min(self.cat.last_space, at + steps))
                    self._emit("green", s, moved=steps, index=p.pot[-1][1])
            mine = blacks[s]
            if mine:  # N14
                if n == 2:
                    other = blacks[1 - s]
                    if mine >= other:
                        self._move_droplet(s, 1)
                    if mine > other:
                        self._add_rubies(s, 1)
                else:
                    beaten = sum(mine > blacks[o] for o in {(s - 1) % n, (s + 1) % n})
                    if beaten:
                        self._move_droplet(s, 1)
                    if beaten == 2:  # more than both neighbours (D16)
                        self._add_rubies(s, 1)
                self._emit("black", s, mine=mine)
            purples = sum(1 for c, _ in p.pot if colour_of(c) == "purple")
            if purples and self.config.book("purple") == 3:  # Q30 Set 3: VP by the space
                gain = sum(min(3, at // 10) for c, at in p.pot if colour_of(c) == "purple")
                p.vp += gain
                self._emit("vp", s, gain=gain, why="purple-3")
            elif purples:
                self.asks[s] = Ask("purple", tuple(str(t) for t in range(min(3, purples), 0, -1)))

    def _rubies(self) -> None:
        for s in self.order():
            space = self.cat.track[self.scoring_space(s)]
            if space.ruby:
                self._add_rubies(s, 1)
                if self.card == "FB8":
                    self.players[s].vp += 2
                    self._emit("vp", s, gain=2, why="FB8")
                if self.card == "FB11":
                    self._add_rubies(s, 1)
            if self.players[s].status == "exploded":
                self.asks[s] = Ask("reward", ("vp", "buy"))

    def _victory_points(self) -> None:
        for s in self.order():
            p = self.players[s]
            if p.status == "exploded" and p.reward == "buy":
                continue
            gain = self.cat.track[self.scoring_space(s)].vp
            p.vp += gain
            self._emit("vp", s, gain=gain, why="D", space=self.scoring_space(s))

    def _buy(self, seat: int, chips: tuple[str, ...]) -> None:
        for chip in chips:
            kind = kind_of(chip)
            physical = chip if chip != kind else self.supply[kind][0]
            self.supply[kind].remove(physical)
            self.players[seat].bag.add(physical)
            self._emit("bought", seat, chip=physical, price=self.price(kind))
        if not chips:
            self._emit("bought", seat, chip=None, price=0)

    def _spend(self, seat: int, action: Spend) -> None:
        p = self.players[seat]
        if action.coins_vp:
            p.vp += action.coins_vp
            self._emit("vp", seat, gain=action.coins_vp, why="coins")
        if action.vp:
            p.vp += action.vp
            self._add_rubies(seat, -2 * action.vp)
            self._emit("vp", seat, gain=action.vp, why="rubies")
        if action.refill:
            p.flask = True
            self._add_rubies(seat, -2)
            self._emit("flask_refilled", seat)
        if action.droplet:
            self._add_rubies(seat, -2 * action.droplet)
            self._move_droplet(seat, action.droplet)

    def _cleanup(self) -> None:
        for s in self.order():
            p = self.players[s]
            if self.card == "FB1" and self.white_sum(s) == 7:  # N8
                self._move_droplet(s, 1)
            if self.card == "FB9" and not p.flask:
                p.flask = True
                self._emit("flask_refilled", s, why="FB9")
            p.history.append(
                {
                    "round": self.round,
                    "space": self.scoring_space(s),
                    "exploded": p.status == "exploded",
                    "card": self.card,
                    "reward": p.reward,  # an exploded seat's choice (Q20)
                    "bonus": [r for seat, r in self.rolls if seat == s],  # the die (A)
                    "tails": p.tails,
                    "vp_gained": p.vp - p.vp_at_start,
                    "vp": p.vp,
                    "rubies": p.rubies,
                    "droplet": p.droplet,
                }
            )
            p.bag.update(c for c, _ in p.pot)
            p.bag.update(p.hand)
            p.pot, p.hand = [], []
            p.start = p.droplet
            p.status = "brewing"
            p.question, p.to_draw, p.placements = None, 0, 0
            p.stirred, p.second_chance, p.no_explode = False, "", False
            p.reward, p.tails, p.rats_for_vp = None, 0, False
        if self.card is not None:
            self.discard.append(self.card)

    def _finish(self) -> None:
        self.step = len(STEPS)
        best = max(p.vp for p in self.players)
        tied = [s for s, p in enumerate(self.players) if p.vp == best]
        if len(tied) > 1:  # Q25, D21: the furthest pot in round 9, exploded or not
            furthest = max(self.players[s].history[-1]["space"] for s in tied)
            tied = [s for s in tied if self.players[s].history[-1]["space"] == furthest]
        self.winners = tuple(tied)
        self._emit("game_over", None, winners=self.winners, vp=tuple(p.vp for p in self.players))

    # ------------------------------------------------------------------ small effects

    def _gain(self, seat: int, kind: str) -> str | None:
        """Q28, D26: a chip from the supply into the bag; none left gives nothing."""
        if not self.supply[kind]:
            self._emit("supply_empty", seat, kind=kind)
            return None
        chip = self.supply[kind].pop(0)
        self.players[seat].bag.add(chip)
        self._emit("chip_gained", seat, chip=chip)
        return chip

    def _to_supply(self, chip: str) -> None:
        pile = self.supply[kind_of(chip)]
        pile.append(chip)
        pile.sort()

    def _add_rubies(self, seat: int, n: int) -> None:
        self.players[seat].rubies += n
        self._emit("rubies", seat, change=n, total=self.players[seat].rubies)

    def _move_droplet(self, seat: int, steps: int) -> None:
        p = self.players[seat]
        p.droplet = min(self.cat.last_space, p.droplet + steps)  # N17
        self._emit("droplet", seat, index=p.droplet)

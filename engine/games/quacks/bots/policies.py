"""The Quacks bots. Each `choose(view, legal, rng)` sees its own seat view and legal actions.

- `random`: any legal action, uniformly.
- `greedy`: draws while the next chip cannot explode the pot, then stops; spends all it
  can on the dearest chips.
- `push`: draws while the expected value of one more draw beats stopping. The value of a
  space weighs its coins against its VP by round (coins matter early, VP late); an
  exploded pot is worth the better of the two (Q20), and `margin` (default -0.5) credits
  the draws after the next. The odds come from the bag contents, which the owner may know
  (D30). It buys the chips that move it furthest for the rounds left.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

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

BOT_NAMES = ("random", "greedy", "push")


class BotError(Exception):
    """A bot name or option that does not exist."""


class Bot(Protocol):
    name: str

    def choose(
        self, view: dict[str, Any], legal: Sequence[Action], rng: random.Random
    ) -> Action: ...


class RandomBot:
    name = "random"

    def choose(self, view: dict[str, Any], legal: Sequence[Action], rng: random.Random) -> Action:
        return rng.choice(list(legal))


OPTION_TASTE = ("vp", "rubies", "droplet", "rats", "white", "purple")


class _Chooser:
    """Choices outside brewing shared by `greedy` and `push`."""

    name = "base"

    def __init__(self, catalogue: Catalogue | None = None) -> None:
        self.cat = catalogue or default_catalogue()

    def coin_weight(self, round_: int) -> float:
        """What one coin is worth in VP this round (5 coins = 1 VP in round 9, Q25)."""
        return {1: 0.6, 2: 0.6, 3: 0.55, 4: 0.5, 5: 0.45, 6: 0.4, 7: 0.3, 8: 0.25}.get(round_, 0.2)

    def space_value(self, space: int, round_: int, exploded: bool) -> float:
        s = self.cat.track[space]
        if round_ >= self.cat.rounds:  # coins become VP by whole fives (Q25)
            coins, vp = float(s.coins // 5), float(s.vp)
        else:
            coins, vp = s.coins * self.coin_weight(round_), float(s.vp)
        ruby = 0.5 if s.ruby else 0.0
        return (max(coins, vp) if exploded else coins + vp) + ruby

    def other(self, view: dict[str, Any], legal: Sequence[Action], rng: random.Random) -> Action:
        me = view["seats"][view["me"]]
        first = legal[0]
        if isinstance(first, Answer):
            if first.question == "restart":
                return Answer(first.seat, "restart", me["status"] == "exploded")
            return Answer(first.seat, first.question, True)
        if isinstance(first, ChooseOffer):
            return self.offer(view, [a for a in legal if isinstance(a, ChooseOffer)])
        if isinstance(first, RollDie | Draw):
            return first
        if isinstance(first, Buy):
            buys = [a for a in legal if isinstance(a, Buy)]
            return max(buys, key=lambda b: self.buy_worth(view, b))
        if isinstance(first, Spend):
            spends = [a for a in legal if isinstance(a, Spend)]
            late = view["round"] >= 8
            return max(spends, key=lambda a: (a.vp + a.coins_vp, a.refill and not late, a.droplet))
        if isinstance(first, Choose):
            return self.pick(view, [a for a in legal if isinstance(a, Choose)])
        return rng.choice(list(legal))

    def buy_worth(self, view: dict[str, Any], buy: Buy) -> tuple[float, ...]:
        """`greedy`: spend the most. Subclasses may weigh the chips themselves."""
        return (sum(view["prices"][c] for c in buy.chips), len(buy.chips))

    def offer(self, view: dict[str, Any], offers: list[ChooseOffer]) -> ChooseOffer:
        me = view["seats"][view["me"]]
        room = me["limit"] - me["white_sum"]

        def worth(a: ChooseOffer) -> float:
            if a.chip is None:
                return 0.0
            if colour_of(a.chip) == "white":
                return -1.0 if value_of(a.chip) > room else value_of(a.chip) - 0.5 - (3 - room)
            return value_of(a.chip) + (0.5 if colour_of(a.chip) in ("green", "purple") else 0)

        return max(offers, key=worth)

    def pick(self, view: dict[str, Any], chooses: list[Choose]) -> Choose:
        ask = (view.get("ask") or {}).get("kind")
        if ask in ("purple", "tails"):
            return max(chooses, key=lambda a: int(a.option))
        if ask == "reward":
            me = view["seats"][view["me"]]
            space = self.cat.track[me["scoring_space"]]
            coins = space.coins * self.coin_weight(view["round"])
            return next(a for a in chooses if a.option == ("vp" if space.vp >= coins else "buy"))

        def worth(a: Choose) -> float:
            if a.option == "none":
                return 0.0
            if a.option in OPTION_TASTE:
                return 10.0 - OPTION_TASTE.index(a.option)
            try:
                price = float(view["prices"].get(kind_of(a.option), 0))
                return float(value_of(a.option)) + price / 10
            except (ValueError, IndexError):
                return 0.5

        return max(chooses, key=worth)


class GreedyBot(_Chooser):
    name = "greedy"

    def choose(self, view: dict[str, Any], legal: Sequence[Action], rng: random.Random) -> Action:
        kinds = {type(a) for a in legal}
        if Stop in kinds:
            me = view["seats"][view["me"]]
            if UseFlask in kinds and me["white_sum"] >= me["limit"] - 2:
                return next(a for a in legal if isinstance(a, UseFlask))
            if Draw in kinds and me["explosion_chance"]["num"] == 0:
                return next(a for a in legal if isinstance(a, Draw))
            return next(a for a in legal if isinstance(a, Stop))
        return self.other(view, legal, rng)


class PushBot(_Chooser):
    name = "push"

    # One draw ahead under-draws (the draws after it have value too): by tournament
    # (2026-12, 3 players, 90 games each) -0.5 beat 0, +0.5, -1 and -1.5.
    def __init__(self, margin: float = -0.5, catalogue: Catalogue | None = None) -> None:
        super().__init__(catalogue)
        self.margin = margin

    def buy_worth(self, view: dict[str, Any], buy: Buy) -> tuple[float, ...]:
        """Spaces gained per draw for the rest of the game: a chip's value (plus its
        effect's usual worth), most of all early; price breaks ties."""
        taste = {"orange": 0.2, "green": 0.6, "blue": 0.8, "red": 0.9, "yellow": 0.7,
                 "purple": 1.5, "black": 1.8}  # fmt: skip
        left = self.cat.rounds - view["round"]
        worth = sum(value_of(c) + taste.get(colour_of(c), 0.0) for c in buy.chips)
        price = sum(view["prices"][c] for c in buy.chips)
        return (worth * left, price)

    def draw_value(self, view: dict[str, Any]) -> tuple[float, float]:
        """(value if stopping now, expected value after one more draw) for this seat."""
        me = view["seats"][view["me"]]
        round_ = view["round"]
        last = self.cat.last_space
        position = me["pot"][-1]["index"] if me["pot"] else me["start"]
        oranges = sum(1 for c in me["pot"] if c["kind"].startswith("orange"))
        now = self.space_value(me["scoring_space"], round_, False)
        bag: dict[str, int] = view.get("bag", {})
        total = sum(bag.values())
        if total == 0:
            return now, now
        expected = 0.0
        for kind, count in bag.items():
            colour, value = colour_of(kind), value_of(kind)
            move = value
            if colour == "orange" and view["fortune"] == "FB6":
                move += 1
            if colour == "red" and oranges:
                move += 1 if oranges <= 2 else 2
            if colour == "blue":
                move += 1  # the offer's chip, roughly
            at = min(last, position + move)
            space = self.cat.spoon if at >= last else at + 1
            exploded = colour == "white" and me["white_sum"] + value > me["limit"]
            expected += count / total * self.space_value(space, round_, exploded)
        return now, expected

    def choose(self, view: dict[str, Any], legal: Sequence[Action], rng: random.Random) -> Action:
        kinds = {type(a) for a in legal}
        if Stop in kinds:
            me = view["seats"][view["me"]]
            if UseFlask in kinds and me["white_sum"] >= me["limit"] - 3:
                return next(a for a in legal if isinstance(a, UseFlask))
            if Draw in kinds:
                now, expected = self.draw_value(view)
                if me["explosion_chance"]["num"] == 0 or expected > now + self.margin:
                    return next(a for a in legal if isinstance(a, Draw))
            return next(a for a in legal if isinstance(a, Stop))
        return self.other(view, legal, rng)


def make_bot(label: str) -> Bot:
    """`random`, `greedy`, `push` or `push:margin=0.5`."""
    name, _, rest = label.partition(":")
    options = dict(part.partition("=")[::2] for part in rest.split(":") if part)
    makers: dict[str, Callable[[], Bot]] = {
        "random": RandomBot,
        "greedy": GreedyBot,
    }
    if name == "push":
        unknown = set(options) - {"margin"}
        if unknown:
            raise BotError(f"unknown push option {sorted(unknown)}; use margin")
        try:
            return PushBot(float(options["margin"])) if "margin" in options else PushBot()
        except ValueError:
            raise BotError(f"push option margin must be a number: {options['margin']!r}") from None
    if name not in makers:
        raise BotError(f"no Quacks bot {name!r}; choose from {', '.join(BOT_NAMES)}")
    if options:
        raise BotError(f"the {name} bot takes no options")
    return makers[name]()

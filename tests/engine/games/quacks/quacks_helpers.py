"""Helpers for the Quacks rule tests: games with a chosen fortune deck, chips named by kind,
and a driver that walks the evaluation with plain, stated choices."""

from __future__ import annotations

import random

from engine.games.quacks.rules import (
    Action,
    Answer,
    Buy,
    Choose,
    ChooseOffer,
    Draw,
    Event,
    Game,
    Phase,
    QuacksConfig,
    RollDie,
    Spend,
    Stop,
)
from engine.games.quacks.rules.catalogue import kind_of


def new_game(
    players: int = 2, deck: list[str] | None = None, seed: int = 0, **config: object
) -> Game:
    """A game whose fortune deck is `deck` (none: no cards, N29)."""
    cfg = QuacksConfig(players=players, fortune_cards=deck is not None, **config)  # type: ignore[arg-type]
    return Game(cfg, list(deck or []), random.Random(seed))


def chip_in(game: Game, seat: int, kind: str, zone: str = "bag") -> str:
    """The lowest physical chip of `kind` in the seat's bag (or hand)."""
    p = game.players[seat]
    chips = sorted(c for c in (p.bag if zone == "bag" else p.hand) if kind_of(c) == kind)
    assert chips, f"seat {seat} has no {kind} in its {zone}: {sorted(p.bag)}"
    return chips[0]


def draw(game: Game, seat: int, kind: str) -> list[Event]:
    return game.apply(Draw(seat, chip_in(game, seat, kind)))


def give(game: Game, seat: int, *kinds: str) -> None:
    """Test set-up: move chips from the supply into a seat's bag."""
    for kind in kinds:
        game.players[seat].bag.add(game.supply[kind].pop(0))


def bag_only(game: Game, seat: int, *kinds: str) -> None:
    """Test set-up: the seat's bag holds exactly `kinds` (the rest goes to the supply)."""
    p = game.players[seat]
    for chip in sorted(p.bag):
        game.supply[kind_of(chip)].append(chip)
        game.supply[kind_of(chip)].sort()
    p.bag.clear()
    give(game, seat, *kinds)


def default_action(game: Game, seat: int, face: int = 1) -> Action:
    """Stop brewing, roll `face`, take the first option, buy and spend nothing."""
    legal = game.legal_actions(seat)
    first = legal[0]
    if Stop(seat) in legal:
        return Stop(seat)
    if isinstance(first, RollDie):
        return RollDie(seat, face)
    if isinstance(first, Buy):
        return Buy(seat, ())
    if isinstance(first, Spend):
        return Spend(seat)
    if isinstance(first, Answer):
        return Answer(seat, first.question, False)
    if isinstance(first, ChooseOffer | Choose | Draw):
        return first
    return first


def run_until(game: Game, phase: Phase, round_: int | None = None, face: int = 1) -> None:
    """Play default actions until `phase` (of `round_`, default the current round) opens."""
    target = game.round if round_ is None else round_
    for _ in range(2000):
        if game.phase is phase and game.round == target:
            return
        actors = game.actors()
        assert actors, f"stuck in {game.phase}"
        game.apply(default_action(game, actors[0], face))
    raise AssertionError(f"never reached {phase} of round {target}")


def stop_all(game: Game) -> None:
    for s in range(game.config.players):
        if Stop(s) in game.legal_actions(s):
            game.apply(Stop(s))


def run_to_round(game: Game, round_: int, face: int = 1) -> None:
    """Play default actions until round `round_` has begun (its card revealed)."""
    for _ in range(2000):
        if game.round == round_:
            return
        game.apply(default_action(game, game.actors()[0], face))
    raise AssertionError(f"never reached round {round_}")

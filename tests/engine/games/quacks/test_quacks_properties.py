"""Property tests (hypothesis) over seeds, 2–4 players and random legal play with every
fortune card: chips are conserved (N22: bags + pots + hands + supply = the catalogue);
the explosion chance equals a brute-force count over the bag (N23); every listed action is
accepted and chips from elsewhere are refused, leaving the game unchanged; the game ends
after round 9 with the winners given by the tie-break (Q25, D21); a seed replays exactly."""

from __future__ import annotations

import json
import random
from collections import Counter
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.quacks.rules import Action, Draw, Game, IllegalAction, Phase, QuacksConfig, Stop
from engine.games.quacks.rules.catalogue import colour_of, default_catalogue
from engine.games.quacks.rules.observer import seat_view

SETTINGS = settings(max_examples=max(5, settings().max_examples // 4), deadline=None)
ALL_CHIPS = Counter(default_catalogue().all_chips())


def brute_force_chance(game: Game, seat: int) -> Fraction:
    bag = sorted(game.players[seat].bag)
    if not bag:
        return Fraction(0)
    boom = 0
    for chip in bag:
        trial = game.copy()
        trial.apply(Draw(seat, chip))
        boom += trial.players[seat].status == "exploded"
    return Fraction(boom, len(bag))


def pick(game: Game, rng: random.Random, push: float) -> Action:
    seat = rng.choice(game.actors())
    legal = game.legal_actions(seat)
    if Draw(seat) in legal and Stop(seat) in legal:
        if rng.random() < push:
            bag = sorted(game.players[seat].bag)
            return Draw(seat, rng.choice(bag)) if rng.random() < 0.5 else Draw(seat)
        return Stop(seat)
    return rng.choice(legal)


def play(seed: int, players: int, push: float, checks: bool, books: int = 1) -> Game:
    game = Game.new(QuacksConfig(players=players, ingredient_set=books), random.Random(seed))
    rng = random.Random(seed + 7)
    for _ in range(5000):
        if game.is_over():
            return game
        if checks:
            assert game.chip_count() == ALL_CHIPS
            if game.phase is Phase.BREW:
                for seat in range(players):
                    if Stop(seat) in game.legal_actions(seat) and rng.random() < 0.3:
                        assert game.explosion_chance(seat) == brute_force_chance(game, seat)
        game.apply(pick(game, rng, push))
    raise AssertionError("the game did not end")


@SETTINGS
@given(st.integers(0, 10**6), st.integers(2, 4), st.floats(0.5, 0.97), st.sampled_from([1, 3]))
def test_N22_N23_chips_are_conserved_and_the_odds_match_a_brute_force_count(
    seed: int, players: int, push: float, books: int
) -> None:
    play(seed, players, push, checks=True, books=books)


@SETTINGS
@given(st.integers(0, 10**6), st.integers(2, 4), st.floats(0.3, 0.97))
def test_Q25_D21_a_game_ends_after_round_9_with_winners_by_the_tie_break(
    seed: int, players: int, push: float
) -> None:
    game = play(seed, players, push, checks=False)
    assert game.round == 9 and game.phase is Phase.OVER and game.legal_actions() == []
    assert all(len(p.history) == 9 for p in game.players)
    best = max(p.vp for p in game.players)
    tied = [s for s, p in enumerate(game.players) if p.vp == best]
    furthest = max(game.players[s].history[-1]["space"] for s in tied)
    assert game.winners == tuple(
        s for s in tied if game.players[s].history[-1]["space"] == furthest
    )


@SETTINGS
@given(st.integers(0, 10**6), st.integers(2, 4))
def test_every_legal_action_is_accepted_and_foreign_chips_are_refused(
    seed: int, players: int
) -> None:
    game = Game.new(QuacksConfig(players=players), random.Random(seed))
    rng = random.Random(seed)
    while not game.is_over():
        seat = rng.choice(game.actors())
        if Draw(seat) in game.legal_actions(seat):
            others = [c for c in ALL_CHIPS if c not in game.players[seat].bag]
            chip = rng.choice(others)
            before = json.dumps(seat_view(game, seat), sort_keys=True)
            try:
                game.apply(Draw(seat, chip))
            except IllegalAction as err:
                assert err.rule in ("Q12", "Q2")
            else:
                raise AssertionError(f"{chip} was drawn by seat {seat} from elsewhere")
            assert json.dumps(seat_view(game, seat), sort_keys=True) == before
        game.apply(pick(game, rng, 0.8))


@SETTINGS
@given(st.integers(0, 10**6))
def test_a_seed_replays_to_the_same_game(seed: int) -> None:
    a, b = play(seed, 3, 0.85, False), play(seed, 3, 0.85, False)
    assert [p.vp for p in a.players] == [p.vp for p in b.players]
    assert [p.history for p in a.players] == [p.history for p in b.players]
    assert all(colour_of(c) for c in ALL_CHIPS)


@SETTINGS
@given(st.integers(0, 10**6), st.integers(2, 4), st.randoms(use_true_random=False))
def test_N1_brewing_in_any_interleaving_gives_the_same_round(
    seed: int, players: int, order: random.Random
) -> None:
    """Each seat's own brewing steps, played seat after seat, then again interleaved at
    random: the same pots, bags and evaluation (no Set 1 chip touches another pot)."""
    deck = [c.id for c in default_catalogue().fortune if c.kind == "blue"]
    random.Random(seed).shuffle(deck)
    config = QuacksConfig(players=players)
    first = Game(config, deck, random.Random(seed))
    rng = random.Random(seed + 1)
    for seat in range(players):
        while first.phase is Phase.BREW and seat in first.actors():
            first.apply(pick_seat(first, seat, rng))
    scripts = {s: [a for a in first.log if a.seat == s] for s in range(players)}
    second = Game(config, deck, random.Random(seed))
    queues = {s: list(v) for s, v in scripts.items()}
    while any(queues.values()):
        seat = order.choice([s for s, q in queues.items() if q])
        second.apply(queues[seat].pop(0))
    assert [seat_view(first, s) for s in range(players)] == [
        seat_view(second, s) for s in range(players)
    ]
    assert first.chip_count() == second.chip_count()


def pick_seat(game: Game, seat: int, rng: random.Random) -> Action:
    legal = game.legal_actions(seat)
    if Draw(seat) in legal and Stop(seat) in legal:
        return Draw(seat) if rng.random() < 0.85 else Stop(seat)
    return rng.choice(legal)

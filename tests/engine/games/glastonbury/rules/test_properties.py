"""Property tests (hypothesis) over random seeds and 2-4 players, known and unknown piles.

At every step of a random legal game: every card is in exactly one place; every listed
action is accepted and every other action of the whole action space is refused with
`IllegalAction`, leaving the game unchanged; public views never show a covered card;
a seat's private view shows its stack only with the memory aid. At random points and at
the end the log replays to the identical game (also through its JSON wire form). Every
game ends within 400 actions.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import rules_deals as D
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.glastonbury.rules import Action, Game, GameLog, IllegalAction, Phase, Take, replay
from engine.games.glastonbury.rules.actions import (
    DISCARD,
    KEEP,
    PASS,
    REFILLS,
    TAKES,
    USE_DECLINATIO,
)
from engine.games.glastonbury.rules.board import cell_name
from engine.games.glastonbury.rules.cards import CORNER_CARDS, deck_for

ALL_ACTIONS: tuple[Action, ...] = (
    *TAKES,
    USE_DECLINATIO,
    PASS,
    KEEP,
    DISCARD,
    *REFILLS.values(),
)
MAX_ACTIONS = 400
# A whole game per example: a quarter of the profile's examples (tests/conftest.py).
SETTINGS = settings(max_examples=max(5, settings().max_examples // 4))


def where_cards_are(game: Game) -> Counter[str]:
    places: Counter[str] = Counter(c for c in game.grid if c is not None)
    places.update(game.pile.cards())
    for cauldron in game.cauldrons:
        places.update(cauldron)
    for seat_spells in game.spells:
        places.update(slot[0] for slot in seat_spells)
    places.update(game.discarded)
    places.update(game.out_of_game)
    if game.phase is Phase.LAST_CARD:
        assert game.last_card is not None
        places[game.last_card[1]] += 1  # taken, neither kept nor discarded yet
    return places


def covered(game: Game) -> set[str]:
    return {card for cauldron in game.cauldrons for card in cauldron[:-1]}


def check_step(game: Game, expected_cards: Counter[str]) -> None:
    assert where_cards_are(game) == expected_cards
    if game.is_over():
        assert game.legal_actions() == ()
    else:
        assert game.legal_actions(), "a running game always offers an action"
    legal = set(game.legal_actions())
    before = game.state_key()
    for action in ALL_ACTIONS:
        if action in legal:
            continue
        try:
            game.apply(action)
        except IllegalAction as exc:
            assert exc.rule.startswith("G")
        else:
            raise AssertionError(f"{action} is not listed but was accepted")
    assert game.state_key() == before
    view = game.view_public()
    expected = view["expected"]  # what the table screen shows must match the rules
    takes = {cell_name(a.cell) for a in legal if isinstance(a, Take)}
    assert set(expected["take"]) | set(expected["accio"]) == takes
    assert expected["declinatio"] == (USE_DECLINATIO in legal)
    assert expected["can_pass"] == (PASS in legal)
    assert (expected["refill_cell"] is not None) == (game.phase is Phase.REFILL)
    assert view["phase"] == game.phase.value and view["over"] == game.is_over()
    if not game.is_over():
        hidden = covered(game)
        public = json.dumps(view)
        assert not [c for c in hidden if f'"{c}"' in public]
        for seat in range(game.players):
            private = game.view(seat)
            stack = private["you"]["stack"]
            others = hidden - set(game.cauldrons[seat])
            if game.config.memory_aid:
                assert stack == game.cauldrons[seat]
            else:
                assert stack is None
                others = hidden
            private_text = json.dumps(private)
            assert not [c for c in others if f'"{c}"' in private_text]


def play_checked(game: Game, rng: random.Random, replay_at: set[int]) -> None:
    deck = Counter({**dict.fromkeys(deck_for(game.config.removed), 1)})
    deck.update(CORNER_CARDS)
    check_step(game, deck)
    for n in range(MAX_ACTIONS):
        if game.is_over():
            break
        legal = game.legal_actions()
        action = rng.choice(legal)
        game.apply(action)  # every listed action is accepted
        check_step(game, deck)
        if n in replay_at:
            assert replay(GameLog.of(game)) == game
            wire = json.loads(json.dumps(GameLog.of(game).to_wire()))
            assert replay(GameLog.from_wire(wire)) == game
    assert game.is_over(), f"not over after {MAX_ACTIONS} actions"
    log = GameLog.of(game)
    assert replay(log) == game
    wire = json.loads(json.dumps(log.to_wire()))
    assert replay(GameLog.from_wire(wire)) == game


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.integers(2, 4),
    memory_aid=st.booleans(),
    replay_at=st.sets(st.integers(0, 120), max_size=3),
)
def test_known_pile_games_keep_every_invariant(
    seed: int, players: int, memory_aid: bool, replay_at: set[int]
) -> None:
    game = Game.new(D.config(players, memory_aid=memory_aid), random.Random(seed))
    play_checked(game, random.Random(seed + 1), replay_at)


@SETTINGS  # twice the steps of a known-pile game
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.integers(2, 4),
    replay_at=st.sets(st.integers(0, 160), max_size=3),
)
def test_unknown_pile_games_with_random_refills_keep_every_invariant(
    seed: int, players: int, replay_at: set[int]
) -> None:
    shuffled = Game.new(D.config(players), random.Random(seed)).deal
    game = Game.from_deal(D.config(players), shuffled.grid, None)
    play_checked(game, random.Random(seed + 1), replay_at)
    assert game.deal.pile is None


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 4), cut=st.integers(0, 150))
def test_play_copy_and_apply_agree(seed: int, players: int, cut: int) -> None:
    """`play()` (no events) reaches the same state as `apply()`; a copy is independent."""
    config = D.config(players, recipes=True)
    applied = Game.new(config, random.Random(seed))
    played = Game.new(config, random.Random(seed))
    rng = random.Random(seed)
    snapshot: Game | None = None
    n = 0
    while not applied.is_over():
        action = rng.choice(applied.legal_actions())
        applied.apply(action)
        played.play(action)
        n += 1
        if n == cut:
            snapshot = applied.copy()
            key = snapshot.state_key()
    assert played == applied
    assert played.scores() == applied.scores()
    if snapshot is not None:
        assert snapshot.state_key() == key
        while not snapshot.is_over():
            snapshot.apply(snapshot.legal_actions()[-1])
        assert played == applied  # playing the copy changed nothing in the original

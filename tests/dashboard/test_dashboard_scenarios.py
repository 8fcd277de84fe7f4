"""The scenario planner (`scenarios.plan`) the flow tests reach their situations with: each
plan, replayed on the rules engine, ends in its situation (checked here by other means than
the situation's own predicate), the same deal and seed give the same moves, and a situation
no playout reaches fails naming it (issue 25)."""

from __future__ import annotations

import random
from pathlib import Path

import httpx
import pytest
from dashkit import PIN, Stack, wait_until
from scenarios import (
    Situation,
    Unreachable,
    accio_to_choose,
    declinatio_at_corner,
    last_card_to_take,
    plan,
    play_to,
    refilled,
    saved_pile,
    spell_taken,
    turns,
)

from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.rules.actions import USE_DECLINATIO, Take
from engine.games.glastonbury.rules.board import LINES
from engine.games.glastonbury.rules.cards import CARDS
from engine.games.glastonbury.rules.game import Phase

DEALS = [(players, seed) for players in (2, 3, 4) for seed in range(1, 5)]


def deal(players: int, seed: int) -> Game:
    colours = ("yellow", "red", "green", "blue")[:players]
    return Game.new(GameConfig(colours=colours), random.Random(seed))


def replayed(game: Game, situation: Situation) -> tuple[Game, Game]:
    """The game before the plan's last move and after the whole plan."""
    moves = plan(game, situation)
    before = game.copy()
    for move in moves[:-1]:
        before.play(move)
    after = before.copy()
    if moves:
        after.play(moves[-1])
    return before, after


@pytest.mark.parametrize(("players", "seed"), DEALS)
@pytest.mark.parametrize("spell", ["perluceo", "vanesco"])
def test_a_spell_taken_ends_the_plan_with_that_card_beside_the_seat(
        players: int, seed: int, spell: str) -> None:
    before, after = replayed(deal(players, seed), spell_taken(spell))
    last = after.actions[-1]
    assert isinstance(last, Take)
    card = before.grid[last.cell]
    assert card is not None and CARDS[card].spell == spell
    assert card in {slot[0] for slot in after.spells[before.seat]}
    assert not after.is_over()


@pytest.mark.parametrize(("players", "seed"), DEALS)
def test_a_refill_follows_the_plans_take(players: int, seed: int) -> None:
    before, after = replayed(deal(players, seed), refilled())
    last = after.actions[-1]
    assert isinstance(last, Take)
    assert after.grid[last.cell] not in (None, before.grid[last.cell])  # from the pile
    assert len(after.pile) == len(before.pile) - 1


@pytest.mark.parametrize(("players", "seed"), DEALS)
def test_an_accio_and_a_declinatio_corner_come_to_choose(players: int, seed: int) -> None:
    _, accio = replayed(deal(players, seed), accio_to_choose())
    line = accio.faced_line()
    assert line is not None and accio.spell_uses(accio.seat, "accio")
    assert any(isinstance(a, Take) and a.cell not in LINES[line]
               for a in accio.legal_actions())
    _, corner = replayed(deal(players, seed), declinatio_at_corner())
    assert corner.faced_line() is None and USE_DECLINATIO in corner.legal_actions()


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 3)])
def test_the_last_card_comes_to_take_G10a(players: int, seed: int) -> None:
    _, game = replayed(deal(players, seed), last_card_to_take())
    assert not game.pile and game.phase is Phase.TAKE
    ends = []
    for action in game.legal_actions():
        probe = game.copy()
        probe.play(action)
        ends.append(probe.phase is Phase.LAST_CARD)
    assert any(ends)


def test_a_situation_for_a_given_seat_is_that_seats_turn() -> None:
    for seat in (0, 1, 2):
        _, game = replayed(deal(3, 7), turns(4, seat=seat))
        assert game.seat == seat and game.turns >= 4 and game.phase is Phase.TAKE


def test_the_same_deal_and_seed_give_the_same_moves() -> None:
    game = deal(2, 9)
    assert plan(game, spell_taken("perluceo")) == plan(game.copy(), spell_taken("perluceo"))
    assert plan(game, last_card_to_take(), seed=4) == plan(game, last_card_to_take(), seed=4)


def test_an_unreachable_situation_fails_naming_it() -> None:
    with pytest.raises(Unreachable, match="no playout of this deal reaches a Nothing taken"):
        plan(deal(2, 1), spell_taken("nothing"), tries=5)


def test_planning_needs_the_piles_order() -> None:
    real = deal(2, 1)
    table = Game.from_deal(real.config, list(real.deal.grid))  # a real table: pile unknown
    with pytest.raises(ValueError, match="pile's order"):
        plan(table, refilled())


@pytest.mark.e2e
def test_a_perluceo_reached_on_a_table_whose_hub_runs_apart(table_stack: Stack,
                                                             tmp_path: Path) -> None:
    """`play_to` on the dashboard + engine + `cauldron hub --backend sim` subprocess (what the
    phone tests use): the planned moves, played with the seats' hands, leave the engine's
    game where the plan said, the Perluceo beside the seat that took it."""
    dash = table_stack.dash
    with httpx.Client(base_url=dash.url, headers={"X-Host-Pin": PIN}, timeout=20) as http:
        answer = http.post("/api/host/new_game", json={
            "colours": ["yellow", "red"], "deal": "virtual", "seed": 3})
        assert answer.status_code == 200, answer.text
        wait_until(lambda: ((http.get("/api/table").json()["game"] or {}).get("view") or {})
                   .get("table", {}).get("status") == "playing", 20, "the game to start")
        interp = table_stack.engine.tables[dash.table].interp
        pile = saved_pile(tmp_path / "hub", dash.table)
        assert interp.game is not None
        planned = Game.from_deal(interp.game.config, list(interp.game.deal.grid), pile=pile)
        moves = play_to(http, lambda: interp, pile, spell_taken("perluceo"))
    for move in moves:
        seat = planned.seat
        planned.play(move)
    game = interp.game
    assert game.view_public()["grid"] == planned.view_public()["grid"]
    assert game.cauldrons == planned.cauldrons and game.spells == planned.spells
    assert [a for a in game.actions if isinstance(a, Take)] == [
        m for m in moves if isinstance(m, Take)]
    assert any(CARDS[slot[0]].spell == "perluceo" for slot in game.spells[seat])


def test_a_wait_that_times_out_says_where_it_stood() -> None:
    with pytest.raises(AssertionError, match=r"waiting for the end of the game; where it "
                       r"stood: turn 1, phase take"):
        wait_until(lambda: False, 0.05, "the end of the game",
                   report=lambda: "turn 1, phase take")

"""Golden games, scripted by hand from RULES-QUACKS.md: every value checked after each
round was worked out on paper (the working is in the comments), not read from the engine."""

from __future__ import annotations

from typing import TypeVar

from golden_runner import Round, play_round
from quacks_helpers import new_game

from engine.games.quacks.rules import Spend

# Game 1: 2 players, no fortune cards (N29). Seat 0 draws orange then green every round and
# stops; seat 1 draws one white 1 and stops. Seat 0 always rolls (furthest, Q17), gets the
# green's ruby (last chip, Q18) and turns 2 rubies into droplet steps (Q23). Seat 1 lags and
# gets rat tails (Q11): after 1, 4, 7, 10, 12 (Q5).
GAME_1 = [
    # r1: s0 orange@1 green@2 -> space 3 (3 coins); s1 white@1 -> 2. Die vp2. Green ruby: 2.
    # s0 buys an orange (3 coins), spends 2 rubies: droplet 1.
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[3],
        buys={0: ("orange-1",)},
        spends={0: [Spend(0, droplet=1)]},
        starts=[0, 0],
        spaces=[3, 2],
        end=[(2, 0, 1), (0, 1, 0)],
    ),
    # r2 (start seat 1): s1 0 VP vs 2: 1 tail -> start 1. s0 from droplet 1: orange@2 green@3
    # -> 4; s1 white@2 -> 3. Die droplet -> 2. Green ruby: 1. s1 buys orange (3), s0 green (4).
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[5],
        buys={1: ("orange-1",), 0: ("green-1",)},
        starts=[1, 1],
        spaces=[4, 3],
        end=[(2, 1, 2), (0, 1, 0)],
    ),
    # r3: s1 0 vs 2: 1 tail. s0 orange@3 green@4 -> 5 (a ruby space, 5 coins, 0 VP).
    # Die vp1 -> 3. Green + space: 3 rubies; droplet 1 for 2 -> 3, 1 left.
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[1],
        spends={0: [Spend(0, droplet=1)]},
        starts=[2, 1],
        spaces=[5, 3],
        end=[(3, 1, 3), (0, 1, 0)],
    ),
    # r4: s1 0 vs 3: 1 tail. s0 orange@4 green@5 -> 6 (1 VP). Die ruby: 2, green 3; droplet 4.
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[4],
        spends={0: [Spend(0, droplet=1)]},
        starts=[3, 1],
        spaces=[6, 3],
        end=[(4, 1, 4), (0, 1, 0)],
    ),
    # r5: s1 0 vs 4: 1 tail (after 4 needs 5). s0 -> 7 (1 VP). Die vp2: 4+2+1 = 7. Rubies 2:
    # droplet 5.
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[3],
        spends={0: [Spend(0, droplet=1)]},
        starts=[4, 1],
        spaces=[7, 3],
        end=[(7, 0, 5), (0, 1, 0)],
    ),
    # r6: turn indicator: a white 1 each (Q9). s1 0 vs 7: tails after 1, 4 -> start 2.
    # s0 orange@6 green@7 -> 8 (1 VP); s1 white@3 -> 4 (4 coins): buys a green 1.
    # Die vp1: 7+1+1 = 9. Rubies 1.
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[2],
        buys={1: ("green-1",)},
        starts=[5, 2],
        spaces=[8, 4],
        end=[(9, 1, 5), (0, 1, 0)],
    ),
    # r7: s1 0 vs 9: tails after 1, 4, 7 -> start 3; white@4 -> 5, a ruby space: 2 rubies.
    # s0 -> 8 (1 VP). Die orange chip (orange-1-05). Green: 2 rubies. Both buy a droplet step.
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[6],
        spends={0: [Spend(0, droplet=1)], 1: [Spend(1, droplet=1)]},
        starts=[5, 3],
        spaces=[8, 5],
        end=[(10, 0, 6), (0, 0, 1)],
    ),
    # r8: s1 0 vs 10: tails after 1, 4, 7 -> 1+3 = 4; white@5 -> 6 (1 VP). s0 from 6:
    # orange@7 green@8 -> 9 (ruby, 1 VP). Die vp2: 10+2+1 = 13. Rubies 2: droplet 7.
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[3],
        spends={0: [Spend(0, droplet=1)]},
        starts=[6, 4],
        spaces=[9, 6],
        end=[(13, 0, 7), (1, 0, 1)],
    ),
    # r9: s1 1 vs 13: tails after 1, 4, 7, 10, 12 -> 1+5 = 6; white@7 -> 8 (8 coins, 1 VP).
    # s0 from 7 -> 10 (10 coins, 2 VP). Die vp1: 13+1+2 = 16. Coins to VP (Q25): s0 10 -> 2,
    # s1 8 -> 1. Final 18 to 3.
    Round(
        {0: ["orange-1", "green-1"], 1: ["white-1"]},
        faces=[1],
        spends={0: [Spend(0, coins_vp=2)], 1: [Spend(1, coins_vp=1)]},
        starts=[7, 6],
        spaces=[10, 8],
        end=[(18, 1, 7), (3, 0, 1)],
    ),
]


def test_golden_game_1_a_cautious_pair_with_rat_tails_and_droplets() -> None:
    game = new_game(2)
    for number, r in enumerate(GAME_1, start=1):
        play_round(game, r, number)
        if number == 6:
            assert "white-1-09" in game.players[1].bag and "white-1-10" in game.players[0].bag
        if number == 7:
            assert "orange-1-05" in game.players[0].bag
    assert game.is_over() and game.winners == (0,)
    assert [h["space"] for h in game.players[0].history] == [3, 4, 5, 6, 7, 8, 8, 9, 10]


def d1(seat: int) -> list[Spend]:
    return [Spend(seat, droplet=1)]


BOLD = ["white-3", "white-2", "white-2", "white-1"]  # +3 +5 +7 +8: explodes (8 > 7), space +9
STEADY = ["orange-1", "green-1", "white-3"]  # +1 +2 +5: space +6, the green next-to-last

# Game 2: 3 players and a fixed fortune deck. Seat 0 pushes its whites to an explosion
# (D or E, Q20), seat 1 brews steadily, seat 2 always stops at once and collects rat tails.
GAME_2 = [
    # r1 FP2: every droplet +1 (Q10, before the rats). s0 4 6 8 9 -> 10 exploded; s1 2 3 6 -> 7;
    # s2 -> 2. s1 rolls vp2, its green gives a ruby. s0 takes the VP (2). s1 buys a red 1 and
    # moves its droplet for 2 rubies.
    Round(
        {0: BOLD, 1: STEADY, 2: []},
        faces=[3],
        choices={0: ["vp"]},
        buys={1: ("red-1",)},
        spends={1: d1(1)},
        starts=[1, 1, 1],
        spaces=[10, 7, 2],
        exploded=[0],
        end=[(2, 1, 1), (3, 0, 2), (0, 1, 1)],
    ),
    # r2 FB6: orange +1. Tails: s0 2 vs 3: none; s2 0 vs 3: 1. s1 orange@4 green@5 white@8 ->
    # 9 (ruby). s1 rolls a ruby; rubies 0+1+1+1 = 3, one droplet step. s0 buys instead of VP:
    # blue 1 + orange 1 (8 of 10 coins); s2 buys an orange (3 coins) before s0 (order 1, 2, 0).
    Round(
        {0: BOLD, 1: STEADY, 2: []},
        faces=[4],
        choices={0: ["buy"]},
        buys={0: ("blue-1", "orange-1"), 2: ("orange-1",)},
        spends={1: d1(1)},
        starts=[1, 2, 2],
        spaces=[10, 9, 3],
        exploded=[0],
        end=[(2, 1, 1), (4, 1, 3), (0, 1, 1)],
    ),
    # r3 FB5: limit 9, so s0's 8 does not explode: it stops on 10 and rolls (vp1); 2 VP.
    # s2 0 vs 4: 1 tail. s1 4 5 8 -> 9 (ruby): 1+1+1 = 3 rubies, a droplet step.
    Round(
        {0: BOLD, 1: STEADY, 2: []},
        faces=[1],
        spends={1: d1(1)},
        starts=[1, 3, 2],
        spaces=[10, 9, 3],
        end=[(5, 1, 1), (5, 1, 4), (0, 1, 1)],
    ),
    # r4 FP4: all tied on 1 ruby, all get one (D25). s2 0 vs 5: tails after 1, 4. s0 explodes
    # on 10 (VP 2); s1 5 6 9 -> 10, rolls the droplet face; s2 -> 4 buys a green 1. Everyone
    # with 2 rubies buys a droplet step.
    Round(
        {0: BOLD, 1: STEADY, 2: []},
        faces=[5],
        choices={0: ["vp"]},
        buys={2: ("green-1",)},
        spends={0: d1(0), 1: d1(1), 2: d1(2)},
        starts=[1, 4, 3],
        spaces=[10, 10, 4],
        exploded=[0],
        end=[(7, 0, 2), (7, 1, 6), (0, 0, 2)],
    ),
    # r5 FB8: s2 stops on 5, a ruby space: a ruby and 2 VP (exploded or not). s0 from 2 -> 11;
    # s1 from 6 -> 12, rolls vp1.
    Round(
        {0: BOLD, 1: STEADY, 2: []},
        faces=[2],
        choices={0: ["vp"]},
        spends={1: d1(1)},
        starts=[2, 6, 4],
        spaces=[11, 12, 5],
        exploded=[0],
        end=[(9, 0, 2), (10, 0, 7), (2, 1, 2)],
    ),
    # r6 FB1 and the turn indicator's white 1 (s2, s0, s1). s0 stops on exactly 7 white
    # (5 7 9 -> 10): droplet +1 at the end (N8). s1 8 9 12 -> 13 (ruby) rolls an orange chip.
    # s2 -> 5 (ruby).
    Round(
        {0: ["white-3", "white-2", "white-2"], 1: STEADY, 2: []},
        faces=[6],
        spends={1: d1(1), 2: d1(2)},
        starts=[2, 7, 4],
        spaces=[10, 13, 5],
        end=[(11, 0, 3), (12, 0, 8), (2, 0, 3)],
    ),
    # r7 FB11 (no ruby space reached). s2 2 vs 12: tails after 4, 7, 10 -> 6. s0 -> 12 boom.
    Round(
        {0: BOLD, 1: STEADY, 2: []},
        faces=[3],
        choices={0: ["vp"]},
        starts=[3, 8, 6],
        spaces=[12, 14, 7],
        exploded=[0],
        end=[(13, 0, 3), (17, 1, 8), (3, 0, 3)],
    ),
    # r8 FP11: s0, s2 droplet +2; s1 a purple chip (the book is out). Tails s0 13 vs 17: 2,
    # s2 3 vs 17: 6. s0 10 12 14 15 -> 16 (ruby), buys a black and an orange (13 of 15).
    # s1 orange@9 purple@10 green@11 white@14 -> 15: green ruby, purple 1 VP (one tier, N2).
    Round(
        {0: BOLD, 1: ["orange-1", "purple-1", "green-1", "white-3"], 2: []},
        faces=[1],
        choices={0: ["droplet", "buy"], 1: ["purple"], 2: ["droplet"]},
        buys={0: ("black-1", "orange-1")},
        spends={1: d1(1)},
        starts=[7, 8, 11],
        spaces=[16, 15, 12],
        exploded=[0],
        end=[(13, 1, 5), (22, 0, 9), (5, 0, 5)],
    ),
    # r9 FB4: the furthest (s0 black@10 white@13 white@15 -> 16) rolls twice (vp2, vp2).
    # Black: more than both neighbours (3 players: both others, D16): droplet and a ruby.
    # Coins by 5 and rubies by 2 become VP (Q25): 24, 28, 9.
    Round(
        {0: ["black-1", "white-3", "white-2"], 1: STEADY, 2: []},
        faces=[3, 3],
        spends={
            2: [Spend(2, coins_vp=2)],
            0: [Spend(0, coins_vp=3), Spend(0, vp=1)],
            1: [Spend(1, coins_vp=3)],
        },
        starts=[9, 9, 12],
        spaces=[16, 15, 13],
        end=[(24, 1, 6), (28, 1, 9), (9, 1, 5)],
    ),
]
DECK_2 = ["FP2", "FB6", "FB5", "FP4", "FB8", "FB1", "FB11", "FP11", "FB4", "FP1"]


def test_golden_game_2_three_players_explosions_and_nine_fortune_cards() -> None:
    game = new_game(3, deck=DECK_2)
    for number, r in enumerate(GAME_2, start=1):
        play_round(game, r, number)
        if number == 2:
            assert {"blue-1-01", "orange-1-05"} <= game.players[0].bag
            assert "orange-1-04" in game.players[2].bag
    assert game.is_over() and game.winners == (1,) and game.deck == ["FP1"]


def both(*kinds: str) -> dict[int, list[str]]:
    """Seats 0 and 1 draw the same chips; seats 2 and 3 stop at once."""
    return {0: list(kinds), 1: list(kinds), 2: [], 3: []}


T = TypeVar("T")


def pair(value: T) -> dict[int, T]:
    return {0: value, 1: value}


# Game 3: 4 players, no cards. Seats 0 and 1 play the same chips every round (so they tie
# for the die and neither gets rat tails), through every Set 1 effect: the flask, a blue
# offer, red with an orange, yellow sending a white back, purple tiers, black against
# neighbours (4 players, D16). Seats 2 and 3 stop at once and ride the rat tails. In round
# 9 seat 1 ends one space further with the same VP and wins the tie-break (Q25, D21).
GAME_3 = [
    # r1: orange@1 green@2 white3@5, flask (back to 2), white2@4 white1@5 -> 6 (1 VP, 6 coins).
    # Tied: both roll (D15) vp2. Both buy a blue 1.
    Round(
        both("orange-1", "green-1", "white-3", "FLASK", "white-2", "white-1"),
        faces=[3, 3],
        buys=pair(("blue-1",)),
        starts=[0, 0, 0, 0],
        spaces=[6, 6, 1, 1],
        end=[(3, 1, 0), (3, 1, 0), (0, 1, 0), (0, 1, 0)],
    ),
    # r2: s2, s3 0 vs 3: 1 tail. blue@1 offers 1 chip: an orange, placed @2; green@3
    # white3@6 -> 7. Die ruby, green ruby: 3; refill the flask (2). Both buy a red 1.
    Round(
        both("blue-1", "green-1", "white-3"),
        faces=[4, 4],
        offers=pair([(["orange-1"], "orange-1")]),
        buys=pair(("red-1",)),
        spends=pair([]) | {0: [Spend(0, refill=True)], 1: [Spend(1, refill=True)]},
        starts=[0, 0, 1, 1],
        spaces=[7, 7, 2, 2],
        end=[(4, 1, 0), (4, 1, 0), (0, 1, 0), (0, 1, 0)],
    ),
    # r3: orange@1, red 1 with one orange moves 1+1 -> 3; green@4 white3@7 -> 8. Die droplet.
    # Green ruby: 2 -> droplet 2. Both buy a yellow 1 (out from round 2).
    Round(
        both("orange-1", "red-1", "green-1", "white-3"),
        faces=[5, 5],
        answers=pair([True]),
        buys=pair(("yellow-1",)),
        spends={0: [Spend(0, droplet=1)], 1: [Spend(1, droplet=1)]},
        starts=[0, 0, 1, 1],
        spaces=[8, 8, 2, 2],
        end=[(5, 0, 2), (5, 0, 2), (0, 1, 0), (0, 1, 0)],
    ),
    # r4: s2, s3: tails after 1, 4. From 2: white2@4, yellow@5 sends it back, green@6
    # white3@9 -> 10 (2 VP). Die vp1. Both buy a purple (out from round 3).
    Round(
        both("white-2", "yellow-1", "green-1", "white-3"),
        faces=[1, 1],
        answers=pair([True]),
        buys=pair(("purple-1",)),
        starts=[2, 2, 2, 2],
        spaces=[10, 10, 3, 3],
        end=[(8, 1, 2), (8, 1, 2), (0, 1, 0), (0, 1, 0)],
    ),
    # r5: tails 3. purple@3 orange@4 green@5 white3@8 -> 9 (ruby). Die vp1, purple 1 VP (one
    # tier, N2), green + space: 3 rubies, a droplet step. Another purple each.
    Round(
        both("purple-1", "orange-1", "green-1", "white-3"),
        faces=[2, 2],
        buys=pair(("purple-1",)),
        spends={0: [Spend(0, droplet=1)], 1: [Spend(1, droplet=1)]},
        starts=[2, 2, 3, 3],
        spaces=[9, 9, 4, 4],
        end=[(11, 1, 3), (11, 1, 3), (0, 1, 0), (0, 1, 0)],
    ),
    # r6: a white 1 each (turn indicator). Tails 4: s2, s3 stop on 5 (a ruby). s0, s1 from 3:
    # purple@4 purple@5 orange@6 green@7 white3@10 -> 11. Die vp2; purple tier 2 (1 VP, 1 ruby).
    # Both buy a black. Everyone with 2 rubies moves the droplet.
    Round(
        both("purple-1", "purple-1", "orange-1", "green-1", "white-3"),
        faces=[3, 3],
        choices=pair(["2"]),
        buys=pair(("black-1",)),
        spends={s: [Spend(s, droplet=1)] for s in range(4)},
        starts=[3, 3, 4, 4],
        spaces=[11, 11, 5, 5],
        end=[(16, 1, 4), (16, 1, 4), (0, 0, 1), (0, 0, 1)],
    ),
    # r7: tails 6 -> s2, s3 start 7 -> 8 (1 VP). black@5 orange@6 green@7 white3@10 -> 11.
    # Black: one black each, so each beats one neighbour only (4 players): droplet +1.
    Round(
        both("black-1", "orange-1", "green-1", "white-3"),
        faces=[1, 1],
        spends={0: [Spend(0, droplet=1)], 1: [Spend(1, droplet=1)]},
        starts=[4, 4, 7, 7],
        spaces=[11, 11, 8, 8],
        end=[(19, 0, 6), (19, 0, 6), (1, 0, 1), (1, 0, 1)],
    ),
    # r8: tails 1 vs 19: 8 -> start 9 -> 10 (2 VP). purple purple orange green white3 from 6 ->
    # 14 (3 VP). Die vp1; the lower purple tier is chosen (N15): 1 VP.
    Round(
        both("purple-1", "purple-1", "orange-1", "green-1", "white-3"),
        faces=[2, 2],
        choices=pair(["1"]),
        starts=[6, 6, 9, 9],
        spaces=[14, 14, 10, 10],
        end=[(24, 1, 6), (24, 1, 6), (3, 0, 1), (3, 0, 1)],
    ),
    # r9: tails 3 vs 24: 9 -> start 10 -> 11. s0 orange@7 green@8 white1@9 -> 10; s1 ... white2@10
    # -> 11. Seats 1, 2, 3 tie on 11 and roll (droplet faces). 10 and 11 coins are 2 VP each;
    # 2 rubies 1 VP: 29 all square for s0 and s1, s1's pot went further: s1 wins.
    Round(
        {
            0: ["orange-1", "green-1", "white-1"],
            1: ["orange-1", "green-1", "white-2"],
            2: [],
            3: [],
        },
        faces=[5, 5, 5],
        spends={
            0: [Spend(0, coins_vp=2), Spend(0, vp=1)],
            1: [Spend(1, coins_vp=2), Spend(1, vp=1)],
            2: [Spend(2, coins_vp=2)],
            3: [Spend(3, coins_vp=2)],
        },
        starts=[6, 6, 10, 10],
        spaces=[10, 11, 11, 11],
        end=[(29, 0, 6), (29, 0, 7), (7, 0, 2), (7, 0, 2)],
    ),
]


def test_golden_game_3_four_players_every_set_1_chip_and_the_tie_break() -> None:
    game = new_game(4)
    for number, r in enumerate(GAME_3, start=1):
        play_round(game, r, number)
    assert game.is_over() and [p.vp for p in game.players][:2] == [29, 29]
    assert game.winners == (1,)

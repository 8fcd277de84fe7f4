"""Golden games, scripted by hand from RULES-QUACKS.md: every value checked after each
round was worked out on paper (the working is in the comments), not read from the engine."""

from __future__ import annotations

from golden_runner import Round, play_round
from quacks_helpers import new_game

from engine.quacks import Spend

# Game 1: 2 players, no fortune cards (N29). Seat 0 draws orange then green every round and
# stops; seat 1 draws one white 1 and stops. Seat 0 always rolls (furthest, Q17), gets the
# green's ruby (last chip, Q18) and turns 2 rubies into droplet steps (Q23). Seat 1 lags and
# gets rat tails (Q11): after 1, 4, 7, 10, 12 (Q5).
GAME_1 = [
    # r1: s0 orange@1 green@2 -> space 3 (3 coins); s1 white@1 -> 2. Die vp2. Green ruby: 2.
    # s0 buys an orange (3 coins), spends 2 rubies: droplet 1.
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[3], buys={0: ("orange-1",)},
          spends={0: Spend(0, droplet=1)}, starts=[0, 0], spaces=[3, 2],
          end=[(2, 0, 1), (0, 1, 0)]),
    # r2 (start seat 1): s1 0 VP vs 2: 1 tail -> start 1. s0 from droplet 1: orange@2 green@3
    # -> 4; s1 white@2 -> 3. Die droplet -> 2. Green ruby: 1. s1 buys orange (3), s0 green (4).
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[5],
          buys={1: ("orange-1",), 0: ("green-1",)}, starts=[1, 1], spaces=[4, 3],
          end=[(2, 1, 2), (0, 1, 0)]),
    # r3: s1 0 vs 2: 1 tail. s0 orange@3 green@4 -> 5 (a ruby space, 5 coins, 0 VP).
    # Die vp1 -> 3. Green + space: 3 rubies; droplet 1 for 2 -> 3, 1 left.
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[1],
          spends={0: Spend(0, droplet=1)}, starts=[2, 1], spaces=[5, 3],
          end=[(3, 1, 3), (0, 1, 0)]),
    # r4: s1 0 vs 3: 1 tail. s0 orange@4 green@5 -> 6 (1 VP). Die ruby: 2, green 3; droplet 4.
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[4],
          spends={0: Spend(0, droplet=1)}, starts=[3, 1], spaces=[6, 3],
          end=[(4, 1, 4), (0, 1, 0)]),
    # r5: s1 0 vs 4: 1 tail (after 4 needs 5). s0 -> 7 (1 VP). Die vp2: 4+2+1 = 7. Rubies 2:
    # droplet 5.
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[3],
          spends={0: Spend(0, droplet=1)}, starts=[4, 1], spaces=[7, 3],
          end=[(7, 0, 5), (0, 1, 0)]),
    # r6: turn indicator: a white 1 each (Q9). s1 0 vs 7: tails after 1, 4 -> start 2.
    # s0 orange@6 green@7 -> 8 (1 VP); s1 white@3 -> 4 (4 coins): buys a green 1.
    # Die vp1: 7+1+1 = 9. Rubies 1.
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[2], buys={1: ("green-1",)},
          starts=[5, 2], spaces=[8, 4], end=[(9, 1, 5), (0, 1, 0)]),
    # r7: s1 0 vs 9: tails after 1, 4, 7 -> start 3; white@4 -> 5, a ruby space: 2 rubies.
    # s0 -> 8 (1 VP). Die orange chip (orange-1-05). Green: 2 rubies. Both buy a droplet step.
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[6],
          spends={0: Spend(0, droplet=1), 1: Spend(1, droplet=1)}, starts=[5, 3],
          spaces=[8, 5], end=[(10, 0, 6), (0, 0, 1)]),
    # r8: s1 0 vs 10: tails after 1, 4, 7 -> 1+3 = 4; white@5 -> 6 (1 VP). s0 from 6:
    # orange@7 green@8 -> 9 (ruby, 1 VP). Die vp2: 10+2+1 = 13. Rubies 2: droplet 7.
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[3],
          spends={0: Spend(0, droplet=1)}, starts=[6, 4], spaces=[9, 6],
          end=[(13, 0, 7), (1, 0, 1)]),
    # r9: s1 1 vs 13: tails after 1, 4, 7, 10, 12 -> 1+5 = 6; white@7 -> 8 (8 coins, 1 VP).
    # s0 from 7 -> 10 (10 coins, 2 VP). Die vp1: 13+1+2 = 16. Coins to VP (Q25): s0 10 -> 2,
    # s1 8 -> 1. Final 18 to 3.
    Round({0: ["orange-1", "green-1"], 1: ["white-1"]}, faces=[1],
          spends={0: Spend(0, coins_vp=2), 1: Spend(1, coins_vp=1)}, starts=[7, 6],
          spaces=[10, 8], end=[(18, 1, 7), (3, 0, 1)]),
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

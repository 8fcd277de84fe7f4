"""Perft-style golden counts: the number of legal action sequences of each length from
fixed positions. Any change in rules behaviour (a legal action added or lost anywhere in
the tree) shows up as a diff against `golden/perft.json`.

Positions: the opening of seeded `Game.new` deals (4 players, seeds 1, 2, 3; 2 players,
seed 4), and a few mid-game positions reached by a fixed random walk (so Accio,
Declinatio and spell cards in the grid are in the tree), one of them with an unknown pile
(refills branch over the whole unknown part).

A count is the number of sequences of exactly `depth` actions (a game that ends sooner
contributes nothing at the deeper levels). In known-pile mode refills happen inside
`apply`, so they are not actions; in unknown-pile mode each `Refill` is one.

To regenerate after an intended rules change (and say why in the commit message):

    .venv/bin/python tests/engine/games/glastonbury/rules/test_perft.py --regen
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from engine.games.glastonbury.rules import Game, GameConfig

GOLDEN = Path(__file__).with_name("golden") / "perft.json"
COLOURS = ("yellow", "red", "green", "blue")

# name: (players, seed, actions of the random walk before counting, unknown pile, depth)
POSITIONS: dict[str, tuple[int, int, int, bool, int]] = {
    "4p-seed1-opening": (4, 1, 0, False, 5),
    "4p-seed2-opening": (4, 2, 0, False, 5),
    "4p-seed3-opening": (4, 3, 0, False, 5),
    "2p-seed4-opening": (2, 4, 0, False, 5),
    "4p-seed1-after40": (4, 1, 40, False, 4),
    "3p-seed5-after60": (3, 5, 60, False, 4),
    "2p-seed6-after55": (2, 6, 55, False, 4),
    "2p-seed8-after25-accio": (2, 8, 25, False, 3),
    "2p-seed9-after28-declinatio": (2, 9, 28, False, 4),
    "3p-seed7-unknown-after30": (3, 7, 30, True, 3),
}


def start(players: int, seed: int, walk: int, unknown: bool) -> Game:
    config = GameConfig(colours=COLOURS[:players])
    game = Game.new(config, random.Random(seed))
    if unknown:
        game = Game.from_deal(config, game.deal.grid, None)
    rng = random.Random(seed)
    for _ in range(walk):
        # Sorted, so the walk does not depend on the order legal_actions() lists things.
        game.apply(rng.choice(sorted(game.legal_actions(), key=str)))
    assert not game.is_over()
    return game


def perft(game: Game, depth: int, counts: list[int], level: int = 0) -> None:
    if level == depth:
        return
    for action in game.legal_actions():
        child = game.copy()
        child.play(action)
        counts[level] += 1
        perft(child, depth, counts, level + 1)


def compute() -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, (players, seed, walk, unknown, depth) in POSITIONS.items():
        counts = [0] * depth
        perft(start(players, seed, walk, unknown), depth, counts)
        result[name] = counts
    return result


def test_perft_matches_the_golden_file() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    actual = compute()
    diff = [
        f"  {name}: golden {golden.get(name)} != now {counts}"
        for name, counts in actual.items()
        if golden.get(name) != counts
    ]
    missing = sorted(set(golden) - set(actual))
    assert not diff and not missing, (
        "legal action counts changed (a rules behaviour change?):\n"
        + "\n".join(diff + [f"  {m}: in the golden file only" for m in missing])
        + "\nIf intended: .venv/bin/python "
        "tests/engine/games/glastonbury/rules/test_perft.py --regen"
    )


def test_perft_counts_are_not_trivial() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for counts in golden.values():
        assert all(c > 0 for c in counts)
        assert counts == sorted(counts)  # the tree widens with depth here


if __name__ == "__main__":
    if sys.argv[1:] != ["--regen"]:
        sys.exit("usage: test_perft.py --regen   (rewrites golden/perft.json)")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(compute(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")

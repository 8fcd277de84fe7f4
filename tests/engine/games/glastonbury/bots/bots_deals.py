"""Fixed deals for the bot tests (a plain module, imported by the test files)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, parse_cell
from engine.games.glastonbury.rules.cards import CARDS, deck_for


def deal_game(
    config: GameConfig,
    cells: Mapping[str, str],
    pile_top: Sequence[str] = (),
    *,
    tail_order: Sequence[str] | None = None,
) -> Game:
    """A game whose chosen cells hold chosen cards and whose pile starts with `pile_top`.

    Every other card is filled in deterministically (ingredients of non-player colours
    first, spells last, so no unplanned spell lies in the square); `tail_order`, if given,
    reorders the pile below `pile_top` (same cards), for pile-order tests."""
    placed = {parse_cell(k): v for k, v in cells.items()}
    used = set(placed.values()) | set(pile_top)
    rest = [c for c in deck_for(config.removed) if c not in used]
    rest.sort(key=lambda c: (CARDS[c].kind == "spell", CARDS[c].kind == "immuto", c))
    grid: list[str] = []
    for cell in TAKEABLE_CELLS:
        grid.append(placed[cell] if cell in placed else rest.pop(0))
    pile = [*pile_top, *rest]
    if tail_order is not None:
        tail = pile[len(pile_top) :]
        assert sorted(tail) == sorted(tail_order), "tail_order must hold the same cards"
        pile = [*pile_top, *tail_order]
    return Game.from_deal(config, grid, pile)

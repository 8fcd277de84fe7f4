"""Fixed deals and positions for the rules scenario tests (a plain module, not a conftest).

- `deal(config, cells, pile_top)` builds a `Deal` with chosen cards in chosen cells and a
  chosen top of the pile; every other card is filled in deterministically: ingredients
  first (catalogue order), then Immuto, then spells, so unplanned spells sit at the bottom
  of the pile and never surprise a scenario.
- `game(...)` starts a real game from such a deal (known pile, or unknown with `unknown`).
- `position(...)` is the rules-engine equivalent of a chess FEN: a mid-game position
  (grid with holes, a short or empty pile, cauldrons, spells, pawns) for situations a
  scripted deal reaches only after dozens of turns (an empty pile, the end of the game).
  It is the one place the tests write the model's fields directly; it checks that every
  card is placed exactly once, then starts the seat's turn through the engine (pawn move,
  corner pass), exactly as `Game` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from engine.games.glastonbury.rules import Action, Deal, Game, GameConfig, Take
from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, parse_cell
from engine.games.glastonbury.rules.cards import CARDS, SPELL_USES, deck_for
from engine.games.glastonbury.rules.events import Event
from engine.games.glastonbury.rules.game import Phase
from engine.games.glastonbury.rules.pile import Pile

COLOURS = ("yellow", "red", "green", "blue")


def config(players: int = 4, **options: object) -> GameConfig:
    return GameConfig(colours=COLOURS[:players], **options)  # type: ignore[arg-type]


def cell(name: str) -> int:
    return parse_cell(name)


def filler(cfg: GameConfig, used: Iterable[str]) -> list[str]:
    """The cards of `cfg`'s deck not in `used`: ingredients, then Immuto, then spells."""
    taken = set(used)
    rank = {"ingredient": 0, "immuto": 1, "spell": 2}
    rest = [c for c in deck_for(cfg.removed) if c not in taken]
    return sorted(rest, key=lambda c: rank[CARDS[c].kind])  # stable: catalogue order


def deal(
    cfg: GameConfig, cells: Mapping[str, str] | None = None, pile_top: Sequence[str] = ()
) -> Deal:
    chosen = {parse_cell(k): v for k, v in (cells or {}).items()}
    rest = filler(cfg, [*chosen.values(), *pile_top])
    grid = []
    for c in TAKEABLE_CELLS:
        grid.append(chosen[c] if c in chosen else rest.pop(0))
    return Deal(grid=tuple(grid), pile=(*pile_top, *rest))


def game(
    cfg: GameConfig,
    cells: Mapping[str, str] | None = None,
    pile_top: Sequence[str] = (),
    *,
    unknown: bool = False,
) -> Game:
    d = deal(cfg, cells, pile_top)
    return Game.from_deal(cfg, d.grid, None if unknown else d.pile)


def position(
    cfg: GameConfig,
    *,
    cells: Mapping[str, str | None],
    fill: bool = False,
    pile: Sequence[str] = (),
    cauldrons: Sequence[Sequence[str]] = (),
    spells: Sequence[Sequence[tuple[str, int]]] = (),
    pawns: Sequence[int] | None = None,
    seat: int = 0,
) -> tuple[Game, list[Event]]:
    """A mid-game position; the seat's turn then starts (its pawn moves from `pawns`).

    `cells` maps 'r,c' to a card or None (a hole); other cells are holes, or filled with
    filler cards when `fill`. `pile` is the known pile, top first. `cauldrons` lists each
    seat's cauldron bottom first; `spells` each seat's (card, uses_left). Cards used nowhere
    else are recorded as out of the game. Returns the game and the opening events.
    """
    n = cfg.players
    chosen = {parse_cell(k): v for k, v in cells.items()}
    cauldron_lists = [list(c) for c in cauldrons] + [[] for _ in range(n - len(cauldrons))]
    spell_lists = [[[c, u] for c, u in s] for s in spells] + [[] for _ in range(n - len(spells))]
    placed = [
        *(v for v in chosen.values() if v is not None),
        *pile,
        *(c for caul in cauldron_lists for c in caul),
        *(s[0] for seat_spells in spell_lists for s in seat_spells),
    ]
    rest = filler(cfg, placed)
    grid: list[str | None] = [None] * 36
    start = Game.from_deal(cfg, deal(cfg).grid, deal(cfg).pile)  # validates cfg
    for c in range(36):
        grid[c] = start.grid[c] if c not in TAKEABLE_CELLS else None
    for c in TAKEABLE_CELLS:
        if c in chosen:
            grid[c] = chosen[c]
        elif fill:
            grid[c] = rest.pop(0)
    everything = [g for g in grid if g is not None and not g.startswith("corner")]
    everything += [*pile, *(c for caul in cauldron_lists for c in caul)]
    everything += [s[0] for seat_spells in spell_lists for s in seat_spells]
    everything += rest
    assert sorted(everything) == sorted(deck_for(cfg.removed)), "a card placed twice"
    g = start
    g.grid = grid
    g.pile = Pile(order=pile)
    g.cauldrons = cauldron_lists
    g.spells = spell_lists
    g._uses = [
        {
            spell: sum(u for c, u in seat_spells if CARDS[c].spell == spell)
            for spell in SPELL_USES
            if SPELL_USES[spell]
        }
        for seat_spells in spell_lists
    ]
    g.out_of_game = list(rest)
    g.pawns = list(pawns) if pawns is not None else list(cfg.positions)
    g.seat = seat
    g.phase = Phase.TAKE
    g.actions = []
    g._legal = None
    events: list[Event] = []
    g._start_turn(events)
    return g, events


def take(g: Game, name: str) -> list[Event]:
    return g.apply(Take(parse_cell(name)))


def of_type(events: Iterable[Event], kind: type[Event]) -> list[Event]:
    return [e for e in events if type(e) is kind]


def step(g: Game, avoid: Iterable[str] = ()) -> list[Event]:
    """Apply the first legal action whose card is not in `avoid` (card ids or spell names,
    e.g. "vanesco"), else the first legal one."""
    banned = set(avoid)

    def avoided(a: Action) -> bool:
        card = g.grid[a.cell] if isinstance(a, Take) else None
        return card is not None and (card in banned or CARDS[card].spell in banned)

    legal = g.legal_actions()
    return g.apply(next((a for a in legal if not avoided(a)), legal[0]))


def play_first(g: Game, avoid: Iterable[str] = (), until: int | None = None) -> list[Event]:
    """`step` until the game is over or the pile holds `until` cards; returns the events."""
    events: list[Event] = []
    while not g.is_over() and (until is None or len(g.pile) > until):
        events += step(g, avoid)
    return events

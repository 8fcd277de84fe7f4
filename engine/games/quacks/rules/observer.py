"""Views of a game: what the table shows everyone, and what one seat's phone shows.

Hidden (never in a view): the seeded `random.Random` (so the next draw, die roll and the
fortune deck's order), and the chips in another seat's hand (a blue offer, a card draw).
The bag has no order (Q29). Bag *contents* go to their owner only, as a memory aid (D30);
the public view gives each bag's size and the explosion odds the issue asks to show (N23),
which the memory-aid switch (`show_odds=False`) hides for competitive tables.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from engine.games.quacks.rules.actions import to_wire
from engine.games.quacks.rules.catalogue import colour_of, kind_of
from engine.games.quacks.rules.game import Game


def fraction(value: Fraction) -> dict[str, Any]:
    """An exact fraction for the wire: numerator, denominator, and a float for display."""
    return {"num": value.numerator, "den": value.denominator, "p": float(value)}


def public_view(game: Game, show_odds: bool = True) -> dict[str, Any]:
    cat = game.cat
    seats = []
    for s, p in enumerate(game.players):
        space = game.scoring_space(s)
        seat: dict[str, Any] = {
            "seat": s,
            "status": p.status,
            "pot": [{"chip": c, "kind": kind_of(c), "index": i} for c, i in p.pot],
            "white_sum": game.white_sum(s),
            "limit": game.limit(s),
            "bag_size": len(p.bag),
            "hand_size": len(p.hand),
            "droplet": p.droplet,
            "start": p.start,
            "rat_tails": p.tails,
            "flask": "full" if p.flask else "empty",
            "rubies": p.rubies,
            "vp": p.vp,
            "scoring_space": space,
            "space": {
                "coins": cat.track[space].coins,
                "vp": cat.track[space].vp,
                "ruby": cat.track[space].ruby,
            },
            "affordable": game.affordable(cat.track[space].coins),
            "question": p.question,
            "asked": game.asks[s].kind if s in game.asks else None,
            "reward": p.reward,
            "history": [dict(h) for h in p.history],
        }
        if show_odds:
            seat["explosion_chance"] = fraction(game.explosion_chance(s))
        seats.append(seat)
    return {
        "game": "quacks",
        "round": game.round,
        "rounds": cat.rounds,
        "phase": game.phase.value,
        "start_player": game.start_player,
        "fortune": game.card,
        "fortune_discard": list(game.discard),
        "fortune_left": len(game.deck),
        "books_out": sorted({colour_of(k) for k in cat.kinds if game.unlocked(k)}),
        "prices": {k: game.price(k) for k in cat.kinds if cat.unlock[colour_of(k)] is not None},
        "books": {c: game.config.book(c) for c in cat.built},
        "supply": {k: len(v) for k, v in game.supply.items()},
        "rubies_left": game.rubies_left(),
        "die": [{"seat": s, "result": r} for s, r in game.rolls],
        "seats": seats,
        "winners": list(game.winners),
    }


def seat_view(
    game: Game, seat: int, show_odds: bool = True, bag_visible: bool = True
) -> dict[str, Any]:
    """The public view plus this seat's own hand, its bag contents (D30) and its options."""
    view = public_view(game, show_odds)
    p = game.players[seat]
    view["me"] = seat
    view["hand"] = sorted(p.hand)
    if bag_visible:
        view["bag"] = dict(sorted(Counter(kind_of(c) for c in p.bag).items()))
    ask = game.asks.get(seat)
    view["options"] = [to_wire(a) for a in game.legal_actions(seat)]
    view["ask"] = None if ask is None else {"kind": ask.kind, "options": list(ask.options)}
    return view

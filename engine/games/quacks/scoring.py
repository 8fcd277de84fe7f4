"""The final breakdown per round, printable (issue 23): for each seat and round the scoring
space with its coins and VP, exploded or not, the fortune card, the VP gained and the totals
after the round; the ranks and how the tie was broken (Q25, D21)."""

from __future__ import annotations

from typing import Any

from engine.games.quacks.rules import Game


def breakdown(game: Game) -> dict[str, Any]:
    track = game.cat.track
    seats: list[dict[str, Any]] = []
    vps = [p.vp for p in game.players]
    for s, p in enumerate(game.players):
        rounds = [
            {**h, "coins": track[h["space"]].coins, "space_vp": track[h["space"]].vp,
             "ruby": track[h["space"]].ruby}
            for h in p.history
        ]  # fmt: skip
        seats.append({"seat": s, "vp": p.vp, "rubies": p.rubies, "droplet": p.droplet,
                      "rounds": rounds})  # fmt: skip
    for s, seat in enumerate(seats):  # rank: 1 + seats with more VP (a tie shares the rank)
        seat["rank"] = 1 + sum(vp > vps[s] for vp in vps)
    best = max(vps, default=0)
    tied = [s for s, vp in enumerate(vps) if vp == best]
    return {
        "game": "quacks",
        "over": game.is_over(),
        "round": game.round,
        "rounds": game.cat.rounds,
        "winners": list(game.winners),
        "tie_break": game.is_over() and len(tied) > 1,
        "tied": tied if game.is_over() and len(tied) > 1 else [],
        "seats": seats,
    }

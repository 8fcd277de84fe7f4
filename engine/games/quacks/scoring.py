"""The breakdown per round, printable (issue 23): for each seat and round the scoring space
with its coins and VP, exploded or not (and what the exploded seat chose), the fortune card,
the bonus die, the rat tails, the VP gained and the totals after the round; the ranks and how
a tie was broken (Q25, D21). `breakdown` is the one owner: the public view carries it as
``scores`` (`QuacksScores`, the type `GameViews.scores` names), the score page draws it and
the engine stores it as the game's result."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.games.quacks.rules import Game


class _Scores(BaseModel):
    # An unknown key is refused: nothing unlisted (a bag, a hand) rides along.
    model_config = ConfigDict(extra="forbid", frozen=True)


class RoundScore(_Scores):
    """One seat's round, as recorded at the end of the round (G)."""

    round: int = Field(ge=1, le=9)
    card: str | None = Field(default=None, max_length=16, description="the fortune card")
    space: int = Field(ge=0, description="the scoring space (Q16)")
    coins: int = Field(ge=0, description="the space's coins (E)")
    space_vp: int = Field(ge=0, description="the space's VP (D)")
    ruby: bool = Field(description="the space has a ruby (C)")
    exploded: bool
    reward: Literal["vp", "buy"] | None = Field(
        default=None, description="an exploded seat's choice (Q20): the VP or the buying")
    bonus: list[str] = Field(default_factory=list, max_length=4,
                             description="the bonus die's results (A, Q17): vp1, ruby, …")
    rat_tails: int = Field(default=0, ge=0, description="rat tails this round (Q11)")
    vp_gained: int = Field(description="VP this round, from every source")
    vp: int = Field(description="VP after the round")
    rubies: int = Field(description="rubies held after the round")
    droplet: int = Field(ge=0)


class SeatScore(_Scores):
    seat: int = Field(ge=0, lt=4)
    vp: int
    rubies: int
    droplet: int = Field(ge=0)
    rank: int = Field(ge=1, le=4, description="1 + the seats ranked before (Q25, D21)")
    final_space: int | None = Field(
        default=None, description="the scoring space of round 9 (the tie-break, D21)")
    rounds: list[RoundScore] = Field(max_length=9)


class QuacksScores(_Scores):
    """The breakdown of a Quacks game: the rounds played so far, and once it is ``over``
    the final ranking. ``tie_break``: several seats had the most VP, ``tied`` lists them,
    and the furthest pot of round 9 decided (D21; ``winners`` keeps those still tied)."""

    game: Literal["quacks"] = "quacks"
    over: bool
    round: int = Field(ge=1, le=9)
    rounds: int = Field(ge=1, le=9)
    winners: list[int] = Field(max_length=4)
    tie_break: bool
    tied: list[int] = Field(max_length=4)
    seats: list[SeatScore] = Field(max_length=4)


def breakdown(game: Game) -> QuacksScores:
    track = game.cat.track
    over = game.is_over()
    players = game.players

    def final_space(s: int) -> int | None:
        history = players[s].history
        return int(history[-1]["space"]) if over and len(history) == game.cat.rounds else None

    # Q25, D21: the most VP, then (at the end) the furthest pot of round 9; the same
    # order ranks every seat, and seats equal on both share a rank.
    keys = [(p.vp, final_space(s) or 0) for s, p in enumerate(players)]
    seats = [
        SeatScore(
            seat=s, vp=p.vp, rubies=p.rubies, droplet=p.droplet,
            rank=1 + sum(k > keys[s] for k in keys), final_space=final_space(s),
            rounds=[RoundScore(
                round=h["round"], card=h["card"], space=h["space"],
                coins=track[h["space"]].coins, space_vp=track[h["space"]].vp,
                ruby=track[h["space"]].ruby, exploded=h["exploded"], reward=h.get("reward"),
                bonus=list(h.get("bonus", ())), rat_tails=h.get("tails", 0),
                vp_gained=h["vp_gained"], vp=h["vp"], rubies=h["rubies"],
                droplet=h["droplet"],
            ) for h in p.history],
        )
        for s, p in enumerate(players)
    ]  # fmt: skip
    best = max((p.vp for p in players), default=0)
    tied = [s for s, p in enumerate(players) if p.vp == best] if over else []
    return QuacksScores(
        over=over, round=game.round, rounds=game.cat.rounds, winners=list(game.winners),
        tie_break=len(tied) > 1, tied=tied if len(tied) > 1 else [], seats=seats,
    )  # fmt: skip

"""Runs a golden game written by hand: per round, each seat's draws (chip kinds, in order,
then a stop), the die faces, purchases, ruby spending and choices; and after each step the
values worked out by hand from RULES-QUACKS.md are checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quacks_helpers import chip_in

from engine.games.quacks.rules import (
    Answer,
    Buy,
    Choose,
    ChooseOffer,
    Draw,
    Game,
    Phase,
    RollDie,
    Spend,
    Stop,
    UseFlask,
)


@dataclass
class Round:
    draws: dict[int, list[str]]  # seat -> kinds drawn in order (then it stops unless exploded)
    faces: list[int] = field(default_factory=list)  # die faces in the order rolled
    buys: dict[int, tuple[str, ...]] = field(default_factory=dict)
    spends: dict[int, list[Spend]] = field(default_factory=dict)  # E in round 9, then F
    choices: dict[int, list[str]] = field(default_factory=dict)  # Choose options, in order
    answers: dict[int, list[bool]] = field(default_factory=dict)  # red/yellow/... in order
    offers: dict[int, list[tuple[list[str], str | None]]] = field(default_factory=dict)
    starts: list[int] | None = None  # rat stones (start spaces) after phase 2
    spaces: list[int] | None = None  # scoring spaces after brewing
    exploded: list[int] = field(default_factory=list)
    end: list[tuple[int, int, int]] | None = None  # (vp, rubies, droplet) per seat


def play_round(game: Game, r: Round, number: int) -> None:
    assert game.round == number
    faces, choices = list(r.faces), {s: list(v) for s, v in r.choices.items()}
    spends = {s: list(v) for s, v in r.spends.items()}
    answers = {s: list(v) for s, v in r.answers.items()}
    offers = {s: list(v) for s, v in r.offers.items()}
    while game.phase is not Phase.BREW:  # fortune and rats choices
        seat = game.actors()[0]
        act(game, seat, faces, choices, answers, offers, spends, r)
    if r.starts is not None:
        assert [p.start for p in game.players] == r.starts, f"round {number} rat stones"
    for seat, kinds in r.draws.items():
        for kind in kinds:
            if kind == "FLASK":  # Q14: the last white goes back
                game.apply(UseFlask(seat))
                continue
            game.apply(Draw(seat, chip_in(game, seat, kind)))
            while game.players[seat].question is not None or game.players[seat].to_draw:
                act(game, seat, faces, choices, answers, offers, spends, r)
        if Stop(seat) in game.legal_actions(seat):
            game.apply(Stop(seat))
    assert game.phase is not Phase.BREW or any(p.status == "brewing" for p in game.players), (
        "brewing should be over"
    )
    while game.phase is Phase.BREW:
        seat = game.actors()[0]
        game.apply(Stop(seat))
    if r.spaces is not None:
        assert [game.scoring_space(s) for s in range(len(game.players))] == r.spaces, (
            f"round {number} scoring spaces"
        )
    assert [s for s, p in enumerate(game.players) if p.status == "exploded"] == r.exploded
    while game.round == number and not game.is_over():
        seat = game.actors()[0]
        act(game, seat, faces, choices, answers, offers, spends, r)
    assert not faces, f"round {number}: faces left {faces}"
    assert not any(choices.values()), f"round {number}: choices left {choices}"
    assert not any(spends.values()), f"round {number}: spends left {spends}"
    if r.end is not None:
        # as recorded at G, before the next round's card and turn indicator act
        rows = [p.history[number - 1] for p in game.players]
        got = [(h["vp"], h["rubies"], h["droplet"]) for h in rows]
        assert got == r.end, f"round {number} end (vp, rubies, droplet): {got} != {r.end}"


def act(game: Game, seat: int, faces: list[int], choices: dict[int, list[str]],
        answers: dict[int, list[bool]], offers: dict[int, Any], spends: dict[int, list[Spend]],
        r: Round) -> None:  # fmt: skip
    legal = game.legal_actions(seat)
    first = legal[0]
    p = game.players[seat]
    if isinstance(first, RollDie):
        game.apply(RollDie(seat, faces.pop(0)))
    elif isinstance(first, Buy):
        game.apply(Buy(seat, r.buys.get(seat, ())))
    elif isinstance(first, Spend):
        game.apply(spends[seat].pop(0) if spends.get(seat) else Spend(seat))
    elif isinstance(first, Choose):
        game.apply(Choose(seat, choices[seat].pop(0)))
    elif isinstance(first, Answer):
        game.apply(Answer(seat, first.question, answers[seat].pop(0)))
    elif isinstance(first, Draw):  # a blue offer or a card's draw: the next scripted chip
        drawn, _ = offers[seat][0]
        game.apply(Draw(seat, chip_in(game, seat, drawn[len(p.hand)])))
    elif isinstance(first, ChooseOffer):
        _, placed = offers[seat].pop(0)
        game.apply(
            ChooseOffer(seat, None if placed is None else chip_in(game, seat, placed, "hand"))
        )
    else:
        raise AssertionError(f"unscripted {first}")

"""Sensed pawns (hardware issue 13): where the pawns stand, checked against the game.

With Hall switches at the 20 perimeter positions the hub reports which positions hold a
pawn (a magnet: not which pawn). The interpreter keeps that set (`PawnSensing`) and asks
`pawn_problems` what differs from the game, as each pawn move happens, before the take:

- the active seat's pawn may still stand where its turn started (not moved yet), or where
  the move puts it; anywhere else is a wrong move (G4: the pawn moves by the value of the
  top card of its cauldron), with the way back;
- every other pawn stays where it is (G3: a pawn moves only in its seat's turn);
- without sensors (`sensed` None) there is nothing to check: the pawn is inferred from the
  line a card is taken from, as before.

Pure: no I/O, no clock. Positions are named for people as 1..20 (CONTRACTS.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.games.glastonbury.rules import Game, Phase
from engine.games.glastonbury.rules.board import PERIMETER
from engine.games.glastonbury.rules.names import position_label, seat_name


@dataclass(frozen=True, slots=True)
class PawnProblem:
    rule: str
    code: str
    message: str
    instruction: str
    seat: int | None
    params: tuple[tuple[str, object], ...]


def steps(start: int, end: int) -> int:
    return (end - start) % PERIMETER


def _start_of_move(game: Game) -> int | None:
    """Where the active seat's pawn stood before this turn's move (None: nothing pending)."""
    if game.phase not in (Phase.TAKE, Phase.DECLINATIO):
        return None
    return (game.pawns[game.seat] - game.move_value) % PERIMETER


def start_positions(game: Game) -> list[int]:
    """Where each seat's pawn stands as the turn starts (the active one not moved yet): a
    simulated table with pawn sensors lays them there when a game starts."""
    start = _start_of_move(game)
    return [start if seat == game.seat and start is not None else at
            for seat, at in enumerate(game.pawns)]


def pawn_problems(game: Game, sensed: frozenset[int] | None) -> list[PawnProblem]:
    """What the sensed pawns say against the game (empty when all is well)."""
    if sensed is None or game.phase in (Phase.OVER,):
        return []
    seat = game.seat
    players = len(game.pawns)
    target = game.pawns[seat]
    others = {game.pawns[s] for s in range(players) if s != seat}
    start = _start_of_move(game)
    allowed = [others | {target}]
    if start is not None:
        allowed.append(others | {start})
    if sensed in allowed:
        return []
    colour = game.config.colours[seat]
    who = seat_name(seat, colour)
    missing = sorted(allowed[0] - sensed)
    extra = sorted(sensed - allowed[0])
    params: tuple[tuple[str, object], ...] = (
        ("expected", sorted(allowed[0])), ("sensed", sorted(sensed)))
    if target in missing and len(extra) == 1 and others <= sensed:
        wrong = extra[0]
        origin = start if start is not None else target
        way = steps(origin, wrong)
        return [PawnProblem(
            "G4", "pawn_wrong_position",
            f"{who}'s pawn stands at {position_label(wrong)}: it moves "
            f"{game.move_value} step{'s' * (game.move_value != 1)} clockwise, from "
            f"{position_label(origin)} to {position_label(target)} ({way} steps were made).",
            f"Move {who}'s pawn from {position_label(wrong)} to {position_label(target)}, "
            "then take your card.",
            seat, (*params, ("at", wrong), ("to", target)))]
    problems = []
    for position in missing:
        owner = next((s for s in range(players) if game.pawns[s] == position), None)
        name = seat_name(owner, game.config.colours[owner]) if owner is not None else "A"
        rule = "G4" if owner == seat else "G3"
        problems.append(PawnProblem(
            rule, "pawn_missing",
            f"{name}'s pawn is missing from {position_label(position)}.",
            f"Put {name}'s pawn back on {position_label(position)}"
            + (f" (it moved from {position_label(extra[0])})." if len(extra) == 1 else "."),
            owner, (*params, ("position", position))))
    for position in extra:
        if len(missing) == 1:
            continue  # said with the missing pawn: one move, one alert
        problems.append(PawnProblem(
            "G3", "pawn_unexpected",
            f"A pawn stands at {position_label(position)}, where no pawn belongs.",
            f"Take the pawn off {position_label(position)} and put it back where it was.",
            None, (*params, ("position", position))))
    return problems


@dataclass
class PawnSensing:
    """The pawn positions the hub reports (None until the first report: no sensors)."""

    sensed: frozenset[int] | None = None

    def update(self, position: int, placed: bool) -> None:
        if not 0 <= position < PERIMETER:
            raise ValueError(f"perimeter position {position} is outside 0..{PERIMETER - 1}")
        now = set(self.sensed or ())
        if placed:
            now.add(position)
        else:
            now.discard(position)
        self.sensed = frozenset(now)

    def to_wire(self) -> list[int] | None:
        return None if self.sensed is None else sorted(self.sensed)

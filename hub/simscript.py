"""Scripts for the simulated table: what a person does with the cards, step by step.

A script file has one step per line (``#`` starts a comment)::

    place 2,3 blue-a-4          # lay a card (card id) on cell row 2, column 3
    place pad:1 uid=04AABBCCDDEEFF   # lay a tag by UID (an unknown tag, say)
    remove 2,3                  # lift whatever lies there
    move 2,3 pad:0              # lift and lay elsewhere
    wait 0.5                    # seconds
    fault flicker 1,1           # flicker | stuck | vanish | repair

`demo_script` writes a plausible game: the 32 cells are dealt, then each turn a card is
lifted from the grid, laid on the player's pad, slid onto their pile, and the hole refilled.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hub.backends.sim import SimulatedTable
from hub.errors import BackendError, ConfigError
from hub.game import enrolment_order, is_piece
from hub.layout import cells

FAULTS = ("flicker", "stuck", "vanish", "repair")


@dataclass(frozen=True)
class Step:
    verb: str
    args: tuple[str, ...]
    line: int = 0

    def text(self) -> str:
        return " ".join((self.verb, *self.args))


def parse_script(text: str, source: str = "script") -> list[Step]:
    steps = []
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        verb, args = words[0].lower(), tuple(words[1:])
        want = {"place": (2, 2), "remove": (1, 1), "move": (2, 2), "wait": (1, 1),
                "fault": (2, 2)}.get(verb)
        if want is None:
            raise ConfigError(f"{source} line {number}: unknown step {verb!r} "
                              "(place, remove, move, wait, fault)")
        if not want[0] <= len(args) <= want[1]:
            raise ConfigError(f"{source} line {number}: {verb} takes {want[0]} argument(s)")
        if verb == "wait":
            try:
                float(args[0])
            except ValueError:
                raise ConfigError(f"{source} line {number}: wait needs seconds") from None
        if verb == "place" and not args[1].lower().startswith("uid=") and not is_piece(args[1]):
            raise ConfigError(f"{source} line {number}: {args[1]!r} is not a card id "
                              "(e.g. blue-a-4, immuto-1, accio-2) nor uid=<hex>")
        if verb == "fault" and args[0] not in FAULTS:
            raise ConfigError(f"{source} line {number}: fault is one of {', '.join(FAULTS)}")
        steps.append(Step(verb, args, number))
    return steps


def load_script(path: Path) -> list[Step]:
    try:
        return parse_script(path.read_text(encoding="utf-8"), str(path))
    except OSError as exc:
        raise ConfigError(f"cannot read sim script {path}: {exc.strerror}") from None


def demo_script(seed: int = 1, players: int = 4, turns: int | None = None,
                pause: float = 0.6) -> list[Step]:
    rng = random.Random(seed)
    deck = enrolment_order()
    rng.shuffle(deck)
    steps: list[Step] = []
    grid: dict[str, str] = {}
    for row, col in cells():
        where = f"{row},{col}"
        grid[where] = deck.pop()
        steps.append(Step("place", (where, grid[where])))
    steps.append(Step("wait", (str(pause * 2),)))
    turn = 0
    while grid and (turns is None or turn < turns):
        seat = turn % players
        where = rng.choice(sorted(grid))
        card = grid.pop(where)
        steps += [Step("remove", (where,)), Step("wait", (str(pause / 2),)),
                  Step("place", (f"pad:{seat}", card)), Step("wait", (str(pause / 2),)),
                  Step("remove", (f"pad:{seat}",))]
        if deck:
            grid[where] = deck.pop()
            steps.append(Step("place", (where, grid[where])))
        steps.append(Step("wait", (str(pause),)))
        turn += 1
    return steps


def run_steps(sim: SimulatedTable, steps: list[Step], stop: threading.Event | None = None,
              speed: float = 1.0, on_error: Callable[[str], None] | None = None) -> None:
    """Perform the steps on the simulated table (``wait`` divided by ``speed``)."""
    stop = stop or threading.Event()
    for step in steps:
        if stop.is_set():
            return
        args = step.args
        try:
            if step.verb == "place":
                value = args[1]
                if value.lower().startswith("uid="):
                    sim.place(args[0], uid=value[4:])
                else:
                    sim.place(args[0], card_id=value)
            elif step.verb == "remove":
                sim.remove(args[0])
            elif step.verb == "move":
                sim.move(args[0], args[1])
            elif step.verb == "wait":
                stop.wait(float(args[0]) / max(speed, 1e-6))
            elif step.verb == "fault":
                getattr(sim, args[0])(args[1])
        except (BackendError, ConfigError, ValueError) as exc:
            message = f"line {step.line}: {step.text()}: {exc}" if step.line else str(exc)
            if on_error is None:
                raise BackendError(message) from None
            on_error(message)

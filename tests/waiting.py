"""Waiting for a condition, never a fixed time (a busy machine only makes it slower): the one
helper every test uses (`dashkit` re-exports `wait_until`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal, TypeVar

T = TypeVar("T")

EXIT_WITHIN = 60.0
"""How long a process told to stop (SIGINT, SIGTERM, SIGKILL, its job done) may take to exit:
a bound, not a pause. Under a load of 20 on 2 cores a clean hub shutdown took over 10 s."""


def wait_until(predicate: Callable[[], T | Literal[False] | None], timeout: float = 5.0,
               what: str = "condition", slowest: float = 0.1,
               report: Callable[[], str] | None = None) -> T:
    """Poll `predicate` until it is true and return its value: every 10 ms at first, then
    less often (up to every `slowest` s) so a long wait (a whole bot game, served from this
    process) does not take the CPU and the GIL from what it waits for. A brief situation to
    catch: ``slowest=0.01``. `report`: where things stood, said when the wait times out (a
    wait for bots: the game's moment, hands, alerts)."""
    deadline = time.monotonic() + timeout
    pause = min(0.01, slowest)
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(pause)
        pause = min(slowest, pause * 1.2)
    stood = f"; where it stood: {report()}" if report is not None else ""
    raise AssertionError(f"timed out after {timeout} s waiting for {what}{stood}")


def wait_for(check: Callable[[], object], timeout: float = 20.0, what: str = "condition") -> None:
    """`wait_until` every 10 ms (brief states of a hub or an engine are caught)."""
    wait_until(check, timeout, what, slowest=0.01)

"""Rate-limited logging for input that is malformed or refused (one helper for the engine,
the hub and the dashboard).

A burst of bad messages (a fuzzer, a flood on an open broker) once wrote 30,000 warning
lines per engine. `RateLimitedLog` writes the first `burst` lines of each kind in a
`window`, then counts: the next line of that kind after the window says how many were left
out. Everything stays counted (`counts`) for the stats, whatever was written.

    refused = RateLimitedLog(log)
    refused.warning("rejected", "rejected message on %s: %s", topic, error)
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Final

BURST: Final = 10  # lines of one kind written per window
WINDOW: Final = 60.0  # seconds


class RateLimitedLog:
    """At most `burst` lines per kind per `window` seconds; the rest counted, and said."""

    def __init__(self, logger: logging.Logger, *, burst: int = BURST, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.burst, self.window, self.clock = burst, window, clock
        self.counts: Counter[str] = Counter()  # every line asked for, by kind
        self._lock = threading.Lock()
        self._open: dict[str, tuple[float, int, int]] = {}  # kind -> (start, written, left out)

    def log(self, level: int, kind: str, message: str, *args: object) -> bool:
        """Log `message % args` at `level` unless `kind` used its burst in this window;
        returns whether it was written."""
        now = self.clock()
        with self._lock:
            self.counts[kind] += 1
            start, written, dropped = self._open.get(kind, (now, 0, 0))
            if now - start >= self.window:
                start, written = now, 0
            elif written >= self.burst:
                self._open[kind] = (start, written, dropped + 1)
                return False
            self._open[kind] = (start, written + 1, 0)
        if dropped:
            message += " (and %d more like it left out of the log in the last %g s)"
            args = (*args, dropped, self.window)
        self.logger.log(level, message, *args)
        return True

    def warning(self, kind: str, message: str, *args: object) -> bool:
        return self.log(logging.WARNING, kind, message, *args)

    def info(self, kind: str, message: str, *args: object) -> bool:
        return self.log(logging.INFO, kind, message, *args)

    def left_out(self) -> int:
        """Lines not written so far in the open windows (for a summary)."""
        with self._lock:
            return sum(d for _, _, d in self._open.values())

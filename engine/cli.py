"""What every `cauldron` sub-command shares: `CliError`, a user-facing error (one line on
stderr, exit code 2), and `Progress`, a progress bar for long commands (tournaments,
benchmarks). The command itself is the composition root's: `engine.app.cli`."""

from __future__ import annotations

import sys
import time


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


class Progress:
    """A one-line progress bar on stderr (silent when stderr is not a terminal)."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0

    def __call__(self, label: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "-" * (width - filled)
        end = "\n" if done >= total else ""
        print(f"\r{label:<28} [{bar}] {done}/{total}", end=end, file=sys.stderr, flush=True)

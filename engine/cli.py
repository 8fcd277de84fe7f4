"""What every `cauldron` sub-command shares: `CliError`, a user-facing error (one line on
stderr, exit code 2). The command itself is the composition root's: `engine.app.cli`."""

from __future__ import annotations


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2."""

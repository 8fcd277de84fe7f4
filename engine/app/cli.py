"""The `cauldron` command: the composition root's entry point.

Each package contributes its own sub-commands through a `register(subparsers)` function in
the modules listed below; handlers import their heavy dependencies lazily so that
`cauldron --help` stays fast and works off a Raspberry Pi. A handler's `CliError`
(engine.cli, shared by every package) is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence

from engine.cli import CliError

# Modules that add sub-commands; a module that is not part of this install is skipped.
COMMAND_MODULES: tuple[str, ...] = (
    "engine.games.glastonbury.rules_cli",
    "engine.games.glastonbury.score_cli",
    "engine.app.count",
    "engine.bench.kit",
    "hub.cli",
    "engine.service.cli",
    "dashboard.cli",
    "engine.games.glastonbury.bots.cli",
    "engine.app.tournament",
    "engine.app.demo.cli",
    "engine.hosting.cli",
)


def _module_available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cauldron",
        description="Cauldron Table: a smart table for the card game Glastonbury.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        if _module_available(name):
            importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Whatever a cauldron command creates (logs, outboxes, keys, saved tables) is its
    # user's alone: files 0600, folders 0700.
    os.umask(0o077)
    try:
        result = args.handler(args)
    except CliError as exc:
        print(f"cauldron {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())

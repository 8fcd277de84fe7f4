"""`cauldron hint`: a suggested move for a saved Glastonbury game log (the tournament is
every game's: `engine/app/tournament.py`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    hint_parser = subparsers.add_parser(
        "hint",
        help="suggest a move for the seat to play in a saved game log",
        description="Read a game log (JSON, as written by the engine) and suggest a move.",
    )
    hint_parser.add_argument("log", help="game log file (JSON), '-' for stdin")
    hint_parser.add_argument("--level", default="search", help="search (default) or greedy")
    hint_parser.add_argument("--lang", default="en", help="en, fr or de (default en)")
    hint_parser.add_argument("--seed", type=int, default=0)
    hint_parser.add_argument("--json", action="store_true")
    hint_parser.set_defaults(handler=_hint)


def _hint(args: argparse.Namespace) -> int:
    from engine.cli import CliError
    from engine.games.glastonbury.bots.base import BotError
    from engine.games.glastonbury.bots.hints import hint
    from engine.games.glastonbury.rules.errors import RulesError
    from engine.games.glastonbury.rules.log import GameLog, replay

    try:
        text = sys.stdin.read() if args.log == "-" else Path(args.log).read_text("utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {args.log}: {exc.strerror}; give a game log file") from None
    try:
        game = replay(GameLog.from_wire(json.loads(text)))
    except json.JSONDecodeError as exc:
        raise CliError(f"{args.log} is not JSON ({exc.msg}, line {exc.lineno})") from None
    except RulesError as exc:
        raise CliError(f"{args.log} is not a valid game log: {exc}") from None
    try:
        result = hint(game, game.seat, args.level, args.lang, seed=args.seed)
    except BotError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        from engine.games.glastonbury.rules.names import action_label, seat_name

        who = seat_name(result.seat, game.config.colours[result.seat])  # the reason is in --lang
        print(f"{who}: {action_label(result.action, result.card)} — {result.reason}")
    return 0

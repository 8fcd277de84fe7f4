"""`cauldron tournament` (bots against each other) and `cauldron hint` (a suggested move)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    tournament = subparsers.add_parser(
        "tournament",
        help="play bots against each other and print win rates with 95%% intervals",
        description=(
            "Play N games between bots, rotating seats and colours, and print each bot's "
            "win rate (ties shared), its 95% Wilson interval and mean score. Bots: random, "
            "greedy, search; the search bot takes options, e.g. "
            "search:simulations=200:depth=24 (also candidates, rollout, epsilon)."
        ),
    )
    tournament.add_argument(
        "--bots",
        default=None,
        help="comma-separated bots (default: random,greedy,search; Quacks: random,greedy,push)",
    )
    tournament.add_argument(
        "--game", choices=("glastonbury", "quacks"), default="glastonbury",
        help="which game's bots play (default glastonbury)",
    )  # fmt: skip
    tournament.add_argument("--games", type=int, default=20, help="games to play (default 20)")
    tournament.add_argument("--players", type=int, default=2, help="2, 3 or 4 (default 2)")
    tournament.add_argument("--seed", type=int, default=1, help="seed of the deals (default 1)")
    tournament.add_argument(
        "--memory",
        default="perfect",
        help="what bots remember of other cauldrons: perfect (default) or own",
    )
    tournament.add_argument("--json", action="store_true", help="print JSON instead of a table")
    tournament.set_defaults(handler=_tournament)

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


def _tournament(args: argparse.Namespace) -> int:
    from engine.cli import CliError, Progress
    from engine.games.glastonbury.bots.base import MEMORIES, BotError
    from engine.games.glastonbury.bots.registry import make_bot
    from engine.games.glastonbury.bots.tournament import format_table, run_tournament

    if args.game == "quacks":
        from engine.games.quacks.bots.cli import tournament

        return tournament(args)
    if args.games < 1:
        raise CliError(f"--games must be at least 1, not {args.games}")
    if not 2 <= args.players <= 4:
        raise CliError(f"--players must be 2, 3 or 4, not {args.players}")
    if args.memory not in MEMORIES:
        raise CliError(f"--memory must be perfect or own, not {args.memory!r}")
    labels = [b.strip() for b in (args.bots or "random,greedy,search").split(",") if b.strip()]
    if not labels:
        raise CliError("--bots names no bot; e.g. --bots random,greedy,search")
    try:
        for label in labels:
            make_bot(label)
        result = run_tournament(
            labels,
            make_bot,
            args.games,
            players=args.players,
            seed=args.seed,
            memory=args.memory,
            progress=Progress(),
        )
    except BotError as exc:
        raise CliError(f"{exc}") from None
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(format_table(result))
    return 0


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

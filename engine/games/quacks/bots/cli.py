"""`cauldron tournament --game quacks`: the Quacks bots' win rates with 95% intervals."""

from __future__ import annotations

import argparse
import json

DEFAULT_BOTS = "random,greedy,push"


def tournament(args: argparse.Namespace) -> int:
    from engine.cli import CliError, Progress
    from engine.games.quacks.bots.policies import BotError, make_bot
    from engine.games.quacks.bots.tournament import format_table, run_tournament

    if args.games < 1:
        raise CliError(f"--games must be at least 1, not {args.games}")
    if not 2 <= args.players <= 4:
        raise CliError(f"--players must be 2, 3 or 4, not {args.players}")
    labels = [b.strip() for b in (args.bots or DEFAULT_BOTS).split(",") if b.strip()]
    if not labels:
        raise CliError(f"--bots names no bot; e.g. --bots {DEFAULT_BOTS}")
    try:
        for label in labels:
            make_bot(label)
        result = run_tournament(
            labels, make_bot, args.games, players=args.players, seed=args.seed,
            progress=Progress(),
        )  # fmt: skip
    except BotError as exc:
        raise CliError(str(exc)) from None
    print(json.dumps(result.to_json(), indent=2) if args.json else format_table(result))
    return 0

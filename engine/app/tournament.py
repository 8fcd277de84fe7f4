"""``cauldron tournament``: any game's bots against each other, seats rotated, win rates with
95% Wilson intervals. The game is found in the registry (`engine.games`) and plays its own
games (`GameDefinition.tournament`); this command only reads the line and prints."""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine import games
from engine.cli import CliError


def register(subparsers: Any) -> None:
    ids = games.game_ids()
    parser = subparsers.add_parser(
        "tournament",
        help="play bots against each other and print win rates with 95%% intervals",
        description=(
            "Play N games between bots, rotating seats (and colours), and print each bot's "
            "win rate (ties shared), its 95% Wilson interval and the game's own means. "
            "Bots by game: " + "; ".join(
                f"{g}: {', '.join(games.get(g).bot_names())}" for g in ids)
            + ". A bot may take options, e.g. search:simulations=200:depth=24."
        ),
    )
    parser.add_argument("--game", choices=ids, default=games.DEFAULT_GAME,
                        help=f"whose bots play (default {games.DEFAULT_GAME})")
    parser.add_argument("--bots", default=None,
                        help="comma-separated bots (default: all of the game's bots)")
    parser.add_argument("--games", type=int, default=20, help="games to play (default 20)")
    parser.add_argument("--players", type=int, default=2, help="seats per game (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the deals (default 1)")
    parser.add_argument("--set", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="a game's own tournament setting (Glastonbury: memory=perfect|own, "
                             "what bots remember of other cauldrons)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=run)


def settings_of(pairs: list[str]) -> dict[str, str]:
    """``--set NAME=VALUE`` pairs as a game's tournament settings."""
    settings: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise CliError(f"--set takes NAME=VALUE, not {pair!r}; e.g. --set memory=own")
        settings[name.strip()] = value.strip()
    return settings


def run(args: argparse.Namespace) -> int:
    from engine.cli import Progress
    from engine.games.base import Refused

    if args.games < 1:
        raise CliError(f"--games must be at least 1, not {args.games}")
    if not 2 <= args.players <= 4:
        raise CliError(f"--players must be 2, 3 or 4, not {args.players}")
    game = games.get(args.game)
    default = ",".join(game.bot_names())
    bots = [b.strip() for b in (args.bots or default).split(",") if b.strip()]
    if not bots:
        raise CliError(f"--bots names no bot; e.g. --bots {default}")
    try:
        report = game.tournament(bots, args.games, args.players, args.seed,
                                 settings_of(args.settings), progress=Progress())
    except Refused as exc:
        raise CliError(f"{exc}") from None
    print(json.dumps(report.to_json(), indent=2) if args.json else report.table())
    return 0

"""`cauldron selfplay` and `cauldron replay`: the rules engine from the command line."""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from engine.cli import CliError
from engine.games.glastonbury.rules import Game, GameConfig, GameLog, InvalidLog, replay
from engine.games.glastonbury.rules.board import FACED_LINE
from engine.games.glastonbury.rules.cards import PLAYER_COLOURS, card_label, family_name
from engine.games.glastonbury.rules.names import card_name, line_label, position_label, seat_name


def selfplay_game(players: int, seed: int, *, recipes: bool = False) -> Game:
    """One random legal game, reproducible from `seed`."""
    rng = random.Random(seed)
    config = GameConfig(colours=PLAYER_COLOURS[:players], recipes=recipes)
    game = Game.new(config, rng)
    while not game.is_over():
        game.apply(rng.choice(game.legal_actions()))
    return game


def game_summary(game: Game, seed: int | None = None) -> dict[str, Any]:
    score = game.scores()
    totals = {s.seat: s for s in score.seats}
    final = game.seat_cards()  # what each seat ends with (face up once the game is over)
    summary: dict[str, Any] = {}
    if seed is not None:
        summary["seed"] = seed
    summary.update(
        {
            "end_reason": game.end_reason,
            "last_card_seat": game.last_card_seat,
            "turns": game.turns,
            "actions": len(game.actions),
            "seats": [
                {
                    "seat": s,
                    "colour": game.config.colours[s],
                    "cauldron": list(final[s].cauldron),
                    "spells": [slot[0] for slot in game.spells[s]],
                    "score": totals[s].total,
                }
                for s in range(game.players)
            ],
            "winners": list(score.winners),
            "log": GameLog.of(game).to_wire(),
        }
    )
    return summary


def render_game(game: Game) -> str:
    """A plain-text picture of the table and the scores, named for people
    (engine.games.glastonbury.rules.names:
    rows, columns, seats and positions from 1; cards by name, never by id)."""
    view = game.view_public()
    lines = [f"Glastonbury, {game.players} players, {game.turns} turns, pile {view['pile_size']}"]
    names = [[card_name(c) if c else "·" for c in row] for row in view["grid"]]
    width = max(len(n) for row in names for n in row) + 1
    for r, row in enumerate(names):
        lines.append(f"row {r + 1}: " + " ".join(n.ljust(width) for n in row).rstrip())
    for seat in view["seats"]:
        faced = FACED_LINE[seat["pawn"]]
        where = line_label(faced) if faced is not None else "a corner"
        top = card_name(seat["top"]) if seat["top"] else "-"
        lines.append(
            f"{seat_name(seat['seat'], seat['colour'])}: pawn at {position_label(seat['pawn'])} "
            f"facing {where}, {seat['cauldron_size']} card(s) in the cauldron, top {top}"
        )
    if game.is_over():
        last = game.last_card_seat
        by = seat_name(last, game.config.colours[last]) if last is not None else "nobody"
        lines.append(f"game over: {game.end_reason}, last card taken by {by}")
        scores = game.scores()
        for seat_score in scores.seats:
            lines.append(f"  {seat_name(seat_score.seat, seat_score.colour)}: "
                         f"{seat_score.total} points")
            for fam in seat_score.families:
                cards = ", ".join(card_label(c) for c in fam.cards)
                extra = f" + {len(fam.immutos)} Immuto" if fam.immutos else ""
                lines.append(f"      {family_name(fam.family):<16} {fam.points:>4}  {cards}{extra}")
        winners = ", ".join(seat_name(w, game.config.colours[w]) for w in scores.winners)
        lines.append(f"winner(s): {winners}")
    else:
        lines.append(f"{seat_name(game.seat, game.config.colours[game.seat])} to play "
                     f"({view['phase']})")
    return "\n".join(lines)


def _selfplay(args: argparse.Namespace) -> int:
    if not 2 <= args.players <= 4:
        raise CliError("--players must be 2, 3 or 4")
    if args.games < 1:
        raise CliError("--games must be at least 1")
    for k in range(args.games):
        seed = args.seed + k
        game = selfplay_game(args.players, seed, recipes=args.recipes)
        if args.json:
            print(json.dumps(game_summary(game, seed)))
        else:
            print(f"--- game {k + 1}/{args.games}, seed {seed}")
            print(render_game(game))
    return 0


def _load_json(path: str) -> Any:
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CliError(f"{path} is not UTF-8 text; give a JSON game log") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise CliError(f"{path} is not JSON a game log can be: nested too deeply") from None


def _replay(args: argparse.Namespace) -> int:
    data = _load_json(args.log)
    if isinstance(data, dict) and "log" in data and "schema_version" not in data:
        data = data["log"]  # a line of `cauldron selfplay --json`
    try:
        game = replay(GameLog.from_wire(data))
    except InvalidLog as exc:
        raise CliError(f"the log does not replay: {exc}") from None
    if args.json:
        out = game_summary(game)
        out["view"] = game.view_public()
        print(json.dumps(out))
    else:
        print(render_game(game))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("selfplay", help="play random legal games to the end")
    p.add_argument("--players", type=int, default=4, help="2, 3 or 4 (default 4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first game")
    p.add_argument("--games", type=int, default=1, help="number of games (seeds seed, seed+1, …)")
    p.add_argument("--recipes", action="store_true", help="play the recipe variant (G11)")
    p.add_argument("--json", action="store_true", help="one JSON object per game per line")
    p.set_defaults(handler=_selfplay)

    p = subparsers.add_parser("replay", help="replay a saved game log and show the result")
    p.add_argument("log", help="a game log (JSON file, or - for stdin)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_replay)

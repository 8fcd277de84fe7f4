"""`cauldron score FILE|- [--json]`: score a finished game (G10, G11) from a JSON file.

Input (issue 2): `{"players": [{"seat": 0, "colour": "blue", "cauldron": ["blue-a-4", ...],
"spells": ["accio-1"], "recipes": ["A-orange"]}], "last_card_seat": 2,
"options": {"second_player_bonus": false, "first_seat": 0}}`; `cauldron` is bottom first;
`spells`, `recipes`, `last_card_seat` and `options` are optional. Output: a block per seat
(named for people: the file's seat 0 is "Seat 1", cards by name, the score page's words)
(or, with --json, `{"seats": [...], "winners": [...]}`). Every input problem is a CliError:
one line naming the problem, exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cli import CliError

if TYPE_CHECKING:
    from engine.games.glastonbury.rules.scoring import FamilyScore, GameScore, SeatCards, SeatScore

_MAX_ERRORS_SHOWN = 3


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a finished game from a JSON file (G10, G11)",
        description=(
            "Score a finished game: per-family points, own colour x2, +5 for four cards, "
            "Immuto placed where it scores best, recipes (variant) and winners. "
            'Input: {"players": [{"seat": 0, "colour": "blue", "cauldron": [...bottom '
            'first...], "spells": [...], "recipes": [...]}], "last_card_seat": 2, '
            '"options": {"second_player_bonus": false, "first_seat": 0}}.'
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the game as JSON, or - to read stdin")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    source = "standard input" if args.file == "-" else str(args.file)
    text = _read(args.file, source)
    seats, options = _parse(text, source)

    from engine.games.glastonbury.rules.scoring import ScoringError, score_game

    try:
        score = score_game(seats, **options)
    except ScoringError as exc:
        raise CliError(f"{source}: {exc.message} (rule {exc.rule})") from None
    if args.json:
        print(json.dumps(score.to_json(), indent=2, ensure_ascii=False))
    else:
        print(render(score, seats))
    return 0


def _read(path: str, source: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(
            f"{source}: no such file; give the path of a JSON file, or - for stdin"
        ) from None
    except IsADirectoryError:
        raise CliError(f"{source} is a directory; give the path of a JSON file") from None
    except UnicodeDecodeError:
        raise CliError(f"{source} is not UTF-8 text; give a JSON file") from None
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if not isinstance(part, int) and not str(part).isidentifier():
            part = json.dumps(str(part))  # a key with spaces or line breaks stays one line
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


def _describe(error: Any) -> str:
    """One pydantic error as `where: what (got value)`."""
    loc = tuple(error["loc"])
    if not loc:
        return 'the top level must be a JSON object like {"players": [...]}'
    text = f"{_location(loc)}: {error['msg']}"
    if error["type"] not in ("missing", "extra_forbidden"):
        got = json.dumps(error.get("input"), ensure_ascii=False)
        # control characters (NEL, LS, ...) would break the one-line message: escape them
        got = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in got)
        text += f" (got {got if len(got) <= 40 else got[:37] + '...'})"
    return text


def _parse(text: str, source: str) -> tuple[list[SeatCards], dict[str, Any]]:
    """Check the JSON structure (types, required and unknown keys) and build the seats."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{source} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise CliError(f"{source} is not valid JSON: nested too deeply") from None

    from pydantic import BaseModel, ConfigDict, Field, ValidationError

    from engine.games.glastonbury.rules.scoring import SeatCards

    class _Strict(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)

    class Player(_Strict):
        seat: int
        colour: str
        cauldron: list[str]
        spells: list[str] = Field(default_factory=list)
        recipes: list[str] = Field(default_factory=list)

    class Options(_Strict):
        second_player_bonus: bool = False
        first_seat: int = 0

    class ScoreInput(_Strict):
        players: list[Player] = Field(min_length=1)
        last_card_seat: int | None = None
        options: Options = Field(default_factory=Options)

    try:
        parsed = ScoreInput.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        shown = "; ".join(_describe(e) for e in errors[:_MAX_ERRORS_SHOWN])
        more = len(errors) - _MAX_ERRORS_SHOWN
        extra = f" (and {more} more)" if more > 0 else ""
        raise CliError(f"{source}: {shown}{extra}") from None
    seats = [
        SeatCards(
            seat=p.seat,
            colour=p.colour,
            cauldron=tuple(p.cauldron),
            spells=tuple(p.spells),
            recipes=tuple(p.recipes),
        )
        for p in parsed.players
    ]
    options = {
        "last_card_seat": parsed.last_card_seat,
        "first_seat": parsed.options.first_seat,
        "second_player_bonus": parsed.options.second_player_bonus,
    }
    return seats, options


# --- the readable result, named for people (engine.games.glastonbury.rules.names)
# --------------------------


def _family_block(family: FamilyScore) -> list[str]:
    from engine.games.glastonbury.rules.names import card_name, family_how, family_label

    cards = [card_name(c) for c in family.cards] + [card_name(i) for i in family.immutos]
    return [
        f"  {family_label(family.family)}: {family.points:+d}",
        f"    {', '.join(cards)}",
        f"    {family_how(family)}",
    ]


def _seat_block(score: SeatScore, entry: SeatCards | None) -> list[str]:
    from engine.games.glastonbury.rules.names import card_name, family_label, recipe_name, seat_name

    lines = [f"{seat_name(score.seat, score.colour)}: {score.total} points"]
    for family in score.families:
        lines.extend(_family_block(family))
    if not score.families:
        lines.append("  Empty cauldron: +0")
    for immuto, joined in score.immuto_assignment:
        lines.append(f"  {card_name(immuto)} joins {family_label(joined)}")
    lines.append(f"  Ingredients: {score.ingredient_points:+d}")
    for recipe in score.recipes:
        lines.append(f"  {recipe_name(recipe.recipe)}: {recipe.points:+d} ({recipe.reason})")
    if score.second_player_bonus:
        lines.append(f"  Second player: {score.second_player_bonus:+d} (the option is on)")
    if entry is not None and entry.spells:
        spells = ", ".join(card_name(s) for s in entry.spells)
        lines.append(f"  Spells: {spells} (spells score nothing themselves)")
    lines.append(f"  Total: {score.total}")
    return lines


def render(score: GameScore, seats: list[SeatCards] | None = None) -> str:
    """The readable result: one block per seat, then the winner(s)."""
    from engine.games.glastonbury.rules.names import seat_name

    by_seat = {s.seat: s for s in seats or []}
    lines: list[str] = []
    for seat_score in score.seats:
        lines.extend(_seat_block(seat_score, by_seat.get(seat_score.seat)))
        lines.append("")
    names = ", ".join(seat_name(s, score.seat(s).colour) for s in score.winners)
    top = score.seat(score.winners[0]).total
    if len(score.winners) == 1:
        lines.append(f"Winner: {names} with {top} points")
    else:
        lines.append(f"Winners (shared): {names} with {top} points each")
    return "\n".join(lines)

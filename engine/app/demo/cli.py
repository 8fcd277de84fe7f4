"""`cauldron demo`: a whole table with bots in one process (what `make demo` runs)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from typing import Any

from engine.app.demo.stack import DEFAULT_BOTS, bots_can_play, seats_option

ANY_HOST = ("0.0.0.0", "::", "")  # every interface: phones on the network can join


def _pace(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"{text} is not 0..60 seconds")
    return value


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="a complete demo table: broker, simulated hub, engine, dashboard and bots",
        description="Start a complete table in one process and print its URL: the embedded "
        "MQTT broker (or --mqtt), the simulated hub, the engine service and the dashboard. "
        "Bots play the seats nobody joins, with visible moves on the virtual table; a visitor "
        "takes a seat by opening its seat link. Ctrl-C stops everything.",
    )
    parser.add_argument("--host", default="127.0.0.1",
                        help="dashboard address (127.0.0.1: this machine only; 0.0.0.0 lets "
                        "phones on the network join, through the LAN address in the QR codes)")
    parser.add_argument("--port", type=int, default=8000,
                        help="dashboard port (default 8000; 0: any free port)")
    parser.add_argument("--mqtt", default=None,
                        help="use this broker (mqtt://host:port) instead of the embedded one")
    parser.add_argument("--table", default="demo", help="table id (default demo)")
    parser.add_argument("--game", default=None,
                        help="the game the table plays: " + ", ".join(_game_ids()) +
                        " (default: the first)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a set-up option of the game (its options model), e.g. "
                        "--option recipes=true, --option ingredient_set=2; repeat for more. "
                        "A list is comma-separated (colours=red,blue); none is no value")
    parser.add_argument("--bot", default=None,
                        help="bot level: one of the game's bots (Glastonbury: greedy, the "
                        "default, random, search, or search with options, e.g. "
                        "search:simulations=40; Quacks: push, the default, greedy, random)")
    parser.add_argument("--players", type=int, choices=[2, 3, 4], default=4,
                        help="seats at the table (default 4)")
    parser.add_argument("--pace", type=_pace, default=0.6,
                        help="seconds per bot gesture (default 0.6; 0: as fast as the table "
                        "confirms the cards)")
    parser.add_argument("--linger", type=_pace, default=20.0,
                        help="seconds the score screen shows before the next game (default 20)")
    parser.add_argument("--games", type=int, default=None,
                        help="stop after this many games (default: endless)")
    parser.add_argument("--seed", type=int, default=None, help="seed for deals and bots")
    parser.add_argument("--pin", default=None,
                        help="host PIN (default: one made once and kept in the data dir)")
    parser.add_argument("--lang", choices=["fr", "en", "de"], default="en",
                        help="default language of the pages (en)")
    parser.add_argument("--pawns", action="store_true",
                        help="the simulated table senses its pawns (Hall switches at the 20 "
                        "positions): each pawn move is checked as it happens; move them on "
                        "the virtual table's positions to practise a wrong move")
    parser.add_argument("--no-qr", action="store_true", help="do not print the QR code")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what each part does")
    parser.set_defaults(handler=_handle)


def _game_ids() -> tuple[str, ...]:
    from engine.games import game_ids

    return game_ids()




def _value(text: str, kind: str) -> object:
    """One ``--option`` value as its field's JSON type (`engine.games.base.option_fields`)."""
    if text.lower() in ("none", "null") and "null" in kind.split("/"):
        return None
    base = kind.split("/")[0]
    if base == "boolean":
        if text.lower() in ("true", "yes", "on", "1"):
            return True
        if text.lower() in ("false", "no", "off", "0"):
            return False
        raise ValueError("give true or false")
    if base == "integer":
        return int(text)
    if base == "array":
        return [int(v) if v.strip().lstrip("-").isdigit() else v.strip()
                for v in text.split(",") if v.strip()]
    return text


def game_options(game_id: str, given: list[str], players: int = 4) -> dict[str, object]:
    """``--option NAME=VALUE`` items as the game's options, each by its field's type and the
    whole set (with ``--players``) checked by the game's rules (`GameDefinition.check`): a
    `CliError` naming the option, or the rule, that refuses."""
    from pydantic import ValidationError

    from engine import games
    from engine.cli import CliError
    from engine.games.base import Refused, option_fields

    game = games.get(game_id)
    fields = {f.name: f for f in option_fields(game.options)}
    out: dict[str, object] = {}
    for item in given:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise CliError(f"--option {item!r}: {game.id} has the options "
                           f"{', '.join(sorted(fields))} (give NAME=VALUE)")
        try:
            out[name] = _value(text.strip(), fields[name].type)
        except ValueError as exc:
            raise CliError(f"--option {item!r}: {fields[name].type} expected ({exc})") from None
    whole = {**seats_option(game.id, players), **out}
    try:
        game.options.model_validate(whole)  # its bounds first: one line naming the option
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CliError(f"--option {where}: {first['msg']}") from None
    try:
        game.check(whole)
    except Refused as exc:
        raise CliError(f"--option: {' '.join(str(exc).split())}") from None
    return out


def _check(args: argparse.Namespace) -> None:
    from engine.cli import CliError

    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port} is not 0..65535")
    if args.games is not None and args.games < 1:
        raise CliError(f"--games {args.games}: give 1 or more (or leave it out: endless)")
    from engine.wire.contract import TopicError, check_table_id

    try:
        check_table_id(args.table)
    except TopicError as exc:
        raise CliError(f"--table: {exc}") from None
    from engine import games
    from engine.games.base import Refused, UnknownGame

    try:
        game = games.get(args.game)
    except UnknownGame as exc:
        raise CliError(f"--game: {exc}") from None
    args.game = game.id
    if args.bot is None:
        args.bot = DEFAULT_BOTS.get(game.id, game.bot_names()[0])
    try:
        game.bot(args.bot)
    except (Refused, ValueError) as exc:
        raise CliError(f"--bot {args.bot!r}: {exc} (the bots of {game.id}: "
                       f"{', '.join(game.bot_names())})") from None
    args.options = {**seats_option(game.id, args.players),
                    **game_options(game.id, args.option, args.players)}
    if not bots_can_play(game.id):
        raise CliError(f"--game {game.id}: the demo's bots cannot play it (it has no "
                       "phone moves); start the dashboard and the engine for it")
    if args.mqtt is not None:
        from engine.wire.mqtt import BrokerUrl, MqttError, accepts_anonymous

        try:
            broker = BrokerUrl.parse(args.mqtt)
        except MqttError as exc:
            raise CliError(str(exc)) from None
        if accepts_anonymous(args.mqtt):
            # The dashboard takes the table's screen, its hub's health and the seat views
            # from the broker: on an open one, anyone could forge or read them.
            raise CliError(f"--mqtt {broker.redacted()}: this broker lets anyone in without "
                           "an account, so anyone on its network could replace the table's "
                           "screen, freeze the demo and read every seat's private view; an "
                           "anonymous broker is not supported. Give one with accounts and "
                           "the shipped ACL (mqtt://ACCOUNT:PASSWORD@host, see `cauldron "
                           "setup`), or leave --mqtt out (the embedded broker listens on "
                           "127.0.0.1 only)")
    if args.pin is not None:
        from dashboard.config import Settings

        try:
            Settings(pin=args.pin)
        except ValueError:
            raise CliError("--pin: the host PIN is 6-32 letters or digits") from None


def _say(text: str) -> None:
    with contextlib.suppress(BrokenPipeError, ValueError):  # stdout closed: keep running
        print(text, flush=True)


def _qr(url: str) -> None:
    try:
        import qrcode

        code = qrcode.QRCode(border=1)
        code.add_data(url)
        code.make(fit=True)
        code.print_ascii(out=sys.stdout, invert=True)
    except (ImportError, OSError, ValueError) as exc:
        logging.getLogger("cauldron.demo").info("no QR code: %s", exc)


def _restore(previous: dict[signal.Signals, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def _handle(args: argparse.Namespace) -> int:
    from engine.cli import CliError

    _check(args)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not args.verbose:  # the embedded broker logs every probe and disconnect
        for noisy in ("amqtt", "transitions"):
            logging.getLogger(noisy).setLevel(logging.CRITICAL)
    from dashboard.config import persistent_pin
    from engine.app.demo.stack import DemoOptions, DemoStack, StackError
    from engine.datadir import data_dir

    if args.pin is None:  # kept across restarts, so the host stays logged in
        try:
            args.pin = persistent_pin(data_dir("demo") / "dashboard")
        except OSError as exc:
            raise CliError(f"cannot keep the host PIN in {data_dir('demo')}: {exc}; "
                           "give one with --pin") from None
    options = DemoOptions(
        host=args.host, port=args.port, mqtt=args.mqtt, table=args.table, bot=args.bot,
        game=args.game, options=args.options, players=args.players, pace=args.pace,
        linger=args.linger, games=args.games,
        seed=args.seed, pin=args.pin, lang=args.lang, pawns=args.pawns,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    stack = DemoStack(options, say=_say)
    _say("starting the demo table (broker, simulated hub, engine, dashboard, bots)...")
    try:
        stack.start()
    except StackError as exc:
        stack.stop()
        _restore(previous)
        raise CliError(str(exc)) from None
    except BaseException:
        stack.stop()
        _restore(previous)
        raise
    try:
        from dashboard.cli import reach_note

        # The address phones can open (the LAN address with --host 0.0.0.0), else this one.
        url = stack.settings.public_base() or stack.url
        if stack.options.host in ANY_HOST and url == stack.url:
            url = f"http://127.0.0.1:{stack.port}/"
        broker = "embedded amqtt on " + stack.mqtt_url if args.mqtt is None else stack.mqtt_url
        _say(f"\nCauldron Table demo: open {url}")
        if stack.settings.public_base() is None and stack.options.host not in ANY_HOST:
            # Loopback: the QR codes would open the phone itself. Said as `make` says it.
            _say("  this machine only: phones cannot join. At an event, to let phones on "
                 "this network join,\n  stop it and start `make event` (the same as "
                 "`make demo HOST=0.0.0.0`, or `cauldron demo --host 0.0.0.0`)")
        else:
            _say("  " + reach_note(stack.settings))
        if not args.no_qr:
            _qr(url)
        _say(f"  table view   {url}\n"
             f"  virtual table (click to play) {url}virtual\n"
             f"  host page    {url}host   host PIN: {stack.settings.pin}\n"
             f"  join a seat: open its link from the host page (or the QR on the table view);\n"
             f"               the bot then leaves that seat to you\n"
             f"  broker {broker}; data in {stack.data_dir}\n"
             "Ctrl-C stops everything.\n")
        driver = stack.driver
        while not stop.wait(0.2):
            if driver.finished.is_set():
                _say(f"{driver.games_over} game(s) played; stopping.")
                break
    finally:
        _say("stopping the demo table...")
        stack.stop()
        _restore(previous)
    _say("stopped.")
    return 0

"""`cauldron demo`: a whole table with bots in one process (what `make demo` runs)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from typing import Any

BOT_CHOICES = ("greedy", "search", "random")
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
    parser.add_argument("--bot", default="greedy",
                        help="bot level: greedy (default), random, search, or search with "
                        "options, e.g. search:simulations=40")
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
    name = args.bot.partition(":")[0]
    if name not in BOT_CHOICES:
        raise CliError(f"--bot {args.bot!r}: choose greedy, search or random")
    from engine.games.glastonbury.bots import make_bot
    from engine.games.glastonbury.bots.base import BotError

    try:
        make_bot(args.bot)
    except (BotError, ValueError) as exc:
        raise CliError(f"--bot {args.bot!r}: {exc}") from None
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
        players=args.players, pace=args.pace, linger=args.linger, games=args.games,
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

"""`cauldron setup` and `cauldron doctor`."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from engine.cli import CliError

QUESTIONS = (  # (answer, question) asked on a terminal when not given as a flag
    ("table", "Table id (the hub's name on the broker)"),
    ("backend", "Readers: serial (a Pico on USB), spi (on the Pi itself) or sim (no hardware)"),
    ("serial_port", "Serial port of the Pico"),
    ("pads", "Scan pads fitted (seats)"),
    ("dashboard_port", "Port of the web dashboard"),
    ("lang", "Dashboard language (fr, en, de)"),
    ("public_url", "Address phones open for the QR codes (blank: this Pi's LAN address)"),
)


def register(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "setup", help="turn this Raspberry Pi into a table (user, configs, Mosquitto, services)",
        description="Creates the service user and folders, writes the hub, engine and "
        "dashboard configs, configures Mosquitto (accounts with generated passwords, the ACL) "
        "and installs and restarts the systemd units. Safe to run again: it keeps passwords, "
        "PIN and earlier answers. Asks a few questions on a terminal; flags answer them "
        "(with no terminal, nothing is asked).")
    s.add_argument("--root", type=Path, default=Path("/"),
                   help="write everything under this folder instead of / (a rehearsal or a "
                   "test: no user, owner or service is touched)")
    s.add_argument("--table", help="table id (default table-1)")
    s.add_argument("--backend", choices=["serial", "spi", "sim"],
                   help="readers: serial (Pico on USB, default), spi, or sim (no hardware)")
    s.add_argument("--serial-port", help="the Pico's serial port (default /dev/ttyACM0)")
    s.add_argument("--pads", type=int, help="scan pads fitted, 0..4 (default 4)")
    s.add_argument("--mqtt-host", help="where the services reach the broker (127.0.0.1)")
    s.add_argument("--mqtt-port", type=int, help="the broker's port (default 1883)")
    s.add_argument("--mqtt-bind", help="address the broker listens on (default: all)")
    s.add_argument("--dashboard-host", help="address the dashboard listens on (0.0.0.0)")
    s.add_argument("--dashboard-port", type=int, help="the dashboard's port (default 8000)")
    s.add_argument("--lang", choices=["fr", "en", "de"], help="dashboard language (en)")
    s.add_argument("--public-url", help="the address phones open, for the QR codes (e.g. "
                   "http://192.168.1.20:8000/; default: the Pi's LAN address)")
    s.add_argument("--user", help="base name of the service users and groups (default "
                   "cauldron: cauldron-hub, cauldron-engine, cauldron-dashboard)")
    s.add_argument("--tls-cert", help="TLS for the broker: its certificate (PEM; from a local "
                   "CA or self-signed) for a second listener, mqtts:// on --tls-port")
    s.add_argument("--tls-key", help="the certificate's private key (PEM; copied 0600)")
    s.add_argument("--tls-port", type=int, help="the TLS listener's port (default 8883)")
    s.add_argument("--store", help="a venue's games database, postgresql://USER@HOST/DB "
                   "(its password is asked, or taken from the URL, and kept in "
                   "/etc/cauldron/secrets/engine.env, 0600; `--store ''` goes back to the "
                   "table's own SQLite files)")
    s.add_argument("-y", "--yes", action="store_true",
                   help="ask nothing: flags, earlier answers, then defaults")
    s.set_defaults(handler=_setup)

    d = subparsers.add_parser(
        "doctor", help="check a table end to end and say what to fix",
        description="Checks that each broker account logs in and may do exactly what the ACL "
        "says, every reader answers, the tag map is complete, the hub, engine and dashboard "
        "are alive, sound and agree on the table, each secret is readable by its own services "
        "only, a venue's database answers, the clock is sane and every data dir takes a synced "
        "write. Exits 1 naming each problem, and each check that could not run.")
    d.add_argument("--root", type=Path, default=Path("/"),
                   help="the table's files are under this folder (as given to setup)")
    d.add_argument("--skip", action="append", default=[],
                   choices=["broker", "acl", "services", "readers", "secrets", "database",
                            "tags", "clock", "disk"],
                   help="leave out a check (repeatable)")
    d.add_argument("--timeout", type=float, default=3.0,
                   help="seconds to wait for each answer (default 3)")
    d.set_defaults(handler=_doctor)


def _setup(args: argparse.Namespace) -> int:
    from engine.hosting.setup import (
        Answers,
        Installer,
        Paths,
        SetupError,
        load_answers,
        split_store_password,
    )

    root = args.root.resolve()
    scratch = root != Path("/")
    paths = Paths(root)
    try:
        known = load_answers(paths)
    except SetupError as exc:
        raise CliError(str(exc)) from None
    given = {f.name: getattr(args, f.name) for f in fields(Answers)
             if getattr(args, f.name, None) is not None}
    for name in ("tls_cert", "tls_key"):  # kept as answers: whatever the next run's cwd
        if given.get(name):
            given[name] = str(Path(given[name]).resolve())
    store_password: str | None = None
    if given.get("store"):
        given["store"], store_password = split_store_password(given["store"])
        store_password = store_password or None
    if not known.get("store") and "store" not in given:
        kept = _hand_written_store(paths)
        if kept:  # set in engine.toml by hand before setup knew the answer: keep it
            print(f"Keeping the venue's store {kept} from {paths.config('engine')}")
            given["store"] = kept
    values: dict[str, Any] = {**{f.name: f.default for f in fields(Answers)}, **known, **given}
    if not args.yes and sys.stdin.isatty():
        for name, question in QUESTIONS:
            if name in given or (name == "serial_port" and values["backend"] != "serial"):
                continue
            while True:
                reply = input(f"{question} [{values[name]}]: ").strip()
                if not reply:
                    break
                if not isinstance(values[name], int):
                    values[name] = reply
                    break
                if reply.isdigit():
                    values[name] = int(reply)
                    break
                print("  a number, please (Enter keeps the one in brackets)")
    if values.get("store") and store_password is None and not args.yes \
            and sys.stdin.isatty() and not paths.engine_env.exists():
        import getpass

        store_password = getpass.getpass("Password of the database account (Enter: none, "
                                         "e.g. with ~/.pgpass): ") or None
    if not scratch:
        import os

        if os.geteuid() != 0:
            raise CliError("setup changes users, /etc and services: run it with sudo "
                           "(or rehearse with --root DIR)")
    try:
        answers = Answers(**values).check()
        installer = Installer(answers, paths, scratch, store_password=store_password)
        print(f"Setting up table {answers.table!r} under {root}", flush=True)
        if known:
            news = [f"{name} {known.get(name, '')!r} -> {value!r}"
                    for name, value in asdict(answers).items()
                    if name in known and known[name] != value]
            print("Answers changed: " + "; ".join(news) if news else
                  "No answer changed.", flush=True)
        installer.install()
    except SetupError as exc:
        raise CliError(str(exc)) from None
    except PermissionError as exc:
        raise CliError(f"{exc.filename}: permission denied; run setup with sudo") from None
    changed = len(installer.changed)
    print(f"Done: {changed} file(s) changed." if changed else "Done: nothing to change.")
    env = paths.dashboard_env
    print(f"Host PIN for /host: in {env} ({'sudo ' if not scratch else ''}grep PIN {env}).")
    print(f"Next: {'sudo ' if not scratch else ''}cauldron doctor"
          + (f" --root {root}" if scratch else "") + f"; then open http://<this Pi>:"
          f"{answers.dashboard_port}/host to enrol the cards and start a game.")
    return 0


def _hand_written_store(paths: Any) -> str:
    """A ``store`` an admin put in engine.toml (the README's venue steps) before setup
    took it as an answer; without its password (that lives in engine.env)."""
    import tomllib

    try:
        data = tomllib.loads(paths.config("engine").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    store = data.get("engine", {}).get("store")
    return store if isinstance(store, str) and store.startswith("postgres") else ""


def _doctor(args: argparse.Namespace) -> int:
    from engine.hosting.doctor import Doctor, DoctorError

    try:
        doctor = Doctor(args.root.resolve(), timeout=args.timeout, skip=set(args.skip))
    except DoctorError as exc:
        raise CliError(str(exc)) from None
    problems = doctor.run(print)
    if problems:
        print(f"\n{len(problems)} problem(s):")
        for problem in problems:
            print(f"  - {problem}")
    if doctor.not_run:  # never "ready" on checks that did not run
        print(f"\n{len(doctor.not_run)} check(s) could not run:")
        for what in doctor.not_run:
            print(f"  - {what}")
    if problems or doctor.not_run:
        return 1
    print("\nThe table is ready.")
    return 0

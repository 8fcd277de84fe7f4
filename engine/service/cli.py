"""`cauldron engine` (the service) and `cauldron games` (stored games, their replay)."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cli import CliError

if TYPE_CHECKING:
    from engine.service.service import ServiceConfig


def _data_dir(value: str | None) -> Path:
    from engine.service.store import default_data_dir

    if not value:
        return default_data_dir()
    try:
        return Path(value).expanduser()
    except RuntimeError as exc:  # ~user of no such user
        raise CliError(f"data dir {value!r}: {exc}; give a full path") from None


def _load_config_file(path: str | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise CliError(f"cannot read the config file {path}: {exc.strerror}") from None
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError, not UTF-8, nested too deep
        raise CliError(f"{path} is not valid TOML: {exc}") from None
    section = data.get("engine", data)
    if not isinstance(section, dict):
        raise CliError(f"{path}: engine = {section!r} is not a table; write an [engine] "
                       "section")
    allowed = {"mqtt", "data_dir", "tables", "shard", "name", "hub_io"}
    unknown = set(section) - allowed
    if unknown:
        shown = ", ".join(k if k.isidentifier() else repr(k) for k in sorted(unknown))
        raise CliError(f"{path}: unknown setting(s) {shown} in [engine]; "
                       f"known: {', '.join(sorted(allowed))}")
    for key, value in section.items():
        if key == "hub_io":
            ok = isinstance(value, bool)
        elif key == "tables":
            ok = isinstance(value, str) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value))
        else:
            ok = isinstance(value, str)
        if not ok:
            kind = {"hub_io": "true or false", "tables": "a list of table ids"}.get(key, "a string")
            raise CliError(f"{path}: {key} = {value!r} in [engine] must be {kind}")
    return dict(section)


def _check_name(name: str) -> str:
    from engine.wire.contract import TopicError, check_table_id

    try:  # it names the engine's state topic too
        return check_table_id(name)
    except TopicError as exc:
        raise CliError(f"--name {name!r}: {exc}") from None


def _parse_shard(text: str) -> tuple[int, int]:
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise CliError(f"--shard {text!r} must look like i/n, e.g. 0/2") from None
    if count < 1 or not 0 <= index < count:
        raise CliError(f"--shard {text!r}: need 0 <= i < n")
    return index, count


def _parse_tables(value: Any) -> frozenset[str] | None:
    from engine.wire.contract import TopicError, check_table_id

    if value in (None, ""):
        return None
    names = value.split(",") if isinstance(value, str) else list(value)
    try:
        return frozenset(check_table_id(n.strip()) for n in names if n.strip())
    except TopicError as exc:
        raise CliError(str(exc)) from None


def _service_config(args: argparse.Namespace) -> ServiceConfig:
    """The service's settings: the command line over the config file over the defaults."""
    from engine.service.service import ServiceConfig

    file = _load_config_file(args.config)
    shard_text = args.shard or file.get("shard")
    return ServiceConfig(
        mqtt=args.mqtt or file.get("mqtt") or "mqtt://127.0.0.1:1883",
        data_dir=_data_dir(args.data_dir or file.get("data_dir")),
        tables=_parse_tables(args.tables or file.get("tables")),
        shard=_parse_shard(shard_text) if shard_text else None,
        name=_check_name(args.name or file.get("name") or "engine"),
        hub_io=not args.no_hub_io and file.get("hub_io", True) is not False,
    )


def _engine(args: argparse.Namespace) -> int:
    from engine.service.errors import ServiceError
    from engine.service.service import EngineService
    from engine.wire.mqtt import MqttError

    config = _service_config(args)
    # Two busy threads share the GIL (paho's network loop and the handler): hand it over
    # more often than every 5 ms, or a message waits for the other thread's whole slice.
    sys.setswitchinterval(0.001)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        service = EngineService(config)
    except MqttError as exc:
        raise CliError(str(exc)) from None
    print(f"cauldron engine: data in {config.data_dir}, broker {service.client.broker.redacted()}",
          file=sys.stderr, flush=True)
    try:
        service.start(wait=args.connect_timeout)
    except (MqttError, ServiceError) as exc:
        service.client.stop(timeout=0.5)  # no reconnect loop left behind
        raise CliError(str(exc)) from None
    print(f"cauldron engine: serving {len(service.tables)} stored table(s) and any new one; "
          "Ctrl-C to stop", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: service.stop())
    try:
        while not service.wait(1.0):
            pass
    except KeyboardInterrupt:
        service.stop()
    return 0


def _games(args: argparse.Namespace) -> int:
    from engine.service.store import TableStore, stored_tables

    data_dir = _data_dir(args.data_dir)
    tables = [args.table] if args.table else stored_tables(data_dir)
    rows = []
    for table in tables:
        path = data_dir / "tables" / f"{table}.sqlite"
        if not path.exists():
            raise CliError(f"no stored table {table!r} in {data_dir}; `cauldron games` lists "
                           "them")
        store = TableStore(path, table)
        rows.extend(store.games())
        store.close()
    if args.json:
        print(json.dumps([r.__dict__ for r in rows]))
        return 0
    if not rows:
        print(f"no stored games in {data_dir}")
        return 0
    print(f"{'table':<16} {'game':<24} {'status':<9} {'players':<8} winners")
    for r in rows:
        winners = ",".join(str(w) for w in r.result.get("winners", [])) if r.result else "-"
        players = len(r.config.get("colours", []))
        print(f"{r.table:<16} {r.game_id:<24} {r.status:<9} {players:<8} {winners}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from engine.rules import GameLog
    from engine.service.errors import StoreError
    from engine.service.store import TableStore, table_path

    data_dir = _data_dir(args.data_dir)
    path = table_path(data_dir, args.table)
    if not path.exists():
        raise CliError(f"no stored table {args.table!r} in {data_dir}; `cauldron games` lists "
                       "them")
    store = TableStore(path, args.table)
    try:
        interp = store.rebuild(args.game)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    if interp.game is None:
        raise CliError(f"game {args.game} never started (status {interp.status.value})")
    log = GameLog.of(interp.game).to_wire()
    if args.log:
        print(json.dumps(log))
        return 0
    view = interp.public_view()
    out = {"table": args.table, "game_id": args.game, "status": interp.status.value,
           "actions": len(log["actions"]), "turns": view.turns,
           "end": view.to_wire()["end"],
           "prompt": view.table.prompt.text if view.table and view.table.prompt else ""}
    print(json.dumps(out, indent=None if args.json else 2))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("engine", help="run the engine service (tables' games over MQTT)")
    p.add_argument("--config", help="TOML file with an [engine] section")
    p.add_argument("--mqtt", help="broker URL (default mqtt://127.0.0.1:1883)")
    p.add_argument("--data-dir", help="where table logs live (default "
                   "$XDG_DATA_HOME/cauldron/engine or ~/.local/share/cauldron/engine)")
    p.add_argument("--tables", help="serve only these tables (comma-separated)")
    p.add_argument("--shard", help="serve the tables whose hash mod n is i (i/n)")
    p.add_argument("--name", help="service name (MQTT client id; default engine)")
    p.add_argument("--no-hub-io", action="store_true",
                   help="do not send hub/cmd/turn and hub/cmd/buzz (the hub follows "
                   "game/public and game/alert by itself)")
    p.add_argument("--connect-timeout", type=float, default=10.0,
                   help="seconds to wait for the broker at start")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(handler=_engine)

    g = subparsers.add_parser("games", help="list stored games; `games show` replays one")
    g.add_argument("--data-dir", help="the engine's data dir")
    g.add_argument("--table", help="only this table")
    g.add_argument("--json", action="store_true")
    g.set_defaults(handler=_games)
    sub = g.add_subparsers(dest="games_command")
    s = sub.add_parser("show", help="rebuild a stored game from its log and show it")
    s.add_argument("table")
    s.add_argument("game")
    s.add_argument("--data-dir", default=argparse.SUPPRESS, help="the engine's data dir")
    s.add_argument("--log", action="store_true",
                   help="print the rules log (JSON) instead; `cauldron replay FILE` reads it")
    s.add_argument("--json", action="store_true")
    s.set_defaults(handler=_show)

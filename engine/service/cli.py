"""`cauldron engine` (the service) and `cauldron games` (stored games, their replay)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import os
import signal
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cli import CliError

if TYPE_CHECKING:
    from engine.service.service import ServiceConfig
    from engine.service.store import Store

# Where `cauldron setup` puts the engine's config on an installed table.
INSTALLED_CONFIG = "/etc/cauldron/engine.toml"


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
    allowed = {"mqtt", "mqtt_password_file", "data_dir", "tables", "shard", "name", "hub_io",
               "store"}
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
    from engine.wire.auth import on_command_line_warning, secret_setting
    from engine.wire.mqtt import BrokerUrl, MqttError, with_password_file

    file = _load_config_file(args.config)
    if args.mqtt:
        try:
            if BrokerUrl.parse(args.mqtt).password:
                print(on_command_line_warning("the broker password", "CAULDRON_MQTT"),
                      file=sys.stderr)
        except MqttError as exc:
            raise CliError(str(exc)) from None
    shard_text = args.shard or file.get("shard")
    try:
        mqtt = with_password_file(args.mqtt or file.get("mqtt")
                                  or secret_setting("CAULDRON_MQTT", "mqtt-url")
                                  or "mqtt://127.0.0.1:1883", file.get("mqtt_password_file"))
    except MqttError as exc:
        raise CliError(str(exc)) from None
    return ServiceConfig(
        mqtt=mqtt,
        data_dir=_data_dir(args.data_dir or file.get("data_dir")),
        store=args.store or file.get("store") or None,
        tables=_parse_tables(args.tables or file.get("tables")),
        shard=_parse_shard(shard_text) if shard_text else None,
        name=_check_name(args.name or file.get("name") or "engine"),
        hub_io=not args.no_hub_io and file.get("hub_io", True) is not False,
    )


def _quiet_gc() -> None:
    """Python's full garbage collection walks every object the process holds (the modules,
    every table's game: ~150,000 objects at 100 tables, 70 ms of CPU), and it comes each
    time they have grown by a quarter: every few seconds at 1,000 events/s, each time
    holding up every table. What is loaded at start is set aside for good (`gc.freeze`),
    and the full collection waits for 1,000 young ones instead of 10 (the quick young
    collections, which find the short-lived cycles, are unchanged)."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 1000)


def _engine(args: argparse.Namespace) -> int:
    from engine.service.errors import ServiceError
    from engine.service.service import EngineService
    from engine.wire.mqtt import MqttError

    config = _service_config(args)
    if config.shard is not None and config.store and "://" in config.store \
            and not config.store.startswith("sqlite:"):
        raise CliError("--shard and a postgresql:// store do not go together: the engines "
                       "split the venue's tables between them by themselves")
    # Two busy threads share the GIL (paho's network loop and the handler): hand it over
    # more often than every 5 ms, or a message waits for the other thread's whole slice.
    sys.setswitchinterval(0.001)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        service = EngineService(config)
    except (MqttError, ServiceError) as exc:
        raise CliError(str(exc)) from None
    print(f"cauldron engine {service.engine_id}: games in {service.store.redacted()}, broker "
          f"{service.client.broker.redacted()}", file=sys.stderr, flush=True)
    try:
        service.start(wait=args.connect_timeout)
    except (MqttError, ServiceError) as exc:
        service.client.stop(timeout=0.5)  # no reconnect loop left behind
        raise CliError(str(exc)) from None
    if service.store.claims:
        print(f"cauldron engine: claiming its share of the venue's "
              f"{len(service.store.venue_tables() or [])} table(s) (`cauldron games owners` "
              "shows who serves which); Ctrl-C to stop", file=sys.stderr, flush=True)
    else:
        print(f"cauldron engine: serving {len(service.tables)} stored table(s) and any new "
              "one; Ctrl-C to stop", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: service.stop())
    _quiet_gc()
    try:
        while not service.wait(1.0):
            pass
    except KeyboardInterrupt:
        service.stop()
    return 0


def _store(args: argparse.Namespace) -> Store:
    """The store the `games` commands read: --store, else --data-dir, else the config
    file's store/data_dir, else the default data dir."""
    from engine.service.errors import StoreError
    from engine.service.store import open_store

    config = getattr(args, "config", None)
    if config is None and not getattr(args, "data_dir", None) \
            and not getattr(args, "store", None) and os.path.exists(INSTALLED_CONFIG):
        if not os.access(INSTALLED_CONFIG, os.R_OK):  # not the home folder's, silently
            raise CliError(f"{INSTALLED_CONFIG} (this table's engine) is readable by root "
                           "only: run `sudo cauldron games ...`")
        config = INSTALLED_CONFIG  # on a table made by `cauldron setup`
    file = _load_config_file(config)
    if config is not None and not os.environ.get("PGPASSWORD"):
        # A venue's password, where setup keeps it for the engine unit (EnvironmentFile).
        env = Path(config).parent / "secrets" / "engine.env"
        with contextlib.suppress(OSError):
            for line in env.read_text(encoding="utf-8").splitlines():
                if line.startswith("PGPASSWORD=") and line.split("=", 1)[1].strip():
                    os.environ["PGPASSWORD"] = line.split("=", 1)[1].strip()
    where = (getattr(args, "store", None) or file.get("store")
             or str(_data_dir(getattr(args, "data_dir", None) or file.get("data_dir"))))
    try:
        return open_store(where)
    except StoreError as exc:
        raise CliError(str(exc)) from None


def _games(args: argparse.Namespace) -> int:
    from engine.service.errors import StoreError

    store = _store(args)
    try:
        tables = [args.table] if args.table else store.tables()
        rows = []
        for table in tables:
            if not store.has_table(table):
                raise CliError(f"no stored table {table!r} in {store.redacted()}; "
                               "`cauldron games` lists them")
            log = store.table(table)
            rows.extend(log.games())
            log.close()
    except StoreError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    if args.json:
        print(json.dumps([r.__dict__ for r in rows]))
        return 0
    if not rows:
        print(f"no stored games in {store.redacted()}")
        return 0
    from engine import games

    seat_name = games.get().names.seat
    print(f"{'table':<16} {'game':<24} {'status':<9} {'players':<8} winners")
    for r in rows:
        colours = list(r.config.get("colours", []))
        winners = ", ".join(seat_name(w, colours[w] if 0 <= w < len(colours) else None)
                            for w in r.result.get("winners", [])) if r.result else "-"
        players = len(colours)
        print(f"{r.table:<16} {r.game_id:<24} {r.status:<9} {players:<8} {winners}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from engine.service.errors import StoreError
    from engine.wire.contract import compact_json

    store = _store(args)
    try:
        if not store.has_table(args.table):
            raise CliError(f"no stored table {args.table!r} in {store.redacted()}; "
                           "`cauldron games` lists them")
        interp = store.table(args.table).rebuild(args.game)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    log = interp.log()
    if log is None:
        raise CliError(f"game {args.game} never started (status {interp.status.value})")
    if args.log:
        print(json.dumps(log))
        return 0
    view = json.loads(compact_json(interp.rules_view()))
    actions = log.get("actions")
    out = {"table": args.table, "game": interp.plays, "game_id": args.game,
           "status": interp.status.value,
           "actions": len(actions) if isinstance(actions, list) else 0,
           "turns": view.get("turns"), "end": view.get("end"),
           "prompt": str(interp.prompt().get("text") or "")}
    print(json.dumps(out, indent=None if args.json else 2))
    return 0


def _owners(args: argparse.Namespace) -> int:
    from engine.service.errors import StoreError
    from engine.service.store.postgres import PostgresStore

    store = _store(args)
    try:
        if not isinstance(store, PostgresStore):
            raise CliError(f"{store.redacted()} is a SQLite store: the one engine using it "
                           "serves every table; ownership is for a postgresql:// store")
        owners = store.owners()
        engines = store.live_engines()
    except StoreError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    if args.json:
        print(json.dumps({"tables": {o.table: o.engine for o in owners}, "engines": engines}))
        return 0
    if not owners:
        print("the venue has no tables yet: add them with `cauldron games tables --add t1,t2`")
        return 0
    print(f"{'table':<20} engine")
    for o in owners:
        print(f"{o.table:<20} {o.engine or '- (nobody: no engine has claimed it yet)'}")
    print(f"{len(engines)} engine(s) live: {', '.join(engines) or 'none'}")
    return 0


def _tables(args: argparse.Namespace) -> int:
    from engine.service.errors import StoreError

    store = _store(args)
    try:
        add = _parse_tables(args.add) or frozenset()
        remove = _parse_tables(args.remove) or frozenset()
        if add or remove:
            names: list[str] | None = store.set_venue_tables(sorted(add), sorted(remove))
        else:
            names = store.venue_tables()
    except StoreError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    if args.json:
        print(json.dumps(names))
    elif names is None:
        print(f"no venue table list in {store.redacted()}: any table id is served; make one "
              "with `cauldron games tables --add t1,t2`")
    else:
        print("\n".join(names) if names else "the venue's table list is empty")
    return 0


def _migrate(args: argparse.Namespace) -> int:
    store = _store(args)  # opening a store applies its migrations
    try:
        print(f"{store.redacted()}: schema version {store.schema_version()}")
    finally:
        store.close()
    return 0


def _export(args: argparse.Namespace) -> int:
    from engine.service.errors import StoreError
    from engine.service.store.transfer import export_table

    store = _store(args)
    try:
        if not store.has_table(args.table):
            raise CliError(f"no stored table {args.table!r} in {store.redacted()}")
        out = sys.stdout if args.out in (None, "-") else open(args.out, "w")  # noqa: SIM115
        try:
            count = export_table(store, args.table, out)
        finally:
            if out is not sys.stdout:
                out.close()
    except (StoreError, OSError) as exc:
        raise CliError(f"export: {exc}") from None
    finally:
        store.close()
    print(f"exported table {args.table}: {count} input(s)", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    from engine.service.errors import StoreError
    from engine.service.store.transfer import import_table

    store = _store(args)
    try:
        with open(args.file) as fh:
            table, count = import_table(store, fh, rename=args.table)
    except OSError as exc:
        raise CliError(f"import: cannot read {args.file}: {exc.strerror}") from None
    except StoreError as exc:
        raise CliError(f"import: {exc}") from None
    finally:
        store.close()
    print(f"imported table {table}: {count} input(s) into {store.redacted()}")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("engine", help="run the engine service (tables' games over MQTT)")
    p.add_argument("--config", help="TOML file with an [engine] section")
    p.add_argument("--mqtt", help="broker URL (default mqtt://127.0.0.1:1883)")
    p.add_argument("--data-dir", help="where table logs live (default "
                   "$XDG_DATA_HOME/cauldron/engine or ~/.local/share/cauldron/engine)")
    p.add_argument("--store", help="where games are kept: postgresql://user@host/db for a "
                   "venue (engines share its tables), or sqlite:///data-dir (the default)")
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

    g = subparsers.add_parser("games", help="stored games (list, show), a venue's tables and "
                              "their owners, export/import between stores")
    _store_args(g, None)
    g.add_argument("--table", type=_table_id, help="only this table")
    g.add_argument("--json", action="store_true")
    g.set_defaults(handler=_games)
    sub = g.add_subparsers(dest="games_command")
    s = sub.add_parser("show", help="rebuild a stored game from its log and show it")
    s.add_argument("table", type=_table_id)
    s.add_argument("game")
    _store_args(s)
    s.add_argument("--log", action="store_true",
                   help="print the rules log (JSON) instead; `cauldron replay FILE` reads it")
    s.add_argument("--json", action="store_true")
    s.set_defaults(handler=_show)
    o = sub.add_parser("owners", help="which engine serves which table (postgresql:// store)")
    _store_args(o)
    o.add_argument("--json", action="store_true")
    o.set_defaults(handler=_owners)
    t = sub.add_parser("tables", help="the venue's table list (others are refused)")
    _store_args(t)
    t.add_argument("--add", help="add these tables (comma-separated)")
    t.add_argument("--remove", help="remove these tables (comma-separated)")
    t.add_argument("--json", action="store_true")
    t.set_defaults(handler=_tables)
    m = sub.add_parser("migrate", help="bring the store's schema up to date; show its version")
    _store_args(m)
    m.set_defaults(handler=_migrate)
    e = sub.add_parser("export", help="write one table's whole log as JSON lines")
    e.add_argument("table", type=_table_id)
    e.add_argument("--out", help="file to write (default: standard output)")
    _store_args(e)
    e.set_defaults(handler=_export)
    i = sub.add_parser("import", help="load a table's log written by `games export` (into "
                       "an empty table; e.g. from SQLite into a venue's PostgreSQL)")
    i.add_argument("file")
    i.add_argument("--table", type=_table_id, help="import under this table id instead")
    _store_args(i)
    i.set_defaults(handler=_import)


def _table_id(text: str) -> str:
    """A table id given on the command line (never a path: `../../etc/passwd` is a clear
    usage error, not a traceback)."""
    from engine.wire.contract import TopicError, check_table_id

    try:
        return check_table_id(text)
    except TopicError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _store_args(parser: Any, default: Any = argparse.SUPPRESS) -> None:
    """--store/--data-dir/--config on `games` and on each of its sub-commands."""
    parser.add_argument("--store", default=default,
                        help="postgresql://… or sqlite:///data-dir (default: the data dir)")
    parser.add_argument("--data-dir", default=default, help="the engine's data dir (SQLite)")
    parser.add_argument("--config", default=default,
                        help="the engine's TOML config file (its store or data_dir)")

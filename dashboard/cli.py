"""`cauldron dashboard`: serve the table view, seat views, host page and virtual table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from engine.datadir import data_dir


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dashboard",
        help="run the web dashboard (table view, seat phones, host page, virtual table)",
        description="Serve the dashboard for one table. It follows the table over MQTT and "
        "never talks to the hub or the engine in any other way.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--mqtt", default=None,
        help="broker URL (default $CAULDRON_MQTT or the systemd credential mqtt-url, else "
        "mqtt://127.0.0.1:1883); a password belongs there, not on the command line",
    )
    parser.add_argument(
        "--mqtt-password-file", type=Path, default=None,
        help="file holding the account's password (keeps it off the command line)",
    )
    parser.add_argument("--table", default="t1", help="table id (default t1)")
    parser.add_argument(
        "--pin",
        default=None,
        help="host PIN (6-32 letters/digits; default $CAULDRON_HOST_PIN or the systemd "
        "credential host-pin, else one made once and kept in the data dir, printed at start); "
        "on the command line any local user can read it",
    )
    parser.add_argument(
        "--public-url", default=None,
        help="the address phones use to reach this dashboard, for the QR codes and seat links "
        "(e.g. http://192.168.1.20:8000/; default: the LAN address with --host 0.0.0.0)",
    )
    parser.add_argument(
        "--allowed-host", action="append", default=[], metavar="NAME",
        help="a host name with dots that phones use to open the dashboard (e.g. "
        "table1.venue.lan; repeatable). Addresses, names without a dot and *.local always "
        "work; other names are refused, so that DNS rebinding cannot reach the dashboard",
    )
    parser.add_argument(
        "--data-dir", type=Path, default=None,
        help="where the seat secrets, the host PIN and the score-only count are kept, so a "
        "restart loses none (default $XDG_DATA_HOME/cauldron/dashboard, else "
        "~/.local/share/cauldron/dashboard)",
    )
    parser.add_argument("--lang", choices=["fr", "en", "de"], default="fr", help="default language")
    parser.add_argument(
        "--tls-cert", type=Path, default=None, metavar="PEM",
        help="serve HTTPS with this certificate (chain) file; goes with --tls-key. A "
        "self-signed or local-CA certificate: see the README's 'Hosting a real table'",
    )
    parser.add_argument("--tls-key", type=Path, default=None, metavar="PEM",
                        help="the certificate's private key (readable by this service only)")
    parser.add_argument(
        "--no-virtual", action="store_true", help="switch the virtual table off (real cards only)"
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from engine.cli import CliError
    from engine.wire.auth import on_command_line_warning, secret_setting
    from engine.wire.mqtt import BrokerUrl, MqttError, with_password_file

    pin_argument = bool(args.pin)
    url_argument = args.mqtt
    args.pin = args.pin or secret_setting("CAULDRON_HOST_PIN", "host-pin")
    mqtt = args.mqtt or secret_setting("CAULDRON_MQTT", "mqtt-url") or "mqtt://127.0.0.1:1883"
    try:
        broker = BrokerUrl.parse(mqtt)
        mqtt = with_password_file(mqtt, args.mqtt_password_file)
    except MqttError as exc:
        raise CliError(str(exc)) from None
    args.mqtt = mqtt
    from dashboard.config import Settings

    fields: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "mqtt": mqtt,
        "table": args.table,
        "data_dir": args.data_dir or data_dir("dashboard"),
        "default_lang": args.lang,
        "virtual": not args.no_virtual,
        "public_url": args.public_url,
        "allowed_hosts": tuple(args.allowed_host),
        **_tls_files(args.tls_cert, args.tls_key),
    }
    from dashboard.config import persistent_pin

    try:
        fields["pin"] = args.pin or persistent_pin(fields["data_dir"])
    except OSError as exc:
        raise CliError(f"cannot keep the host PIN in {fields['data_dir']}: {exc}; "
                       "give one with --pin") from None
    try:
        settings = Settings(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CliError(f"--{where.replace('_', '-')}: {first['msg']}") from None
    if pin_argument:
        print(on_command_line_warning("--pin", "CAULDRON_HOST_PIN"), file=sys.stderr)
    if url_argument and broker.password:
        print(on_command_line_warning("the broker password", "CAULDRON_MQTT"),
              file=sys.stderr)
    return serve(settings, announce_pin=not args.pin)


def _tls_files(cert: Path | None, key: Path | None) -> dict[str, Path]:
    """Both TLS files or neither, each one readable PEM; a clear error otherwise."""
    from engine.cli import CliError

    if cert is None and key is None:
        return {}
    if cert is None or key is None:
        raise CliError("--tls-cert and --tls-key go together: give both, or neither")
    for option, path in (("--tls-cert", cert), ("--tls-key", key)):
        try:
            head = path.read_bytes()[:4096]
        except OSError as exc:
            raise CliError(f"{option}: cannot read {path} ({exc.strerror or exc})") from None
        if b"-----BEGIN " not in head:
            raise CliError(f"{option}: {path} is not a PEM file (it has no '-----BEGIN' line)")
    return {"tls_cert": cert, "tls_key": key}


def reach_note(settings: Any) -> str:
    """Where phones open the dashboard, or why they cannot and what to do."""
    public = settings.public_base()
    if public:
        return f"phones on this network open {public} (the QR codes and seat links use it)"
    if settings.host in ("0.0.0.0", "::", ""):
        return ("no network address found for phones: give it with --public-url "
                f"http://<this machine's address>:{settings.port}/")
    return (f"listening on {settings.host} only: phones cannot join. To let phones on this "
            "network join, start it with --host 0.0.0.0 (or --public-url for a proxy).")


def serve(settings: Any, announce_pin: bool = False) -> int:
    import uvicorn

    from dashboard.main import create_app
    from dashboard.serving import UVICORN_OPTIONS

    app = create_app(settings)
    url = f"{settings.scheme}://{settings.host}:{settings.port}/"
    from engine.wire.mqtt import BrokerUrl

    broker = BrokerUrl.parse(settings.mqtt).redacted()  # never the password
    print(f"dashboard for table {settings.table} on {url} (broker {broker})", flush=True)
    print(reach_note(settings), flush=True)
    if announce_pin:
        print(f"host PIN: {settings.pin}  (kept in {settings.data_dir}; set one with --pin or "
              "$CAULDRON_HOST_PIN)", flush=True)
    try:
        uvicorn.run(app, host=settings.host, port=settings.port, **UVICORN_OPTIONS,
                    ssl_certfile=settings.tls_cert, ssl_keyfile=settings.tls_key)
    except OSError as exc:
        from engine.cli import CliError

        raise CliError(f"cannot listen on {settings.host}:{settings.port}: {exc}") from None
    return 0

"""`cauldron setup`: turn a fresh Raspberry Pi OS (Debian) into a table, and run again safely.

It creates one system user per service and the folders (owners and modes: ``ownership``,
each service reading only its own secrets), writes the hub, engine and dashboard configs,
configures Mosquitto on top of Debian's stock main config (one file in ``conf.d``;
persistence and logging stay the main config's), makes the accounts with generated
passwords (written by Python: never on a command line or in a log) and the ACL, installs the
three systemd units (one path, a user each; secrets in files and an ``EnvironmentFile``) and
restarts what changed. ``--root DIR`` writes all of it into a scratch tree (paths inside the
files point into it; no user, owner or service is touched), for tests and rehearsals.

What it wrote it remembers in ``/etc/cauldron/table.toml``: a second run asks nothing it
knows, keeps the passwords and the PIN, and says which files changed.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.hosting.mosquitto import include_dirs, main_conf_settings, merge_passwd
from engine.wire.contract import MAX_PAYLOAD_BYTES, TopicError, check_table_id

if TYPE_CHECKING:
    from engine.wire.auth import KeyKind

CHECKOUT = Path(__file__).resolve().parents[2]
DEPLOY = CHECKOUT / "hardware" / "deploy"
BACKENDS = ("serial", "spi", "sim")
HUB_GROUPS = ("dialout", "gpio", "spi", "i2c")  # serial port, GPIO pins, SPI bus
SERVICES = ("hub", "engine", "dashboard")
# What useradd takes (Debian's NAME_REGEX, 32 characters) with room for "-dashboard":
# "table-pi" is a fine name, "a b" or "../x" not.
USER_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,21}$")
# Which services read each table key (engine.wire.auth): the hub key signs the hub's events
# (the hub) and verifies them (the engine); the command key signs commands (the engine, the
# dashboard) and verifies them (the hub). The dashboard never holds the hub key.
KEY_READERS: dict[KeyKind, tuple[str, ...]] = {
    "hub": ("hub", "engine"), "cmd": ("hub", "engine", "dashboard")}
# The largest MQTT packet the broker takes: the contract's payload limit plus room for the
# topic and headers (a 200 MB message is refused by the broker, before any service reads it).
MAX_PACKET_BYTES = MAX_PAYLOAD_BYTES + 64 * 1024


class SetupError(Exception):
    """Setup cannot go on: the message says why and what to do."""


@dataclass
class Answers:
    """The few things a host decides (the rest follows). Kept in table.toml."""

    table: str = "table-1"
    backend: str = "serial"
    serial_port: str = "/dev/ttyACM0"
    pads: int = 4
    mqtt_host: str = "127.0.0.1"
    mqtt_port: int = 1883
    mqtt_bind: str = ""  # "" : every interface (hubs of other tables may log in)
    dashboard_host: str = "0.0.0.0"
    dashboard_port: int = 8000
    lang: str = "en"
    public_url: str = ""  # what phones open (QR codes); "": the Pi's LAN address
    user: str = "cauldron"
    # A venue's games database (postgresql://user@host/db, never with its password: that
    # goes to secrets/engine.env); "": SQLite in the engine's data dir.
    store: str = ""
    # TLS for hubs and tools on other machines: a second broker listener (mqtts://) with
    # this certificate and key (a local CA's, or self-signed); "": none.
    tls_cert: str = ""
    tls_key: str = ""
    tls_port: int = 8883

    def check(self) -> Answers:
        try:
            check_table_id(self.table)
        except TopicError as exc:
            raise SetupError(f"--table {self.table!r}: {exc}") from None
        if self.table in ("engine", "dashboard"):
            raise SetupError(f"--table {self.table!r} is the name of a service account; "
                             "choose another table id")
        if self.backend not in BACKENDS:
            raise SetupError(f"--backend {self.backend!r} is not one of {', '.join(BACKENDS)}")
        if not 0 <= self.pads <= 4:
            raise SetupError(f"--pads {self.pads} is not 0..4")
        for name in ("mqtt_port", "dashboard_port", "tls_port"):
            if not 1 <= getattr(self, name) <= 65535:
                raise SetupError(f"--{name.replace('_', '-')} {getattr(self, name)} is not a "
                                 "port (1..65535)")
        if not USER_NAME.match(self.user):
            raise SetupError(f"--user {self.user!r} is not a user name (small letters, "
                             "digits, - and _, starting with a letter; e.g. table-pi)")
        if self.store and not self.store.startswith(("postgresql://", "postgres://")):
            raise SetupError(f"--store {self.store!r}: a venue's store is a postgresql:// URL "
                             "(leave it out for the table's own SQLite files)")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise SetupError("--tls-cert and --tls-key go together (the broker's certificate "
                             "and its private key)")
        for name in ("tls_cert", "tls_key"):
            if getattr(self, name) and not Path(getattr(self, name)).is_file():
                raise SetupError(f"--{name.replace('_', '-')} {getattr(self, name)}: no such "
                                 "file")
        if self.store and split_store_password(self.store)[1]:
            raise SetupError("--store: the URL carries a password; setup keeps it out of "
                             "the configs (give it to setup as the URL says)")
        if self.lang not in ("fr", "en", "de"):
            raise SetupError(f"--lang {self.lang!r} is not fr, en or de")
        if self.public_url and not self.public_url.startswith(("http://", "https://")):
            raise SetupError(f"--public-url {self.public_url!r} must start with http:// or "
                             "https:// (e.g. http://192.168.1.20:8000/)")
        if any(c.isspace() for c in self.public_url):
            raise SetupError(f"--public-url {self.public_url!r} has a space in it")
        return self


@dataclass(frozen=True)
class Paths:
    """Every place setup writes, under ``root`` (``/`` on the Pi)."""

    root: Path

    def _p(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)

    @property
    def etc(self) -> Path:
        return self._p("etc", "cauldron")

    @property
    def secrets(self) -> Path:
        return self.etc / "secrets"

    @property
    def answers(self) -> Path:
        return self.etc / "table.toml"

    def config(self, service: str) -> Path:
        return self.etc / f"{service}.toml"

    def password(self, service: str) -> Path:
        return self.secrets / f"{service}.password"

    @property
    def dashboard_env(self) -> Path:
        return self.secrets / "dashboard.env"

    @property
    def engine_env(self) -> Path:
        """The engine unit's EnvironmentFile: the venue database's password (PGPASSWORD)."""
        return self.secrets / "engine.env"

    @property
    def command_link(self) -> Path:
        """`cauldron` on the admin's PATH and sudo's secure_path (Debian's both have it)."""
        return self._p("usr", "local", "bin", "cauldron")

    @property
    def data(self) -> Path:
        return self._p("var", "lib", "cauldron")

    @property
    def keys(self) -> Path:
        """The per-table keys (engine.wire.auth): one folder for the three services."""
        return self.data / "keys"

    @property
    def mosquitto(self) -> Path:
        return self._p("etc", "mosquitto")

    @property
    def mosquitto_main(self) -> Path:
        return self.mosquitto / "mosquitto.conf"

    @property
    def mosquitto_conf(self) -> Path:
        return self.mosquitto / "conf.d" / "cauldron.conf"

    @property
    def passwd(self) -> Path:
        return self.mosquitto / "cauldron.passwd"

    @property
    def acl(self) -> Path:
        return self.mosquitto / "cauldron.acl"

    @property
    def tls_cert(self) -> Path:
        return self.mosquitto / "certs" / "cauldron.crt"

    @property
    def tls_key(self) -> Path:
        return self.mosquitto / "certs" / "cauldron.key"

    def unit(self, service: str) -> Path:
        return self._p("etc", "systemd", "system", f"cauldron-{service}.service")


def service_user(answers: Answers, service: str) -> str:
    """The system user a service runs as: ``--user`` is the base (cauldron-hub, ...)."""
    return f"{answers.user}-{service}"


def key_group(answers: Answers, kind: str) -> str:
    """The group that may read the table's key of that kind (cauldron-hubkey, ...)."""
    return f"{answers.user}-{kind}key"


def service_groups(answers: Answers, service: str) -> list[str]:
    """A service's groups beyond its own: the base group (enter /etc/cauldron and
    /var/lib/cauldron, read the configs) and the groups of the keys it needs."""
    return [answers.user] + [key_group(answers, kind) for kind, readers in KEY_READERS.items()
                             if service in readers]


@dataclass(frozen=True)
class Owned:
    """A file or folder of the table: its owner and group (None: root) and its mode."""

    path: Path
    user: str | None
    group: str | None
    mode: int
    secret: bool = False  # a password, the PIN, a key: the doctor checks its owner too
    folder: bool = False


def ownership(answers: Answers, paths: Paths) -> dict[Path, Owned]:
    """Who owns what: each service reads only its own secrets (the one place setup and
    the doctor take owners and modes from)."""
    from engine.wire.auth import key_path

    a, p, base = answers, paths, answers.user
    plan = [Owned(folder, None, base, 0o750, folder=True)
            for folder in (p.etc, p.secrets, p.data, p.keys)]
    for s in SERVICES:
        user = service_user(a, s)
        plan += [Owned(p.data / s, user, user, 0o700, folder=True),
                 Owned(p.password(s), user, user, 0o600, True)]
    plan += [Owned(p.config(s), None, base, 0o640) for s in ("hub", "engine")]  # not secret
    dashboard, engine = service_user(a, "dashboard"), service_user(a, "engine")
    plan += [Owned(p.dashboard_env, dashboard, dashboard, 0o600, True),
             Owned(p.engine_env, engine, engine, 0o600, True)]
    plan += [Owned(key_path(p.keys, a.table, kind), None, key_group(a, kind), 0o640, True)
             for kind in KEY_READERS]
    return {o.path: o for o in plan}


def split_store_password(url: str) -> tuple[str, str]:
    """``postgresql://user:pw@host/db`` -> (``postgresql://user@host/db``, ``pw``)."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url, ""
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host)), \
        unquote(parts.password)


def accounts(answers: Answers) -> dict[str, str]:
    """Service -> its broker account (a hub logs in with its table id: the ACL's %u; the
    services' names have a '.', which no table id has, so %u never makes them a table)."""
    return {"hub": answers.table, "engine": "cauldron.engine", "dashboard": "cauldron.dashboard"}


def load_answers(paths: Paths) -> dict[str, Any]:
    if not paths.answers.exists():
        return {}
    try:
        data = tomllib.loads(paths.answers.read_text(encoding="utf-8")).get("table", {})
    except (OSError, ValueError) as exc:
        raise SetupError(f"{paths.answers} cannot be read ({exc}); fix or delete it") from None
    known = {f.name for f in fields(Answers)}
    return {k: v for k, v in data.items() if k in known}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


class Installer:
    """Writes the table's files and reports each as written or unchanged."""

    def __init__(self, answers: Answers, paths: Paths, scratch: bool,
                 say: Callable[[str], None] = print, store_password: str | None = None) -> None:
        self.answers = answers
        self.paths = paths
        self.scratch = scratch  # --root: no users, owners or services touched
        self.say = say
        self.changed: list[Path] = []
        self.cauldron = Path(sys.executable).parent / "cauldron"
        self.store_password = store_password  # None: keep the one in engine.env
        self.plan = ownership(answers, paths)

    # ------------------------------------------------------------ files

    def _owner(self, user: str | None, group: str | None) -> tuple[int, int]:
        uid = pwd.getpwnam(user).pw_uid if user else 0
        gid = grp.getgrnam(group).gr_gid if group else 0
        return uid, gid

    def put(self, path: Path, text: str, mode: int, user: str | None = None,
            group: str | None = None) -> bool:
        """Write ``text`` (atomically, with ``mode`` from the first byte) unless it is
        already there; set owner and mode either way. True when the content changed."""
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_text(encoding="utf-8") if path.exists() else None
        changed = old != text
        if changed:
            tmp = path.with_name(f".{path.name}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
            self.changed.append(path)
        os.chmod(path, mode)
        if not self.scratch:
            os.chown(path, *self._owner(user, group))
        self.say(f"  {'wrote    ' if changed else 'unchanged'} {path} ({mode:o})")
        return changed

    def place(self, path: Path, text: str) -> bool:
        """``put`` with the owner and mode of ``ownership``."""
        o = self.plan[path]
        return self.put(path, text, o.mode, o.user, o.group)

    def settle(self, path: Path) -> None:
        """Give ``path`` its planned mode (and owner, on the Pi)."""
        o = self.plan[path]
        os.chmod(path, o.mode)
        if not self.scratch:
            os.chown(path, *self._owner(o.user, o.group))

    def secret(self, path: Path, make: Callable[[], str]) -> str:
        """The secret kept in ``path`` (first line), made and stored when missing."""
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            if lines and lines[0].strip():
                value = lines[0].strip()
                self.place(path, value + "\n")
                return value
        value = make()
        self.place(path, value + "\n")
        return value

    # ------------------------------------------------------------ steps

    def service_users(self) -> None:
        """A system user per service, in the groups of the keys it needs (and no other)."""
        a = self.answers
        users = ", ".join(service_user(a, s) for s in SERVICES)
        if self.scratch:
            self.say(f"  (scratch root: service users {users} not created)")
            return
        for group in [a.user] + [key_group(a, kind) for kind in KEY_READERS]:
            if not _group_exists(group):
                run(["groupadd", "--system", group])
        for service in SERVICES:
            user = service_user(a, service)
            if _user_exists(user):
                self.say(f"  user {user} exists")
            else:
                run(["useradd", "--system", "--user-group", "--home-dir",
                     str(self.paths.data / service), "--no-create-home", "--shell",
                     "/usr/sbin/nologin", user])
                self.say(f"  created the service user {user}")
            groups = service_groups(a, service)
            if service == "hub":
                groups += [g for g in HUB_GROUPS if _group_exists(g)]
            # --groups without --append: a group taken away in the plan is left too.
            run(["usermod", "--groups", ",".join(groups), user])

    def folders(self) -> None:
        for o in self.plan.values():
            if o.folder:
                o.path.mkdir(parents=True, exist_ok=True)
                self.settle(o.path)
                if o.user is not None and not self.scratch:
                    self._hand_over(o.path, *self._owner(o.user, o.group))

    def _hand_over(self, folder: Path, uid: int, gid: int) -> None:
        """A service's data dir is its own to the last file (one written by an older
        setup's shared user, or by an admin's `sudo cauldron ...`, would stop it)."""
        for top, dirs, files in os.walk(folder):
            for name in dirs + files:
                path = os.path.join(top, name)
                if os.lstat(path).st_uid != uid:
                    os.chown(path, uid, gid, follow_symlinks=False)

    def table_keys(self) -> None:
        """The table's hub key and command key (engine.wire.auth), made once here so the
        engine knows its hub from the first event and the doctor can check them."""
        from engine.wire.auth import ensure_key, key_path

        a, folder = self.answers, self.paths.keys
        for kind in ("hub", "cmd"):
            path = key_path(folder, a.table, kind)
            existed = path.exists()
            ensure_key(folder, a.table, kind, f"hub-{a.table}" if kind == "hub" else None)
            self.settle(path)
            if not existed:
                self.changed.append(path)
            self.say(f"  {'made     ' if not existed else 'kept     '} {path} "
                     f"({self.plan[path].mode:o}, group {self.plan[path].group})")

    def configs(self, passwords: dict[str, str]) -> None:
        a, p = self.answers, self.paths
        account = accounts(a)
        broker = f"{a.mqtt_host}:{a.mqtt_port}"
        hub = [
            "# The table's hub (cauldron hub --config this file). Written by `cauldron setup`:",
            "# run it again to change a setting (edits made here by hand are replaced).",
            f"table = {_toml_value(a.table)}",
            f"mqtt = {_toml_value('mqtt://' + account['hub'] + '@' + broker)}",
            f"mqtt_password_file = {_toml_value(p.password('hub'))}",
            f"backend = {_toml_value(a.backend)}",
            f"data_dir = {_toml_value(p.data / 'hub')}",
            f"tagmap = {_toml_value(p.data / 'hub' / 'tagmap.json')}",
            f"keys_dir = {_toml_value(p.keys)}",
            f"pads = {a.pads}",
        ]
        if a.backend == "serial":
            hub += ["", "[serial]", f"port = {_toml_value(a.serial_port)}"]
        self.place(p.config("hub"), "\n".join(hub) + "\n")
        engine = [
            "# The engine service (cauldron engine --config this file). Written by "
            "`cauldron setup`.",
            "[engine]",
            f"mqtt = {_toml_value('mqtt://' + account['engine'] + '@' + broker)}",
            f"mqtt_password_file = {_toml_value(p.password('engine'))}",
            f"data_dir = {_toml_value(p.data / 'engine')}",
            f"name = {_toml_value(f'engine-{a.table}')}",
        ]
        if a.store:  # a venue: the engines share its tables out (no `tables` of its own)
            engine += [f"store = {_toml_value(a.store)}"]
        else:
            engine += [f"tables = {_toml_value(a.table)}"]
        self.place(p.config("engine"), "\n".join(engine) + "\n")
        if a.store or p.engine_env.exists():
            password = self.store_password
            if password is None:  # kept from the last run
                password = env_value(p.engine_env, "PGPASSWORD") or ""
            self.place(p.engine_env,
                       "# Secret of cauldron-engine (its EnvironmentFile): the venue "
                       "database's password.\n"
                       + (f"PGPASSWORD={password}\n" if password else ""))
        pin = passwords["pin"]
        self.place(p.dashboard_env,
                   "# Secret of cauldron-dashboard (its EnvironmentFile): the code for "
                   f"/host.\nCAULDRON_HOST_PIN={pin}\n")
        answers = ["# Written by `cauldron setup`: its answers, read again when it runs "
                   "again (and by `cauldron doctor`).", "[table]"]
        answers += [f"{k} = {_toml_value(v)}" for k, v in asdict(a).items()]
        self.put(p.answers, "\n".join(answers) + "\n", 0o644)

    def mosquitto(self, passwords: dict[str, str]) -> None:
        a, p = self.answers, self.paths
        if not self.scratch and shutil.which("mosquitto") is None:
            raise SetupError("Mosquitto is not installed: run `sudo apt-get install mosquitto` "
                             "and then `sudo cauldron setup` again")
        main = p.mosquitto_main.read_text(encoding="utf-8") if p.mosquitto_main.exists() else ""
        if not main:
            self.say(f"  note: no {p.mosquitto_main}; writing a whole configuration into "
                     f"{p.mosquitto_conf} instead (start mosquitto with -c on it)")
        elif str(p.mosquitto_conf.parent) not in include_dirs(main) and not self.scratch:
            raise SetupError(f"{p.mosquitto_main} does not read {p.mosquitto_conf.parent} "
                             f"(no include_dir line); add `include_dir "
                             f"{p.mosquitto_conf.parent}` at its end and run setup again")
        already = main_conf_settings(main)
        listener = f"listener {a.mqtt_port}" + (f" {a.mqtt_bind}" if a.mqtt_bind else "")
        lines = [
            "# Cauldron Table (written by `cauldron setup`), read after Debian's main",
            "# /etc/mosquitto/mosquitto.conf: persistence, its location and the log stay",
            "# there (setting them twice makes Mosquitto refuse to start).",
            listener,
            "allow_anonymous false",
            f"password_file {p.passwd}",
            f"acl_file {p.acl}",
            "# Keep QoS 1 messages for clients that reconnect (the engine, the hubs).",
            "max_queued_messages 100000",
            "# QoS 1 messages in flight to a client (default 20): the engine acknowledges a",
            "# batch of hub events once it is stored, so this bounds its group commits.",
            "max_inflight_messages 1000",
            "# Nothing bigger than the wire contract allows reaches a service's memory.",
            f"max_packet_size {MAX_PACKET_BYTES}",
        ]
        owner = "mosquitto" if not self.scratch and _user_exists("mosquitto") else None
        if a.tls_cert:  # copies Mosquitto (its own user) can read; the key 0600
            self.put(p.tls_cert, Path(a.tls_cert).read_text(encoding="utf-8"), 0o644)
            self.put(p.tls_key, Path(a.tls_key).read_text(encoding="utf-8"), 0o600, owner,
                     owner)
            lines += ["# TLS for hubs and tools on other machines (mqtts://this-pi:"
                      f"{a.tls_port}, with the CA's certificate as their mqtt_ca)",
                      f"listener {a.tls_port}" + (f" {a.mqtt_bind}" if a.mqtt_bind else ""),
                      f"certfile {p.tls_cert}", f"keyfile {p.tls_key}"]
        if self.scratch and "user" not in already:
            # A rehearsal: Mosquitto runs as whoever starts it, and reads these files (as
            # root it would drop to "mosquitto", which cannot read the 0600 password file).
            lines += [f"user {pwd.getpwuid(os.getuid()).pw_name}"]
        if "set_tcp_nodelay" not in already:
            # Small packets go at once: with Nagle's algorithm each hop waits ~40 ms.
            lines += ["set_tcp_nodelay true"]
        if "persistence" not in already:
            lines += ["persistence true"]
        if "persistence_location" not in already:
            store = p.root / "var" / "lib" / "mosquitto"
            if self.scratch:
                store.mkdir(parents=True, exist_ok=True)
            lines += [f"persistence_location {store}/"]
        self.put(p.mosquitto_conf, "\n".join(lines) + "\n", 0o644)
        acl = DEPLOY / "mosquitto" / "acl"
        try:
            acl_text = acl.read_text(encoding="utf-8")
        except OSError as exc:
            raise SetupError(f"cannot read the shipped ACL {acl} ({exc.strerror}); run setup "
                             "from the project's checkout (its .venv)") from None
        self.put(p.acl, acl_text, 0o640, owner, owner)
        existing = p.passwd.read_text(encoding="utf-8") if p.passwd.exists() else ""
        named = {accounts(a)[s]: passwords[s] for s in SERVICES}
        self.put(p.passwd, merge_passwd(existing, named), 0o600, owner, owner)

    def units(self) -> None:
        a, p = self.answers, self.paths
        if not self.cauldron.exists():
            raise SetupError(f"{self.cauldron} is missing: run setup with the project's own "
                             "venv (.venv/bin/cauldron setup)")
        values = {
            "CAULDRON": str(self.cauldron), "ETC": str(p.etc),
            "DATA": str(p.data), "TABLE": a.table,
            "DASHBOARD": (f"--host {a.dashboard_host} --port {a.dashboard_port} "
                          f"--table {a.table} --lang {a.lang} "
                          f"--mqtt mqtt://{accounts(a)['dashboard']}@{a.mqtt_host}:{a.mqtt_port} "
                          f"--mqtt-password-file {p.password('dashboard')} "
                          f"--data-dir {p.data / 'dashboard'}"
                          + (f" --public-url {a.public_url}" if a.public_url else "")
                          + ("" if a.backend == "sim" else " --no-virtual")),
        }
        for service in SERVICES:
            template = DEPLOY / "systemd" / f"cauldron-{service}.service"
            try:
                text = template.read_text(encoding="utf-8")
            except OSError as exc:
                raise SetupError(f"cannot read {template} ({exc.strerror}); run setup from "
                                 "the project's checkout") from None
            groups = service_groups(a, service)
            if service == "hub":  # serial port, GPIO pins, SPI bus
                groups += [g for g in HUB_GROUPS if _group_exists(g)]
            own = {"USER": service_user(a, service), "GROUPS": " ".join(groups)}
            for key, value in {**own, **values}.items():
                text = text.replace(f"@{key}@", value)
            self.put(p.unit(service), text, 0o644)

    def command_link(self) -> None:
        """`cauldron` on the PATH of the admin and of sudo (Debian's secure_path has
        /usr/local/bin): every command setup, doctor and the README print works as
        printed, not only the venv's full path."""
        link = self.paths.command_link
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() and Path(os.readlink(link)) == self.cauldron:
            self.say(f"  unchanged {link} -> {self.cauldron}")
            return
        if link.exists() and not link.is_symlink():
            raise SetupError(f"{link} exists and is not a link to this project's cauldron: "
                             "move it away and run setup again")
        tmp = link.with_name(".cauldron.tmp")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(self.cauldron)
        os.replace(tmp, link)
        self.changed.append(link)
        self.say(f"  linked   {link} -> {self.cauldron}")

    def by_hand(self) -> list[str]:
        """The commands that start the table without systemd (what the units run)."""
        p = self.paths
        main = p.mosquitto_main if p.mosquitto_main.exists() else p.mosquitto_conf
        commands = [f"mosquitto -c {main}"]
        for service in ("engine", "hub", "dashboard"):
            unit = p.unit(service).read_text(encoding="utf-8").splitlines()
            start = next(x for x in unit if x.startswith("ExecStart="))
            env = " ".join(x.removeprefix("Environment=") for x in unit
                           if x.startswith("Environment="))
            command = (f"env {env} " if env else "") + start.removeprefix("ExecStart=")
            env_file = {"dashboard": p.dashboard_env, "engine": p.engine_env}.get(service)
            if env_file is not None and env_file.exists():  # the unit's EnvironmentFile
                command = f"(set -a; . {env_file}; exec {command})"
            commands.append(command)
        return commands

    def restart(self) -> None:
        if self.scratch:
            restarts = ", ".join(f"cauldron-{s}" for s in self.touched()) or "no service"
            self.say(f"  (scratch root: nothing restarted; on a Pi this run restarts {restarts})")
            self.say("  Start the table by hand, each in a terminal of its own, in this order:")
            for command in self.by_hand():
                self.say(f"    {command}")
            return
        if shutil.which("systemctl") is None:
            raise SetupError("systemctl is missing: this is not a systemd system; start "
                             "mosquitto and the three services by hand")
        p = self.paths
        run(["systemctl", "daemon-reload"])
        done = []
        # A new listener, account or ACL needs a restart (a reload does not re-read them all).
        if {p.mosquitto_conf, p.passwd, p.acl, p.tls_cert, p.tls_key} & set(self.changed):
            run(["systemctl", "restart", "mosquitto"])
            done.append("restarted mosquitto")
        units = [f"cauldron-{s}" for s in SERVICES]
        run(["systemctl", "enable", "--quiet", *units])
        # Only a service whose own files changed restarts (a new dashboard port must not
        # stop a game: the hub and the engine go on); the others are only made to run.
        touched = [f"cauldron-{s}" for s in self.touched()]
        if touched:
            run(["systemctl", "restart", *touched])
            done.append("restarted " + ", ".join(touched))
        run(["systemctl", "start", *units])  # running ones are left alone
        rest = [u for u in units if u not in touched]
        if rest:
            done.append("left running " + ", ".join(rest))
        self.say("  " + "; ".join(done))

    def touched(self) -> list[str]:
        """The services whose own files (config, secrets, unit, keys) this run changed."""
        p, changed = self.paths, set(self.changed)
        own = {
            "hub": {p.config("hub"), p.password("hub"), p.unit("hub")},
            "engine": {p.config("engine"), p.password("engine"), p.engine_env,
                       p.unit("engine")},
            "dashboard": {p.dashboard_env, p.password("dashboard"), p.unit("dashboard")},
        }
        keys = any(path.parent == p.keys for path in changed)
        return [s for s in SERVICES if keys or own[s] & changed]

    def install(self) -> None:
        say = self.say
        say("Service users and folders")
        self.service_users()
        self.folders()
        say("Secrets (kept, or made once; each readable by its own service only)")
        passwords = {s: self.secret(self.paths.password(s), _password) for s in SERVICES}
        self.table_keys()
        passwords["pin"] = self._pin()
        say("Configs")
        self.configs(passwords)
        say("Mosquitto (accounts, ACL, listener)")
        self.mosquitto(passwords)
        say("systemd units, and `cauldron` on the PATH")
        self.units()
        self.command_link()
        say("Services")
        self.restart()

    def _pin(self) -> str:
        return (env_value(self.paths.dashboard_env, "CAULDRON_HOST_PIN")
                or f"{secrets.randbelow(10**6):06d}")


def env_value(path: Path, name: str) -> str | None:
    """``NAME=value`` of an EnvironmentFile (None when absent)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return next((x.split("=", 1)[1].strip() for x in lines if x.startswith(f"{name}=")), None)


def _password() -> str:
    return secrets.token_urlsafe(24)


def _group_exists(name: str) -> bool:
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def run(command: list[str]) -> None:
    """Run a system command (never with a secret in it); a failure names the command."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SetupError(f"`{' '.join(command)}` could not run: {exc}") from None
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise SetupError(f"`{' '.join(command)}` failed: {detail[-1] if detail else 'no output'}"
                         + ("; see `journalctl -xeu mosquitto`" if "mosquitto" in command
                            else ""))

"""Who may speak for a table: the per-table keys, and the HMACs they make.

Two keys per table, each a random 256-bit secret in a JSON file (mode 0600, in a 0700
folder; never on a command line):

- ``<table>.hub.json`` ``{"hub_id", "key"}``: made by the hub when it is first started
  (enrolled) for the table, and shared with the engine (same machine: the same keys dir;
  another machine: copy the file). The hub signs every `HubEvent` and `HubSnapshot`
  (``mac``); the engine accepts them only from that ``hub_id`` with a valid MAC, so a forged
  event, seq number or snapshot on an open broker is refused.
- ``<table>.cmd.json`` ``{"key"}``: held by whoever may command the table (the dashboard,
  which checks the host PIN and the seat secrets itself, the demo) and by the engine. Each
  ``cmd/<verb>`` request carries a ``deadline`` and ``auth`` = HMAC over the verb, the
  table and the whole request, so the low-entropy PIN never crosses the broker, a signed
  command cannot be altered or pointed at another table, and it is dead after its deadline.
  The same key signs ``hub/cmd/<verb>`` requests to the hub (another purpose in the HMAC, so a
  signed game command is no hub command): on an open broker nobody without the key may lay a
  simulated card, read what lies under the pile or a seat's pad, or restore a table. A hub
  on another machine needs a copy of this file too. `CommandGuard` admits both kinds.

The keys dir is ``$CAULDRON_KEYS_DIR``, else ``$XDG_DATA_HOME/cauldron/keys`` (or
``~/.local/share/cauldron/keys``).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from engine.wire.contract import CommandRequest, HubEvent, HubSnapshot, WireModel, check_table_id

log = logging.getLogger("cauldron.wire")

KeyKind = Literal["hub", "cmd"]
ENV: Final[str] = "CAULDRON_KEYS_DIR"
# A signed command may not claim to stay valid longer than this (seconds ahead of now).
MAX_COMMAND_WINDOW: Final[float] = 120.0


def keys_dir() -> Path:
    explicit = os.environ.get(ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cauldron" / "keys"


@dataclass(frozen=True)
class TableKey:
    table: str
    kind: KeyKind
    key: bytes
    hub_id: str | None = None


def key_path(folder: Path, table: str, kind: KeyKind) -> Path:
    return folder / f"{check_table_id(table)}.{kind}.json"


def private_dir(folder: Path, tighten: bool = False) -> Path:
    """Make `folder` (and missing parents) with mode 0700. An existing folder is left as
    it is unless `tighten` (a folder that is ours alone, never one given by a user)."""
    if folder.is_dir():
        if tighten:
            with contextlib.suppress(OSError):
                if folder.stat().st_mode & 0o077:
                    folder.chmod(0o700)
        return folder
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        folder.chmod(0o700)  # the umask may have loosened it
    return folder


def write_private(path: Path, data: bytes, replace: bool = True) -> bool:
    """Write `path` atomically with mode 0600 from its creation (no window of 0644). With
    `replace` False an existing file is kept (another process made it first): False then."""
    private_dir(path.parent, tighten=path.parent == keys_dir())
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if replace:
            os.replace(tmp, path)
            return True
        try:
            os.link(tmp, path)  # atomic, and never over a file that is there
        except FileExistsError:
            return False
        finally:
            tmp.unlink()
        return True
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def load_key(folder: Path, table: str, kind: KeyKind) -> TableKey | None:
    """The table's key of that kind, or None when there is none (or it is unreadable)."""
    path = key_path(folder, table, kind)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        key = bytes.fromhex(data["key"])
        hub_id = data.get("hub_id")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.error("key file %s is unreadable (%s); make it again", path, exc)
        return None
    if len(key) < 16 or (hub_id is not None and not isinstance(hub_id, str)):
        log.error("key file %s is not a valid key; make it again", path)
        return None
    return TableKey(table, kind, key, hub_id)


def ensure_key(folder: Path, table: str, kind: KeyKind, hub_id: str | None = None) -> TableKey:
    """The table's key, made (random, 256 bits) when there is none. For a hub key, a file
    naming another hub is replaced: this hub is enrolled in its place (the engine then asks
    the host to confirm the change)."""
    found = load_key(folder, table, kind)
    if found is not None and (kind != "hub" or found.hub_id == hub_id):
        return found
    made = TableKey(table, kind, secrets.token_bytes(32), hub_id)
    body = {"table": table, "key": made.key.hex()}
    if hub_id is not None:
        body["hub_id"] = hub_id
    # A new key never replaces one that another process (an engine, a dashboard starting at
    # the same moment) has just made: both then use that one.
    write_private(key_path(folder, table, kind), json.dumps(body).encode(),
                  replace=found is not None)
    if found is not None:
        log.warning("table %s: hub %s enrolled in place of %s", table, hub_id, found.hub_id)
    return load_key(folder, table, kind) or made


# ---------------------------------------------------------------- MACs


# The signed form: sorted keys, compact, ASCII (`json.dumps` with these settings; made once,
# not for every message).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


# Models whose fields all hold JSON data as it is (str, int, float, bool, None; a command's
# args: JSON values): their signed form is made from their fields, without pydantic's dump
# (a third of a hub event's MAC check). A test checks both ways agree.
_PLAIN: Final = frozenset({HubEvent, CommandRequest})


def _canonical(model: WireModel, without: str) -> bytes:
    # A field added later (`WireModel.LATER`) counts only when set: older messages verify.
    unset = {name for name in model.LATER if getattr(model, name) is None}
    if type(model) in _PLAIN:
        data = {k: v for k, v in model.__dict__.items() if k != without and k not in unset}
    else:
        data = model.model_dump(mode="json", exclude={without, *unset})
    return _CANONICAL.encode(data).encode()


def _mac(key: bytes, purpose: str, table: str, body: bytes) -> str:
    message = purpose.encode() + b"\n" + table.encode() + b"\n" + body
    return hmac.digest(key, message, hashlib.sha256).hex()  # one-shot, in C


def _hub_purpose(model: HubEvent | HubSnapshot) -> str:
    return "hub/event" if isinstance(model, HubEvent) else "hub/snapshot"


def sign_hub(model: HubEvent | HubSnapshot, table: str, key: bytes) -> HubEvent | HubSnapshot:
    """`model` with its ``mac`` set."""
    mac = _mac(key, _hub_purpose(model), table, _canonical(model, "mac"))
    return model.model_copy(update={"mac": mac})


def hub_mac_ok(model: HubEvent | HubSnapshot, table: str, key: bytes) -> bool:
    if model.mac is None:
        return False
    want = _mac(key, _hub_purpose(model), table, _canonical(model, "mac"))
    return hmac.compare_digest(want, model.mac)


def _command_purpose(verb: str, hub: bool) -> str:
    return f"hub/cmd/{verb}" if hub else f"cmd/{verb}"


def sign_command(request: CommandRequest, table: str, verb: str, key: bytes, *,
                 hub: bool = False) -> CommandRequest:
    """`request` with its ``auth`` set (give it a ``deadline`` first: it is signed too);
    `hub`: a ``hub/cmd/<verb>`` request, else ``cmd/<verb>``."""
    auth = _mac(key, _command_purpose(verb, hub), table, _canonical(request, "auth"))
    return request.model_copy(update={"auth": auth})


def command_mac_ok(request: CommandRequest, table: str, verb: str, key: bytes, *,
                   hub: bool = False) -> bool:
    if request.auth is None:
        return False
    want = _mac(key, _command_purpose(verb, hub), table, _canonical(request, "auth"))
    return hmac.compare_digest(want, request.auth)


class Unauthorised(Exception):
    """A command refused before it ran; ``code`` is the stable id of the refusal:
    ``no_deadline``, ``expired``, ``bad_deadline``, ``unauthorised`` (unsigned, forged,
    altered, signed for another verb or table), ``replayed``."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class CommandGuard:
    """Admits the signed commands of one receiver (the engine: ``cmd/*``; a hub:
    ``hub/cmd/*``): a deadline neither past nor over `MAX_COMMAND_WINDOW` ahead, a valid
    HMAC of the table's command key, and a transaction not seen before (remembered until
    its deadline, after which it is refused as expired anyway)."""

    def __init__(self, *, hub: bool = False, hint: str = "",
                 ledger: Callable[[str, float, float], bool] | None = None) -> None:
        self.hub = hub
        self.hint = hint  # what to do about an unsigned command, for its refusal
        self._seen: dict[tuple[str, str], float] = {}
        # ``ledger(key, deadline, now)``: notes a transaction where it outlives a restart,
        # False when it was noted before (the hub's outbox database).
        self.ledger = ledger

    def admit(self, request: CommandRequest, table: str, verb: str,
              key: Callable[[bool], TableKey | None], now: float) -> None:
        """Raise `Unauthorised` unless `request` may run. ``key(reload)`` gives the table's
        command key (reload: read the file again, the key may have been replaced)."""
        what = f"hub {verb}" if self.hub else verb
        if request.deadline is None:
            raise Unauthorised(f"{what}: the command has no deadline; nothing was done",
                               "no_deadline")
        if request.deadline < now:
            who = "hub" if self.hub else "engine"
            raise Unauthorised(f"{what}: the command expired {now - request.deadline:.1f} s "
                               f"ago (the {who} was busy or away); nothing was done: send it "
                               "again if it is still wanted", "expired")
        if request.deadline > now + MAX_COMMAND_WINDOW:
            raise Unauthorised(f"{what}: the deadline is more than {MAX_COMMAND_WINDOW:g} s "
                               "ahead (check the clocks); nothing was done", "bad_deadline")
        found = key(False)
        if found is None or not command_mac_ok(request, table, verb, found.key, hub=self.hub):
            found = key(True)
        if found is None or not command_mac_ok(request, table, verb, found.key, hub=self.hub):
            why = "" if found is not None else " (there is no command key for it here)"
            raise Unauthorised(f"{what}: not signed with table {table}'s command key{why}; "
                               f"nothing was done{self.hint}", "unauthorised")
        seen = (table, request.transaction)
        if seen in self._seen or (self.ledger is not None and not self.ledger(
                f"{table}/{request.transaction}", request.deadline, now)):
            raise Unauthorised(f"{what}: transaction {request.transaction} was already "
                               "received; nothing was done again", "replayed")
        for old in [k for k, d in self._seen.items() if d < now]:
            del self._seen[old]
        self._seen[seen] = request.deadline


class KeyFile:
    """One table's key of one kind, read from the keys dir and read again only when its
    file changed (a forged command must not cost a parse)."""

    def __init__(self, folder: Path, table: str, kind: KeyKind) -> None:
        self.path = key_path(folder, table, kind)
        self.folder, self.table, self.kind = folder, table, kind
        self._stamp: int | None = None
        self._key: TableKey | None = None

    def get(self, reload: bool = False) -> TableKey | None:
        if self._stamp is not None and not reload:
            return self._key
        try:
            stamp = self.path.stat().st_mtime_ns
        except OSError:
            stamp = -1
        if stamp != self._stamp:
            self._key = load_key(self.folder, self.table, self.kind)
            self._stamp = stamp
        return self._key


# ---------------------------------------------------------------- secrets of the services


def secret_setting(env: str, credential: str) -> str | None:
    """A secret setting (a PIN, a broker URL with its password) from a systemd credential
    (``LoadCredential=<credential>:…``, read from ``$CREDENTIALS_DIRECTORY``) or else the
    environment (``EnvironmentFile=``): never from a command line, where every local user
    reads it (``ps``, ``/proc/<pid>/cmdline``)."""
    folder = os.environ.get("CREDENTIALS_DIRECTORY")
    if folder:
        try:
            value = (Path(folder) / credential).read_text(encoding="utf-8").strip()
        except OSError:
            value = ""
        if value:
            return value
    return os.environ.get(env) or None


def on_command_line_warning(what: str, env: str) -> str:
    return (f"warning: {what} on the command line can be read by every user of this machine "
            f"(ps); put it in ${env} (an EnvironmentFile) or a systemd credential instead")

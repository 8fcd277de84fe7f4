"""Dashboard settings: one plain pydantic model, filled by the CLI or by tests."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import secrets
import socket
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine import games
from engine.wire.contract import TABLE_ID_PATTERN

Lang = Literal["fr", "en", "de"]
LANGS: tuple[Lang, ...] = ("fr", "en", "de")


def random_pin() -> str:
    """A 6-digit host PIN for when none is configured (printed at start-up)."""
    return f"{secrets.randbelow(10**6):06d}"


PIN_FILE = "host-pin"
ANY_ADDRESS = ("0.0.0.0", "::", "")


def persistent_pin(data_dir: Path) -> str:
    """The host PIN kept in `data_dir` (made once, mode 0600), so a restart does not log the
    host out. A PIN given on the command line is used instead and not stored."""
    path = data_dir / PIN_FILE
    with contextlib.suppress(OSError, UnicodeDecodeError):
        pin = path.read_text(encoding="utf-8").strip()
        if re.fullmatch(r"[A-Za-z0-9]{6,32}", pin):
            return pin
    pin = random_pin()
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(pin + "\n")
    return pin


def lan_address() -> str | None:
    """This machine's address on the local network (the one a phone can reach), or None.
    A UDP socket "connected" to a private address picks the outgoing interface; nothing is
    sent."""
    for probe in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                address = str(sock.getsockname()[0])
        except OSError:
            continue
        if address and not address.startswith("127.") and address != "0.0.0.0":
            return address
    return None


def phones_reach(base: str) -> bool:
    """Whether a phone can open `base`: a loopback address (127.x, ::1, localhost) would
    open the phone itself."""
    host = (urlsplit(base).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # a name: the network's DNS says where it is


class Settings(BaseModel):
    """Where the dashboard listens, which broker and table it follows, and its host PIN."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    mqtt: str = "mqtt://127.0.0.1:1883"
    base_topic: str = "cauldron"
    table: str = Field(default="t1", pattern=TABLE_ID_PATTERN)
    # The game the pages serve until the table's view names the one it plays (engine.games).
    game: str = Field(default_factory=lambda: games.DEFAULT_GAME)
    # At least 6 characters (a million guesses; dashboard.guard makes each one slow).
    pin: str = Field(default_factory=random_pin, min_length=6, max_length=32)
    # Seat secrets, the host PIN, the count (None: kept in memory only, lost on restart); the
    # virtual table's cards are the simulated hub's, saved in the hub's data dir.
    data_dir: Path | None = None
    default_lang: Lang = "fr"
    virtual: bool = True  # offer the virtual table (works only with the simulated hub)
    # How long a command to the engine or the hub waits for its answer (seconds).
    command_timeout: float = Field(default=5.0, gt=0, le=60)
    # The table's address for phones (QR codes, seat links), e.g. http://192.168.1.20:8000/.
    # None: the LAN address when listening on every interface, else the browser's address.
    public_url: str | None = Field(default=None, pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$")
    # Dotted host names the dashboard answers to besides public_url's (dashboard.guard:
    # an IP address or a name without a dot always works).
    allowed_hosts: tuple[str, ...] = ()
    # HTTPS: the certificate chain and its private key (PEM); both or neither.
    tls_cert: Path | None = None
    tls_key: Path | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"

    def public_base(self) -> str | None:
        """Where phones open this dashboard, or None when only this machine can."""
        if self.public_url:
            return self.public_url.rstrip("/") + "/"
        if self.host in ANY_ADDRESS:
            lan = lan_address()
            return f"{self.scheme}://{lan}:{self.port}/" if lan else None
        if self.host.startswith("127.") or self.host in ("localhost", "::1"):
            return None
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}/"

    @field_validator("game")
    @classmethod
    def _known_game(cls, value: str) -> str:
        if value not in games.game_ids():
            raise ValueError(str(games.UnknownGame(value, games.game_ids())))
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\.?", name):
                raise ValueError(f"{name[:64]!r} is not a host name")
        return value

    @field_validator("pin")
    @classmethod
    def _pin_chars(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9]+", value):
            raise ValueError("the host PIN is 6-32 letters or digits")
        return value

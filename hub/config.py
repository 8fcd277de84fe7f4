"""Hub configuration: a TOML (or JSON) file, overridden by command-line options.

Example ``hub.toml``::

    table = "table-1"                 # MQTT base topic cauldron/<table>/
    game = "glastonbury"              # the game this table's hub serves (engine.games)
    mqtt = "mqtt://127.0.0.1:1883"    # mqtt://ACCOUNT@host:1883; mqtts://...:8883 for TLS
    # mqtt_password_file = "/etc/cauldron/secrets/hub.password"  # the account's password
    # mqtt_ca = "/etc/cauldron/ca.pem" # CA of the broker's certificate (mqtts only)
    backend = "serial"                # sim | serial | spi | pcsc
    data_dir = "/var/lib/cauldron"    # outbox-<table>.sqlite, tagmap.json (and the sim table)
    # keys_dir = "/var/lib/cauldron/keys"  # the table's keys (default: $CAULDRON_KEYS_DIR)
    pads = 4                          # scan pads (seats) fitted
    perimeter = false                 # pawn sensors (Hall switches) on the 20 positions

    [serial]
    port = "/dev/ttyACM0"
    baudrate = 115200
    # reset_pin = 26                  # BCM pin wired to the Pico's RUN: resets a hung board

    [spi]                             # readers on the Pi's own SPI bus
    bus = 0
    device = 0
    speed_hz = 1000000                # 1 MHz through the bank buffers (hardware/wiring.md)
    address_pins = [5, 6, 13, 19]     # BCM pins to the 74HC154s' A0..A3
    bank_pins = [26, 21, 20]          # one /E1 per 16 readers
    strobe_pin = 7                    # all /E2 tied together (CE1; dtoverlay=spi0-1cs)

    [pcsc]                            # backend = "pcsc": USB NFC readers as scan pads
    readers = ["ACR122U"]             # name fragment per pad (default: in the order found)

    [io]                              # gpiozero pins (BCM); omit a key to go without
    turn_leds = [17, 27, 22, 23]
    buzzer = 24
    seat_buttons = [4, 12, 16, 18]
    host_button = 25

    [sim]
    seed = 1
    drop_rate = 0.0
    misread_rate = 0.0
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from engine.datadir import data_dir
from engine.games import DEFAULT_GAME
from engine.wire.contract import TopicError, check_table_id
from hub.errors import ConfigError

BACKENDS = ("sim", "serial", "spi", "pcsc")
# The Raspberry Pi's pins (BCM), one map: the example above, hardware/wiring.md's "Pi
# variant" table and the hub's I/O (tests/hardware/test_pin_map.py compares them). The
# SPI0 lines themselves (SCLK 11, MOSI 10, MISO 9, CE0 8) are no one else's.
PI_SPI_BUS_PINS = {"SCLK": 11, "MOSI": 10, "MISO": 9, "CE0": 8}
PI_SPI_PINS: dict[str, Any] = {"address_pins": [5, 6, 13, 19], "bank_pins": [26, 21, 20],
                               "strobe_pin": 7}
PI_IO_PINS: dict[str, Any] = {"turn_leds": [17, 27, 22, 23], "buzzer": 24,
                              "seat_buttons": [4, 12, 16, 18], "host_button": 25}


def pin_uses(spi: dict[str, Any], io: dict[str, Any]) -> dict[int, list[str]]:
    """BCM pin -> what uses it: the SPI bus, the [spi] chip-select pins, the [io] pins."""
    uses: dict[int, list[str]] = {}
    for name, pin in PI_SPI_BUS_PINS.items():
        uses.setdefault(pin, []).append(f"SPI0 {name}")
    for section, values in (("spi", spi), ("io", io)):
        for key in (*PI_SPI_PINS, *PI_IO_PINS):
            value = values.get(key)
            pins = value if isinstance(value, list) else [value]
            for index, pin in enumerate(pins):
                if isinstance(pin, int) and not isinstance(pin, bool):
                    where = f"[{section}] {key}" + (f"[{index}]" if isinstance(value, list) else "")
                    uses.setdefault(pin, []).append(where)
    return uses


@dataclass
class HubConfig:
    table: str = "table-1"
    game: str = DEFAULT_GAME  # the game served: its catalogue lays out, enrols and names
    mqtt: str = "mqtt://127.0.0.1:1883"
    mqtt_ca: str | None = None  # CA bundle for mqtts:// (default: the system's)
    mqtt_password_file: Path | None = None  # the account's password (0600), not in the URL
    backend: str = "sim"
    hub_id: str | None = None
    data_dir: Path = field(default_factory=data_dir)
    tagmap: Path | None = None
    # The table's keys (engine.wire.auth); None: $CAULDRON_KEYS_DIR or the user's own. In
    # the config so `cauldron enroll`/`readers` by hand find the same keys as the service.
    keys_dir: Path | None = None
    pads: int = 4
    perimeter: bool = False
    poll_interval: float = 0.005  # pause between sweeps (a real SPI sweep takes its own time)
    snapshot_interval: float = 0.5
    serial: dict[str, Any] = field(default_factory=dict)
    spi: dict[str, Any] = field(default_factory=dict)
    pcsc: dict[str, Any] = field(default_factory=dict)
    io: dict[str, Any] = field(default_factory=dict)
    sim: dict[str, Any] = field(default_factory=dict)

    @property
    def hub_name(self) -> str:
        return self.hub_id or f"hub-{self.table}"

    @property
    def broker_url(self) -> str:
        """``mqtt`` with the password from ``mqtt_password_file`` (raises `ConfigError`)."""
        from engine.wire.mqtt import MqttError, with_password_file

        try:
            return with_password_file(self.mqtt, self.mqtt_password_file)
        except MqttError as exc:
            raise ConfigError(str(exc)) from None

    @property
    def outbox_path(self) -> Path:
        return self.data_dir / f"outbox-{self.table}.sqlite"

    @property
    def sim_state_path(self) -> Path:
        """Where the simulated table keeps what lies on it (``backend = "sim"``)."""
        return self.data_dir / f"sim-{self.table}.json"

    @property
    def tagmap_path(self) -> Path:
        return self.tagmap or self.data_dir / "tagmap.json"

    def check(self) -> HubConfig:
        kinds: dict[str, tuple[type, ...]] = {
            "table": (str,), "game": (str,), "mqtt": (str,), "backend": (str,), "pads": (int,),
            "perimeter": (bool,), "poll_interval": (int, float),
            "snapshot_interval": (int, float), "serial": (dict,), "spi": (dict,),
            "pcsc": (dict,),
            "io": (dict,), "sim": (dict,), "mqtt_ca": (str, type(None)),
            "hub_id": (str, type(None)), "data_dir": (Path,), "tagmap": (Path, type(None)),
            "keys_dir": (Path, type(None)), "mqtt_password_file": (Path, type(None)),
        }
        for name, types in kinds.items():
            value = getattr(self, name)
            if not isinstance(value, types) or (types == (int,) and isinstance(value, bool)):
                raise ConfigError(f"{name} = {value!r} is not a {types[0].__name__}")
        try:
            check_table_id(self.table)
        except TopicError as exc:
            raise ConfigError(str(exc)) from None
        from hub.game import check_game

        check_game(self.game)
        if self.backend not in BACKENDS:
            raise ConfigError(f"backend {self.backend!r} is not one of {', '.join(BACKENDS)}")
        if not 0 <= self.pads <= 4:
            raise ConfigError(f"pads must be 0..4, got {self.pads}")
        for name in ("poll_interval", "snapshot_interval"):
            if not 0 <= getattr(self, name) < math.inf:  # NaN fails this too
                raise ConfigError(f"{name} must be a number of seconds >= 0")
        if self.backend == "spi":  # the readers on the Pi's own pins, beside its I/O
            for pin, uses in sorted(pin_uses(self.spi, self.io).items()):
                if len(uses) > 1:
                    raise ConfigError(f"BCM pin {pin} is used twice: {' and '.join(uses)} "
                                      "(hardware/wiring.md, Pi variant, gives a free map)")
        return self

    @classmethod
    def load(cls, path: Path | None, **overrides: Any) -> HubConfig:
        data: dict[str, Any] = {}
        if path is not None:
            try:
                text = path.read_text(encoding="utf-8")
                data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
            except OSError as exc:
                raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
            except (ValueError, RecursionError) as exc:  # TOMLDecodeError is a ValueError
                raise ConfigError(f"config {path} is not valid TOML/JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"config {path}: the top level must be a table of settings "
                              f"(key = value), not {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            names = ", ".join(sorted(known))
            shown = ", ".join(k if k.isidentifier() else repr(k) for k in unknown)
            raise ConfigError(f"config {path}: unknown key(s) {shown}; known: {names}")
        data.update({k: v for k, v in overrides.items() if v is not None})
        for key in ("data_dir", "tagmap", "keys_dir", "mqtt_password_file"):
            if data.get(key) is not None:
                if not isinstance(data[key], str | Path):
                    raise ConfigError(f"{key} = {data[key]!r} is not a str (a path)")
                try:
                    data[key] = Path(data[key]).expanduser()
                except RuntimeError as exc:  # ~user of no such user
                    raise ConfigError(f"{key} = {data[key]!r}: {exc}") from None
        try:
            config = cls(**data)
        except TypeError as exc:
            raise ConfigError(f"config {path}: {exc}") from None
        return config.check()

"""Fuzz: hub config files (TOML and JSON) and the sections the back-ends and the table I/O
read from them. Every file either loads into a config whose settings have the documented
types and ranges, or is refused with a `ConfigError` (one clear line through `cauldron
hub`), never another exception."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin
from hypothesis import given
from hypothesis import strategies as st

from hub.backends import make_backend
from hub.config import HubConfig
from hub.errors import ConfigError, HubError
from hub.io import TableIO

KEYS = ["table", "mqtt", "mqtt_ca", "backend", "hub_id", "data_dir", "tagmap", "pads",
        "perimeter", "poll_interval", "snapshot_interval", "serial", "spi", "io", "sim"]

scalars = (st.none() | st.booleans() | st.integers(-10, 10) | st.integers()
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
           | st.sampled_from(["sim", "serial", "spi", "t-1", "/tmp/x", "~", "~nosuchuser-zz/x",
                             "mqtt://127.0.0.1:1"]))
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=3)
                      | st.dictionaries(st.text(max_size=8), kids, max_size=3), max_leaves=6)
key_names = st.sampled_from(KEYS) | st.text(max_size=10)
documents = st.dictionaries(key_names, values, max_size=6)


def toml_value(value: Any) -> str:
    """A TOML rendering (inline tables); None has none: rendered as an invalid token."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string (bar surrogates)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_document(data: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in data.items())


def check_loaded(config: HubConfig) -> None:
    """A config that loads is one the hub can use as is."""
    assert isinstance(config.table, str) and isinstance(config.mqtt, str)
    assert config.backend in ("sim", "serial", "spi")
    assert config.hub_id is None or isinstance(config.hub_id, str)
    assert isinstance(config.hub_name, str)
    assert isinstance(config.data_dir, Path)
    assert config.tagmap is None or isinstance(config.tagmap, Path)
    assert isinstance(config.outbox_path, Path) and isinstance(config.tagmap_path, Path)
    assert isinstance(config.pads, int) and not isinstance(config.pads, bool)
    assert 0 <= config.pads <= 4 and isinstance(config.perimeter, bool)
    for interval in (config.poll_interval, config.snapshot_interval):
        assert isinstance(interval, int | float) and math.isfinite(interval) and interval >= 0
    for section in (config.serial, config.spi, config.io, config.sim):
        assert isinstance(section, dict)


def load(path: Path) -> HubConfig | None:
    try:
        config = HubConfig.load(path)
    except ConfigError as exc:
        assert str(exc) and "\n" not in str(exc).strip()
        return None
    check_loaded(config)
    return config


@given(data=documents)
def test_fuzz_json_config(tmp_path: Path, data: dict[str, Any]) -> None:
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    load(path)


@given(data=documents)
def test_fuzz_toml_config(tmp_path: Path, data: dict[str, Any]) -> None:
    path = tmp_path / "hub.toml"
    path.write_text(toml_document(data), encoding="utf-8", errors="surrogatepass")
    load(path)


@given(top=values)
def test_fuzz_json_config_of_any_shape(tmp_path: Path, top: Any) -> None:
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(top), encoding="utf-8")
    load(path)


@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode),
       suffix=st.sampled_from([".toml", ".json"]))
def test_fuzz_config_bytes(tmp_path: Path, raw: bytes, suffix: str) -> None:
    path = tmp_path / f"hub{suffix}"
    path.write_bytes(raw)
    load(path)


@given(backend=st.sampled_from(["sim", "serial"]),
       section=st.dictionaries(st.sampled_from(["seed", "drop_rate", "misread_rate", "port",
                                                "baudrate", "reconnect_delay"])
                               | st.text(max_size=6), values, max_size=4))
def test_fuzz_backend_sections(tmp_path: Path, backend: str, section: dict[str, Any]) -> None:
    """The [sim] and [serial] sections build a back-end or give a ConfigError (the link
    itself is not opened here)."""
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"backend": backend, backend: section}), encoding="utf-8")
    config = load(path)
    assert config is not None
    try:
        built = make_backend(config, sim_state=False)  # (not the default data dir's table)
    except ConfigError as exc:
        assert str(exc)
        return
    if backend == "sim":
        assert 0.0 <= built.drop_rate <= 1.0 and 0.0 <= built.misread_rate <= 1.0  # type: ignore[attr-defined]


@pytest.mark.parametrize(("suffix", "text"), [
    (".json", "[" * 100_000 + "]" * 100_000),
    (".toml", "a = " + "[" * 100_000 + "]" * 100_000),
    (".toml", "a = " + "{b = " * 50_000 + "1" + "}" * 50_000),
    (".toml", 'data_dir = "~nosuchuser-zz/x"'),
    (".json", '{"tagmap": "~nosuchuser-zz/t.json"}'),
])
def test_nested_or_unusable_config_is_refused(tmp_path: Path, suffix: str, text: str) -> None:
    path = tmp_path / f"hub{suffix}"
    path.write_text(text, encoding="utf-8")
    assert load(path) is None


@pytest.fixture
def mock_pins() -> Iterator[None]:
    previous = Device.pin_factory
    Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    try:
        yield
    finally:
        Device.pin_factory = previous


@given(section=st.dictionaries(st.sampled_from(["turn_leds", "buzzer", "seat_buttons",
                                                "host_button", "bounce_time"])
                               | st.text(max_size=6), values, max_size=4))
def test_fuzz_io_section(mock_pins: None, section: dict[str, Any]) -> None:
    """[io] pins: table I/O or a ConfigError naming the section."""
    io = None
    try:
        io = TableIO.from_config(section)
    except HubError as exc:
        assert isinstance(exc, ConfigError) and str(exc)
    finally:
        if io is not None:
            io.close()
        Device.pin_factory.reset()  # free the pins for the next example

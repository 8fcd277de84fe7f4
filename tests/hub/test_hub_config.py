"""Hub configuration files and their errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.config import HubConfig
from hub.errors import ConfigError


def test_toml_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "hub.toml"
    path.write_text(
        'table = "salle-2"\nmqtt = "mqtt://127.0.0.1:1884"\nbackend = "serial"\n'
        f'data_dir = "{tmp_path}"\npads = 3\n[serial]\nport = "/dev/ttyACM0"\n'
        "[io]\nturn_leds = [17, 27, 22]\n"
    )
    config = HubConfig.load(path, table="salle-3", backend=None)
    assert (config.table, config.backend, config.pads) == ("salle-3", "serial", 3)
    assert config.serial == {"port": "/dev/ttyACM0"} and config.io["turn_leds"] == [17, 27, 22]
    assert config.outbox_path == tmp_path / "outbox-salle-3.sqlite"
    assert config.tagmap_path == tmp_path / "tagmap.json"
    assert config.hub_name == "hub-salle-3"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('backend = "usb"', "backend 'usb'"),
        ("pads = 6", "pads must be 0..4"),
        ('table = "a b"', "table id"),
        ("table = ", "not valid TOML"),
        ('pads = "three"', "pads = 'three' is not a int"),
        ("colour = 1", r"unknown key\(s\) colour"),
    ],
)
def test_bad_configs_name_the_problem(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "hub.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=reason):
        HubConfig.load(path)

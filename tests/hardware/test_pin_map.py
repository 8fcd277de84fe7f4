"""The Raspberry Pi's pin map has one source (hub.config.PI_SPI_PINS / PI_IO_PINS): the
config example a maker copies and hardware/wiring.md's Pi variant table say the same, no
BCM pin does two jobs, and a config that gives one pin two jobs is refused by name."""

import re
import tomllib
from pathlib import Path

import pytest

import hub.config
from hub.config import PI_IO_PINS, PI_SPI_PINS, HubConfig, pin_uses
from hub.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def example() -> dict[str, object]:
    """The ``hub.toml`` example of hub/config.py's docstring, parsed."""
    doc = hub.config.__doc__ or ""
    block = doc.split("Example ``hub.toml``::", 1)[1]
    lines = [line[4:] for line in block.splitlines() if line.startswith("    ")]
    return tomllib.loads("\n".join(lines))


def test_the_config_example_is_the_pin_map() -> None:
    data = example()
    spi, io = data["spi"], data["io"]
    assert isinstance(spi, dict) and isinstance(io, dict)
    assert {key: spi[key] for key in PI_SPI_PINS} == PI_SPI_PINS
    assert io == PI_IO_PINS


def test_wiring_md_pi_variant_is_the_pin_map() -> None:
    text = (ROOT / "hardware" / "wiring.md").read_text()
    variant = text.split("## Pi variant", 1)[1]
    for key, value in PI_SPI_PINS.items():
        assert f"`{key} = {value}`" in variant, key
    # The hub's other outputs, as the table's closing paragraph lists them.
    listed = [int(n) for n in re.findall(r"\d+", variant.split("The hub's other outputs", 1)[1]
                                          .split("Enable SPI", 1)[0])]
    pins = [p for v in PI_IO_PINS.values() for p in (v if isinstance(v, list) else [v])]
    assert sorted(listed) == sorted(pins)


def test_no_pin_does_two_jobs() -> None:
    uses = pin_uses(PI_SPI_PINS, PI_IO_PINS)
    assert all(len(jobs) == 1 for jobs in uses.values()), uses


@pytest.mark.parametrize(("spi", "named"), [
    ({**PI_SPI_PINS, "strobe_pin": 16}, "[spi] strobe_pin and [io] seat_buttons[2]"),
    ({**PI_SPI_PINS, "address_pins": [5, 6, 13, 11]}, "SPI0 SCLK and [spi] address_pins[3]"),
])
def test_a_pin_given_two_jobs_is_refused_by_name(spi: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        HubConfig(backend="spi", spi=spi, io=dict(PI_IO_PINS)).check()


def test_the_default_map_is_accepted() -> None:
    config = HubConfig(backend="spi", spi=dict(PI_SPI_PINS), io=dict(PI_IO_PINS)).check()
    assert config.spi["strobe_pin"] == 7

"""The SPI back-end: lazy imports, a clear error off the Pi, and the whole path from the
register-level MFRC522 simulator through the firmware scan loop to hub changes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory

from firmware.mfrc522_sim import SimTable
from firmware.scan import FIELD_LEAD
from hub.backends.base import Change
from hub.backends.spi import Rig, SpiBackend, gpio_pins, pi_rig
from hub.config import HubConfig
from hub.errors import BackendError, ConfigError
from hub.layout import Layout

UID = "04A1B2C3D4E5F6"


def test_importing_the_spi_backend_loads_no_hardware_library() -> None:
    code = ("import sys, hub.backends.spi, hub.backends, hub.cli, hub.service; "
            "bad = [m for m in ('spidev', 'mfrc522', 'RPi') if m in sys.modules]; "
            "sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_off_the_pi_the_error_says_what_to_do() -> None:
    # Debian's packages, no compiler (issue 19): never a pip build of spidev or RPi.GPIO.
    with pytest.raises(BackendError, match=r"apt install python3-spidev python3-lgpio"):
        pi_rig({"address_pins": [1, 2, 3, 4], "bank_pins": [5], "strobe_pin": 6})
    backend = SpiBackend.from_config(Layout(), {"address_pins": [1, 2, 3, 4],
                                                "bank_pins": [5, 7, 8], "strobe_pin": 6})
    with pytest.raises(BackendError, match="raspi-config"):
        backend.open()
    with pytest.raises(ConfigError, match="strobe_pin"):
        SpiBackend.from_config(Layout(), {"address_pins": [1, 2, 3, 4], "bank_pins": [5]})


def test_make_backend_chooses_by_name(tmp_path: Path) -> None:
    from hub.backends import make_backend

    with pytest.raises(ConfigError, match="serial"):
        make_backend(HubConfig(backend="serial"))
    assert make_backend(HubConfig(backend="sim", data_dir=tmp_path)).name == "sim"


def simulated_rig(table: SimTable) -> Rig:
    demux = table.demux
    return Rig(table.spi, demux.address, demux.bank_enable, demux.strobe, table.clock)


def test_register_level_simulator_to_hub_changes() -> None:
    table = SimTable(36)
    table.neighbours = {frozenset(pair) for pair in Layout().neighbour_pairs()}
    backend = SpiBackend(Layout(), lambda: simulated_rig(table))
    table.place(5, UID)
    backend.open()
    changes: list[Change] = []
    for _ in range(5):
        changes += backend.poll().changes
    assert changes == [Change("placed", 5, UID)]
    table.remove(5)
    table.place(33, UID)
    for _ in range(5):
        changes += backend.poll().changes
    assert changes[1:] == [Change("removed", 5, UID), Change("placed", 33, UID)]
    # Wake-ups overlap, but never two neighbouring antennas on together.
    assert table.max_fields_on == FIELD_LEAD + 1 and table.crosstalk == 0
    backend.write_tag(33, "blue-a-4")
    from firmware.mfrc522 import parse_card_id

    tag = table.chips[33].tags[0]
    assert parse_card_id(bytes(tag.pages[16:64])) == "blue-a-4"
    backend.close()


def test_demux_pins_through_gpiozero() -> None:
    previous = Device.pin_factory
    Device.pin_factory = MockFactory()
    try:
        pins = gpio_pins([5, 6])
        pins[0].value(0)
        assert Device.pin_factory.pin(5).state == 0 and Device.pin_factory.pin(6).state == 1
        for pin in pins:
            pin.device.close()
    finally:
        Device.pin_factory.reset()
        Device.pin_factory = previous


def test_spi_backend_seeded_after_a_restart_reports_only_what_changed() -> None:
    """The spi back-end is a serial one (the scan loop in-process): its boot FULL report is
    compared with the seeded state."""
    table = SimTable(36)
    table.place(5, UID)
    other = "04FFEEDDCCBBAA"
    backend = SpiBackend(Layout(), lambda: simulated_rig(table))
    backend.seed_state({5: UID, 33: other})  # what the hub reported before it went down
    backend.open()
    changes: list[Change] = []
    for _ in range(5):
        changes += backend.poll().changes
    assert changes == [Change("removed", 33, other)]
    backend.close()

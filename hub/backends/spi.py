"""MFRC522 readers wired straight to the Pi's SPI bus.

The Pi runs the very scan loop the Pico firmware runs (`firmware.scan.Scanner` with the
`firmware.mfrc522` register driver: WUPA/HLTA presence polling, cascade levels 1 and 2 for
7-byte NTAG UIDs, one antenna on at a time, card-id writes), in-process: its protocol lines
are read exactly like the serial link's, so the Pi and the Pico share one piece of logic.

Hardware access is imported lazily, only when the back-end opens:

- ``spidev`` (the ``pi`` extra) for the bus; the chip select comes from a 74HC154
  demultiplexer (``address_pins`` A0..A3, one ``bank_pins`` /E1 per 16 readers, the shared
  ``strobe_pin`` /E2), driven by gpiozero ``DigitalOutputDevice``s;
- off a Pi (no ``spidev``) it raises a `BackendError` saying what to install.

Note: the PyPI ``mfrc522`` package only reads cascade level 1 (4-byte UIDs), which cannot
tell NTAG21x tags apart (7-byte UIDs), so its driver is not used for scanning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from hub.backends.base import PollResult
from hub.backends.serial import SerialBackend
from hub.errors import BackendError, ConfigError
from hub.layout import Layout

PI_HINT = (
    "the spi back-end runs on a Raspberry Pi with SPI enabled: there run "
    "`sudo apt install python3-spidev python3-lgpio` (the project's venv made with "
    "--system-site-packages sees them) and enable SPI (sudo raspi-config -> Interface "
    "Options -> SPI); elsewhere use --backend sim, or serial with a Pico"
)


@dataclass
class Rig:
    """What the scan loop needs: a ``machine.SPI``-like bus, demux pins with ``value()``,
    and a clock with ``ticks_us()``/``sleep_us()``."""

    spi: Any
    address_pins: list[Any]
    bank_pins: list[Any]
    strobe_pin: Any
    clock: Any
    close: Callable[[], None] = lambda: None


class _InProcessLink:
    """A serial-port look-alike between the hub and an in-process `Scanner`."""

    def __init__(self, scanner: Any) -> None:
        self.scanner = scanner
        self._out = bytearray()
        scanner.write_line = self._emit

    def _emit(self, line: str) -> None:
        self._out += line.encode("ascii")

    def write(self, data: bytes) -> int:
        for line in data.decode("ascii").splitlines():
            self.scanner.handle_line(line)
        return len(data)

    @property
    def in_waiting(self) -> int:
        return len(self._out)

    def read(self, size: int = 1) -> bytes:
        chunk = bytes(self._out[:size])
        del self._out[:size]
        return chunk

    def close(self) -> None:
        pass


class SpiBackend(SerialBackend):
    name: ClassVar[str] = "spi"
    capabilities = frozenset({"write_tag"})

    def __init__(self, layout: Layout, rig_factory: Callable[[], Rig]) -> None:
        self._rig_factory = rig_factory
        self._rig: Rig | None = None
        self.scanner: Any = None
        super().__init__(layout, self._open_link, port_name="SPI readers", reconnect_delay=5.0)

    @classmethod
    def from_config(cls, layout: Layout, config: dict[str, Any]) -> SpiBackend:
        for key in ("address_pins", "bank_pins", "strobe_pin"):
            if key not in config:
                raise ConfigError(
                    f"[spi] needs {key} (BCM pins of the 74HC154 chip-select demultiplexer: "
                    "address_pins = [A0, A1, A2, A3], bank_pins = [/E1 per 16 readers], "
                    "strobe_pin = /E2)"
                )
        return cls(layout, lambda: pi_rig(config))

    def _open_link(self) -> _InProcessLink:
        from firmware.mfrc522 import MFRC522
        from firmware.scan import Demux, Scanner

        rig = self._rig_factory()
        self._rig = rig
        demux = Demux(rig.address_pins, rig.bank_pins, rig.strobe_pin)
        readers = [MFRC522(rig.spi, demux.cs, rig.clock) for _ in range(self.n_readers)]
        self.scanner = Scanner(readers, demux, rig.clock, lambda line: None)
        link = _InProcessLink(self.scanner)
        self.scanner.boot()  # init every chip, HELLO, settle, FULL
        return link

    def open(self) -> None:
        if self._port is None:
            try:
                self._port = self._open_link()
            except BackendError:
                raise
            except (ImportError, OSError) as exc:
                raise BackendError(f"{exc}; {PI_HINT}") from None
            self._buffer.clear()
            self._last_seq = None
            self._synced = False

    def poll(self) -> PollResult:
        if self.scanner is not None and self._port is not None:
            self.scanner.sweep()
        return super().poll()

    def close(self) -> None:
        super().close()
        if self._rig is not None:
            self._rig.close()
            self._rig = None


# ------------------------------------------------------------------ the Pi's hardware


class _SpidevBus:
    """``machine.SPI`` methods over a ``spidev.SpiDev``."""

    def __init__(self, dev: Any) -> None:
        self.dev = dev

    def write(self, buf: bytes) -> None:
        self.dev.xfer2(list(buf))

    def readinto(self, buf: bytearray, write: int = 0x00) -> None:
        buf[:] = bytes(self.dev.xfer2([write] * len(buf)))

    def write_readinto(self, tx: bytes, rx: bytearray) -> None:
        rx[:] = bytes(self.dev.xfer2(list(tx)))


class _GpioPin:
    """``machine.Pin``-style ``value()`` over a gpiozero ``DigitalOutputDevice``."""

    def __init__(self, device: Any) -> None:
        self.device = device

    def value(self, level: int | None = None) -> int:
        if level is not None:
            self.device.value = 1 if level else 0
        return int(self.device.value)


class _MonotonicClock:
    @staticmethod
    def ticks_us() -> int:
        return time.perf_counter_ns() // 1000

    @staticmethod
    def sleep_us(us: float) -> None:
        end = time.perf_counter_ns() + int(us * 1000)
        if us > 2000:
            time.sleep((us - 1000) / 1e6)
        while time.perf_counter_ns() < end:  # sub-millisecond waits: spin
            pass


def gpio_pins(pins: list[int | str]) -> list[_GpioPin]:
    from gpiozero import DigitalOutputDevice

    return [_GpioPin(DigitalOutputDevice(pin, initial_value=True)) for pin in pins]


def pi_rig(config: dict[str, Any]) -> Rig:
    try:
        import spidev
    except ImportError:
        raise BackendError(f"spidev is not installed; {PI_HINT}") from None
    dev = spidev.SpiDev()
    try:
        dev.open(int(config.get("bus", 0)), int(config.get("device", 0)))
    except OSError as exc:
        raise BackendError(f"cannot open /dev/spidev{config.get('bus', 0)}."
                           f"{config.get('device', 0)}: {exc}; {PI_HINT}") from None
    dev.max_speed_hz = int(config.get("speed_hz", 1_000_000))  # hardware/wiring.md: the margin
    dev.mode = 0
    address = gpio_pins(list(config["address_pins"]))
    banks = gpio_pins(list(config["bank_pins"]))
    (strobe,) = gpio_pins([config["strobe_pin"]])
    devices = [p.device for p in (*address, *banks, strobe)]

    def close() -> None:
        dev.close()
        for device in devices:
            device.close()

    return Rig(_SpidevBus(dev), address, banks, strobe, _MonotonicClock(), close)

"""Table I/O with gpiozero: a turn LED per seat, a buzzer, a confirm button per seat and the
host's undo button.

The hub drives it from engine messages (``game/public``'s ``turn`` lights that seat's LED; an
active ``game/alert`` of severity error sounds the buzzer) and publishes button presses as
``button`` events (``confirm`` with the seat, ``undo`` for the host). Pins are BCM numbers
(or any name gpiozero accepts); buttons are wired to ground (internal pull-up).

Tests and machines without GPIO use gpiozero's ``MockFactory``::

    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory
    Device.pin_factory = MockFactory()
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from hub.errors import ConfigError

log = logging.getLogger("cauldron.hub.io")

ButtonCallback = Callable[[str, int | None], None]
Pin = int | str


class TableIO:
    def __init__(
        self,
        *,
        turn_leds: Sequence[Pin] = (),
        buzzer: Pin | None = None,
        seat_buttons: Sequence[Pin] = (),
        host_button: Pin | None = None,
        bounce_time: float | None = 0.03,
        on_button: ButtonCallback | None = None,
    ) -> None:
        from gpiozero import LED, Button, Buzzer
        from gpiozero.exc import GPIOZeroError

        self.on_button = on_button
        self.turn: int | None = None
        self._lock = threading.Lock()
        self._devices: list[Any] = []
        try:
            self.leds = [self._own(LED(pin)) for pin in turn_leds]
            self.buzzer = self._own(Buzzer(buzzer)) if buzzer is not None else None
            self.seat_buttons = []
            for seat, pin in enumerate(seat_buttons):
                button = self._own(Button(pin, pull_up=True, bounce_time=bounce_time))
                button.when_pressed = self._pressed("confirm", seat)
                self.seat_buttons.append(button)
            self.host_button = None
            if host_button is not None:
                self.host_button = self._own(Button(host_button, pull_up=True,
                                                    bounce_time=bounce_time))
                self.host_button.when_pressed = self._pressed("undo", None)
        except (GPIOZeroError, ValueError, TypeError) as exc:
            self.close()
            raise ConfigError(
                f"table I/O pins cannot be used: {exc}; check the [io] pins in the config "
                "(BCM numbers) or leave [io] out"
            ) from None

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TableIO | None:
        if not config:
            return None
        known = {"turn_leds", "buzzer", "seat_buttons", "host_button", "bounce_time"}
        unknown = sorted(set(config) - known)
        if unknown:
            raise ConfigError(f"[io]: unknown key(s) {', '.join(map(repr, unknown))}; known: "
                              f"{', '.join(sorted(known))}")
        for key in ("turn_leds", "seat_buttons"):
            pins = config.get(key, [])
            if not isinstance(pins, list) or not all(_is_pin(p) for p in pins):
                raise ConfigError(f"[io] {key} = {pins!r} is not a list of pins (BCM numbers)")
        for key in ("buzzer", "host_button"):
            pin = config.get(key)
            if pin is not None and not _is_pin(pin):
                raise ConfigError(f"[io] {key} = {pin!r} is not a pin (a BCM number)")
        bounce = config.get("bounce_time", 0.03)
        if bounce is not None and (not isinstance(bounce, int | float) or isinstance(bounce, bool)
                                   or not 0 <= bounce <= 10):
            raise ConfigError(f"[io] bounce_time = {bounce!r} is not 0..10 seconds")
        return cls(**config)

    def _own(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    def _pressed(self, button: str, seat: int | None) -> Callable[[], None]:
        def handler() -> None:
            callback = self.on_button
            if callback is None:
                return
            try:
                callback(button, seat)
            except Exception:
                log.exception("button %s handler failed", button)

        return handler

    def set_turn(self, seat: int | None) -> None:
        """Light the LED of ``seat`` (None: all off)."""
        with self._lock:
            self.turn = seat
            for index, led in enumerate(self.leds):
                if index == seat:
                    led.on()
                else:
                    led.off()

    def buzz(self, seconds: float = 0.3) -> None:
        """One beep, in the background."""
        if self.buzzer is not None:
            self.buzzer.blink(on_time=seconds, off_time=0.0, n=1, background=True)

    def close(self) -> None:
        for device in self._devices:
            try:
                device.close()
            except Exception:
                log.debug("closing %r failed", device)
        self._devices.clear()


def _is_pin(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, str) and bool(value))

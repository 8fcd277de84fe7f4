"""Table I/O through real gpiozero with MockFactory pins, and the hub driving it from engine
messages over a real broker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin
from waiting import wait_for

from engine.wire.contract import GamePublic, HubEvent, Topics, WireModel
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable
from hub.errors import ConfigError
from hub.io import TableIO
from hub.outbox import Outbox
from hub.service import Hub
from hub.tagmap import TagMap

LEDS = [17, 27, 22, 23]
PINS: dict[str, object] = {"turn_leds": LEDS, "buzzer": 24, "seat_buttons": [4, 12, 16, 18],
                           "host_button": 25, "bounce_time": None}


@pytest.fixture
def mock_pins() -> Iterator[MockFactory]:
    previous = Device.pin_factory
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    yield factory
    factory.reset()
    Device.pin_factory = previous


def test_turn_leds_buzzer_and_buttons(mock_pins: MockFactory) -> None:
    presses: list[tuple[str, int | None]] = []
    io = TableIO(**PINS, on_button=lambda b, s: presses.append((b, s)))  # type: ignore[arg-type]
    try:
        io.set_turn(2)
        assert [mock_pins.pin(p).state for p in LEDS] == [0, 0, 1, 0]
        io.set_turn(None)
        assert [mock_pins.pin(p).state for p in LEDS] == [0, 0, 0, 0]
        buzzer = mock_pins.pin(24)
        io.buzz(0.05)
        wait_for(lambda: buzzer.state == 1)
        wait_for(lambda: buzzer.state == 0)
        mock_pins.pin(16).drive_low()  # seat 2 presses confirm
        mock_pins.pin(16).drive_high()
        mock_pins.pin(25).drive_low()  # the host presses undo
        wait_for(lambda: len(presses) == 2)
        assert presses == [("confirm", 2), ("undo", None)]
    finally:
        io.close()


def test_bad_pins_give_a_config_error(mock_pins: MockFactory) -> None:
    with pytest.raises(ConfigError, match=r"\[io\]"):
        TableIO.from_config({"turn_led": [1]})
    with pytest.raises(ConfigError, match="pins cannot be used"):
        TableIO(turn_leds=[17, 17])
    assert TableIO.from_config({}) is None


def test_hub_drives_io_from_engine_messages_and_publishes_presses(
        mock_pins: MockFactory, mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    topics = Topics(table_id)
    io = TableIO(**PINS)  # type: ignore[arg-type]
    hub = Hub(table=table_id, backend=SimulatedTable(), client=WireClient(mqtt_broker),
              outbox=Outbox(tmp_path / "o.sqlite"), tagmap=TagMap(), io=io).start()
    events: list[WireModel] = []
    try:
        with WireClient(mqtt_broker) as engine:
            engine.subscribe(topics.hub_event, lambda t, m: events.append(m), wait=5)
            assert hub.client.wait_ready(10)
            # The hub reads no game/* topic (the ACL gives it none): the engine drives it.
            engine.publish(topics.game_public,
                           GamePublic.model_validate({"view": {"grid": []}, "turn": 1}),
                           retain=True)
            assert engine.request(topics.hub_cmd("buzz"), {"ms": 200}).status == "ok"
            wait_for(lambda: mock_pins.pin(24).state == 1)
            assert mock_pins.pin(27).state == 0
            reply = engine.request(topics.hub_cmd("turn"), {"seat": 3})
            assert reply.status == "ok"
            assert [mock_pins.pin(p).state for p in LEDS] == [0, 0, 0, 1]
            mock_pins.pin(4).drive_low()
            wait_for(lambda: len(events) == 1)
            event = events[0]
            assert isinstance(event, HubEvent)
            assert (event.kind, event.button, event.seat) == ("button", "confirm", 0)
    finally:
        hub.stop()

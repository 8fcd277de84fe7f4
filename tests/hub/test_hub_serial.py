"""The serial back-end against a fake firmware on a real pty (and pyserial's loop://):
changes, resync by SYNC -> FULL, malformed lines rejected and counted, cable pulled."""

from __future__ import annotations

import os
import select
import time
import tty
from collections.abc import Callable
from typing import Any

import pytest
import serial

from firmware.protocol import FROM_HUB, Sender, decode_frame
from hub.backends.base import Change, PollResult
from hub.backends.serial import SerialBackend
from hub.errors import BackendError
from hub.layout import Layout

UID_A = "04A1B2C3D4E5F6"
UID_B = "04FFEEDDCCBBAA"


class FakeFirmware:
    """The Pico's side of a pty: answers SYNC with FULL, WRITE with ACK, emits P/R."""

    def __init__(self, n_readers: int = 36) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        self._slave = slave  # kept open so the pty stays up until the cable is pulled
        self.sender = Sender()
        self.state: dict[int, str | None] = {}
        self.n_readers = n_readers
        self.received: list[str] = []
        self.write_ok = True
        self.hung = False  # a hung board reads nothing and answers nothing
        self.drop_full_part: int | None = None  # lose this part of the next FULL report

    def write(self, text: str | bytes) -> None:
        os.write(self.master, text.encode() if isinstance(text, str) else text)

    def frame(self, kind: str, fields: list[str] | None = None) -> None:
        self.write(self.sender.frame(kind, fields or []))

    def serve(self) -> None:
        """Answer what the hub sent so far."""
        while not self.hung and select.select([self.master], [], [], 0)[0]:
            data = os.read(self.master, 4096).decode()
            for line in data.splitlines():
                frame = decode_frame(line, FROM_HUB)
                self.received.append(frame.kind)
                if frame.kind == "SYNC":
                    for part, full in enumerate(self.sender.full(self.state, self.n_readers)):
                        if part + 1 == self.drop_full_part:
                            self.drop_full_part = None
                            continue  # lost on the wire (its seq too: no gap shows)
                        self.write(full)
                elif frame.kind == "PING":
                    self.frame("PONG")
                elif frame.kind == "WRITE":
                    reply = [str(frame.seq)] + ([] if self.write_ok else ["no", "tag"])
                    self.frame("ACK" if self.write_ok else "NAK", reply)

    def place(self, reader: int, uid: str) -> None:
        self.state[reader] = uid
        self.frame("P", [str(reader), uid])

    def remove(self, reader: int) -> None:
        uid = self.state.pop(reader)
        self.frame("R", [str(reader), str(uid)])

    def pull_cable(self) -> None:
        os.close(self.master)
        os.close(self._slave)


def pump(backend: SerialBackend, fw: FakeFirmware, until: Callable[[list[Change]], bool],
         timeout: float = 3.0) -> list[Change]:
    changes: list[Change] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fw.serve()
        changes += backend.poll().changes
        if until(changes):
            return changes
        time.sleep(0.005)
    raise AssertionError(f"timed out; got {changes}")


@pytest.fixture
def link() -> Any:
    fw = FakeFirmware()
    holder = {"fw": fw}

    def opener() -> serial.Serial:
        return serial.serial_for_url(holder["fw"].path, baudrate=115200, timeout=0)

    backend = SerialBackend(Layout(), opener, port_name="pty", reconnect_delay=0.05)
    yield backend, holder
    backend.close()


def test_sync_full_then_changes(link: Any) -> None:
    backend, holder = link
    fw: FakeFirmware = holder["fw"]
    fw.state = {3: UID_A}
    backend.open()
    changes = pump(backend, fw, lambda c: len(c) == 1)
    assert changes == [Change("placed", 3, UID_A)]
    assert fw.received[0] == "SYNC"
    fw.place(33, UID_B)
    fw.remove(3)
    assert pump(backend, fw, lambda c: len(c) == 2) == [
        Change("placed", 33, UID_B), Change("removed", 3, UID_A)]
    assert backend.state()[33] == UID_B and backend.state()[3] is None
    fw.frame("HEALTH", ["5=flicker", "6=ok"])
    deadline = time.monotonic() + 2
    health: dict[int, str] = {}
    while not health and time.monotonic() < deadline:
        health = dict(backend.poll().health)
    assert health == {5: "flicker"}


def test_lost_lines_trigger_a_resync(link: Any) -> None:
    backend, holder = link
    fw: FakeFirmware = holder["fw"]
    backend.open()
    pump(backend, fw, lambda c: True)
    fw.state[7] = UID_A
    fw.sender.seq += 1  # the P line for reader 7 was lost on the wire
    fw.frame("HEALTH", ["0=ok"])  # next line shows the gap
    changes = pump(backend, fw, lambda c: len(c) == 1)
    assert changes == [Change("placed", 7, UID_A)]
    assert backend.rejects["gap"] == 1
    assert fw.received.count("SYNC") == 2


def test_cable_pulled_then_back_resyncs_without_inventing_events(link: Any) -> None:
    backend, holder = link
    fw: FakeFirmware = holder["fw"]
    fw.state = {1: UID_A}
    backend.open()
    pump(backend, fw, lambda c: len(c) == 1)
    fw.pull_cable()
    assert backend.poll() == PollResult(board_changed=True)  # disconnected: nothing invented
    assert not backend.connected and backend.reconnects == 1
    # Meanwhile the card on reader 1 was lifted and another laid on reader 2.
    new = FakeFirmware()
    new.state = {2: UID_B}
    holder["fw"] = new
    changes = pump(backend, new, lambda c: len(c) == 2)
    assert changes == [Change("removed", 1, UID_A), Change("placed", 2, UID_B)]
    assert backend.connected and backend.resyncs == 1


def test_write_tag_ack_and_nak(link: Any) -> None:
    backend, holder = link
    fw: FakeFirmware = holder["fw"]
    backend.open()
    pump(backend, fw, lambda c: True)
    import threading

    stop = threading.Event()

    def firmware_loop() -> None:
        while not stop.is_set():
            fw.serve()
            time.sleep(0.002)

    thread = threading.Thread(target=firmware_loop)
    thread.start()
    try:
        backend.write_tag(4, "blue-a-4")
        fw.write_ok = False
        with pytest.raises(BackendError, match="could not write the tag: no tag"):
            backend.write_tag(4, "blue-a-4")
    finally:
        stop.set()
        thread.join()


def test_malformed_lines_are_rejected_and_counted_on_a_loopback() -> None:
    port = serial.serial_for_url("loop://", timeout=0)
    backend = SerialBackend(Layout(), lambda: port, port_name="loop")
    backend.open()  # our own SYNC comes back: refused as the wrong direction
    sender = Sender()
    full = sender.full({}, 36)
    placed = sender.frame("P", ["4", UID_A])
    lines = [
        *full,
        placed.replace("P 4", "P 5"),  # a bit flipped on the wire: checksum fails
        "garbage without checksum\n",
        "\x00\xff\xfe\n",
        "1 P 4*ZZZZ\n",
        "x" * 600 + "\n",
        placed,
    ]
    for line in lines:
        port.write(line.encode("latin-1"))
    changes: list[Change] = []
    for _ in range(20):
        changes += backend.poll().changes
    assert changes == [Change("placed", 4, UID_A)]
    assert backend.rejects["unknown-kind"] == 1  # our SYNC echoed back
    assert backend.rejects["checksum"] == 3
    assert backend.rejects["garbage"] == 1
    assert backend.rejects["oversize"] == 1
    backend.close()


def test_real_firmware_scan_loop_over_a_pty_to_the_hub() -> None:
    """The Pico's scan loop on simulated MFRC522 chips, its lines on a real tty."""
    from firmware.mfrc522_sim import Timings
    from firmware.scan import SETTLE_US, VERIFY_PER_SWEEP
    from firmware.sweep import build

    table, scanner, _ = build(36, Timings(), "fast", SETTLE_US, VERIFY_PER_SWEEP)
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    scanner.write_line = lambda line: os.write(master, line.encode())
    table.place(10, UID_A)
    scanner.boot()
    backend = SerialBackend(Layout(), lambda: serial.serial_for_url(path, timeout=0),
                            port_name="pty")
    backend.open()

    def firmware_step() -> None:
        while select.select([master], [], [], 0)[0]:
            for line in os.read(master, 4096).decode().splitlines():
                scanner.handle_line(line)
        scanner.sweep()

    def run_until(count: int) -> list[Change]:
        changes: list[Change] = []
        for _ in range(200):
            firmware_step()
            time.sleep(0.002)
            changes += backend.poll().changes
            if len(changes) >= count:
                break
        return changes

    try:
        assert run_until(1) == [Change("placed", 10, UID_A)]  # from the FULL report
        table.remove(10)
        table.place(34, UID_B)
        assert run_until(2) == [Change("removed", 10, UID_A), Change("placed", 34, UID_B)]
        assert sum(backend.rejects.values()) == 0
    finally:
        backend.close()
        os.close(master)
        os.close(slave)


def test_hub_restart_resync_reports_a_card_lifted_while_it_was_down(
    mqtt_broker: str, table_id: str, tmp_path: Any
) -> None:
    """The hub sees two cards, dies, one is lifted meanwhile; the restarted hub's SYNC -> FULL
    is compared with what its outbox says it reported: exactly one removal, seq going on."""
    from engine.wire.contract import HubEvent, Topics
    from engine.wire.mqtt import WireClient
    from hub.outbox import Outbox
    from hub.service import Hub
    from hub.tagmap import TagMap

    fw = FakeFirmware()
    fw.state = {3: UID_A, 5: UID_B}
    outbox = tmp_path / "outbox.sqlite"

    def run_hub(until: int, settle: float = 0.0) -> tuple[Hub, list[HubEvent]]:
        backend = SerialBackend(Layout(), lambda: serial.serial_for_url(fw.path, timeout=0),
                                port_name="pty")
        client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                            state_topic=Topics(table_id).hub_state)
        hub = Hub(table=table_id, backend=backend, client=client, outbox=Outbox(outbox),
                  tagmap=TagMap()).start(poll=False)
        events: list[HubEvent] = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (len(events) < until or settle > 0):
            fw.serve()
            events += hub.step()
            time.sleep(0.005)
            if len(events) >= until:
                settle -= 0.005  # then a while longer: nothing more may come
        return hub, events

    first, events = run_hub(2)
    assert [(e.seq, e.action, e.reader, e.uid) for e in events] == [
        (1, "placed", 3, UID_A), (2, "placed", 5, UID_B)]
    first.client.stop()  # gone without a word (the outbox is not closed either)
    first.backend.close()
    del fw.state[5]  # lifted while no hub listened: the firmware says nothing of it
    second, events = run_hub(1, settle=0.3)
    try:
        assert [(e.seq, e.kind, e.action, e.reader, e.uid) for e in events] == [
            (3, "unknown_tag", "removed", 5, UID_B)]
        assert second.backend.state()[3] == UID_A and second.outbox.reader_state() == {3: UID_A}
    finally:
        second.stop()
        fw.pull_cable()

"""The Pico firmware over USB serial (pyserial), speaking `firmware.protocol`.

The firmware confirms presence itself and sends ``P``/``R`` (placed/removed), ``FULL`` (every
reader, on boot and on ``SYNC``), ``HEALTH`` and ``HELLO``. This back-end:

- rejects malformed lines (bad checksum, garbage, unknown kind) and counts them by reason
  in ``rejects`` — a noisy cable never becomes a card event;
- resynchronises with ``SYNC`` -> ``FULL`` when the link (re)opens, when the firmware
  reboots (``HELLO``), and when a gap in the firmware's sequence numbers shows lost lines;
  the full report is compared with what the hub believed and the differences become changes
  (after a restart of the hub, what it believed is what it last reported: `seed_state`);
- survives the cable being pulled: the port is closed, reopened every ``reconnect_delay``
  seconds, and resynchronised; nothing is invented meanwhile;
- asks again (``SYNC``) when a FULL report arrived in part, or did not arrive within
  ``sync_timeout`` seconds;
- sees a hung board: it sends ``PING`` every ``ping_interval`` seconds; with no ``PONG``
  within ``ping_timeout`` the board is ``hung`` (`board`, published in ``hub/health``), is
  reset (``reset``: a pulse on the Pico's RUN pin when ``[serial] reset_pin`` is wired, else
  the port is closed and reopened) and resynchronised;
- reports the pawn positions of ``PAWNS`` lines (pawn sensors fitted);
- writes a card id into a tag (``WRITE`` -> ``ACK``/``NAK``) for enrolment.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar

from firmware.protocol import (
    FROM_FIRMWARE,
    Frame,
    ProtocolError,
    Sender,
    decode_frame,
    full_part,
    parse_pairs,
    parse_pawn_mask,
    seq_gap,
)
from hub.backends.base import BoardStatus, Change, Health, PollResult, ReaderBackend
from hub.errors import BackendError, ConfigError
from hub.layout import Layout

log = logging.getLogger("cauldron.hub.serial")

PortOpener = Callable[[], Any]  # returns a pyserial-like object (read/write/close/in_waiting)
Resetter = Callable[[], None]
_HEALTH: dict[str, Health] = {"ok": "ok", "silent": "silent", "flicker": "flicker",
                              "absent": "absent"}


class SerialBackend(ReaderBackend):
    name: ClassVar[str] = "serial"
    capabilities = frozenset({"write_tag"})

    def __init__(
        self,
        layout: Layout,
        opener: PortOpener,
        *,
        port_name: str = "serial port",
        reconnect_delay: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        ping_interval: float = 2.0,
        ping_timeout: float = 3.0,
        sync_timeout: float = 3.0,
        reset: Resetter | None = None,
    ) -> None:
        super().__init__(layout)
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.sync_timeout = sync_timeout
        self._reset = reset
        self._ping_sent: float | None = None
        self._next_ping = 0.0
        self._sync_sent: float | None = None
        self._board: BoardStatus = BoardStatus()
        self._board_changed = False
        self._pawns: frozenset[int] | None = None
        self.hangs = 0
        self._opener = opener
        self.port_name = port_name
        self.reconnect_delay = reconnect_delay
        self.clock = clock
        self._port: Any = None
        self._buffer = bytearray()
        self._sender = Sender()
        self._last_seq: int | None = None
        self._state: dict[int, str | None] = {i: None for i in range(layout.n_readers)}
        self._health: dict[int, Health] = {i: "ok" for i in range(layout.n_readers)}
        self._full_parts: dict[int, dict[int, str | None]] = {}
        self._full_expected = 0
        self._replies: dict[int, Frame] = {}
        self._next_attempt = 0.0
        self.rejects: Counter[str] = Counter()
        self.firmware: str | None = None
        self.stats: str | None = None  # the last STATS line: sweep mean/max, us per poll kind
        self.reconnects = 0
        self.resyncs = 0
        self._synced = False
        self._carry = PollResult()  # changes read while waiting for a WRITE answer

    @classmethod
    def from_config(cls, layout: Layout, config: dict[str, Any]) -> SerialBackend:
        port = config.get("port")
        if not port:
            raise ConfigError(
                "the serial back-end needs [serial] port = \"/dev/ttyACM0\" (the Pico's USB "
                "port; `ls /dev/ttyACM*` lists candidates)"
            )
        baudrate = config.get("baudrate", 115200)
        delay = config.get("reconnect_delay", 1.0)
        if not isinstance(port, str):
            raise ConfigError(f"[serial] port = {port!r} is not a device path like /dev/ttyACM0")
        if not isinstance(baudrate, int) or isinstance(baudrate, bool) or baudrate <= 0:
            raise ConfigError(f"[serial] baudrate = {baudrate!r} is not a positive integer")
        if not isinstance(delay, int | float) or isinstance(delay, bool) or not 0 < delay <= 3600:
            raise ConfigError(f"[serial] reconnect_delay = {delay!r} is not 0..3600 seconds")

        reset_pin = config.get("reset_pin")
        if reset_pin is not None and (not isinstance(reset_pin, int)
                                      or isinstance(reset_pin, bool) or not 0 <= reset_pin <= 27):
            raise ConfigError(f"[serial] reset_pin = {reset_pin!r} is not a BCM pin 0..27 "
                              "(the Pi pin wired to the Pico's RUN pin)")

        def opener() -> Any:
            import serial  # pyserial

            return serial.serial_for_url(str(port), baudrate=baudrate, timeout=0)

        return cls(layout, opener, port_name=str(port), reconnect_delay=float(delay),
                   reset=None if reset_pin is None else run_pin_reset(reset_pin))

    # ------------------------------------------------------------ link

    @property
    def connected(self) -> bool:
        return self._port is not None

    def open(self) -> None:
        if self._port is None:
            self._try_open()

    def _try_open(self) -> bool:
        try:
            self._port = self._opener()
        except Exception as exc:  # pyserial raises SerialException / OSError
            self._port = None
            self._next_attempt = self.clock() + self.reconnect_delay
            log.warning("cannot open %s (%s); retrying every %.1f s", self.port_name, exc,
                        self.reconnect_delay)
            return False
        self._buffer.clear()
        self._last_seq = None
        self._synced = False
        self._ping_sent = None
        self._next_ping = self.clock() + self.ping_interval
        self._sync()
        return True

    def _sync(self) -> None:
        """Ask for a FULL report (and note when, to ask again if it never completes)."""
        self._full_parts = {}
        self._sync_sent = self.clock()
        self.send("SYNC")

    def close(self) -> None:
        if self._port is not None:
            with contextlib.suppress(Exception):
                self._port.close()
            self._port = None

    def _lost(self, why: object) -> None:
        log.warning("lost %s (%s); reconnecting", self.port_name, why)
        self.close()
        self.reconnects += 1
        self._next_attempt = self.clock() + self.reconnect_delay
        self._set_board(state="disconnected")

    def _set_board(self, **changes: Any) -> None:
        board = replace(self._board, **changes)
        if board != self._board:
            self._board = board
            self._board_changed = True

    def board(self) -> BoardStatus:
        return self._board

    def pawns(self) -> frozenset[int] | None:
        return self._pawns

    def _watch(self) -> None:
        """PING the board; a board that does not answer in time is hung: reset it."""
        if self._port is None:
            return
        now = self.clock()
        if self._ping_sent is not None:
            if now - self._ping_sent <= self.ping_timeout:
                return
            self.hangs += 1
            log.error("the scan board on %s did not answer PING within %g s: resetting it",
                      self.port_name, self.ping_timeout)
            self._set_board(state="hung", resets=self._board.resets + 1)
            self._ping_sent = None
            self.close()  # reopened (and resynchronised) after reconnect_delay
            self._next_attempt = now + self.reconnect_delay
            if self._reset is not None:
                try:
                    self._reset()
                except Exception as exc:  # a reset pin problem must not stop the hub
                    log.error("resetting the scan board failed: %s", exc)
            return
        if now >= self._next_ping:
            try:
                self.send("PING")
            except BackendError:
                return
            self._ping_sent = now
            self._next_ping = now + self.ping_interval
        if (not self._synced and self._sync_sent is not None
                and now - self._sync_sent > self.sync_timeout):
            log.info("no complete FULL report %g s after SYNC; asking again", self.sync_timeout)
            with contextlib.suppress(BackendError):
                self._sync()

    def send(self, kind: str, fields: list[str] | None = None) -> int:
        """Send one frame to the firmware; returns its seq."""
        seq = self._sender.seq
        line = self._sender.frame(kind, fields or [])
        if self._port is None:
            raise BackendError(f"{self.port_name} is not connected")
        try:
            self._port.write(line.encode("ascii"))
        except Exception as exc:
            self._lost(exc)
            raise BackendError(f"writing to {self.port_name} failed: {exc}") from None
        return seq

    def _read_lines(self) -> list[bytes]:
        if self._port is None:
            return []
        try:
            waiting = self._port.in_waiting
            chunk = self._port.read(waiting or 1)
        except Exception as exc:
            self._lost(exc)
            return []
        if chunk:
            self._buffer += chunk
        lines = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                break
            lines.append(bytes(self._buffer[: end + 1]))
            del self._buffer[: end + 1]
        if len(self._buffer) > 4096:  # no newline in sight: garbage on the line
            self.rejects["oversize"] += 1
            self._buffer.clear()
        return lines

    # ------------------------------------------------------------ polling

    def poll(self) -> PollResult:
        result, self._carry = self._carry, PollResult()
        if self._port is None:
            if self.clock() < self._next_attempt or not self._try_open():
                return self._finish(result)
            self.resyncs += 1
        for line in self._read_lines():
            self._handle_line(line, result)
        self._watch()
        return self._finish(result)

    def _finish(self, result: PollResult) -> PollResult:
        if self._board_changed:
            self._board_changed = False
            result.board_changed = True
        return result

    def _handle_line(self, line: bytes, result: PollResult) -> None:
        try:
            frame = decode_frame(line, FROM_FIRMWARE)
        except ProtocolError as exc:
            self.rejects[exc.code] += 1
            log.info("rejected line from %s: %s", self.port_name, exc.reason)
            return
        if frame.kind == "HELLO":
            self.firmware = frame.fields[0]
            self._set_board(firmware=frame.fields[0])
            if int(frame.fields[1]) < self.n_readers:
                log.warning("firmware scans %s readers, the layout needs %d",
                            frame.fields[1], self.n_readers)
            self._last_seq = frame.seq
            self._synced = False  # a reboot: wait for its FULL (asked again if it never comes)
            self._sync_sent = self.clock()
            return
        if self._last_seq is not None and seq_gap(self._last_seq, frame.seq):
            self.rejects["gap"] += 1
            log.info("lost %d line(s) from the firmware; resynchronising",
                     seq_gap(self._last_seq, frame.seq))
            self._synced = False
            try:
                self._sync()
            except BackendError:
                return
        self._last_seq = frame.seq
        kind = frame.kind
        if kind in ("P", "R"):
            if self._synced:
                self._apply_change(kind, int(frame.fields[0]), frame.fields[1], result)
        elif kind == "FULL":
            self._take_full(frame, result)
        elif kind == "HEALTH":
            for reader, state in parse_pairs(frame).items():
                if reader < self.n_readers and state in _HEALTH:
                    health = _HEALTH[str(state)]
                    if self._health[reader] != health:
                        self._health[reader] = health
                        result.health[reader] = health
        elif kind == "PAWNS":
            mask = parse_pawn_mask(frame.fields[0])
            pawns = frozenset(p for p in range(20) if mask >> p & 1)
            if pawns != self._pawns:
                self._pawns = pawns
                result.pawns = pawns
        elif kind == "STATS":
            self.stats = " ".join(frame.fields)  # the firmware's own timing, as sent
        elif kind == "PONG":
            self._ping_sent = None
            self._set_board(state="ok")
        elif kind in ("ACK", "NAK"):
            self._replies[int(frame.fields[0])] = frame
        elif kind == "ERR":
            log.warning("firmware: %s", frame.text())

    def _apply_change(self, kind: str, reader: int, uid: str, result: PollResult) -> None:
        if reader >= self.n_readers:
            self.rejects["bad-reader"] += 1
            return
        current = self._state[reader]
        if kind == "P":
            if current == uid:
                return
            if current is not None:
                result.changes.append(Change("removed", reader, current))
            self._state[reader] = uid
            result.changes.append(Change("placed", reader, uid))
        elif current == uid:
            self._state[reader] = None
            result.changes.append(Change("removed", reader, uid))

    def _take_full(self, frame: Frame, result: PollResult) -> None:
        part, parts = full_part(frame)
        if part == 1:
            self._full_parts = {}
            self._full_expected = parts
        elif parts != self._full_expected or part - 1 not in self._full_parts:
            # A part went missing: ask for the whole report again.
            log.info("FULL report part %d/%d came without the one before; asking again",
                     part, parts)
            with contextlib.suppress(BackendError):
                self._sync()
            return
        self._full_parts[part] = {r: (str(u) if u else None) for r, u in parse_pairs(frame).items()}
        if len(self._full_parts) < parts:
            return
        full: dict[int, str | None] = {}
        for piece in self._full_parts.values():
            full.update(piece)
        self._full_parts = {}
        self._sync_sent = None
        self._set_board(state="ok")
        for reader in range(self.n_readers):
            uid = full.get(reader)
            current = self._state[reader]
            if uid == current:
                continue
            if current is not None:
                result.changes.append(Change("removed", reader, current))
            if uid is not None:
                result.changes.append(Change("placed", reader, uid))
            self._state[reader] = uid
        self._synced = True
        result.resynced = True

    def state(self) -> dict[int, str | None]:
        return dict(self._state)

    def settled(self) -> bool:
        return self._synced  # the board's first full report is in

    def seed_state(self, state: Mapping[int, str]) -> None:
        # The next FULL report (the link opens with SYNC; the firmware boots with one) is
        # compared with this: a tag lifted while the hub was down becomes a removal.
        self._state = {reader: state.get(reader) for reader in range(self.n_readers)}

    def health(self) -> dict[int, Health]:
        return dict(self._health)

    # ------------------------------------------------------------ tag memory

    def write_tag(self, reader: int, card_id: str, timeout: float = 2.0) -> None:
        """Ask the firmware to store ``card_id`` in the tag on ``reader``."""
        seq = self.send("WRITE", [str(reader), card_id])
        deadline = self.clock() + timeout
        while self.clock() < deadline:
            for line in self._read_lines():
                self._handle_line(line, self._carry)
            reply = self._replies.pop(seq, None)
            if reply is not None:
                if reply.kind == "NAK":
                    raise BackendError(f"the firmware could not write the tag: {reply.text()}")
                return
            time.sleep(0.005)
        raise BackendError(f"no answer from the firmware to WRITE within {timeout:g} s")


def run_pin_reset(pin: int, pulse: float = 0.1) -> Resetter:
    """Reset the Pico by pulling its RUN pin low for ``pulse`` seconds from a Pi GPIO
    (gpiozero; wired RUN <- 1 kOhm <- GPIO, hardware/wiring.md)."""

    def reset() -> None:
        from gpiozero import DigitalOutputDevice

        with DigitalOutputDevice(pin, active_high=False, initial_value=False) as run:
            run.on()
            time.sleep(pulse)
            run.off()

    return reset

"""A lean MQTT 3.1.1 client for a load generator: measuring equipment, not product code.

`cauldron bench engine-service` runs its load generator on the machine it measures, so the
generator's CPU is taken from the engine's. Through paho (a network thread woken for each
publish, a message object and callbacks for each PUBACK) it cost about half a millisecond
a hub event, as much as the engine's own work. This client writes each publish from the
caller's thread with one `send` of prebuilt bytes, and one reader thread parses what comes
back in bulk: PUBACKs are counted (nothing waits for them), QoS 0 messages go to the
handler of their exact topic, QoS 1 ones are acknowledged. It speaks only what the bench
needs: CONNECT (clean session, no credentials), PUBLISH at QoS 0/1, SUBSCRIBE and
UNSUBSCRIBE to exact topics, PINGREQ. Any protocol error ends the reader (`error` says
why) and the next call raises it.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

Handler = Callable[[str, bytes], None]
_CONNECT, _CONNACK, _PUBLISH, _PUBACK = 1, 2, 3, 4
_SUBSCRIBE, _SUBACK, _UNSUBSCRIBE, _UNSUBACK, _PINGREQ, _PINGRESP = 8, 9, 10, 11, 12, 13
KEEPALIVE_S = 60


def _length(n: int) -> bytes:
    """MQTT's variable-length remaining length."""
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _text(s: str) -> bytes:
    data = s.encode()
    return struct.pack("!H", len(data)) + data


class RawMqtt:
    """One connection to a broker (``mqtt://host:port``) for a load generator."""

    def __init__(self, url: str, client_id: str) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 1883
        self.client_id = client_id
        self.acked = 0  # PUBACKs received for our QoS 1 publishes
        self.error: str | None = None
        self._sock: socket.socket | None = None
        self._send_lock = threading.Lock()
        self._mid = 0
        self._handlers: dict[str, Handler] = {}
        self._waiting: dict[int, threading.Event] = {}  # SUBACK/UNSUBACK by packet id
        self._reader: threading.Thread | None = None
        self._last_sent = time.monotonic()

    def connect(self, timeout: float = 10.0) -> RawMqtt:
        sock = socket.create_connection((self.host, self.port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        body = (_text("MQTT") + bytes([4, 0x02]) + struct.pack("!H", KEEPALIVE_S)
                + _text(self.client_id))
        sock.sendall(bytes([_CONNECT << 4]) + _length(len(body)) + body)
        ack = b""
        while len(ack) < 4:
            chunk = sock.recv(4 - len(ack))
            if not chunk:
                raise ConnectionError("the broker closed the connection at CONNECT")
            ack += chunk
        if ack[0] >> 4 != _CONNACK or ack[3] != 0:
            raise ConnectionError(f"the broker refused the connection (CONNACK {ack.hex()})")
        sock.settimeout(None)
        self._sock = sock
        self._reader = threading.Thread(target=self._read, name="bench-rawmqtt", daemon=True)
        self._reader.start()
        return self

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is None:
            return
        with contextlib.suppress(OSError), self._send_lock:
            sock.sendall(bytes([0xE0, 0]))  # DISCONNECT
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        if self._reader is not None:
            self._reader.join(5)

    # ------------------------------------------------------------------ sending

    def _next_mid(self) -> int:
        self._mid = self._mid % 65535 + 1
        return self._mid

    def _send(self, data: bytes) -> None:
        if self.error is not None:
            raise ConnectionError(self.error)
        sock = self._sock
        if sock is None:
            raise ConnectionError("not connected")
        with self._send_lock:
            sock.sendall(data)
            self._last_sent = time.monotonic()

    def publish(self, topic: str, payload: bytes, qos: int = 1) -> None:
        name = _text(topic)
        if qos:
            with self._send_lock:
                mid = self._next_mid()
            head = bytes([_PUBLISH << 4 | 0x02]) + _length(len(name) + 2 + len(payload))
            self._send(b"".join((head, name, struct.pack("!H", mid), payload)))
        else:
            head = bytes([_PUBLISH << 4]) + _length(len(name) + len(payload))
            self._send(b"".join((head, name, payload)))

    def _acked_request(self, kind: int, body_after_mid: bytes, timeout: float) -> None:
        done = threading.Event()
        with self._send_lock:
            mid = self._next_mid()
            self._waiting[mid] = done
        body = struct.pack("!H", mid) + body_after_mid
        self._send(bytes([kind << 4 | 0x02]) + _length(len(body)) + body)
        if not done.wait(timeout):
            raise TimeoutError(f"no answer from the broker within {timeout} s")

    def subscribe(self, topic: str, handler: Handler, timeout: float = 10.0) -> None:
        """Messages on `topic` (an exact topic, at QoS 0) to `handler`, from the reader
        thread; the broker's retained message too."""
        self._handlers[topic] = handler
        self._acked_request(_SUBSCRIBE, _text(topic) + b"\x00", timeout)

    def unsubscribe(self, topic: str, timeout: float = 10.0) -> None:
        self._acked_request(_UNSUBSCRIBE, _text(topic), timeout)
        self._handlers.pop(topic, None)

    # ------------------------------------------------------------------ reading

    def _read(self) -> None:
        buffer = bytearray()
        sock = self._sock
        assert sock is not None
        sock.settimeout(KEEPALIVE_S / 4)
        try:
            while self._sock is not None:
                try:
                    chunk = sock.recv(262144)
                except TimeoutError:
                    chunk = None
                if chunk == b"":
                    raise ConnectionError("the broker closed the connection")
                if chunk:
                    buffer += chunk
                    self._parse(buffer)
                if time.monotonic() - self._last_sent > KEEPALIVE_S / 2:
                    self._send(bytes([_PINGREQ << 4, 0]))
        except (OSError, ConnectionError, ValueError) as exc:
            if self._sock is not None:
                self.error = f"MQTT connection lost: {exc}"

    def _parse(self, buffer: bytearray) -> None:
        pos = 0
        size = len(buffer)
        acks: list[bytes] = []
        while pos + 2 <= size:
            first = buffer[pos]
            length = 0
            multiplier = 1
            i = pos + 1
            complete = False
            while i < size and i - pos <= 4:
                byte = buffer[i]
                i += 1
                length += (byte & 0x7F) * multiplier
                multiplier *= 128
                if not byte & 0x80:
                    complete = True
                    break
            if not complete:
                if i - pos > 4:
                    raise ValueError("malformed remaining length")
                break  # the rest of the header is still on its way
            end = i + length
            if end > size:
                break
            kind = first >> 4
            if kind == _PUBLISH:
                qos = (first >> 1) & 3
                n = struct.unpack_from("!H", buffer, i)[0]
                topic = bytes(buffer[i + 2:i + 2 + n]).decode()
                start = i + 2 + n
                if qos:
                    acks.append(bytes([_PUBACK << 4, 2]) + bytes(buffer[start:start + 2]))
                    start += 2
                handler = self._handlers.get(topic)
                if handler is not None:
                    handler(topic, bytes(buffer[start:end]))
            elif kind == _PUBACK:
                self.acked += 1
            elif kind in (_SUBACK, _UNSUBACK):
                mid = struct.unpack_from("!H", buffer, i)[0]
                if kind == _SUBACK and length >= 3 and buffer[i + 2] == 0x80:
                    raise ValueError("the broker refused a subscription")
                waiting = self._waiting.pop(mid, None)
                if waiting is not None:
                    waiting.set()
            elif kind != _PINGRESP:
                raise ValueError(f"unexpected MQTT packet type {kind}")
            pos = end
        del buffer[:pos]
        if acks:
            self._send(b"".join(acks))

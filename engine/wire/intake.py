"""What a `WireClient` lets in: a size bound on the socket, and a bounded inbox.

- `GuardedSocket` wraps the client's socket and reads the MQTT stream from the broker
  packet by packet. A PUBLISH whose packet is over `limit` bytes is never held: its topic
  and message id are kept, its payload read in small pieces and thrown away, and paho gets
  the same PUBLISH with an empty payload (acknowledged as usual). `oversize` names it for
  `WireClient`, which counts it and hands it to no handler. (The broker's own
  ``max_packet_size`` is the first bound; this one holds on any broker.)
- `Inbox` is the queue from paho's network thread to the dispatcher: two lanes. QoS 1
  messages (every publisher of the system uses QoS 1; the broker sends at most its in-flight
  window of them before the dispatcher acknowledges one) and connection notices go first;
  QoS 0 messages (no service of ours sends any: a flood) are let in at a bounded rate into
  a lane bounded in count and bytes; the rest is dropped unread, and counted. (The
  dispatcher shares the interpreter lock with the network thread: flood work it takes on
  slows the reading of everything behind the flood.)
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final

CHUNK: Final = 64 * 1024
PUBLISH: Final = 3


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (128 if n else 0))
        if not n:
            return bytes(out)


class GuardedSocket:
    """A socket (plain or TLS) whose incoming PUBLISH packets over `limit` bytes lose
    their payload before anyone holds it (see the module doc). Everything else is the
    wrapped socket's."""

    def __init__(self, sock: Any, limit: int,
                 shed: Callable[[], bool] = lambda: False) -> None:
        self._sock = sock
        self.limit = limit
        # Asked at each QoS 0 PUBLISH: True drops it whole before paho parses it (its lane
        # is full: reading on at full speed is what keeps QoS 1 messages behind a flood
        # from waiting in the socket).
        self.shed = shed
        self.oversize: deque[tuple[str, int]] = deque(maxlen=1000)  # (topic, size), in order
        self._out = bytearray()  # bytes ready for paho, from `_at` on
        self._at = 0
        self._head = bytearray()  # a fixed header being read
        self._pass = 0  # bytes of the current packet to pass through
        self._skip = 0  # bytes of the current (oversize) payload to throw away
        self._keep: bytearray | None = None  # an oversize packet's topic (+ id) being read
        self._size = 0  # an oversize packet's remaining length
        self.dropped_bytes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)

    def pending(self) -> int:
        """Bytes ready without reading the socket (paho then does not wait in select)."""
        inner = self._sock.pending() if hasattr(self._sock, "pending") else 0
        return len(self._out) - self._at + int(inner)

    def recv(self, bufsize: int) -> bytes:
        while self._at >= len(self._out):
            self._out.clear()
            self._at = 0
            data = self._sock.recv(CHUNK)  # BlockingIOError & co. go to paho as they are
            if not data:
                return b""
            self._feed(memoryview(data))
        out = bytes(self._out[self._at:self._at + bufsize])  # paho reads in small pieces
        self._at += len(out)
        return out

    def _feed(self, data: memoryview) -> None:
        i, n = 0, len(data)
        while i < n:
            if self._pass:
                take = min(self._pass, n - i)
                self._out += data[i:i + take]
                self._pass -= take
                i += take
            elif self._skip:
                take = min(self._skip, n - i)
                self._skip -= take
                self.dropped_bytes += take
                i += take
            elif self._keep is not None:
                i = self._keep_topic(data, i)
            elif self._head or n - i < 5:
                self._head.append(data[i])
                i += 1
                self._header_done()
            else:  # a whole fixed header at hand (the common case, and a flood's)
                j, length, shift = i + 1, 0, 0
                while True:
                    byte = data[j]
                    j += 1
                    length |= (byte & 127) << shift
                    shift += 7
                    if byte < 128 or shift > 21:
                        break
                if byte < 128 and data[i] >> 4 == PUBLISH:
                    if not data[i] & 6 and self.shed():
                        self._skip = length
                        i = j
                        continue
                    if length > self.limit:
                        self._head += data[i:j]
                        self._keep, self._size = bytearray(), length
                        i = j
                        continue
                self._out += data[i:j]  # a malformed length goes to paho, which refuses it
                self._pass = length if byte < 128 else 0
                i = j

    def _header_done(self) -> None:
        head = self._head
        if len(head) < 2 or head[-1] & 128:
            if len(head) > 5:  # a malformed length: paho refuses it (protocol error)
                self._out += head
                head.clear()
            return
        length, mult = 0, 1
        for byte in head[1:]:
            length += (byte & 127) * mult
            mult *= 128
        if head[0] >> 4 == PUBLISH and not head[0] & 6 and self.shed():
            head.clear()
            self._skip = length
            return
        if head[0] >> 4 == PUBLISH and length > self.limit:
            self._keep, self._size = bytearray(), length
            return
        self._out += head
        head.clear()
        self._pass = length

    def _need(self) -> int:
        """Bytes of an oversize packet's variable header: topic length, topic, id."""
        keep = self._keep
        assert keep is not None
        if len(keep) < 2:
            return 2
        qos = (self._head[0] >> 1) & 3
        return min(self._size, 2 + int.from_bytes(keep[:2], "big") + (2 if qos else 0))

    def _keep_topic(self, data: memoryview, i: int) -> int:
        keep = self._keep
        assert keep is not None
        while i < len(data) and len(keep) < self._need():
            take = min(self._need() - len(keep), len(data) - i)
            keep += data[i:i + take]
            i += take
        if len(keep) < self._need():
            return i  # more to come
        topic_len = int.from_bytes(keep[:2], "big")
        topic = bytes(keep[2:2 + topic_len]).decode("utf-8", "replace")
        self.oversize.append((topic, self._size))
        self._out += bytes([self._head[0]]) + _varint(len(keep)) + keep
        self._skip = self._size - len(keep)
        self._head.clear()
        self._keep = None
        return i


class Inbox:
    """The dispatcher's two-lane queue (see the module doc). `put` never blocks."""

    def __init__(self, bulk_items: int = 1000, bulk_bytes: int = 4 * 1024 * 1024,
                 bulk_rate: float = 200.0) -> None:
        self.bulk_items, self.bulk_bytes, self.bulk_rate = bulk_items, bulk_bytes, bulk_rate
        self._tokens, self._filled = float(bulk_items), time.monotonic()
        self._first: deque[Any] = deque()
        self._bulk: deque[tuple[Any, int]] = deque()
        self._bulk_size = 0
        self._ready = threading.Condition()
        self.dropped = 0

    def put(self, item: Any, *, bulk: bool = False, size: int = 0) -> bool:
        """Queue `item`; a bulk one is dropped (False) when its lane is full."""
        with self._ready:
            if bulk:
                if (len(self._bulk) >= self.bulk_items
                        or self._bulk_size + size > self.bulk_bytes):
                    self.dropped += 1
                    return False
                self._bulk.append((item, size))
                self._bulk_size += size
            else:
                self._first.append(item)
            self._ready.notify()
        return True

    def shed_bulk(self) -> bool:
        """Whether a QoS 0 message coming in is to be dropped unread: its lane is full, or
        more than `bulk_rate` a second came in (a burst of `bulk_items` allowed)."""
        now = time.monotonic()
        self._tokens = min(float(self.bulk_items),
                           self._tokens + (now - self._filled) * self.bulk_rate)
        self._filled = now
        if (self._tokens < 1 or len(self._bulk) >= self.bulk_items
                or self._bulk_size >= self.bulk_bytes):
            return True
        self._tokens -= 1
        return False

    def get(self) -> Any:
        with self._ready:
            while not self._first and not self._bulk:
                self._ready.wait()
            if self._first:
                return self._first.popleft()
            item, size = self._bulk.popleft()
            self._bulk_size -= size
            return item

    def get_nowait(self, accept: Callable[[Any], bool]) -> Any | None:
        """The next item if one is queued and `accept`s it (else None; it stays first)."""
        with self._ready:
            if self._first:
                if not accept(self._first[0]):
                    return None
                return self._first.popleft()
            if self._bulk and accept(self._bulk[0][0]):
                item, size = self._bulk.popleft()
                self._bulk_size -= size
                return item
            return None

    def __len__(self) -> int:
        with self._ready:
            return len(self._first) + len(self._bulk)

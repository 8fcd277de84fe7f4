"""How a dashboard app is served: the one owner of uvicorn's settings, used by every
command that serves one (`cauldron dashboard`, `cauldron demo`, `cauldron count`) and by
the tests, so that what is tested and measured is what is deployed.

Live updates go to many sockets at once (500 phones at an event). They are framed once:
`shared_message(text)` is an ASGI ``websocket.send`` message that also carries the
WebSocket frame ready-made, and `SharedFrameProtocol` (uvicorn's protocol, otherwise
unchanged) writes that frame as is, where it would encode and frame the text again for each
socket. It also offers the app, as the ASGI extension `WRITER`, a plain function that
writes a ready-made frame at once when the socket can take it: the fan-out then costs one
call per socket instead of waking a task per socket (most of the dashboard's CPU per update
at 500 viewers). Another ASGI server ignores both: the text is sent as usual, same bytes on
the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import h11
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from dashboard.guard import client_key

if TYPE_CHECKING:
    import uvicorn
    from uvicorn._types import ASGISendEvent
    from websockets.http11 import Request

FRAME = "cauldron.frame"  # the ASGI message key of a ready-made frame
WRITER = "cauldron.frame_writer"  # the ASGI extension: {"write": (frame) -> written?}


def shared_message(text: str) -> dict[str, Any]:
    """A ``websocket.send`` message of `text` for any number of sockets (never changed after:
    every socket is handed the same dict)."""
    frame = Frame(Opcode.TEXT, text.encode()).serialize(mask=False)  # a server never masks
    return {"type": "websocket.send", "text": text, FRAME: frame}


class SharedFrameProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol; a message with a ready-made frame has it written as is.
    Only while the connection is open and has no extension (a compressed connection would
    need its own frame: it gets the text, framed as usual)."""

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # none when the handshake was refused
        if scope is not None:  # the app's task has not started yet: it sees this
            scope["extensions"][WRITER] = {"write": self.write_now}

    def write_now(self, frame: bytes) -> bool:
        """Write a ready-made frame now if the socket takes it without waiting; False when
        it must wait (its buffer is full: a slow reader) or is not open: send it then."""
        if (not self.writable.is_set() or self.disconnected or not self.handshake_complete
                or self.close_sent or self.initial_response is not None
                or self.conn.state is not State.OPEN or self.conn.extensions):
            return False
        self.transport.write(frame)
        return True

    async def send(self, message: ASGISendEvent) -> None:
        frame = cast("dict[str, Any]", message).get(FRAME)
        if frame is None or self.conn.extensions:
            await super().send(message)
            return
        await self.writable.wait()  # a slow socket waits here (its own sender task only)
        if self.disconnected:
            raise ClientDisconnected()
        if (not self.handshake_complete or self.close_sent or self.initial_response is not None
                or self.conn.state is not State.OPEN):
            await super().send(message)  # what uvicorn does then (refuse or raise)
            return
        self.transport.write(frame)


class Limits:
    """What one client may hold open, and for how long, so that no one can exhaust the
    dashboard's connections or files (slow-loris: half-sent requests, idle sockets).

    - a request must arrive whole (headers and body) within `request_timeout` seconds of its
      first byte (or of the connection); an idle keep-alive connection is closed after
      uvicorn's ``timeout_keep_alive``; an idle WebSocket lives on only while it answers
      pings, and counts against its client's `ws_per_client`;
    - one client (an IPv4 address, an IPv6 /64: `dashboard.guard.client_key`) holds at most
      `per_client` connections and `ws_per_client` WebSockets: more get 503 and are closed;
    - all clients together hold at most the file limit less `file_margin` (the broker link,
      the data files, the logs keep their files): more are closed at once.
    Clients for which `exempt` is true are counted only overall: by default this machine
    (the table's screen, a proxy in front, a bench)."""

    def __init__(self, per_client: int = 64, ws_per_client: int = 16,
                 request_timeout: float = 10.0, file_margin: int = 256,
                 total: int | None = None,
                 exempt: Callable[[str], bool] | None = None) -> None:
        self.per_client = per_client
        self.ws_per_client = ws_per_client
        self.request_timeout = request_timeout
        self.file_margin = file_margin
        self.total = total if total is not None else max(64, open_files() - file_margin)
        self.exempt = exempt if exempt is not None else _loopback
        self._open: dict[str, int] = {}
        self._sockets: dict[str, int] = {}
        self.count = 0
        self.refused = 0

    def admit(self, client: str) -> str | None:
        """Count a new connection; why it is refused (then it is not counted), or None."""
        if self.count >= self.total:
            self.refused += 1
            return "the dashboard is at its connection limit"
        if not self.exempt(client) and self._open.get(client, 0) >= self.per_client:
            self.refused += 1
            return "too many connections from this device"
        self._open[client] = self._open.get(client, 0) + 1
        self.count += 1
        return None

    def release(self, client: str) -> None:
        self.count -= 1
        left = self._open.get(client, 1) - 1
        if left > 0:
            self._open[client] = left
        else:
            self._open.pop(client, None)

    def admit_socket(self, client: str) -> bool:
        if not self.exempt(client) and self._sockets.get(client, 0) >= self.ws_per_client:
            self.refused += 1
            return False
        self._sockets[client] = self._sockets.get(client, 0) + 1
        return True

    def release_socket(self, client: str) -> None:
        left = self._sockets.get(client, 1) - 1
        if left > 0:
            self._sockets[client] = left
        else:
            self._sockets.pop(client, None)


def _loopback(client: str) -> bool:
    return client.startswith("127.") or client == "::1"  # (dashboard.guard.client_key)


def open_files(want: int = 65536) -> int:
    """This process's limit on open files, raised (soft) toward the hard limit first."""
    try:
        import resource
    except ImportError:  # not on Unix
        return 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    goal = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < goal:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (goal, hard))
            soft = goal
        except (ValueError, OSError):
            pass
    return want if soft == resource.RLIM_INFINITY else int(soft)


LIMITS = "cauldron_limits"  # the uvicorn.Config attribute holding the server's `Limits`
LINGER_TIME = 2.0  # after an early answer (413), the unread body is drained this long ...
LINGER_BYTES = 4 * 1024 * 1024  # ... or up to this much, then the connection is closed


def _limits(config: Any) -> Limits:
    limits = getattr(config, LIMITS, None)
    if limits is None:
        limits = Limits()
        setattr(config, LIMITS, limits)
    return cast("Limits", limits)


def _refuse(transport: Any, why: str) -> None:
    body = why.encode()
    transport.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; "
                    b"charset=utf-8\r\nconnection: close\r\nretry-after: 10\r\n"
                    b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    transport.close()


class _Lingering:
    """The HTTP protocol's view of its transport: `close` while the client is still sending
    a body we answered early (413) first says so (FIN), drains what comes for a moment, then
    closes; closing at once with unread data makes the kernel reset the connection, and the
    client sees a reset instead of our answer."""

    def __init__(self, transport: Any, protocol: BoundedH11Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        self._protocol.close_gracefully()


class BoundedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol under `Limits`: counted per client, a deadline for each
    request to arrive whole, and an early answer's connection closed gracefully."""

    def __init__(self, config: Any, server_state: Any, app_state: Any,
                 _loop: Any = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits = _limits(config)
        self.who = ""
        self.counted = False
        self.upgraded = False
        self.real: Any = None
        self.deadline: asyncio.TimerHandle | None = None
        self.draining: asyncio.TimerHandle | None = None
        self.drained = 0

    def connection_made(self, transport: Any) -> None:
        self.real = transport
        super().connection_made(_Lingering(transport, self))  # type: ignore[arg-type]
        self.flow = FlowControl(transport)
        self.who = client_key(self.client[0] if self.client else None)
        why = self.limits.admit(self.who)
        if why is not None:
            _refuse(transport, why)
            return
        self.counted = True
        self._start_deadline()

    def _start_deadline(self) -> None:
        if self.deadline is None:
            self.deadline = self.loop.call_later(self.limits.request_timeout, self._too_slow)

    def _stop_deadline(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _too_slow(self) -> None:
        self.deadline = None
        if self.cycle is None or self.cycle.response_complete or self.cycle.more_body:
            self.real.close()  # a request not whole in time: its connection is dropped

    def data_received(self, data: bytes) -> None:
        if self.draining is not None:
            self.drained += len(data)
            if self.drained > LINGER_BYTES:
                self.real.close()
            return
        if self.cycle is None or self.cycle.response_complete:
            self._start_deadline()  # a new request begins: it has its time to arrive
        super().data_received(data)
        if self.cycle is not None and not self.cycle.more_body:
            self._stop_deadline()  # whole: the app takes the time it needs

    def eof_received(self) -> None:
        if self.draining is not None:
            self.real.close()

    def close_gracefully(self) -> None:
        if (self.draining is None and not self.real.is_closing()
                and self.conn.their_state is h11.SEND_BODY and self.real.can_write_eof()):
            self.real.write_eof()  # our answer is all sent; their body is not all read
            self.real.resume_reading()
            self.draining = self.loop.call_later(LINGER_TIME, self.real.close)
            return
        if self.draining is None:
            self.real.close()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._stop_deadline()
        if not self.limits.admit_socket(self.who):
            _refuse(self.real, "too many live pages from this device")
            return
        self.upgraded = True
        self.transport = self.real  # the WebSocket writes straight to the socket
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_deadline()
        if self.draining is not None:
            self.draining.cancel()
        if self.counted:
            self.counted = False
            self.limits.release(self.who)
        super().connection_lost(exc)


class BoundedWebSocketProtocol(SharedFrameProtocol):
    """`SharedFrameProtocol` releasing its client's counts (`Limits`) when it closes."""

    def connection_lost(self, exc: Exception | None) -> None:
        limits = _limits(self.config)
        who = client_key(self.client[0] if self.client else None)
        limits.release(who)
        limits.release_socket(who)
        super().connection_lost(exc)


# Live updates are sent uncompressed: per-message deflate compresses every message once per
# viewer (its own zlib context each), which costs more than the bytes it saves on a LAN;
# browsers offer it, so the server must decline it.
# A WebSocket message is never bigger than a request body may be (dashboard.guard.MAX_BODY).
UVICORN_OPTIONS: dict[str, Any] = {
    "log_level": "warning",
    "http": BoundedH11Protocol,
    "ws": BoundedWebSocketProtocol,
    "timeout_keep_alive": 5,  # an idle HTTP connection is closed after this (seconds)
    "ws_per_message_deflate": False,
    "ws_max_size": 64 * 1024,
}


def uvicorn_config(app: Any, host: str, port: int, limits: Limits | None = None,
                   **extra: Any) -> uvicorn.Config:
    """A `uvicorn.Config` for `app` on host:port with the dashboard's options and `Limits`
    (`extra`: anything a caller adds, such as a graceful-shutdown timeout)."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, **{**UVICORN_OPTIONS, **extra})
    setattr(config, LIMITS, limits or Limits())
    return config

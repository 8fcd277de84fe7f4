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

from typing import TYPE_CHECKING, Any, cast

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State

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


# Live updates are sent uncompressed: per-message deflate compresses every message once per
# viewer (its own zlib context each), which costs more than the bytes it saves on a LAN;
# browsers offer it, so the server must decline it.
# A WebSocket message is never bigger than a request body may be (dashboard.guard.MAX_BODY).
UVICORN_OPTIONS: dict[str, Any] = {
    "log_level": "warning",
    "ws": SharedFrameProtocol,
    "ws_per_message_deflate": False,
    "ws_max_size": 64 * 1024,
}


def uvicorn_config(app: Any, host: str, port: int, **extra: Any) -> uvicorn.Config:
    """A `uvicorn.Config` for `app` on host:port with the dashboard's options (`extra`:
    anything a caller adds, such as a graceful-shutdown timeout)."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, **{**UVICORN_OPTIONS, **extra})

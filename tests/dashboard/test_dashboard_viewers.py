"""Many live viewers on one table (an event's audience of phones): each update is serialised
once for all of them, a slow viewer holds up no one and ends with the latest state, seat
sockets stay private, and live updates go uncompressed (the served dashboard declines the
per-message deflate browsers offer). Real uvicorn, real broker, real sockets."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from dashkit import Dash, new_game, play, seat_auth, wait_until
from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from dashboard import bridge as bridge_module
from dashboard.models import SeatState, TableState
from dashboard.serving import shared_message


class Viewer:
    """A WebSocket client on a plain socket that reads only when told to (so a test can
    play a phone that stops reading). It offers per-message deflate, as browsers do."""

    def __init__(self, port: int, path: str = "/ws/table", rcvbuf: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:  # before connecting: it sets the TCP window offered
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.connect(("127.0.0.1", port))
        self.ws = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}{path}"),
                                 extensions=[ClientPerMessageDeflateFactory()], max_size=None)
        request = self.ws.connect()
        for name, value in (headers or {}).items():
            request.headers[name] = value
        self.ws.send_request(request)
        self._flush()
        self.response: Response | None = None
        self.messages: list[str] = []
        self.read_until(lambda: len(self.messages) >= 1, "the first state")

    def _flush(self) -> None:
        for chunk in self.ws.data_to_send():
            if chunk:
                self.sock.sendall(chunk)

    def read_until(self, done: Callable[[], bool], what: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out after {timeout} s waiting for {what} "
                                     f"({len(self.messages)} messages so far)")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not data:
                raise AssertionError(f"the server closed the socket before {what}")
            self.ws.receive_data(data)
            for event in self.ws.events_received():
                if isinstance(event, Response):
                    self.response = event
                    assert event.status_code == 101, event
                elif isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                    self.messages.append(bytes(event.data).decode())
            self._flush()

    def wait_for_ts(self, ts: float) -> None:
        needle = f'"ts":{json.dumps(ts)}'
        self.read_until(lambda: bool(self.messages) and needle in self.messages[-1],
                        f"the update published at {ts}")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def viewers(dash: Dash) -> Iterator[list[Viewer]]:
    """Viewers opened by a test (closed at its end)."""
    opened: list[Viewer] = []
    yield opened
    for viewer in opened:
        viewer.close()


def _port(dash: Dash) -> int:
    assert dash.server is not None
    return dash.server.port


def _send_buffer_max() -> int:
    """The most a TCP socket's send buffer grows to here (bytes)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem", encoding="ascii") as fh:
            return int(fh.read().split()[2])
    except (OSError, ValueError, IndexError):
        return 4 * 2**20


def _ts(message: str) -> float | None:
    game = json.loads(message).get("game")
    return float(game["ts"]) if game else None


def test_a_slow_viewer_holds_up_no_one_and_ends_with_the_latest_state(
    dash: Dash, viewers: list[Viewer]
) -> None:
    game = play(new_game(players=4), 6)
    dash.publish_game(game, ts=1.0)
    wait_until(lambda: dash.bridge.public is not None, 5, "game/public")
    before = set(dash.bridge._subscribers)
    # A phone that stops reading, with a small TCP window: the server's buffers fill.
    slow = Viewer(_port(dash), rcvbuf=4096)
    viewers.append(slow)
    [slow_sub] = set(dash.bridge._subscribers) - before
    fast = Viewer(_port(dash))
    viewers.append(fast)
    published = sent = 0
    ts = 1.0
    # Publish until the slow socket's sender is stuck and newer states replace each other
    # behind it (after the kernel's send buffer and asyncio's 64 KiB); the other viewer gets
    # each update meanwhile.
    while slow_sub.skipped < 2:
        assert sent < 4 * _send_buffer_max() + 2**20, \
            f"{published} updates ({sent} bytes) queued for a viewer that reads nothing"
        ts += 1
        dash.publish_game(game, ts=ts)
        published += 1
        fast.wait_for_ts(ts)
        sent += len(fast.messages[-1])
    for _ in range(5):  # more updates while it is stuck: the fast viewer still gets them
        ts += 1
        dash.publish_game(game, ts=ts)
        published += 1
        fast.wait_for_ts(ts)
    # The phone reads again: it gets the latest state, having skipped stale ones.
    slow.wait_for_ts(ts)
    stamps = [_ts(m) for m in slow.messages[1:]]
    got = [t for t in stamps if t is not None]
    assert len(got) == len(stamps), "an update without its game"
    assert got[-1] == ts
    assert len(got) < published, "the slow viewer was sent every stale state"
    assert got == sorted(got), "states arrived out of order"


def test_each_update_is_serialised_once_and_seats_get_only_their_own(
    dash: Dash, viewers: list[Viewer], monkeypatch: pytest.MonkeyPatch
) -> None:
    game = play(new_game(players=3, memory_aid=True), 9)  # each seat's stack is on its view
    assert game.cauldrons[0] != game.cauldrons[1]
    dash.publish_game(game, ts=1.0)
    wait_until(lambda: dash.bridge.game_id == "g1", 5, "game/public")
    for seat in range(3):
        dash.publish_seat(game, seat)
    wait_until(lambda: len(dash.bridge.seat_views) == 3, 5, "the seat views")
    port = _port(dash)
    table = [Viewer(port) for _ in range(20)]
    secrets = {seat: dash.bridge.secrets.secret("g1", seat) for seat in (0, 1)}
    seats = [(seat, Viewer(port, f"/ws/seat/{seat}", headers=seat_auth(secrets[seat])))
             for seat in (0, 0, 1)]
    viewers.extend(table + [viewer for _, viewer in seats])
    calls: dict[str, int] = {"table": 0, "seat": 0}

    def counting(model: type[Any], name: str) -> Callable[..., str]:
        original = model.model_dump_json

        def dump(self: Any, *args: Any, **kwargs: Any) -> str:
            calls[name] += 1
            return str(original(self, *args, **kwargs))
        return dump

    monkeypatch.setattr(TableState, "model_dump_json", counting(TableState, "table"))
    monkeypatch.setattr(SeatState, "model_dump_json", counting(SeatState, "seat"))
    framed: list[str] = []

    def frame_once(text: str) -> dict[str, Any]:
        framed.append(text)
        return shared_message(text)

    monkeypatch.setattr(bridge_module, "shared_message", frame_once)
    dash.publish_game(game, ts=2.0)
    for viewer in table:
        viewer.wait_for_ts(2.0)
    for _, viewer in seats:
        viewer.wait_for_ts(2.0)
    assert calls == {"table": 1, "seat": 2}  # once for 20 viewers; once per seat
    assert len(framed) == 3  # and framed once each
    assert len({viewer.messages[-1] for viewer in table}) == 1
    for seat, viewer in seats:
        state = json.loads(viewer.messages[-1])
        assert state["type"] == "seat" and state["seat"] == seat
        assert state["stack"] == game.cauldrons[seat]  # its own, never another seat's
    assert seats[0][1].messages[-1] != seats[2][1].messages[-1]


def test_live_updates_are_not_compressed(dash: Dash, viewers: list[Viewer]) -> None:
    viewer = Viewer(_port(dash))  # offers permessage-deflate, as browsers do
    viewers.append(viewer)
    assert viewer.response is not None
    assert "Sec-WebSocket-Extensions" not in viewer.response.headers
    assert viewer.ws.extensions == []

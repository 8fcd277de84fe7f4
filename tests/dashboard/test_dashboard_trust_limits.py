"""Slow-loris and friends (issue 24, item 6, and the early 413): real sockets on loopback
against the dashboard as it is served (`dashboard.serving`). Loopback is this machine and
exempt from the per-device caps by default; here it is not (`NOBODY_EXEMPT`), and the
attacker's sockets come from other loopback addresses (127.0.0.2, ...) so the host's own
requests from 127.0.0.1 are another device."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import Dash, Server, make_dash, wait_until

from dashboard.serving import Limits, open_files


def nobody_exempt(client: str) -> bool:
    return False


@pytest.fixture
def limited(request: pytest.FixtureRequest, mqtt_broker: str, table_id: str,
            tmp_path: Path) -> Iterator[Dash]:
    """A served dashboard with the `Limits` the test gives (indirect parametrize)."""
    limits: Limits = request.param
    gen = make_dash(mqtt_broker, table_id, tmp_path, serve=False)
    dash = next(gen)
    dash.server = Server(dash.app, limits=limits).start()
    try:
        yield dash
    finally:
        dash.server.stop()
        next(gen, None)


def _port(dash: Dash) -> int:
    assert dash.server is not None
    return dash.server.port


def attacker_socket(dash: Dash, source: str = "127.0.0.2") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect(("127.0.0.1", _port(dash)))
    return sock


def closed_by_server(sock: socket.socket) -> bytes | None:
    """What the server said before closing, or None while it keeps the socket open."""
    sock.settimeout(0.01)
    said = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return said
            said += chunk
    except (BlockingIOError, TimeoutError):
        return None
    except ConnectionResetError:
        return said


def page_loads(dash: Dash) -> bool:
    started = time.monotonic()
    ok = httpx.get(dash.url + "/api/table", timeout=5).status_code == 200
    return ok and time.monotonic() - started < 5


@pytest.mark.parametrize("limited", [Limits(request_timeout=1.0, exempt=nobody_exempt,
                                            per_client=1000)], indirect=True)
def test_half_sent_requests_are_dropped_after_the_request_timeout(limited: Dash) -> None:
    """1,100 half-sent requests used to stay open for ever and fill the file table. Now a
    request must be whole within `request_timeout` of its first byte: headers, or a body
    trickled in, or nothing at all."""
    socks = []
    for n in range(60):
        sock = attacker_socket(limited, f"127.0.0.{2 + n % 3}")
        if n % 3 == 0:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        elif n % 3 == 1:
            sock.sendall(b"POST /api/host/undo HTTP/1.1\r\nHost: x\r\nContent-Length: 100"
                         b"\r\n\r\n0123456789")  # a body that never comes
        socks.append(sock)  # n % 3 == 2: connected, silent
    assert page_loads(limited)
    started = time.monotonic()
    wait_until(lambda: all(closed_by_server(s) is not None for s in socks), 20,
               "every half-sent request to be dropped")
    assert time.monotonic() - started < 10
    for sock in socks:
        sock.close()


@pytest.mark.parametrize("limited", [Limits(per_client=16, exempt=nobody_exempt,
                                            request_timeout=60)], indirect=True)
def test_one_device_cannot_take_every_connection(limited: Dash) -> None:
    socks = [attacker_socket(limited) for _ in range(100)]
    wait_until(lambda: sum(closed_by_server(s) is not None for s in socks) >= 84, 10,
               "the connections over the cap to be refused")
    held = [s for s in socks if closed_by_server(s) is None]
    assert len(held) == 16
    assert page_loads(limited)  # the host (another device) is served meanwhile
    for sock in socks:
        sock.close()
    # Released: the device may connect again.
    def admitted() -> bool:
        with attacker_socket(limited) as sock:
            return closed_by_server(sock) is None

    wait_until(admitted, 10, "the device's count to come down")


def _ws_handshake(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    sock.sendall(b"GET /ws/table HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 b"Sec-WebSocket-Version: 13\r\n\r\n")
    return sock.recv(4096).split(b"\r\n", 1)[0]


@pytest.mark.parametrize("limited", [Limits(ws_per_client=4, exempt=nobody_exempt)],
                         indirect=True)
def test_one_device_cannot_hold_many_websockets(limited: Dash) -> None:
    """1,014 idle WebSockets used to fill the dashboard's files. One device now holds at
    most `ws_per_client`; the next handshake gets 503, and other devices are served."""
    sockets = [attacker_socket(limited, "127.0.0.3") for _ in range(6)]
    answers = [_ws_handshake(s) for s in sockets]
    assert answers[:4] == [b"HTTP/1.1 101 Switching Protocols"] * 4
    assert answers[4:] == [b"HTTP/1.1 503 Service Unavailable"] * 2
    own = attacker_socket(limited, "127.0.0.1")
    assert _ws_handshake(own) == b"HTTP/1.1 101 Switching Protocols"
    assert page_loads(limited)
    sockets[0].close()

    def opened() -> bool:
        with attacker_socket(limited, "127.0.0.3") as sock:
            return _ws_handshake(sock) == b"HTTP/1.1 101 Switching Protocols"

    wait_until(opened, 10, "a closed socket to free its place")
    for sock in [*sockets, own]:
        sock.close()


@pytest.mark.parametrize("limited", [Limits(total=24, exempt=lambda c: True,
                                            request_timeout=60)], indirect=True)
def test_connections_stop_short_of_the_file_limit(limited: Dash) -> None:
    """However many devices connect, the dashboard keeps `file_margin` files free: the
    connections over its total are refused at once, and it keeps working."""
    limits = Limits()
    assert limits.total == open_files() - limits.file_margin
    import resource
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= limits.total + limits.file_margin
    socks = [attacker_socket(limited, f"127.0.{n // 200}.{2 + n % 200}") for n in range(40)]
    wait_until(lambda: sum(closed_by_server(s) is not None for s in socks) >= 16, 10,
               "the connections over the total to be refused")
    assert sum(closed_by_server(s) is None for s in socks) <= 24
    for sock in socks:
        sock.close()
    wait_until(lambda: page_loads(limited), 10, "the dashboard to serve again")


def test_an_early_413_reaches_a_client_that_writes_first(dash: Dash) -> None:
    """A client that sends its (too big) body without waiting used to get a connection
    reset instead of the 413: the server closed with the body unread. Now it says so, drains
    a moment, and closes: the 413 arrives."""
    answers: list[Any] = []
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", _port(dash)), timeout=10) as sock:
            sock.sendall(b"POST /api/host/new_game HTTP/1.1\r\nHost: x\r\nContent-Type: "
                         b"application/json\r\nContent-Length: 500000000\r\n\r\n")
            try:
                for _ in range(64):
                    sock.sendall(b"a" * 65536)  # 4 MB written before reading anything
                said = b""
                while chunk := sock.recv(65536):
                    said += chunk
                answers.append(said.split(b"\r\n", 1)[0])
            except (ConnectionResetError, BrokenPipeError) as exc:
                answers.append(type(exc).__name__)
    assert answers == [b"HTTP/1.1 413 Request Entity Too Large"] * 3
    assert page_loads(dash)

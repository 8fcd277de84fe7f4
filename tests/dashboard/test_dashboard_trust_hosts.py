"""DNS rebinding (issue 24, smaller items): a page at ``rebind.attacker.example`` whose
name then points at the dashboard is "same origin" with it, and the browser sends its
requests with that name in ``Host``. The dashboard answers only to its own names."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dashkit import PIN, Dash, make_dash, new_game, wait_until

from dashboard.config import Settings
from dashboard.guard import host_allowed

REBOUND = "rebind.attacker.example"


@pytest.fixture
def named(mqtt_broker: str, table_id: str, tmp_path: Path) -> Iterator[Dash]:
    yield from make_dash(mqtt_broker, table_id, tmp_path, serve=True,
                         allowed_hosts=("table1.venue.lan",))


def _handshake(dash: Dash, host: str) -> bytes:
    port = int(dash.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET /ws/table HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        return sock.recv(4096).split(b"\r\n", 1)[0]


def test_a_rebound_name_gets_nothing(named: Dash) -> None:
    named.publish_game(new_game(players=2))
    wait_until(lambda: named.bridge.game_id == "g1", 10, "the game")
    port = named.url.rsplit(":", 1)[1]
    rebound = {"Host": f"{REBOUND}:{port}"}
    for method, path in [("GET", "/"), ("GET", "/api/table"), ("GET", "/api/seats/0/qr.svg"),
                         ("GET", "/api/seats/0/join"), ("GET", "/host"),
                         ("POST", "/api/host/login"), ("GET", "/api/host/seats")]:
        reply = httpx.request(method, named.url + path, headers={**rebound, "X-Host-Pin": PIN})
        assert reply.status_code == 421, (method, path)
        assert "--allowed-host" in reply.json()["detail"]
    assert _handshake(named, f"{REBOUND}:{port}") != b"HTTP/1.1 101 Switching Protocols"
    # Its own names work: addresses, names without a dot, *.local, the configured one.
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"cauldron-pi:{port}",
                 f"table.local:{port}", f"table1.venue.lan:{port}", f"[::1]:{port}"):
        assert httpx.get(named.url + "/api/table", headers={"Host": host}).status_code == 200
        assert _handshake(named, host) == b"HTTP/1.1 101 Switching Protocols"


def test_allowed_host_names() -> None:
    assert host_allowed("192.168.1.20:8000", frozenset())
    assert host_allowed("[fe80::1]:8000", frozenset())
    assert not host_allowed("192.168.1.20.nip.io:8000", frozenset())
    assert not host_allowed("", frozenset())
    assert not host_allowed("table.example.", frozenset())
    assert host_allowed("TABLE.example.", frozenset({"table.example"}))
    with pytest.raises(ValueError):
        Settings(allowed_hosts=("bad name",))

"""Joining from any phone: the QR codes and seat links use the table's public address (the
LAN address when listening on every interface, or --public-url), never the address the big
screen's browser used; on 127.0.0.1 the terminal says phones cannot join and what to do; the
host PIN is kept in the data dir across restarts; --no-virtual hides the virtual table."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from dashkit import PIN, make_dash, new_game, wait_until
from fastapi.testclient import TestClient

from dashboard import config
from dashboard.cli import reach_note
from dashboard.config import Settings, persistent_pin


def test_host_pin_is_kept_in_the_data_dir(tmp_path: Path) -> None:
    first = persistent_pin(tmp_path / "d")
    assert persistent_pin(tmp_path / "d") == first  # a restart keeps it
    path = tmp_path / "d" / config.PIN_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("no!\n")  # a damaged file is replaced, never used
    assert persistent_pin(tmp_path / "d") != "no!"


def test_public_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "lan_address", lambda: "192.168.1.20")
    assert Settings(host="0.0.0.0", port=8123).public_base() == "http://192.168.1.20:8123/"
    assert Settings(host="127.0.0.1").public_base() is None
    assert Settings(host="127.0.0.1", public_url="https://table.example.org/cauldron"
                    ).public_base() == "https://table.example.org/cauldron/"
    local = reach_note(Settings(host="127.0.0.1"))
    assert "phones cannot join" in local and "--host 0.0.0.0" in local
    assert "192.168.1.20:8000" in reach_note(Settings(host="0.0.0.0"))
    with pytest.raises(ValueError):
        Settings(public_url="javascript:alert(1)")


def test_qr_codes_and_links_use_the_public_address(
    mqtt_broker: str, table_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dashboard.routers.seats import qr_svg

    monkeypatch.setattr(config, "lan_address", lambda: "10.1.2.3")
    gen = make_dash(mqtt_broker, table_id, tmp_path, serve=False, host="0.0.0.0", port=8765)
    dash = next(gen)
    try:
        with TestClient(dash.app, base_url="http://localhost:8765") as client:
            wait_until(lambda: dash.bridge.connected, 10, "broker")
            dash.publish_game(new_game(players=2))
            wait_until(lambda: dash.bridge.game_id == "g1", 5, "the game")
            host = {"X-Host-Pin": PIN}
            link = client.get("/api/seats/0/join", headers=host).json()["url"]
            assert link.startswith("http://10.1.2.3:8765/join/0?token=")
            assert client.get("/api/seats/0/qr.svg", headers=host).text == qr_svg(link)
    finally:
        next(gen, None)


def test_no_virtual_hides_the_virtual_table(mqtt_broker: str, table_id: str,
                                            tmp_path: Path) -> None:
    gen = make_dash(mqtt_broker, table_id, tmp_path, serve=False, virtual=False)
    dash = next(gen)
    try:
        with TestClient(dash.app) as client:
            for path in ("/", "/scores", "/host"):
                assert 'href="/virtual"' not in client.get(path).text, path
            assert client.get("/virtual").status_code == 404
            host: Any = client.get("/host").text
            assert '"virtual": false' in host  # host.js drops the virtual deal choices
    finally:
        next(gen, None)

"""`cauldron dashboard` as a person runs it: starts, serves, stops on Ctrl-C; bad options
give one clear line and exit code 2."""

from __future__ import annotations

import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
from dashkit import wait_until

from engine.wire.broker import free_port

ROOT = Path(__file__).resolve().parents[2]


def cauldron(*args: str) -> list[str]:
    """The installed `cauldron` command (``python -m engine.cli`` would make a second copy of
    engine.cli as __main__, with its own CliError)."""
    script = Path(sys.executable).parent / "cauldron"
    return [str(script), *args]


def test_dashboard_command_serves_and_stops_on_ctrl_c(
    mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    port = free_port()
    proc = subprocess.Popen(
        cauldron("dashboard", "--port", str(port), "--mqtt", mqtt_broker, "--table", table_id,
                 "--pin", "135799", "--data-dir", str(tmp_path)),
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        def up() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/api/table", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, 20, "cauldron dashboard to serve")
        wait_until(lambda: httpx.get(f"http://127.0.0.1:{port}/api/table").json()["status"]
                   ["broker"], 30, "the broker connection")
        assert httpx.post(f"http://127.0.0.1:{port}/api/host/login",
                          headers={"X-Host-Pin": "135799"}).status_code == 204
        assert "Table du Chaudron" in httpx.get(f"http://127.0.0.1:{port}/").text
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    assert f"127.0.0.1:{port}" in out
    assert "Traceback" not in err


def test_bad_options_give_one_clear_line() -> None:
    for args, words in [
        (["--mqtt", "http://127.0.0.1:1"], "mqtt://"),
        (["--pin", "12"], "--pin"),
        (["--table", "no spaces"], "--table"),
    ]:
        started = time.monotonic()
        result = subprocess.run(cauldron("dashboard", *args), cwd=ROOT, capture_output=True,
                                text=True, timeout=30)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, result.stderr)
        assert time.monotonic() - started < 30


def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made as the README says (openssl)."""
    cert, key = tmp_path / "dash.crt", tmp_path / "dash.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_a_listener_on_the_venue_wifi_reads_no_pin_with_tls(
    mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    """`--tls-cert/--tls-key`: the dashboard speaks HTTPS only, so the PIN and the seats'
    cookies never cross a shared Wi-Fi in clear; plain HTTP on its port gets no page."""
    cert, key = self_signed(tmp_path)
    trust = ssl.create_default_context(cafile=str(cert))
    port = free_port()
    proc = subprocess.Popen(
        cauldron("dashboard", "--port", str(port), "--mqtt", mqtt_broker, "--table", table_id,
                 "--pin", "135799", "--data-dir", str(tmp_path / "data"),
                 "--tls-cert", str(cert), "--tls-key", str(key)),
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        def up() -> bool:
            try:
                return httpx.get(f"https://127.0.0.1:{port}/api/table", verify=trust,
                                 timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, 20, "cauldron dashboard to serve HTTPS")
        assert httpx.post(f"https://127.0.0.1:{port}/api/host/login", verify=trust,
                          headers={"X-Host-Pin": "135799"}).status_code == 204
        try:
            plain = httpx.get(f"http://127.0.0.1:{port}/api/table", timeout=3).status_code
        except httpx.HTTPError:
            plain = None
        assert plain != 200
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    assert f"https://127.0.0.1:{port}/" in out
    assert "Traceback" not in err


def test_tls_options_give_one_clear_line(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    (tmp_path / "junk").write_text("not a certificate")
    for args, words in [
        (["--tls-cert", str(cert)], "go together"),
        (["--tls-cert", str(cert), "--tls-key", str(tmp_path / "missing.key")], "--tls-key"),
        (["--tls-cert", str(tmp_path / "junk"), "--tls-key", str(key)], "not a PEM"),
    ]:
        result = subprocess.run(cauldron("dashboard", *args), cwd=ROOT, capture_output=True,
                                text=True, timeout=30)
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, result.stderr)

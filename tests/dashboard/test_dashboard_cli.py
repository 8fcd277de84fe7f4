"""`cauldron dashboard` as a person runs it: starts, serves, stops on Ctrl-C; bad options
give one clear line and exit code 2."""

from __future__ import annotations

import signal
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
                   ["broker"], 10, "the broker connection")
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

"""`cauldron count`: the score-only mode as a person starts it, in a subprocess. With the
simulated reader it works without hardware; a count survives the process being killed; a
missing USB reader stack or a busy port is a one-line error saying what to do."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.wire.broker import free_port

ROOT = Path(__file__).resolve().parents[2]
CAULDRON = str(Path(sys.executable).parent / "cauldron")
PIN = "1357"


def request(url: str, method: str = "GET", body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={
        "X-Host-Pin": PIN, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.loads(answer.read() or b"null")


def wait_up(url: str, proc: subprocess.Popen[str], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            request(url + "/api/count")
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    raise AssertionError("cauldron count did not come up")


@contextmanager
def count_process(data: Path, port: int, *extra: str) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    proc = subprocess.Popen(
        [CAULDRON, "count", "--backend", "sim", "--port", str(port), "--pin", PIN, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        wait_up(f"http://127.0.0.1:{port}", proc)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def test_count_with_the_simulated_reader_survives_a_kill(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with count_process(tmp_path, port) as proc:
        state = request(url + "/api/count/setup", "POST", {"colours": ["red", "blue"]})
        assert state["count"]["setup"]["removed"] == "yellow"
        assert state["reader"]["simulated"] is True
        for card in ("red-a-4", "red-a-3", "red-a-2"):
            state = request(url + "/api/count/reader/tap", "POST", {"card": card})
        assert state["message"]["kind"] == "counted"
        last = state["count"]["seats"][0]["taps"][-1]
        assert (last["card"], last["source"]) == ("red-a-2", "tag")
        assert state["count"]["scores"]["seats"][0]["total"] == 18  # (4+3+2) x 2 own colour
        state = request(url + "/api/count/reader/tap", "POST", {"card": "yellow-b-1"})
        assert "yellow cards are out of the box" in state["message"]["text"]
        with urllib.request.urlopen(url + "/count") as page:
            assert b"count.js" in page.read()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    with count_process(tmp_path, port):
        state = request(url + "/api/count")
        assert [t["card"] for t in state["count"]["seats"][0]["taps"]] == [
            "red-a-4", "red-a-3", "red-a-2"]


def test_changes_need_the_host_pin(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with count_process(tmp_path, port):
        req = urllib.request.Request(url + "/api/count/setup", method="POST",
                                     data=b'{"colours": ["red", "blue"]}',
                                     headers={"Content-Type": "application/json",
                                              "X-Host-Pin": "0000"})
        try:
            urllib.request.urlopen(req, timeout=10)
            raise AssertionError("a wrong PIN was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403
        assert request(url + "/api/count")["count"] is None


def run_count(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAULDRON, "count", *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "XDG_DATA_HOME": str(data)}, cwd=ROOT,
                          check=False)


def test_without_the_pcsc_stack_the_error_says_what_to_install(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['smartcard'] = None; from engine.cli import main; "
            "sys.exit(main(['count', '--backend', 'pcsc', '--port', '0']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "XDG_DATA_HOME": str(tmp_path)},
                          cwd=ROOT, check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr  # one line, no traceback
    assert "apt install pcscd" in done.stderr and "--backend sim" in done.stderr


def test_a_busy_port_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_count("--backend", "sim", "--port", str(port), data=tmp_path)
    assert done.returncode == 2
    assert "choose another --port" in done.stderr and "Traceback" not in done.stderr


def test_count_and_readers_on_the_usb_back_end_with_the_mock_factory(tmp_path: Path) -> None:
    """The pcsc back-end through the real commands, on the PC/SC fake (no reader here)."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "CAULDRON_PCSC_FACTORY": "mock"}
    done = subprocess.run([CAULDRON, "readers", "--backend", "pcsc", "--once", "--direct"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=ROOT,
                          check=False)
    assert done.returncode == 0, done.stderr
    pads = next(line for line in done.stdout.splitlines() if line.startswith("pads"))
    assert pads.split()[1:3] == ["1:", "."]  # the mock reader: the first pad, empty
    enrol = subprocess.run([CAULDRON, "enroll", "--backend", "pcsc", "--offline", "--write",
                            "--idle-timeout", "0.5"], capture_output=True, text=True,
                           timeout=60, env=env, cwd=ROOT, check=False, stdin=subprocess.DEVNULL)
    assert "next: yellow-a-1" in enrol.stdout, enrol.stdout + enrol.stderr
    assert "Stopped." in enrol.stdout and "Traceback" not in enrol.stderr  # stdin closed: q
    port = free_port()
    proc = subprocess.Popen([CAULDRON, "count", "--port", str(port), "--pin", PIN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)
    try:
        wait_up(f"http://127.0.0.1:{port}", proc)
        reader = request(f"http://127.0.0.1:{port}/api/count")["reader"]
        assert reader == {"kind": "pcsc", "label": "Mock PC/SC reader 00 00", "health": "ok",
                          "simulated": False}
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(10)

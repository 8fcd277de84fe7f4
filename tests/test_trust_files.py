"""A table as deployed (`cauldron engine`, `cauldron hub`, `cauldron dashboard` as separate
processes, started with a loose umask): every data folder is 0700 and every file 0600, and
no secret (host PIN, broker password) can be read off a command line with `ps`."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from waiting import EXIT_WITHIN, wait_for

from engine.wire.broker import free_port

ROOT = Path(__file__).resolve().parents[1]
CAULDRON = str(Path(sys.executable).parent / "cauldron")
PIN = "805317"
PASSWORD = "s3cret-broker-pw"


class Table:
    def __init__(self, mqtt_broker: str, tmp: Path) -> None:
        self.table = f"t-{uuid.uuid4().hex[:6]}"
        self.xdg = tmp / "xdg"
        self.port = free_port()
        host_port = mqtt_broker.removeprefix("mqtt://")
        self.mqtt = f"mqtt://dashboard:{PASSWORD}@{host_port}"  # the test broker ignores it
        env = {k: v for k, v in os.environ.items() if k != "CAULDRON_KEYS_DIR"}
        env.update(XDG_DATA_HOME=str(self.xdg), CAULDRON_MQTT=self.mqtt,
                   CAULDRON_HOST_PIN=PIN)
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        for name, args in (
            ("engine", ["engine", "--name", f"engine-{self.table}"]),
            ("hub", ["hub", "--backend", "sim", "--table", self.table, "--mqtt", mqtt_broker,
                     "-q"]),
            ("dashboard", ["dashboard", "--table", self.table, "--port", str(self.port)]),
        ):
            self.procs[name] = subprocess.Popen(
                [CAULDRON, *args], env=env, cwd=ROOT,
                stdout=(self.logs / f"{name}.out").open("wb"),
                stderr=(self.logs / f"{name}.err").open("wb"),
                preexec_fn=lambda: os.umask(0o022),  # the loosest usual umask
            )
        self.url = f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.logs.iterdir()))

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(EXIT_WITHIN)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(EXIT_WITHIN)


@pytest.fixture
def table(mqtt_broker: str, tmp_path: Path) -> Iterator[Table]:
    t = Table(mqtt_broker, tmp_path)
    try:
        yield t
    finally:
        t.stop()


def _up(table: Table) -> bool:
    for name, proc in table.procs.items():
        assert proc.poll() is None, f"{name} stopped:\n{table.output()}"
    try:
        state = httpx.get(table.url + "/api/table", timeout=2).json()
    except httpx.HTTPError:
        return False
    status = state.get("status", {})
    return bool(status.get("engine") == "online" and status.get("hub_backend") == "sim")


def test_secrets_absent_from_ps(table: Table) -> None:
    wait_for(lambda: _up(table), 60, "the table to come up")
    listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True,
                             check=True).stdout
    for proc in table.procs.values():
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        assert "cauldron" in cmdline
        assert PIN not in cmdline and PASSWORD not in cmdline
    assert PIN not in listing and PASSWORD not in listing
    assert PASSWORD not in table.output() and PIN not in table.output()  # nor in their logs
    # The PIN from the environment is the one in force.
    assert httpx.post(table.url + "/api/host/login",
                      headers={"X-Host-Pin": PIN}).status_code == 204
    # The shipped units put no secret on a command line either.
    for unit in (ROOT / "hardware" / "deploy" / "systemd").glob("*.service"):
        text = unit.read_text()
        exec_lines = " ".join(re.findall(r"^ExecStart=.*(?:\\\n.*)*", text, re.M))
        assert exec_lines, unit
        assert not re.search(r"--pin|HOST_PIN|CAULDRON_MQTT|:[^@\s/]+@", exec_lines), (
            f"{unit.name}: a secret on the command line: {exec_lines}")


def test_file_modes(table: Table) -> None:
    wait_for(lambda: _up(table), 60, "the table to come up")
    reply = httpx.post(table.url + "/api/host/new_game", headers={"X-Host-Pin": PIN},
                       json={"colours": ["red", "blue"], "deal": "virtual", "seed": 3},
                       timeout=30)
    assert reply.status_code == 200, reply.text
    httpx.get(table.url + "/api/seats/0/join")  # the seats' secrets are made and kept
    data = table.xdg / "cauldron"

    def made() -> bool:
        names = {p.name for p in data.rglob("*")}
        return {f"{table.table}.sqlite", f"{table.table}.hub.json", f"{table.table}.cmd.json",
                f"seat-secrets-{table.table}.json", f"outbox-{table.table}.sqlite"} <= names
    wait_for(made, 60, f"every data file to be written:\n{table.output()}")
    loose = []
    for path in [data, *data.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = 0o700 if path.is_dir() else 0o600
        if path.is_symlink() or mode == want:
            continue
        loose.append(f"{oct(mode)} {path.relative_to(table.xdg)}")
    assert not loose, "readable by others:\n" + "\n".join(loose)

"""`cauldron setup --root` on a scratch tree holding Debian's stock Mosquitto main config
(tests/hardware/debian-mosquitto.conf, verbatim from the Debian package, paths moved into
the tree): a real Mosquitto accepts the result; the hub, engine and dashboard run from the
generated configs and units; `cauldron doctor` passes; a broken ACL right is named."""

from __future__ import annotations

import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from waiting import EXIT_WITHIN

from engine.hosting.mosquitto import hash_password, verify_password
from engine.wire.broker import find_mosquitto, free_port

HERE = Path(__file__).resolve().parent
CAULDRON = str(Path(sys.executable).parent / "cauldron")

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(find_mosquitto() is None,
                                reason="needs mosquitto (apt-get install mosquitto)")]


def cauldron(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAULDRON, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False)


def stock_main_config(root: Path) -> Path:
    """Debian's /etc/mosquitto/mosquitto.conf with its paths moved under ``root``."""
    text = (HERE / "debian-mosquitto.conf").read_text()
    for folder in ("/etc/mosquitto", "/var/lib/mosquitto", "/run/mosquitto",
                   "/var/log/mosquitto"):
        text = text.replace(folder, f"{root}{folder}")
        Path(f"{root}{folder}").mkdir(parents=True, exist_ok=True)
    main = root / "etc" / "mosquitto" / "mosquitto.conf"
    # As root Mosquitto drops to its own user, which cannot enter pytest's temp dir.
    main.write_text("user root\n" + text if os.geteuid() == 0 else text)
    return main


class Broker:
    def __init__(self, main: Path, port: int) -> None:
        self.main, self.port = main, port
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        mosquitto = find_mosquitto()
        assert mosquitto is not None
        self.proc = subprocess.Popen([mosquitto, "-c", str(self.main)], text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        import socket

        deadline = time.monotonic() + 10
        while True:
            if self.proc.poll() is not None:
                log = self.main.parent.parent.parent / "var/log/mosquitto/mosquitto.log"
                pytest.fail("mosquitto refused the generated configuration: "
                            f"{self.proc.stdout.read() if self.proc.stdout else ''}"
                            f"{log.read_text() if log.exists() else ''}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "mosquitto did not listen"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(EXIT_WITHIN)
            self.proc = None


@dataclass
class Table:
    root: Path
    broker: Broker
    dashboard_port: int


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    root = tmp_path / "root"
    main = stock_main_config(root)
    mqtt_port, dashboard_port = free_port(), free_port()
    out = cauldron("setup", "--root", str(root), "--backend", "sim", "--table", "club-1",
                   "--mqtt-port", str(mqtt_port), "--mqtt-bind", "127.0.0.1",
                   "--dashboard-host", "127.0.0.1", "--dashboard-port", str(dashboard_port))
    assert out.returncode == 0, out.stderr
    broker = Broker(main, mqtt_port)
    broker.start()
    try:
        yield Table(root, broker, dashboard_port)
    finally:
        broker.stop()


def exec_start(unit: Path) -> tuple[list[str], dict[str, str]]:
    """The unit's command and its Environment= settings."""
    lines = unit.read_text().splitlines()
    line = next(x for x in lines if x.startswith("ExecStart="))
    env = dict(x.removeprefix("Environment=").split("=", 1) for x in lines
               if x.startswith("Environment="))
    return shlex.split(line.removeprefix("ExecStart=")), env


@pytest.fixture
def services(table: Table) -> Iterator[None]:
    """The three services as their generated units start them."""
    etc = table.root / "etc"
    env = dict(os.environ)
    for line in (etc / "cauldron/secrets/dashboard.env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            env[key] = value
    procs = []
    logs = []
    try:
        for name in ("engine", "hub", "dashboard"):
            log = (table.root / f"{name}.log").open("w")
            logs.append(log)
            command, unit_env = exec_start(etc / f"systemd/system/cauldron-{name}.service")
            secrets = [f.read_text().strip().rpartition("=")[2]
                       for f in (etc / "cauldron/secrets").iterdir()]
            assert not [x for x in secrets if x in " ".join(command)]  # none on a command line
            procs.append(subprocess.Popen(command, env={**env, **unit_env}, stdout=log,
                                          stderr=log,
                                          stdin=subprocess.DEVNULL))
        yield
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(EXIT_WITHIN)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(EXIT_WITHIN)
        for log in logs:
            log.close()


def doctor(root: Path, *skip: str) -> subprocess.CompletedProcess[str]:
    args = ["doctor", "--root", str(root), "--timeout", "10"]  # a busy CI machine
    for name in skip:
        args += ["--skip", name]
    return cauldron(*args, timeout=120)


def wait_doctor_ok(root: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The services take a few seconds to come up: ask again until all is well."""
    deadline = time.monotonic() + timeout
    while True:
        out = doctor(root, "clock")  # a build machine's clock sync is not the table's
        if out.returncode == 0 or time.monotonic() > deadline:
            return out
        time.sleep(0.5)


def test_setup_files_modes_and_a_second_run(table: Table) -> None:
    etc = table.root / "etc"
    for secret in ("cauldron/secrets/hub.password", "cauldron/secrets/engine.password",
                   "cauldron/secrets/dashboard.password", "cauldron/secrets/dashboard.env",
                   "mosquitto/cauldron.passwd"):
        assert (etc / secret).stat().st_mode & 0o777 == 0o600, secret
    keys = table.root / "var/lib/cauldron/keys"
    assert keys.stat().st_mode & 0o777 == 0o750  # each key's group reads it (test_hosting_users)
    assert sorted(k.name for k in keys.iterdir()) == ["club-1.cmd.json", "club-1.hub.json"]
    assert all(k.stat().st_mode & 0o777 == 0o640 for k in keys.iterdir())
    conf = (etc / "mosquitto/conf.d/cauldron.conf").read_text()
    assert "persistence" not in conf.replace("# /etc/mosquitto/mosquitto.conf: persistence", "")
    units = [(etc / f"systemd/system/cauldron-{s}.service").read_text()
             for s in ("hub", "engine", "dashboard")]
    assert all("User=cauldron" in u and CAULDRON in u for u in units)
    assert not [x for u in units for x in u.splitlines()
                if re.search(r"@[A-Z_]+@", x) and not x.startswith("#")]
    hashes = (etc / "mosquitto/cauldron.passwd").read_text()
    password = (etc / "cauldron/secrets/engine.password").read_text().strip()
    engine_hash = next(x for x in hashes.splitlines() if x.startswith("cauldron.engine:"))
    assert verify_password(engine_hash.split(":", 1)[1], password)
    assert password not in hashes and password not in units[1]
    # Again: nothing changes, nothing asked, the same passwords.
    again = cauldron("setup", "--root", str(table.root))
    assert again.returncode == 0 and "nothing to change" in again.stdout, again.stdout
    assert (etc / "cauldron/secrets/engine.password").read_text().strip() == password


def test_generated_configs_pass_the_doctor_with_the_services_running(
        table: Table, services: None) -> None:
    out = wait_doctor_ok(table.root)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "each account may do exactly what the ACL says" in out.stdout
    assert "ok      the table's keys are in place" in out.stdout
    assert "ok      each secret is readable by its own services only" in out.stdout
    assert "The table is ready." in out.stdout
    # No log shows a password (the URLs are printed with ***).
    secrets = [f.read_text().strip().rpartition("=")[2]
               for f in (table.root / "etc/cauldron/secrets").iterdir()]
    logs = {n: (table.root / f"{n}.log").read_text() for n in ("engine", "hub", "dashboard")}
    assert all("***@127.0.0.1" in text for text in logs.values()), logs
    assert not [s for s in secrets for text in logs.values() if s in text]


def test_a_broken_acl_right_is_named(table: Table) -> None:
    acl = table.root / "etc/mosquitto/cauldron.acl"
    text = acl.read_text().replace("user cauldron.dashboard\n",
                                   "user cauldron.dashboard\ntopic read cauldron/+/hub/event\n")
    text = text.replace("topic write cauldron/+/cmd/+/response\n", "")  # the engine's answers
    acl.write_text(text)
    table.broker.stop()
    table.broker.start()
    out = doctor(table.root, "services", "readers", "tags", "clock")
    assert out.returncode == 1
    assert ("too much allowed: the dashboard account may read cauldron/club-1/hub/event"
            in out.stdout), out.stdout
    assert "not allowed but needed: the engine answers the dashboard's commands" in out.stdout
    assert "2 problem(s)" in out.stdout


def test_a_wrong_password_says_what_to_do(table: Table) -> None:
    (table.root / "etc/cauldron/secrets/hub.password").write_text("not-the-password\n")
    out = doctor(table.root, "services", "readers", "tags", "clock")
    assert out.returncode == 1
    assert "the hub account 'club-1' cannot log in to the broker" in out.stdout
    assert "run `sudo cauldron setup`" in out.stdout


def test_password_hashes_are_mosquittos() -> None:
    stored = hash_password("s3cret", salt=b"0123456789ab")
    assert stored.startswith("$7$101$") and verify_password(stored, "s3cret")
    assert not verify_password(stored, "other")


def test_a_refused_hub_says_the_account_is_wrong_not_waiting(table: Table) -> None:
    (table.root / "etc/cauldron/secrets/hub.password").write_text("not-the-password\n")
    hub = subprocess.Popen([CAULDRON, "hub", "--config",
                            str(table.root / "etc/cauldron/hub.toml"), "--quiet"],
                           stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                           stdin=subprocess.DEVNULL)
    try:
        assert hub.stderr is not None
        lines = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = hub.stderr.readline()
            lines.append(line)
            if "refused the account" in line or "waiting for" in line:
                break
        said = "".join(lines)
        assert "refused the account 'club-1'" in said and "sudo cauldron setup" in said, said
        assert "waiting for the MQTT broker" not in said
    finally:
        hub.terminate()
        hub.wait(EXIT_WITHIN)


def test_setup_asks_on_a_terminal_and_remembers(tmp_path: Path) -> None:
    """A host at a terminal answers the questions (Enter keeps the default; a word where a
    number is wanted is asked again); the next run offers those answers as defaults."""
    import pty

    root = tmp_path / "root"
    master, slave = pty.openpty()
    proc = subprocess.Popen([CAULDRON, "setup", "--root", str(root)], stdin=slave,
                            stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    # table id, readers, (no port: sim), pads (a word, then 2), dashboard port, lang, URL
    answers = iter(["club-7", "sim", "two", "2", "", "de", ""])
    said = b""
    deadline = time.monotonic() + 60
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            said += chunk
            if chunk.rstrip().endswith(b"]:"):
                os.write(master, (next(answers) + "\n").encode())
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(EXIT_WITHIN)
        os.close(master)
    text = said.decode(errors="replace")
    assert proc.returncode == 0, text
    assert "a number, please" in text
    table = (root / "etc/cauldron/table.toml").read_text()
    assert 'table = "club-7"' in table and "pads = 2" in table and 'lang = "de"' in table
    again = cauldron("setup", "--root", str(root))  # no terminal: nothing asked, all kept
    assert again.returncode == 0 and "nothing to change" in again.stdout


def test_games_reads_the_installed_engine_config(table: Table, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`cauldron games` on a table made by setup finds the engine's data dir by itself (as
    root on the Pi, /etc/cauldron/engine.toml), or with --config."""
    import engine.service.cli as service_cli
    from engine.app.cli import main

    config = table.root / "etc/cauldron/engine.toml"
    data = table.root / "var/lib/cauldron/engine"
    assert main(["games", "--config", str(config)]) == 0
    assert str(data) in capsys.readouterr().out
    monkeypatch.setattr(service_cli, "INSTALLED_CONFIG", str(config))
    assert main(["games"]) == 0
    assert str(data) in capsys.readouterr().out


def test_a_hall_of_sockets_does_not_exhaust_the_dashboards_files(table: Table) -> None:
    """Slow-loris (issue 24): the dashboard's unit raises its file limit well past the 1,024
    default, and dashboard.serving keeps a margin of it for its own files."""
    unit = (table.root / "etc/systemd/system/cauldron-dashboard.service").read_text()
    limits = [int(x.split("=", 1)[1]) for x in unit.splitlines() if x.startswith("LimitNOFILE=")]
    assert limits and limits[0] >= 16384, unit

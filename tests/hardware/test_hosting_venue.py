"""A café or a venue in setup (issue 19, item 4): `cauldron setup --store postgresql://…`
keeps the venue's store across re-runs, its password only in a 0600 EnvironmentFile that
the engine unit loads, and doctor checks the database (a real PostgreSQL,
tests/pg_cluster.py); plus setup's re-run report and the smaller setup items."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from test_setup_doctor import cauldron, stock_main_config
from waiting import EXIT_WITHIN

from engine.wire.broker import free_port

DOCTOR_DB_ONLY = ["--skip", "broker", "--skip", "acl", "--skip", "services", "--skip",
                  "readers", "--skip", "tags", "--skip", "clock"]


def _setup(root: Path, *extra: str) -> str:
    out = cauldron("setup", "--root", str(root), "--backend", "sim", "--table", "club-1",
                   "--yes", *extra)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _engine_toml(root: Path) -> dict[str, str]:
    return dict(tomllib.loads((root / "etc/cauldron/engine.toml").read_text())["engine"])


def test_a_venues_store_survives_a_rerun_and_its_password_stays_out_of_configs(
        tmp_path: Path) -> None:
    root = tmp_path / "root"
    stock_main_config(root)
    _setup(root, "--store", "postgresql://cauldron:s3cret-pw@db.local:5432/cauldron")
    engine = _engine_toml(root)
    assert engine["store"] == "postgresql://cauldron@db.local:5432/cauldron"
    assert "tables" not in engine  # a venue's engines share its tables out
    env = root / "etc/cauldron/secrets/engine.env"
    assert env.stat().st_mode & 0o777 == 0o600
    assert "PGPASSWORD=s3cret-pw" in env.read_text()
    unit = (root / "etc/systemd/system/cauldron-engine.service").read_text()
    assert f"EnvironmentFile=-{env}" in unit
    for path in (root / "etc").rglob("*"):
        if path.is_file() and path != env:
            assert "s3cret-pw" not in path.read_text(errors="replace"), path
    # Again, with no --store: kept, and its password too; nothing changes.
    again = _setup(root)
    assert "nothing to change" in again, again
    assert _engine_toml(root)["store"] == "postgresql://cauldron@db.local:5432/cauldron"
    assert "PGPASSWORD=s3cret-pw" in env.read_text()


def test_a_store_written_by_hand_in_engine_toml_is_kept(tmp_path: Path) -> None:
    """The README's venue steps once said to put `store = ...` in engine.toml: a re-run of
    setup keeps it (it took it as an answer) instead of dropping it."""
    root = tmp_path / "root"
    stock_main_config(root)
    _setup(root)
    config = root / "etc/cauldron/engine.toml"
    config.write_text(config.read_text().replace(
        "[engine]\n", '[engine]\nstore = "postgresql://cauldron@db.local/cauldron"\n'))
    out = _setup(root)
    assert "Keeping the venue's store postgresql://cauldron@db.local/cauldron" in out
    assert _engine_toml(root)["store"] == "postgresql://cauldron@db.local/cauldron"
    assert 'store = "postgresql://cauldron@db.local/cauldron"' in (
        root / "etc/cauldron/table.toml").read_text()


def test_doctor_checks_the_venue_database(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "root"
    stock_main_config(root)
    _setup(root, "--store", pg_url)
    config = str(root / "etc/cauldron/engine.toml")

    def doctor() -> str:
        out = cauldron("doctor", "--root", str(root), *DOCTOR_DB_ONLY, timeout=120)
        return out.stdout + out.stderr

    said = doctor()
    assert "has no Cauldron tables yet" in said, said
    migrated = cauldron("games", "migrate", "--config", config)
    assert migrated.returncode == 0, migrated.stderr
    said = doctor()
    assert "table club-1 is not in the venue's list" in said, said
    command = re.search(r"`sudo (cauldron games tables [^`]+)`", said)
    assert command is not None
    added = cauldron(*command.group(1).split()[1:])  # as doctor printed it
    assert added.returncode == 0, added.stderr
    said = doctor()
    assert re.search(r"ok +the venue's database .* serves table 'club-1' \(schema \d+\)", said), \
        said
    assert "The table is ready." in said


def test_doctor_names_an_unreachable_database(tmp_path: Path) -> None:
    root = tmp_path / "root"
    stock_main_config(root)
    _setup(root, "--store", f"postgresql://cauldron@127.0.0.1:{free_port()}/cauldron")
    out = cauldron("doctor", "--root", str(root), *DOCTOR_DB_ONLY, timeout=120)
    assert out.returncode == 1
    assert "the engine cannot reach its database postgresql://cauldron@127.0.0.1" in out.stdout


def test_a_rerun_names_the_changed_answers_and_restarts_only_what_they_touch(
        tmp_path: Path) -> None:
    root = tmp_path / "root"
    stock_main_config(root)
    _setup(root)
    out = _setup(root, "--dashboard-port", "8123")
    assert "Answers changed: dashboard_port 8000 -> 8123" in out
    assert "on a Pi this run restarts cauldron-dashboard)" in out  # not the hub or engine
    out = _setup(root, "--pads", "2")
    assert "Answers changed: pads 4 -> 2" in out
    assert "on a Pi this run restarts cauldron-hub)" in out


def test_setup_takes_a_user_name_like_table_pi_and_refuses_a_path(tmp_path: Path) -> None:
    root = tmp_path / "root"
    stock_main_config(root)
    _setup(root, "--user", "table-pi")
    assert "User=table-pi" in (root / "etc/systemd/system/cauldron-hub.service").read_text()
    bad = cauldron("setup", "--root", str(root), "--user", "../x", "--yes")
    assert bad.returncode == 2 and "is not a user name" in bad.stderr


def test_setup_limits_the_brokers_packet_size(tmp_path: Path) -> None:
    from engine.wire.contract import MAX_PAYLOAD_BYTES

    root = tmp_path / "root"
    stock_main_config(root)
    _setup(root)
    conf = (root / "etc/mosquitto/conf.d/cauldron.conf").read_text()
    size = int(re.search(r"^max_packet_size (\d+)$", conf, re.M).group(1))  # type: ignore[union-attr]
    assert MAX_PAYLOAD_BYTES < size <= 2 * MAX_PAYLOAD_BYTES


def test_games_export_of_a_path_is_a_clear_error(tmp_path: Path) -> None:
    out = cauldron("games", "export", "../../etc/passwd", "--data-dir", str(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "table id '../../etc/passwd' must be" in out.stderr


def test_the_broker_takes_tls_with_a_local_certificate(tmp_path: Path) -> None:
    """`setup --tls-cert/--tls-key`: a second, TLS listener on Debian's stock main config;
    an account logs in over mqtts:// trusting only that certificate (self-signed here, as
    the README shows), and the key is copied 0600."""
    import ssl
    import subprocess
    import threading

    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion
    from test_setup_doctor import Broker

    cert, key = tmp_path / "broker.crt", tmp_path / "broker.key"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                           "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                           "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out",
                           str(cert)], capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "root"
    main = stock_main_config(root)
    port, tls_port = free_port(), free_port()
    _setup(root, "--mqtt-port", str(port), "--mqtt-bind", "127.0.0.1", "--tls-cert",
           str(cert), "--tls-key", str(key), "--tls-port", str(tls_port))
    assert (root / "etc/mosquitto/certs/cauldron.key").stat().st_mode & 0o777 == 0o600
    broker = Broker(main, port)
    broker.start()
    try:
        password = (root / "etc/cauldron/secrets/engine.password").read_text().strip()
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="tls-test")
        client.username_pw_set("cauldron.engine", password)
        client.tls_set(ca_certs=str(cert), cert_reqs=ssl.CERT_REQUIRED)
        done = threading.Event()
        result: list[object] = []

        def connected(_c: object, _u: object, _f: object, reason: object, _p: object) -> None:
            result.append(reason)
            done.set()

        client.on_connect = connected
        client.connect("127.0.0.1", tls_port)
        client.loop_start()
        try:
            assert done.wait(10), "no CONNACK over TLS"
            assert not result[0].is_failure, result  # type: ignore[attr-defined]
        finally:
            client.disconnect()
            client.loop_stop()
    finally:
        broker.stop()


def test_the_rehearsals_printed_mosquitto_command_starts_on_a_stock_main_config(
        tmp_path: Path) -> None:
    """Debian's main config as it is (no `user` line): the `mosquitto -c` setup prints
    starts, as root too (it would drop to the mosquitto user, which cannot read the
    rehearsal's 0600 password file)."""
    import shlex
    import socket
    import subprocess
    import time

    root = tmp_path / "root"
    main = stock_main_config(root)
    main.write_text(main.read_text().removeprefix("user root\n"))  # Debian's, verbatim
    port = free_port()
    out = _setup(root, "--mqtt-port", str(port), "--mqtt-bind", "127.0.0.1")
    printed = next(line.strip() for line in out.splitlines()
                   if line.strip().startswith("mosquitto -c "))
    assert printed == f"mosquitto -c {main}"
    broker = subprocess.Popen(shlex.split(printed), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 10
        while True:
            assert broker.poll() is None, broker.stdout.read() if broker.stdout else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "mosquitto did not listen"
                time.sleep(0.05)
        # and the broker reads the password file: an account logs in
        login = cauldron("doctor", "--root", str(root), "--skip", "acl", "--skip", "services",
                         "--skip", "readers", "--skip", "tags", "--skip", "clock", "--skip",
                         "disk", "--timeout", "10", timeout=120)
        assert "ok      each account logs in to the broker" in login.stdout, login.stdout
    finally:
        broker.terminate()
        broker.wait(EXIT_WITHIN)

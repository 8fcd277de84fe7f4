"""Doctor is never falsely green (issue 19, item 1), in a `setup --root` rehearsal with a
real Mosquitto on Debian's stock main config and the three services as their units start
them (tests/hardware/test_setup_doctor.py).

The engine's data dir is a small tmpfs of its own, so a read-only or full disk is real:
as root a tmpfs is mounted (the test is skipped elsewhere)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_setup_doctor import (  # noqa: F401  (fixtures)
    Table,
    cauldron,
    doctor,
    services,
    table,
    wait_doctor_ok,
)
from waiting import EXIT_WITHIN, wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs (root only)")


def _pin(root: Path) -> str:
    text = (root / "etc/cauldron/secrets/dashboard.env").read_text()
    return next(x.split("=", 1)[1] for x in text.splitlines()
                if x.startswith("CAULDRON_HOST_PIN="))


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


def _disk(folder: Path) -> Iterator[Path]:
    """``folder`` on a 256 MB tmpfs (mounted before the services start)."""
    _mount("-t", "tmpfs", "-o", "size=256m,mode=700", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        for _ in range(50):  # the services stop first (fixture order); then it unmounts
            if subprocess.run(["umount", str(folder)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)


@pytest.fixture
def engine_disk(table: Table) -> Iterator[Path]:  # noqa: F811
    """The engine's data dir on a tmpfs of its own."""
    yield from _disk(table.root / "var/lib/cauldron/engine")


@pytest.fixture
def hub_disk(table: Table) -> Iterator[Path]:  # noqa: F811
    """The hub's data dir (its outbox) on a tmpfs of its own."""
    yield from _disk(table.root / "var/lib/cauldron/hub")


def doctor_until(root: Path, wanted: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Doctor (clock left out: a build machine's), asked again until `wanted` shows."""
    deadline = time.monotonic() + timeout
    while True:
        out = doctor(root, "clock")
        if wanted in out.stdout or time.monotonic() > deadline:
            return out
        time.sleep(0.5)


def _dashboard_up(table: Table) -> bool:  # noqa: F811
    try:
        return httpx.get(f"http://127.0.0.1:{table.dashboard_port}/api/table",
                         timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def new_game(table: Table) -> httpx.Response:  # noqa: F811
    wait_until(lambda: _dashboard_up(table), timeout=60, what="the dashboard answers")
    return httpx.post(f"http://127.0.0.1:{table.dashboard_port}/api/host/new_game",
                      headers={"X-Host-Pin": _pin(table.root)},
                      json={"colours": ["blue", "red"], "removed_colour": "green"}, timeout=30)


def test_doctor_and_new_game_name_a_read_only_engine_disk_at_start(
        table: Table, engine_disk: Path, services: None) -> None:  # noqa: F811
    """A read-only card from the first start: doctor is not green, names the engine's
    degraded state and the data dir, and New game says why (not "does not serve")."""
    _mount("-o", "remount,ro", str(engine_disk))
    out = doctor_until(table.root, "the engine cannot follow table club-1")
    assert out.returncode == 1, out.stdout
    assert "The table is ready." not in out.stdout
    assert ("the engine cannot follow table club-1: cannot write the table's log (read-only "
            "file system)") in out.stdout, out.stdout
    assert f"{engine_disk} cannot be written (read-only file system)" in out.stdout
    reply = new_game(table)
    assert reply.status_code >= 400
    assert "read-only file system" in reply.text, reply.text
    assert "does not serve" not in reply.text


def test_doctor_and_undo_name_a_read_only_disk_mid_game(
        table: Table, engine_disk: Path, services: None) -> None:  # noqa: F811
    """A game is on when the card turns read-only and the engine restarts (as systemd
    restarts it): doctor names it, and a command gets the real reason."""
    assert wait_doctor_ok(table.root).returncode == 0
    assert new_game(table).status_code < 300
    tables = engine_disk / "tables"
    assert (tables / "club-1.sqlite").exists()
    _stop(table.root, "engine")
    _mount("-o", "remount,ro", str(engine_disk))
    restarted = _start(table.root, "engine")
    try:
        out = doctor_until(table.root, "the engine cannot follow table club-1")
        assert out.returncode == 1 and "The table is ready." not in out.stdout
        assert "cannot write the table's log (read-only file system)" in out.stdout, out.stdout
        reply = httpx.post(f"http://127.0.0.1:{table.dashboard_port}/api/host/undo",
                           headers={"X-Host-Pin": _pin(table.root)}, timeout=30)
        assert reply.status_code >= 400 and "read-only file system" in reply.text, reply.text
    finally:
        restarted.terminate()
        restarted.wait(EXIT_WITHIN)


def test_doctor_names_a_full_engine_disk_mid_game(
        table: Table, engine_disk: Path, services: None) -> None:  # noqa: F811
    """The disk fills up during a game: doctor's probe finds it (and then the engine says
    so at its next write)."""
    assert wait_doctor_ok(table.root).returncode == 0
    assert new_game(table).status_code < 300
    filler = engine_disk / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True,
                   check=False)
    out = doctor(table.root, "clock")
    assert out.returncode == 1 and "The table is ready." not in out.stdout
    assert f"{engine_disk} cannot be written (the disk is full)" in out.stdout, out.stdout
    reply = httpx.post(f"http://127.0.0.1:{table.dashboard_port}/api/host/undo",
                       headers={"X-Host-Pin": _pin(table.root)}, timeout=30)
    assert reply.status_code >= 400
    filler.unlink()  # room again: the doctor is green again
    assert wait_doctor_ok(table.root).returncode == 0


def _hub_degraded(table: Table) -> str | None:  # noqa: F811
    """What the dashboard's status says of the hub's own health."""
    reply = httpx.get(f"http://127.0.0.1:{table.dashboard_port}/api/table", timeout=10)
    return reply.json()["status"].get("hub_degraded")  # type: ignore[no-any-return]


def test_doctor_and_the_dashboard_name_a_full_hub_disk_mid_game(
        table: Table, hub_disk: Path, services: None) -> None:  # noqa: F811
    """The hub's disk fills up during a game: the hub finds it by itself (its probe) and
    says so on hub/health; doctor is not green and names it; the dashboard shows it; once
    room is back all is well again."""
    assert wait_doctor_ok(table.root).returncode == 0
    assert new_game(table).status_code < 300
    filler = hub_disk / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True,
                   check=False)
    out = doctor_until(table.root, "the hub of table club-1 is degraded")
    assert out.returncode == 1 and "The table is ready." not in out.stdout
    assert "the hub of table club-1 is degraded (disk_full): " in out.stdout, out.stdout
    assert "the disk is full" in out.stdout.split("is degraded (disk_full): ")[1]
    assert f"{hub_disk} cannot be written (the disk is full)" in out.stdout
    wait_until(lambda: "the disk is full" in (_hub_degraded(table) or ""), timeout=30,
               what="the dashboard shows the hub degraded")
    filler.unlink()
    assert wait_doctor_ok(table.root).returncode == 0
    wait_until(lambda: _hub_degraded(table) is None, timeout=30, what="the hub heals")


def test_a_hub_restarted_on_a_read_only_disk_says_why(
        table: Table, hub_disk: Path, services: None) -> None:  # noqa: F811
    """The card turned read-only and the hub restarts (as systemd restarts it): it cannot
    open its outbox, says why in one sentence and on its retained health, and doctor names
    it (and the dashboard shows it)."""
    assert wait_doctor_ok(table.root).returncode == 0
    _stop(table.root, "hub")
    _mount("-o", "remount,ro", str(hub_disk))
    restarted = _start(table.root, "hub")
    assert restarted.wait(60) != 0
    said = (table.root / "hub-again.log").read_text()
    assert "read-only file system" in said and "Traceback" not in said, said
    out = doctor_until(table.root, "the hub of table club-1 is degraded")
    assert out.returncode == 1 and "The table is ready." not in out.stdout
    assert ("the hub of table club-1 is degraded (read_only): the hub cannot open its outbox "
            f"{hub_disk}/outbox-club-1.sqlite (read-only file system)") in out.stdout, out.stdout
    assert "the hub of table club-1 is not online" in out.stdout
    assert f"{hub_disk} cannot be written (read-only file system)" in out.stdout
    assert "read-only file system" in (_hub_degraded(table) or "")


def test_with_the_broker_down_doctor_says_what_it_could_not_check(
        table: Table, services: None) -> None:  # noqa: F811
    assert wait_doctor_ok(table.root).returncode == 0
    table.broker.stop()
    out = doctor(table.root, "clock")
    assert out.returncode == 1
    for what in ("each account may do exactly what the ACL says", "every reader answers",
                 "the hub and the engine say they are online and sound"):
        assert f"NOT RUN {what} (could not run" in out.stdout, out.stdout
        assert f"ok      {what}" not in out.stdout
    assert "3 check(s) could not run" in out.stdout


def test_a_taken_dashboard_port_names_the_program_holding_it(table: Table) -> None:  # noqa: F811
    import sys

    holder = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                               str(table.dashboard_port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{table.dashboard_port}/", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        out = doctor(table.root, "clock", "readers", "acl")
        assert f"port {table.dashboard_port} is taken by another program" in out.stdout, \
            out.stdout
        assert f"http.server (pid {holder.pid})" in out.stdout
        assert "HTTP Error 404" not in out.stdout
    finally:
        holder.terminate()
        holder.wait(EXIT_WITHIN)


@pytest.mark.parametrize("secret", ["cauldron/secrets/dashboard.env",
                                    "mosquitto/cauldron.passwd",
                                    "cauldron/secrets/engine.password"])
def test_doctor_names_a_secret_others_can_read(table: Table, secret: str) -> None:  # noqa: F811
    path = table.root / "etc" / secret
    path.chmod(0o644)
    out = doctor(table.root, "clock", "readers", "acl", "services", "broker")
    assert out.returncode == 1
    assert f"{path} can be read by others (mode 644): `sudo chmod 600 {path}`" in out.stdout


def test_doctor_under_root_names_the_rehearsals_files(table: Table) -> None:  # noqa: F811
    (table.root / "etc/cauldron/secrets/hub.password").write_text("wrong\n")
    out = doctor(table.root, "clock", "readers", "acl", "services")
    assert f"{table.root}/etc/mosquitto/cauldron.passwd" in out.stdout, out.stdout
    assert " /etc/mosquitto" not in out.stdout


def _pid(root: Path, service: str) -> int:
    """The rehearsal's running hub or engine (started by the `services` fixture)."""
    wanted = f"{service} --config {root}/etc/cauldron/{service}.toml"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if wanted in cmd:
            return int(pid)
    raise AssertionError(f"the {service} is not running")


def _is_running(pid: int) -> bool:
    try:
        return "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False


def _stop(root: Path, service: str) -> None:
    pid = _pid(root, service)
    os.kill(pid, 15)
    deadline = time.monotonic() + 20
    while _is_running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)


def _start(root: Path, service: str) -> subprocess.Popen[bytes]:
    """The service again, as its unit starts it (systemd would, after a crash)."""
    from test_setup_doctor import exec_start

    command, env = exec_start(root / f"etc/systemd/system/cauldron-{service}.service")
    log = (root / f"{service}-again.log").open("w")
    return subprocess.Popen(command, env={**os.environ, **env}, stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL)

"""One OS user per service (issue 24): `cauldron setup` gives the hub, the engine and the
dashboard a system user each, and every secret an owner, group and mode such that each
service reads only what it needs. Checked on the rehearsal's written units and modes; as
root, also by the kernel, reading the files as each service's uid and groups."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.hosting.setup import Answers, Paths, ownership
from engine.wire.auth import key_path

CAULDRON = str(Path(sys.executable).parent / "cauldron")
SERVICES = ("hub", "engine", "dashboard")


def _setup(root: Path, *extra: str) -> None:
    out = subprocess.run([CAULDRON, "setup", "--root", str(root), "--backend", "sim",
                          "--table", "club-1", "--yes", "--store",
                          "postgresql://engine1:db-pw@db.local/cauldron", *extra],
                         capture_output=True, text=True, timeout=60, check=False,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout + out.stderr


def _secrets(root: Path) -> dict[str, Path]:
    p = Paths(root)
    return {"hub.password": p.password("hub"), "engine.password": p.password("engine"),
            "dashboard.password": p.password("dashboard"), "dashboard.env": p.dashboard_env,
            "engine.env": p.engine_env, "hub key": key_path(p.keys, "club-1", "hub"),
            "cmd key": key_path(p.keys, "club-1", "cmd")}


# What each service needs, and nothing more.
NEEDS = {"hub": {"hub.password", "hub key", "cmd key"},
         "engine": {"engine.password", "engine.env", "hub key", "cmd key"},
         "dashboard": {"dashboard.password", "dashboard.env", "cmd key"}}


def _unit(root: Path, service: str) -> tuple[str, set[str]]:
    """The unit's User= and its groups (Group= and SupplementaryGroups=)."""
    lines = (root / f"etc/systemd/system/cauldron-{service}.service").read_text().splitlines()
    field = {k: v for k, _, v in (x.partition("=") for x in lines if "=" in x)}
    return field["User"], {field["Group"], *field.get("SupplementaryGroups", "").split()}


def _may(owner: str, group: str, mode: int, user: str, groups: set[str], bit: int) -> bool:
    """Whether ``user`` (in ``groups``) has the r (4) or x (1) ``bit`` on a file."""
    if owner == user:
        return bool(mode & (bit << 6))
    if group in groups:
        return bool(mode & (bit << 3))
    return bool(mode & bit)


def _readable_by_plan(root: Path, service: str) -> set[str]:
    """The secrets the service's unit user can read, by the plan's owners and groups (a
    rehearsal chowns nothing) and the modes really on disk, folders included."""
    plan = ownership(Answers(table="club-1"), Paths(root))
    user, groups = _unit(root, service)
    found = set()
    for name, path in _secrets(root).items():
        chain = [o for o in plan.values() if o.folder and o.path in path.parents]
        ok = all(_may(o.user or "root", o.group or "root", o.path.stat().st_mode, user,
                      groups, 1) for o in chain)
        o = plan[path]
        ok = ok and _may(o.user or "root", o.group or "root", path.stat().st_mode, user,
                         groups, 4)
        if ok:
            found.add(name)
    return found


def test_the_dashboard_cannot_read_the_hub_key_or_the_database_password(
        tmp_path: Path) -> None:
    root = tmp_path / "root"
    _setup(root)
    users = {s: _unit(root, s)[0] for s in SERVICES}
    assert users == {"hub": "cauldron-hub", "engine": "cauldron-engine",
                     "dashboard": "cauldron-dashboard"}
    for service in SERVICES:
        assert _readable_by_plan(root, service) == NEEDS[service], service
    # The modes setup wrote are the plan's (the doctor checks the same plan).
    plan = ownership(Answers(table="club-1"), Paths(root))
    for o in plan.values():
        assert stat.S_IMODE(o.path.stat().st_mode) == o.mode, o.path


def test_the_doctor_names_a_key_the_dashboard_could_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _setup(root)
    hub_key = key_path(Paths(root).keys, "club-1", "hub")
    hub_key.chmod(0o644)
    others = ("broker", "acl", "services", "readers", "database", "tags", "clock", "disk")
    skip = [word for check in others for word in ("--skip", check)]
    out = subprocess.run([CAULDRON, "doctor", "--root", str(root), *skip],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 1
    assert f"{hub_key} can be read by others (mode 644): `sudo chmod 640 {hub_key}`" \
        in out.stdout, out.stdout + out.stderr


# ---------------------------------------------------------------- as root: the kernel says

IDS = {"cauldron": 61000, "cauldron-hub": 61001, "cauldron-engine": 61002,
       "cauldron-dashboard": 61003, "cauldron-hubkey": 61004, "cauldron-cmdkey": 61005,
       "root": 0}


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder other uids may enter (pytest's own tmp is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="cauldron-users-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        subprocess.run(["rm", "-rf", str(folder)], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="reading as another uid needs root")
def test_each_service_uid_reads_only_its_own_secrets(open_tmp: Path) -> None:
    root = open_tmp / "root"
    _setup(root)
    # The rehearsal chowns nothing: give the files the plan's owners, as numeric ids (no
    # user is added to this machine), then let the kernel judge each service's reads.
    plan = ownership(Answers(table="club-1"), Paths(root))
    for o in plan.values():
        if o.path.exists():
            os.chown(o.path, IDS[o.user or "root"], IDS[o.group or "root"])
    for folder in [root, *root.rglob("*")]:  # /, /etc, /var/lib: open to all, as on a Pi
        if folder.is_dir() and folder not in plan:
            folder.chmod(0o755)
    names = _secrets(root)
    probe = ("import sys\nfor p in sys.argv[1:]:\n try:\n  open(p).read(); print(p)\n"
             " except OSError: pass\n")
    for service in SERVICES:
        user, groups = _unit(root, service)
        uid, gids = IDS[user], sorted(IDS[g] for g in groups if g in IDS)  # not dialout

        def become(uid: int = uid, gids: list[int] = gids) -> None:
            os.setgroups(gids)
            os.setgid(gids[0])
            os.setuid(uid)

        out = subprocess.run(["/usr/bin/python3", "-I", "-S", "-c", probe,
                              *map(str, names.values())], capture_output=True, text=True,
                             timeout=30, check=True, preexec_fn=become)
        read = {n for n, p in names.items() if str(p) in out.stdout.split()}
        assert read == NEEDS[service], service


@pytest.mark.skipif(os.geteuid() != 0, reason="changing owners needs root")
def test_an_older_shared_users_files_are_handed_to_the_service(tmp_path: Path) -> None:
    """A table set up when one user ran all three (or a file an admin's `sudo cauldron`
    wrote): setup gives the engine's whole data dir to the engine's user."""
    from engine.hosting.setup import Installer

    data = tmp_path / "engine"
    (data / "tables").mkdir(parents=True)
    (data / "tables" / "club-1.sqlite").write_text("")
    os.chown(data / "tables" / "club-1.sqlite", 61009, 61009)  # the old shared user
    Installer(Answers(), Paths(tmp_path), scratch=False, say=lambda _: None)._hand_over(
        data, IDS["cauldron-engine"], IDS["cauldron-engine"])
    owners = {(p.stat().st_uid, p.stat().st_gid) for p in data.rglob("*")}
    assert owners == {(IDS["cauldron-engine"], IDS["cauldron-engine"])}

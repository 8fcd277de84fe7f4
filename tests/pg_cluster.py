"""A real PostgreSQL for the tests: a throw-away cluster (initdb/pg_ctl on a free port in a
temporary folder), or the server `CAULDRON_TEST_PG` names (a URL such as
``postgresql://postgres@127.0.0.1:5432/postgres``). Each test gets a database of its own.

As root (CI), initdb refuses to run, so the cluster is made and run as the ``postgres``
user (``runuser``) in a folder it owns. `.ci/system-deps` installs PostgreSQL with apt.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from engine.wire.broker import free_port


class NoPostgres(Exception):
    """PostgreSQL is not installed here (and could not be)."""


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class Cluster:
    """A PostgreSQL server for a test session; `database()` makes a fresh database."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self._as: list[str] = []
        self.url = os.environ.get("CAULDRON_TEST_PG", "")
        self.bin: Path | None = None
        self._options = ""

    def start(self) -> Cluster:
        if self.url:
            return self
        self.bin = _bin_dir()
        if self.bin is None:
            raise NoPostgres("PostgreSQL is not installed (initdb not found); run "
                             "`bash .ci/system-deps` as root, or set CAULDRON_TEST_PG")
        self.folder = Path(tempfile.mkdtemp(prefix="cauldron-pg-"))
        user = "postgres"
        if os.geteuid() == 0:  # initdb refuses root: the postgres user runs the cluster
            shutil.chown(self.folder, user=user)
            self._as = ["runuser", "-u", user, "--"]
        else:
            import getpass

            user = getpass.getuser()
        data = self.folder / "data"
        self._run([str(self.bin / "initdb"), "-D", str(data), "--auth=trust", "-U", user,
                   "--no-sync", "-E", "UTF8"])
        port = free_port()
        self._options = (f"-p {port} -k {self.folder} -c listen_addresses=127.0.0.1 "
                         "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                         "-c max_connections=200")
        self.resume()
        self.url = f"postgresql://{user}@127.0.0.1:{port}/postgres"
        return self

    def crash(self) -> None:
        """The server dies (immediate shutdown: no checkpoint, every session cut)."""
        assert self.folder is not None and self.bin is not None
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m",
                   "immediate", "-w", "stop"])

    def resume(self) -> None:
        """(Re)start the server on its port, with its data (crash recovery after `crash`)."""
        assert self.folder is not None and self.bin is not None
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-l",
                   str(self.folder / "log"), "-w", "-t", "60", "-o", self._options, "start"])

    def _run(self, command: list[str]) -> None:
        done = subprocess.run(self._as + command, capture_output=True, text=True,
                              cwd=self.folder, check=False)
        if done.returncode != 0:
            log = ""
            if self.folder is not None and (self.folder / "log").exists():
                log = (self.folder / "log").read_text()[-2000:]
            raise RuntimeError(f"{command[0]} failed: {done.stderr or done.stdout}\n{log}")

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.encode())

    def database(self) -> str:
        """A new empty database; its URL."""
        name = f"cauldron_test_{uuid.uuid4().hex[:10]}"
        self._admin(f'CREATE DATABASE "{name}"')
        base, _, _ = self.url.rpartition("/")
        return f"{base}/{name}"

    def drop(self, url: str) -> None:
        name = url.rpartition("/")[2]
        with contextlib.suppress(Exception):  # a server already gone: nothing to clean
            self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.folder is None or self.bin is None:
            return
        try:
            with contextlib.suppress(RuntimeError):  # already down (a test crashed it)
                self.crash()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

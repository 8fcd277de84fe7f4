"""Where Cauldron keeps its data: one owner of the XDG rule for every process.

``$XDG_DATA_HOME/cauldron/<part>``, or ``~/.local/share/cauldron/<part>`` when the variable
is unset or empty (the XDG Base Directory specification). The hub uses the top folder,
the engine ``engine``, the dashboard ``dashboard``, the demo ``demo``.

Also why a data dir cannot be written (`disk_trouble`, `probe_dir`): doctor and the hub
say it in the same words.
"""

from __future__ import annotations

import errno
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


def data_dir(part: str = "") -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    root = Path(base) / "cauldron"
    return root / part if part else root


DiskTroubleCode = Literal["read_only", "disk_full", "permission_denied", "io_error",
                          "write_failed"]
# Why a data dir cannot be written, by code, in a host's words (doctor, the hub's health).
TROUBLES: dict[DiskTroubleCode, str] = {
    "read_only": "read-only file system", "disk_full": "the disk is full",
    "permission_denied": "permission denied", "io_error": "input/output error"}
_ERRNOS: dict[int, DiskTroubleCode] = {
    errno.EROFS: "read_only", errno.ENOSPC: "disk_full", errno.EDQUOT: "disk_full",
    errno.EACCES: "permission_denied", errno.EPERM: "permission_denied", errno.EIO: "io_error"}
# SQLite says it in words, not errno.
_TEXTS: tuple[tuple[str, DiskTroubleCode], ...] = (
    ("read-only file system", "read_only"), ("readonly database", "read_only"),
    ("no space left", "disk_full"), ("disk is full", "disk_full"),
    ("permission denied", "permission_denied"), ("disk i/o error", "io_error"),
    ("input/output error", "io_error"))


@dataclass(frozen=True)
class DiskTrouble:
    code: DiskTroubleCode
    words: str


def disk_trouble(error: BaseException, folder: Path | None = None) -> DiskTrouble:
    """Why a write in ``folder`` failed: the folder's file system first (read-only, full:
    what SQLite's "unable to open database file" hides), then the error's errno, then its
    text."""
    code: DiskTroubleCode | None = None
    if folder is not None:
        try:
            info = os.statvfs(folder)
        except OSError:
            info = None
        if info is not None and info.f_flag & os.ST_RDONLY:
            code = "read_only"
        elif info is not None and info.f_bavail == 0:
            code = "disk_full"
    if code is None and isinstance(error, OSError):
        code = _ERRNOS.get(error.errno or 0)
    if code is None:
        code = text_trouble(str(error))
    if code is None:
        return DiskTrouble("write_failed", str(error) or type(error).__name__)
    return DiskTrouble(code, TROUBLES[code])


def text_trouble(text: str) -> DiskTroubleCode | None:
    """The trouble an error's message names in words (SQLite's way), if any."""
    low = text.lower()
    return next((c for key, c in _TEXTS if key in low), None)


def probe_dir(folder: Path, size: int) -> DiskTrouble | None:
    """Write ``size`` bytes in ``folder``, sync, remove them: None when it took them, else
    why not (a read-only or full disk is found before a game needs it)."""
    path = folder / f".probe-{uuid.uuid4().hex[:8]}"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            block = b"\0" * 65536
            left = size
            while left > 0:
                left -= os.write(fd, block[:left])
            os.fsync(fd)
        finally:
            os.close(fd)
            path.unlink(missing_ok=True)
    except OSError as exc:
        return disk_trouble(exc)
    return None

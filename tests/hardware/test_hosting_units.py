"""The units setup writes pass `systemd-analyze verify` (issue 19: a café owner's Pi runs
them as written), on a pi-like setup with a venue store and TLS files too."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_setup_doctor import cauldron

pytestmark = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                reason="needs systemd-analyze")


def test_the_generated_units_verify(tmp_path: Path) -> None:
    root = tmp_path / "root"
    out = cauldron("setup", "--root", str(root), "--backend", "spi", "--table", "club-1",
                   "--yes")
    assert out.returncode == 0, out.stderr
    units = sorted((root / "etc/systemd/system").glob("cauldron-*.service"))
    assert [u.name for u in units] == ["cauldron-dashboard.service", "cauldron-engine.service",
                                       "cauldron-hub.service"]
    done = subprocess.run(["systemd-analyze", "verify", *map(str, units)], capture_output=True,
                          text=True, timeout=60, check=False)
    said = [line for line in (done.stdout + done.stderr).splitlines() if "cauldron" in line]
    assert done.returncode == 0 and not said, done.stdout + done.stderr

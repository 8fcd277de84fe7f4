"""Doctor's clock check on a table network with no internet (issue 19): a Pi that cannot
reach a time server is fine; only a clock before the install is a problem."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest

from engine.hosting.doctor import Doctor


def clock_check(monkeypatch: pytest.MonkeyPatch, now: float, synced: str) -> tuple[list[str],
                                                                                  list[str]]:
    monkeypatch.setattr("engine.hosting.doctor.time.time", lambda: now)
    monkeypatch.setattr("engine.hosting.doctor.shutil.which", lambda name: f"/usr/bin/{name}")

    def timedatectl(args: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        assert args[0] == "timedatectl"
        return subprocess.CompletedProcess(args, 0, stdout=synced + "\n", stderr="")

    monkeypatch.setattr("engine.hosting.doctor.subprocess.run", timedatectl)
    said: list[str] = []
    found = Doctor.check_clock(Doctor.__new__(Doctor), said.append)
    return found, said


def test_an_offline_table_network_passes_the_clock_check(monkeypatch: pytest.MonkeyPatch) -> None:
    found, said = clock_check(monkeypatch, time.time(), synced="no")
    assert found == []
    assert said[0].startswith("ok") and "not synchronised" in said[0] and "fine" in said[0]


def test_a_clock_before_the_install_is_named_with_its_fix(
        monkeypatch: pytest.MonkeyPatch) -> None:
    found, said = clock_check(monkeypatch, time.mktime((2024, 1, 1, 0, 0, 0, 0, 1, 0)),
                              synced="no")
    assert said[0].startswith("PROBLEM") and len(found) == 1
    assert "2024-01-01" in found[0] and "timedatectl set-ntp true" in found[0]

"""engine.datadir: the one owner of where Cauldron keeps its data (XDG Base Directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.datadir import data_dir


def test_xdg_data_home_or_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert data_dir() == tmp_path / "cauldron"
    assert data_dir("engine") == tmp_path / "cauldron" / "engine"
    for unset in ("", None):
        if unset is None:
            monkeypatch.delenv("XDG_DATA_HOME")
        else:
            monkeypatch.setenv("XDG_DATA_HOME", unset)
        assert data_dir("demo") == Path.home() / ".local" / "share" / "cauldron" / "demo"


def test_every_process_asks_the_one_owner(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    from engine.service.store import default_data_dir
    from hub.config import HubConfig

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_data_dir() == data_dir("engine")
    assert HubConfig().data_dir == data_dir()

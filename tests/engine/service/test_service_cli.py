"""`cauldron engine` / `cauldron games`: user errors are one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["engine", "--shard", "3/2"], "need 0 <= i < n"),
        (["engine", "--shard", "x"], "must look like i/n"),
        (["engine", "--tables", "a b"], "table id 'a b'"),
        (["engine", "--mqtt", "http://x", "--data-dir", "{tmp}"], "mqtt://"),
        (["engine", "--mqtt", "mqtt://127.0.0.1:1", "--data-dir", "{tmp}",
          "--connect-timeout", "0.5"], "could not connect"),
        (["engine", "--config", "{tmp}/missing.toml"], "cannot read the config file"),
        (["games", "--data-dir", "{tmp}", "--table", "nope"], "no stored table 'nope'"),
        (["games", "--data-dir", "{tmp}", "show", "nope", "g"], "no stored table 'nope'"),
    ],
)
def test_user_errors(argv: list[str], message: str, tmp_path: Path,
                     capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) >= 1 and message in err[-1] and "Traceback" not in "\n".join(err)


def test_config_file_settings_are_checked(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "engine.toml"
    config.write_text('[engine]\nmqtt = "mqtt://127.0.0.1:1"\nbogus = 1\n')
    assert main(["engine", "--config", str(config)]) == 2
    assert "unknown setting(s) bogus" in capsys.readouterr().err


def test_no_games_yet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "--data-dir", str(tmp_path)]) == 0
    assert "no stored games" in capsys.readouterr().out

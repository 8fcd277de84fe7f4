"""Fuzz: `cauldron engine` settings, from its TOML config file and its options. Any file and
any option values give a usable `ServiceConfig` (a service can be built from it), or a
`CliError` (one line, exit 2), never another exception."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.app.cli import main
from engine.cli import CliError
from engine.service import cli as service_cli
from engine.service.service import EngineService, ServiceConfig
from engine.wire.contract import TopicError, check_table_id
from engine.wire.mqtt import MqttError

SETTINGS = ["mqtt", "data_dir", "tables", "shard", "name", "hub_io"]
texts = (st.text(max_size=16)
         | st.sampled_from(["0/2", "1/2", "3/2", "x", "a,b", "t-1", "~", "~nosuchuser-zz/d",
                            "mqtt://127.0.0.1:1", "mqtts://u:p@127.0.0.1:8883", "http://x",
                            "mqtt://127.0.0.1:99999", "mqtt://", "/tmp/d", "a b", ""]))
scalars = (st.booleans() | st.integers() | st.floats(allow_nan=True) | texts)
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=3)
                      | st.dictionaries(texts, kids, max_size=3), max_leaves=6)
sections = st.dictionaries(st.sampled_from(SETTINGS) | st.text(max_size=8), values, max_size=5)
documents = sections | st.fixed_dictionaries({"engine": sections | values})


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_document(data: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in data.items())


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    service_cli.register(parser.add_subparsers())
    return parser.parse_args(["engine", *argv])


def build(args: argparse.Namespace) -> ServiceConfig | None:
    try:
        config = service_cli._service_config(args)
    except CliError as exc:
        assert str(exc) and "\n" not in str(exc)
        return None
    assert isinstance(config.mqtt, str) and isinstance(config.data_dir, Path)
    assert isinstance(config.name, str) and check_table_id(config.name) == config.name
    assert config.tables is None or all(check_table_id(t) == t for t in config.tables)
    if config.shard is not None:
        index, count = config.shard
        assert 0 <= index < count
    assert isinstance(config.hub_io, bool)
    try:  # what `cauldron engine` does next; it turns MqttError into a CliError
        EngineService(config).client.stop()
    except MqttError as exc:
        assert str(exc)
    return config


@given(data=documents)
def test_fuzz_engine_config_file(tmp_path: Path, data: dict[str, Any]) -> None:
    path = tmp_path / "engine.toml"
    path.write_text(toml_document(data), encoding="utf-8", errors="surrogatepass")
    build(parse("--config", str(path), "--data-dir", str(tmp_path / "data")))


@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_fuzz_engine_config_bytes(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "engine.toml"
    path.write_bytes(raw)
    build(parse("--config", str(path), "--data-dir", str(tmp_path / "data")))


@given(options=st.dictionaries(st.sampled_from(["--mqtt", "--tables", "--shard", "--name",
                                                "--data-dir"]), texts, max_size=4))
def test_fuzz_engine_options(tmp_path: Path, options: dict[str, str]) -> None:
    argv = [part for option, value in options.items() for part in (option, value)
            if not value.startswith("-")]
    if "--data-dir" not in options:
        argv += ["--data-dir", str(tmp_path / "data")]
    try:
        args = parse(*argv)
    except SystemExit:  # argparse's own usage error (exit 2)
        return
    build(args)


@pytest.mark.parametrize("text", [
    "[engine]\nname = " + "[" * 50_000 + "]" * 50_000,
    "engine = 5",
    "[engine]\ntables = [1, 2]",
    "[engine]\nhub_io = \"no\"",
    "[engine]\nname = \"a b\"",
    "[engine]\ndata_dir = \"~nosuchuser-zz/data\"",
])
def test_bad_engine_config_exits_2_in_one_line(tmp_path: Path, text: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "engine.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["engine", "--config", str(path), "--mqtt", "mqtt://127.0.0.1:1",
                 "--connect-timeout", "0.2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "could not connect" not in err[0], err


def test_a_bad_name_option_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(TopicError):
        check_table_id("a b")
    assert main(["engine", "--name", "a b", "--mqtt", "mqtt://127.0.0.1:1"]) == 2
    assert "--name 'a b'" in capsys.readouterr().err

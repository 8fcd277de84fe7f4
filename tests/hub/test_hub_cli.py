"""The hub's commands, run as a person would: real processes, a real broker."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from people_words import leaks

from engine.app.cli import main
from engine.wire.auth import ensure_key, key_path, keys_dir
from engine.wire.contract import HubEvent, ServiceState, Topics, WireModel
from engine.wire.mqtt import WireClient

SCRIPT = """
# deal two cards, take one onto pad 0, an unknown tag on pad 1
place 1,1 blue-a-4
place 1,2 red-b-2
wait 0.1
remove 1,1
wait 0.1
place pad:0 blue-a-4
wait 0.1
place pad:1 uid=04AABBCCDDEEFF
wait 0.1
"""


def cauldron(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    code = "import sys; from engine.app.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def test_schema_command(tmp_path: Path) -> None:
    assert main(["schema", "--out", str(tmp_path / "s")]) == 0
    assert json.loads((tmp_path / "s" / "hub-event.schema.json").read_text())["title"] == "HubEvent"
    # The API map too: each verb's args and result, and the map itself (engine.wire.api).
    index = json.loads((tmp_path / "s" / "api.json").read_text())
    assert index["cmd"]["new_game"] == {"args": "NewGameArgs", "result": ["GameAnswer"],
                                        "doc": "deal and start a game (G2)",
                                        "refusal_code": "bad_config"}
    assert (tmp_path / "s" / "api-gesture.schema.json").exists()
    # Each game's views and cmd/play moves, found through the registry (issue 22).
    quacks = json.loads((tmp_path / "s" / "game-public-quacks.schema.json").read_text())
    assert quacks["title"] == "GamePublicQuacks" and "view" in quacks["properties"]
    assert (tmp_path / "s" / "game-seat-quacks.schema.json").exists()
    assert index["cmd"]["play"]["args"] == "PlayArgs"
    assert index["moves"]["quacks"]["answer"] == "QuacksAnswerMove"
    assert (tmp_path / "s" / "api-quacks-answer-move.schema.json").exists()


def test_the_backend_choices_are_the_one_list() -> None:
    """`--backend` offers exactly `hub.config.BACKENDS` on each hub command (a new reader
    back-end is added there once)."""
    import argparse

    from hub.cli import register
    from hub.config import BACKENDS

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    offered = {name: next(a.choices for a in sub._actions if "--backend" in a.option_strings)
               for name, sub in commands[0].choices.items()
               if any("--backend" in a.option_strings for a in sub._actions)}
    assert offered and all(tuple(c or ()) == BACKENDS for c in offered.values()), offered


def test_readers_once_shows_the_grid(tmp_path: Path) -> None:
    script = tmp_path / "s.txt"
    script.write_text("place 2,3 immuto-2\nplace pad:3 accio-1\n")
    out = cauldron("readers", "--backend", "sim", "--once", "--sim-script", str(script),
                   "--sweeps", "40", "--data-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    # Rows, columns and seats are named for people (1..6, Seat 1..4), as everywhere.
    row3 = next(line for line in out.stdout.splitlines() if line.startswith("row 3"))
    # Cards by their names, never a raw id (issue 19: `cauldron readers` printed ids).
    assert "Immuto (Metamorphosis)" in row3 and "immuto-2" not in out.stdout
    assert "4: Accio" in out.stdout and "all readers ok" in out.stdout


def test_hub_sim_publishes_a_script_in_order(mqtt_broker: str, table_id: str,
                                             tmp_path: Path) -> None:
    topics = Topics(table_id)
    got: list[WireModel] = []
    script = tmp_path / "game.txt"
    script.write_text(SCRIPT)
    with WireClient(mqtt_broker) as watcher:
        watcher.subscribe(topics.hub_event, lambda t, m: got.append(m), wait=5)
        watcher.subscribe(topics.hub_state, lambda t, m: got.append(m), wait=5)
        out = cauldron("hub", "--backend", "sim", "--mqtt", mqtt_broker, "--table", table_id,
                       "--data-dir", str(tmp_path), "--sim-script", str(script),
                       "--exit-when-done")
        assert out.returncode == 0, out.stderr
        # Delivered on the watcher's own thread, maybe well after the hub has exited.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                sum(isinstance(m, HubEvent) for m in got) >= 5
                and got and isinstance(got[-1], ServiceState) and got[-1].state == "offline"):
            time.sleep(0.02)
    events = [m for m in got if isinstance(m, HubEvent)]
    assert [(e.seq, e.kind, e.action, e.cell or e.seat, e.card_id) for e in events] == [
        (1, "cell", "placed", "1,1", "blue-a-4"),
        (2, "cell", "placed", "1,2", "red-b-2"),
        (3, "cell", "removed", "1,1", "blue-a-4"),
        (4, "pad", "placed", 0, "blue-a-4"),
        (5, "unknown_tag", "placed", 1, None),
    ]
    states = [m.state for m in got if isinstance(m, ServiceState)]
    assert states[0] == "online" and states[-1] == "offline"
    # The echo is for the host: places and cards by their names, never "pad 0" or an id.
    assert "#4     pad           placed   Seat 1's pad       Pumpkins 4 (blue)" in out.stdout
    assert "#1     cell          placed   row 2, column 2    Pumpkins 4 (blue)" in out.stdout
    echo = [line for line in out.stdout.splitlines() if line.startswith("#")]
    assert len(echo) == 5 and not [line for line in echo if leaks(line)], echo


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hub", "--backend", "spi"], "address_pins"),
        (["hub", "--backend", "serial"], "[serial] port"),
        (["hub", "--table", "no/slash"], "table id"),
        (["hub", "--config", "/nonexistent.toml"], "cannot read config"),
        (["hub", "--backend", "sim", "--mqtt", "http://x"], "scheme"),
        (["readers", "--backend", "sim", "--sim-script", "/nonexistent"], "sim script"),
    ],
)
def test_user_errors_are_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    out = cauldron(*args, "--data-dir", str(tmp_path))
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_enroll_pad_counts_seats_from_one(tmp_path: Path) -> None:
    # --pad N is Seat N's pad (issue 11: people never count seats from 0).
    for bad in ("0", "5", "one"):
        out = cauldron("enroll", "--pad", bad, "--data-dir", str(tmp_path))
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert "is not a seat: give 1 to 4 (--pad 1 is Seat 1's pad)" in out.stderr


def test_bad_config_keys_and_script_lines(tmp_path: Path) -> None:
    config = tmp_path / "hub.toml"
    config.write_text('table = "t1"\nbackends = "sim"\n')
    out = cauldron("hub", "--config", str(config))
    assert out.returncode == 2 and "unknown key(s) backends" in out.stderr
    script = tmp_path / "bad.txt"
    script.write_text("place 1,1 blue-a-9\n")
    out = cauldron("readers", "--backend", "sim", "--once", "--sim-script", str(script),
                   "--data-dir", str(tmp_path))
    assert out.returncode == 2 and "line 1" in out.stderr and "not a card id" in out.stderr


def test_enroll_from_a_scripted_pad(tmp_path: Path) -> None:
    script = tmp_path / "taps.txt"
    lines = []
    for n in range(3):
        # Long enough for two sweeps on a busy machine (removal needs two missed sweeps).
        lines += [f"place pad:0 uid=04{n:012X}", "wait 0.6", "remove pad:0", "wait 0.6"]
    script.write_text("\n".join(lines))
    out = cauldron("enroll", "--backend", "sim", "--data-dir", str(tmp_path), "--sim-script",
                   str(script), "--idle-timeout", "3")
    assert out.returncode == 1  # stopped before the whole box was done
    tags = json.loads((tmp_path / "tagmap.json").read_text())["tags"]
    assert tags == {"04000000000000": "yellow-a-1", "04000000000001": "yellow-a-2",
                    "04000000000002": "yellow-a-3"}
    assert "3/84" in out.stdout and "saved" in out.stdout
    assert "tap each card on Seat 1's pad" in out.stdout


def test_enroll_names_the_games_pieces(tmp_path: Path) -> None:
    """A Quacks hub's enrolment asks for chips, not cards (its catalogue's noun)."""
    script = tmp_path / "taps.txt"
    script.write_text("place pad:0 uid=04000000000000\nwait 0.6\nremove pad:0\nwait 0.6")
    out = cauldron("enroll", "--game", "quacks", "--backend", "sim", "--data-dir",
                   str(tmp_path), "--sim-script", str(script), "--idle-timeout", "3")
    assert out.returncode == 1 and "1/216" in out.stdout
    assert "tap each chip on Seat 1's" in out.stdout and "card" not in out.stdout
    assert "saved: the 1 chip enrolled this time" in out.stdout


def test_enroll_talks_to_the_running_hub(mqtt_broker: str, table_id: str,
                                         tmp_path: Path) -> None:
    """With the hub up, `cauldron enroll` drives the hub's enrolment (no second process
    reads the pad or writes the hub's topics); u undoes a skip; q stops and says truly
    that nothing was saved."""
    from hub.backends.sim import SimulatedTable
    from hub.outbox import Outbox
    from hub.service import Hub
    from hub.tagmap import TagMap

    ensure_key(keys_dir(), table_id, "cmd")  # the engine's and dashboard's (same machine)
    tagmap = TagMap.load(tmp_path / "tagmap.json")
    client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                        state_topic=Topics(table_id).hub_state)
    hub = Hub(table=table_id, backend=SimulatedTable(tagmap=tagmap), client=client,
              outbox=Outbox(tmp_path / "o.sqlite"), tagmap=tagmap).start()
    try:
        assert client.wait_ready(10)
        out = subprocess.run(
            [sys.executable, "-c", "import sys; from engine.app.cli import main; "
             "sys.exit(main(sys.argv[1:]))", "enroll", "--mqtt", mqtt_broker, "--table",
             table_id, "--pad", "3"],
            input="s\nu\nq\n", capture_output=True, text=True, timeout=60, check=False)
    finally:
        hub.stop()
    assert out.returncode == 1, out.stderr
    assert "The running hub" in out.stdout and "Seat 3's pad" in out.stdout, out.stdout
    assert "Skipped Sulphur scent 1 (yellow) (" in out.stdout
    assert "Skip undone: Sulphur scent 1 (yellow) is asked again" in out.stdout
    assert "nothing new was enrolled" in out.stdout and "are saved" not in out.stdout


def test_readers_shows_the_running_hubs_table(mqtt_broker: str, table_id: str,
                                              tmp_path: Path) -> None:
    """`cauldron readers` asks the running hub (hub/cmd/readers): it shows the cards on the
    hub's own table, not an empty table of its own."""
    from hub.backends.sim import SimulatedTable, virtual_box_tagmap
    from hub.outbox import Outbox
    from hub.service import Hub

    tagmap = virtual_box_tagmap()
    sim = SimulatedTable(tagmap=tagmap)
    client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                        state_topic=Topics(table_id).hub_state)
    hub = Hub(table=table_id, backend=sim, client=client, outbox=Outbox(tmp_path / "o.sqlite"),
              tagmap=tagmap).start()
    try:
        assert client.wait_ready(10)
        sim.place("1,4", card_id="accio-2")
        deadline = time.monotonic() + 10
        while hub.backend.state().get(sim.layout.cell_reader(1, 4)) is None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        ask = ("readers", "--once", "--mqtt", mqtt_broker, "--table", table_id,
               "--backend", "sim", "--data-dir", str(tmp_path / "mine"))
        # Hub commands are signed with the table's command key, never one made here.
        keyless = cauldron(*ask)
        ensure_key(keys_dir(), table_id, "cmd")
        out = cauldron(*ask)
    finally:
        hub.stop()
    assert keyless.returncode == 2
    assert f"copy {key_path(keys_dir(), table_id, 'cmd').name}" in keyless.stderr
    assert out.returncode == 0, out.stderr
    assert f"hub hub-{table_id} (sim back-end" in out.stdout and "live" in out.stdout
    row2 = next(line for line in out.stdout.splitlines() if line.startswith("row 2"))
    assert "Accio" in row2 and "accio-2" not in row2

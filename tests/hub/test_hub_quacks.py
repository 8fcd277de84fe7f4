"""A hub that serves Quacks (issue 23, Sensing): the game its config names lays the readers
out (one draw pad per seat, no grid), enrols its chips kind by kind, gives a lost chip a
spare tag and retires the old one. Only through the game seam (`engine.games`)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine import games
from engine.service.service import EngineService, ServiceConfig
from hub import game as hub_game
from hub.backends import make_backend
from hub.backends.sim import SimulatedTable
from hub.config import HubConfig
from hub.enroll import Enrolment, Spare, SpareError, run_enrolment, run_spare
from hub.errors import ConfigError, TagMapError
from hub.layout import Layout, cells
from hub.service import Hub
from hub.tagmap import TagMap

QUACKS = games.get("quacks")


@pytest.fixture
def quacks() -> Iterator[None]:
    """This process's hub serves Quacks for one test (then the default game again)."""
    hub_game.use("quacks")
    try:
        yield
    finally:
        hub_game.use(None)


def uid(n: int) -> str:
    return f"04{n:012X}"


def chips(kind: str) -> list[str]:
    return [c for c in QUACKS.catalogue.pieces if QUACKS.catalogue.kinds[c] == kind]


class Tapper:
    """Taps tags on pad 0 one after another, each held then lifted long enough to be
    confirmed (as a person does), then stops enrolment with ``q``."""

    def __init__(self, sim: SimulatedTable, taps: list[int]) -> None:
        self.sim, self.taps = sim, list(taps)
        self.holding, self.since = False, -10

    def read_command(self) -> str | None:
        if self.sim.sweeps - self.since < 3:
            return None
        if self.holding:
            self.sim.remove("pad:0")
            self.holding, self.since = False, self.sim.sweeps
            return None
        if not self.taps:
            return "q"
        self.sim.place("pad:0", uid=uid(self.taps.pop(0)))
        self.holding, self.since = True, self.sim.sweeps
        return None


def enrol(tagmap: TagMap, taps: list[int]) -> tuple[Enrolment, list[str]]:
    sim = SimulatedTable()
    enrolment = Enrolment(tagmap, backend=sim, reader=sim.layout.pad_reader(0))
    said: list[str] = []
    run_enrolment(enrolment, sim, sim.layout.pad_reader(0), Tapper(sim, taps).read_command,
                  said.append, poll_interval=0)
    return enrolment, said


# ---------------------------------------------------------------- the game a hub serves


def test_the_config_names_the_game_and_an_unknown_one_is_refused_naming_the_offer() -> None:
    assert HubConfig().game == games.DEFAULT_GAME
    assert HubConfig.load(None, game="quacks").game == "quacks"
    with pytest.raises(ConfigError, match=r"unknown game 'chess': this table offers "
                                          r"glastonbury, quacks"):
        HubConfig.load(None, game="chess")


def test_quacks_layout_is_one_draw_pad_per_seat_and_no_grid(quacks: None) -> None:
    layout = Layout()
    assert cells() == () and layout.n_readers == 4
    assert [p.where for p in layout.places] == ["pad:0", "pad:1", "pad:2", "pad:3"]
    assert layout.place(2).label() == QUACKS.names.place("pad:2")
    with pytest.raises(ValueError, match="no grid of readers"):
        layout.reader_for("2,3")
    # Glastonbury's table, asked for by name, keeps its 32 cells and 4 pads.
    assert Layout(game=games.get("glastonbury")).n_readers == 36


def test_make_backend_lays_the_configured_game_out(tmp_path: Path) -> None:
    try:
        backend = make_backend(HubConfig(game="quacks", data_dir=tmp_path), sim_state=False)
        assert backend.layout.n_readers == 4 and hub_game.current().id == "quacks"
    finally:
        hub_game.use(None)
    assert make_backend(HubConfig(data_dir=tmp_path), sim_state=False).layout.n_readers == 36


def test_the_sim_box_holds_the_quacks_chips(quacks: None) -> None:
    from hub.backends.sim import made_up_uid, virtual_box_tagmap

    box = virtual_box_tagmap()
    assert len(box) == len(QUACKS.catalogue.pieces) == 216
    sim = SimulatedTable(Layout(), tagmap=box)
    sim.place("pad:1", card_id="orange-1-03")
    sim.poll()
    assert sim.card_at(made_up_uid("orange-1-03")) == "orange-1-03"


# ---------------------------------------------------------------- enrolment by kind


def test_enrolment_goes_kind_by_kind_and_a_double_tap_is_not_counted(
        quacks: None, tmp_path: Path) -> None:
    whites = chips("white-1")
    assert len(whites) == 20
    white = QUACKS.names.piece(whites[0])
    # 20 white-1 chips, one tapped twice (tag 3), then the first chip of the next kind.
    enrolment, said = enrol(TagMap.load(tmp_path / "tagmap.json"),
                            [1, 2, 3, 3, *range(4, 22)])
    assert said[0].endswith(f"{white}: 20 chips, tap them one after another (0/20 done)")
    assert any(f"Tag {uid(3)} is already enrolled as {white}: not counted twice" in s
               for s in said)
    saved = json.loads((tmp_path / "tagmap.json").read_text())["tags"]
    # Each new tag took the kind's next chip id; the double tap took none.
    assert [saved[uid(n)] for n in range(1, 21)] == whites
    after = chips(QUACKS.catalogue.kinds[QUACKS.catalogue.pieces[20]])  # the next kind
    assert saved[uid(21)] == after[0] and len(saved) == 21
    assert any(f"{QUACKS.names.piece(after[0])}: {len(after)} chips, tap them one after "
               f"another (1/{len(after)} done)" in s for s in said)
    assert enrolment.done == 21 and enrolment.total == 216


def test_an_interrupted_enrolment_resumes_in_its_kind(quacks: None, tmp_path: Path) -> None:
    path = tmp_path / "tagmap.json"
    enrol(TagMap.load(path), [1, 2])
    enrolment, said = enrol(TagMap.load(path), [3])
    assert enrolment.done == 3
    assert json.loads(path.read_text())["tags"][uid(3)] == chips("white-1")[2]
    assert "(2/20 done)" in said[0]


def test_a_whole_box_is_216_taps(quacks: None, tmp_path: Path) -> None:
    """Every chip of every kind, by the kind's runs, no look-up by the person."""
    tagmap = TagMap(tmp_path / "tagmap.json")
    enrolment = Enrolment(tagmap)
    for n in range(216):
        assert enrolment.tag_seen(uid(n + 1)).wire()[0]["code"] == "enrolled_kind"
    assert enrolment.current is None and len(tagmap) == 216
    assert {tagmap.card_for(uid(n + 1)) for n in range(216)} == set(QUACKS.catalogue.pieces)


# ---------------------------------------------------------------- spares


def test_a_spare_replaces_a_lost_chips_tag_and_the_old_tag_is_refused(
        quacks: None, tmp_path: Path) -> None:
    path = tmp_path / "tagmap.json"
    tagmap = TagMap(path, tags={uid(n + 1): c for n, c in enumerate(chips("white-1"))})
    tagmap.save()
    lost = chips("white-1")[6]
    spare = Spare.of(TagMap.load(path), lost)
    sim = SimulatedTable()
    said: list[str] = []
    sim.place("pad:0", uid=uid(7))  # the old tag is refused as a spare: it is in use
    sim.poll()
    sim.remove("pad:0")
    sim.place("pad:0", uid=uid(99))
    assert run_spare(spare, sim, sim.layout.pad_reader(0), said.append, poll_interval=0,
                     idle_timeout=10)
    assert said[-1] == (f"Spare enrolled: tag {uid(99)} is now {QUACKS.names.piece(lost)}; its "
                        f"old tag {uid(7)} is retired (refused from now on).")
    again = TagMap.load(path)  # what the file holds, as the running hub reloads it
    assert again.card_for(uid(99)) == lost and again.card_for(uid(7)) is None
    assert len(again) == 20
    with pytest.raises(TagMapError, match=f"tag {uid(7)} is retired: it was"):
        again.add(uid(7), chips("white-1")[0])
    words = Enrolment(again).tag_seen(uid(7))
    assert words.wire()[0]["code"] == "retired_tag"
    assert "put it aside" in str(words)


def test_a_spare_by_kind_takes_a_skipped_chip_first(quacks: None, tmp_path: Path) -> None:
    whites = chips("white-1")
    tagmap = TagMap(tmp_path / "t.json", tags={uid(n + 1): c for n, c in enumerate(whites)
                                               if c != whites[4]})
    assert Spare.of(tagmap, "white-1").card == whites[4]
    full = TagMap(tmp_path / "u.json", tags={uid(n + 1): c for n, c in enumerate(whites)})
    assert Spare.of(full, "white-1").card == whites[0]  # none ever seen: the first
    with pytest.raises(SpareError, match="'white-9' is neither a piece nor a kind of The "
                                         "Quacks of Quedlinburg; its kinds: black-1, blue-1"):
        Spare.of(full, "white-9")


def test_a_spare_by_kind_retires_the_tag_not_seen_the_longest_and_none_lying_on_a_reader(
        quacks: None, tmp_path: Path) -> None:
    """All of a kind tagged: the lost one is not a chip drawn a moment ago (it used to be
    the kind's first, which may lie in a bag and be refused at its next draw); a chip never
    seen counts as the oldest; a chip lying on a reader is not lost."""
    whites = chips("white-1")
    full = TagMap(tmp_path / "u.json", tags={uid(n + 1): c for n, c in enumerate(whites)})
    every = {uid(n + 1): 100.0 + n for n in range(len(whites))}  # whites[0] seen longest ago
    every[uid(1)] = 500.0  # ... until it was drawn just now
    assert Spare.of(full, "white-1", seen=every).card == whites[1]
    assert Spare.of(full, "white-1", seen=every, lying={uid(2)}).card == whites[2]
    assert Spare.of(full, "white-1", seen={uid(1): 1.0}).card == whites[1]  # never seen
    assert Spare.of(full, whites[0], seen=every).card == whites[0]  # a piece named: that one
    with pytest.raises(SpareError, match="every white-1 lies on a reader now, so none is "
                                         "lost; name the lost piece itself"):
        Spare.of(full, "white-1", lying={uid(n + 1) for n in range(len(whites))})


def test_cli_spare_through_the_sim_script(tmp_path: Path) -> None:
    """`cauldron enroll --game quacks --spare`, run as a person would."""
    whites = chips("white-1")
    tagmap = tmp_path / "tagmap.json"
    tagmap.write_text(json.dumps({"schema_version": 1, "tags": {uid(1): whites[0]}}))
    script = tmp_path / "spare.txt"
    script.write_text(f"wait 0.2\nplace pad:0 uid={uid(50)}\nwait 0.3\n")
    code = "import sys; from engine.app.cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run(
        [sys.executable, "-c", code, "enroll", "--game", "quacks", "--backend", "sim",
         "--offline", "--data-dir", str(tmp_path), "--tagmap", str(tagmap), "--spare",
         whites[0], "--sim-script", str(script), "--idle-timeout", "20"],
        capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert f"its old tag {uid(1)} is retired" in out.stdout
    saved = json.loads(tagmap.read_text())
    assert saved["tags"] == {uid(50): whites[0]} and saved["retired"] == {uid(1): whites[0]}
    bad = subprocess.run(
        [sys.executable, "-c", code, "enroll", "--game", "chess", "--offline", "--backend",
         "sim", "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "unknown game 'chess': this table offers glastonbury, quacks" in bad.stderr


def test_cli_spare_by_kind_goes_by_what_the_tables_outbox_last_saw(tmp_path: Path) -> None:
    """`cauldron enroll --spare white-1` with no hub running: the table's outbox (in the
    data dir) says whites[0] was drawn a moment ago, so whites[1] (never seen) is the one
    retired; an outbox that is no database is said, not a traceback."""
    from hub.outbox import Outbox

    whites = chips("white-1")
    tagmap = tmp_path / "tagmap.json"
    tagmap.write_text(json.dumps({"schema_version": 1, "tags": {
        uid(n + 1): c for n, c in enumerate(whites)}}))
    outbox = Outbox(tmp_path / "outbox-t7.sqlite")
    outbox.append("t", lambda seq: b"placed", {0: uid(1)})
    outbox.append("t", lambda seq: b"removed", {0: None})
    outbox.close()
    script = tmp_path / "spare.txt"
    script.write_text(f"wait 0.2\nplace pad:0 uid={uid(50)}\nwait 0.3\n")
    code = "import sys; from engine.app.cli import main; sys.exit(main(sys.argv[1:]))"
    args = [sys.executable, "-c", code, "enroll", "--game", "quacks", "--backend", "sim",
            "--offline", "--table", "t7", "--data-dir", str(tmp_path), "--tagmap",
            str(tagmap), "--spare", "white-1", "--sim-script", str(script),
            "--idle-timeout", "20"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert f"its old tag {uid(2)} is retired" in out.stdout
    saved = json.loads(tagmap.read_text())
    assert saved["tags"][uid(50)] == whites[1] and saved["retired"] == {uid(2): whites[1]}
    (tmp_path / "outbox-t7.sqlite").unlink()
    (tmp_path / "outbox-t7.sqlite").write_text("not a database")
    bad = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
    assert "cannot be read" in bad.stderr and "name the lost piece itself" in bad.stderr


# ---------------------------------------------------------------- a Quacks table, live


def test_a_hub_serving_quacks_enrols_by_kind_and_its_pad_taps_are_draws_the_engine_takes(
        quacks: None, mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    """A real broker, the real hub (simulated readers) and the real engine service: the
    hub's enrolment mode asks kind by kind, and a chip of seat 0's bag laid on its draw pad
    is seat 0's draw (Q12) on the engine's wire."""
    from test_hub_service import fast_client, make_hub
    from waiting import wait_until

    from engine.wire.contract import Topics
    from hub.backends.sim import virtual_box_tagmap

    enrolling = TagMap.load(tmp_path / "tagmap.json")
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o1.sqlite",
                   SimulatedTable(Layout(), tagmap=enrolling), enrolling)
    try:
        with fast_client(mqtt_broker) as client:
            started = client.request(Topics(table_id).hub_cmd("enrol"),
                                     {"action": "start", "pad": 0}, timeout=5)
            white = QUACKS.names.piece(chips("white-1")[0])
            assert started.status == "ok" and isinstance(started.data, dict), started
            assert [line["code"] for line in json.loads(json.dumps(started.data["said"]))
                    ] == ["enrolling", "next_kind"]
            assert f"{white}: 20 chips, tap them one after another" in str(
                started.data["message"])
    finally:
        hub.stop()

    with brewing(mqtt_broker, table_id, tmp_path, virtual_box_tagmap(),
                 Topics(table_id).game_events) as (hub, sim, engine, events):
        game = engine.tables[table_id].interp.game  # type: ignore[attr-defined]
        chip = next(c for c in QUACKS.catalogue.pieces if game.where(c) == "bag:0")
        sim.place("pad:0", card_id=chip)

        def drawn() -> bool:
            return any(a.get("type") == "draw" and a.get("seat") == 0
                       and a.get("chip") == chip
                       for m in list(events) for a in getattr(m, "actions", []))

        interp = engine.tables[table_id].interp
        wait_until(drawn, 10, slowest=0.01, report=lambda: f"{events[-3:]} {interp.prompt()} "
                 f"{interp.active_alerts} {game.legal_actions(0)} {hub.counts}")
        assert game.where(chip) == "pot:0"
        # A chip of the other seat's bag on seat 0's pad: refused with the word why.
        other = next(c for c in QUACKS.catalogue.pieces if game.where(c) == "bag:1")
        sim.remove("pad:0")
        sim.place("pad:0", card_id=other)
        wait_until(lambda: any(getattr(getattr(a, "refusal", None), "code", None)
                               == "chip_in_other_bag" for a in interp.active_alerts),
                   10, slowest=0.01)
        assert game.where(other) == "bag:1"


@contextmanager
def brewing(mqtt_broker: str, table_id: str, tmp_path: Path, box: TagMap, topic: str
            ) -> Iterator[tuple[Hub, SimulatedTable, EngineService, list[object]]]:
    """A real broker, the hub on a simulated Quacks table whose tags are ``box``, and the
    engine service, playing a 2-player game with no fortune card: round 1 brews at once
    (Q9), the pads draw. Yields the hub, its table, the engine and what ``topic`` carried
    since before the game started."""
    from test_hub_service import fast_client, make_hub

    from engine.wire.contract import Topics

    sim = SimulatedTable(Layout(), tagmap=box)
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o2.sqlite", sim, box)
    engine = EngineService(ServiceConfig(mqtt=mqtt_broker, data_dir=tmp_path / "engine",
                                         tables=frozenset({table_id}),
                                         name=f"eng-{table_id}")).start(wait=10)
    events: list[object] = []
    try:
        with fast_client(mqtt_broker) as client:
            client.subscribe(topic, lambda _t, m: events.append(m), wait=5)
            reply = client.request(Topics(table_id).cmd("new_game"), {
                "game": "quacks", "players": 2, "fortune_cards": False}, timeout=10)
            assert reply.status == "ok", reply
            yield hub, sim, engine, events
    finally:
        engine.stop()
        hub.stop()


def test_readers_show_a_quacks_table_as_its_four_pads(quacks: None) -> None:
    from hub.backends.sim import virtual_box_tagmap
    from hub.cli import render_grid

    box = virtual_box_tagmap()
    sim = SimulatedTable(Layout(), tagmap=box)
    sim.place("pad:2", card_id="orange-1-03")
    sim.poll()
    sim.poll()
    shown = render_grid(sim, box)
    assert shown.startswith("pads  1: .") and "row 1" not in shown and "col 1" not in shown
    assert f"3: {QUACKS.names.piece('orange-1-03')}" in shown

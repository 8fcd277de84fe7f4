"""The hub restarted (crash, SIGKILL, reboot) while cards lie on the table: it reports exactly
what changed while it was down, from what its outbox says it last reported.

Real broker; `cauldron hub --backend sim` subprocesses killed with SIGKILL; the simulated
table's physical truth survives in the data dir as real cards would stay on a real table."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waiting import EXIT_WITHIN, wait_for

from engine.wire.contract import HubEvent, Topics, WireModel
from engine.wire.mqtt import WireClient
from engine.wire.sequence import HubCursor
from hub.backends.base import RawBackend, ReaderRead
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.config import HubConfig
from hub.layout import Layout
from hub.outbox import Outbox
from hub.service import Hub
from hub.tagmap import TagMap

ROOT = Path(__file__).resolve().parents[2]
UID_A, UID_B, UID_C, UID_D = ("04A1B2C3D4E5F6", "04FFEEDDCCBBAA", "04010203040506",
                              "04111213141516")


class Watcher:
    """An engine's view: every hub event received, and the deduplicated stream."""

    def __init__(self, url: str, table: str) -> None:
        self.topics = Topics(table)
        self.received: list[HubEvent] = []
        self.delivered: list[HubEvent] = []
        self.cursors: dict[str, HubCursor] = {}
        self.lock = threading.Lock()
        self.client = WireClient(url, reconnect_min=0.05, reconnect_max=0.2).start(wait=5)
        self.client.subscribe(self.topics.hub_event, self._event, wait=5)

    def _event(self, topic: str, model: WireModel) -> None:
        assert isinstance(model, HubEvent)
        with self.lock:
            self.received.append(model)
            self.delivered += HubCursor.of(self.cursors, model).feed(model)

    def events(self) -> list[tuple[int, str, str | None, str | None, str | None]]:
        with self.lock:
            return [(e.seq, e.kind, e.action, e.cell or (f"pad:{e.seat}" if e.seat is not None
                                                           else None), e.card_id)
                    for e in self.delivered]

    def sim(self, args: dict[str, Any]) -> Any:
        reply = self.client.request(self.topics.hub_cmd("sim"), args, timeout=5)
        assert reply.status == "ok", reply.error
        return reply.data

    def stop(self) -> None:
        self.client.stop()


@pytest.fixture
def watcher(mqtt_broker: str, table_id: str) -> Iterator[Watcher]:
    w = Watcher(mqtt_broker, table_id)
    yield w
    w.stop()


def python(code: str, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=log.open("ab"),
                            stderr=subprocess.STDOUT)


def cauldron_hub(url: str, table: str, data_dir: Path, log: Path) -> subprocess.Popen[bytes]:
    args = ["hub", "--backend", "sim", "--table", table, "--data-dir", str(data_dir),
            "--mqtt", url]
    return python(f"import sys; from engine.app.cli import main; sys.exit(main({args!r}))", log)


def start_sim_hub(w: Watcher, url: str, table: str, data_dir: Path, log: Path
                  ) -> subprocess.Popen[bytes]:
    """`cauldron hub --backend sim` on `data_dir`, once it answers commands."""
    hub = cauldron_hub(url, table, data_dir, log)
    try:
        wait_answering(w, hub, log)
    except BaseException:
        hub.kill()
        hub.wait(EXIT_WITHIN)
        raise
    return hub


def sigkill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    assert process.wait(EXIT_WITHIN) == -signal.SIGKILL


def wait_answering(w: Watcher, process: subprocess.Popen[bytes], log: Path) -> None:
    def answers() -> bool:
        assert process.poll() is None, log.read_text()
        return w.client.request(w.topics.hub_cmd("snapshot"), timeout=0.5).status == "ok"

    def tries() -> bool:
        try:
            return answers()
        except AssertionError:
            raise
        except Exception:  # no answer yet (the request times out)
            return False

    wait_for(tries, 20, "the hub to answer")


def pending(outbox: Path) -> int:
    with sqlite3.connect(str(outbox)) as db:
        return int(db.execute("SELECT COUNT(*) FROM events WHERE delivered IS NULL")
                   .fetchone()[0])


def stored_readers(outbox: Path) -> dict[int, str]:
    with sqlite3.connect(str(outbox)) as db:
        return {int(r): str(u) for r, u in db.execute("SELECT reader, uid FROM readers")}


def test_sigkilled_sim_hub_reports_only_the_card_lifted_while_it_was_down(
    watcher: Watcher, mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    data = tmp_path / "hub"
    config = HubConfig(table=table_id, data_dir=data)
    log = tmp_path / "hub.log"
    hub = start_sim_hub(watcher, mqtt_broker, table_id, data, log)
    try:
        for where, card in (("1,1", "blue-a-4"), ("1,2", "red-b-2"), ("pad:0", "immuto-1")):
            watcher.sim({"action": "place", "where": where, "card_id": card})
        wait_for(lambda: len(watcher.events()) == 3, what="three placements")
        wait_for(lambda: pending(config.outbox_path) == 0, what="every PUBACK stored")
        sigkill(hub)

        # While no hub runs, a person lifts the card on 1,2 (the table remembers the rest).
        table = SimulatedTable(Layout(), state_path=config.sim_state_path)
        assert len(table.truth()) == 3
        assert table.remove("1,2") == table.uid_of("red-b-2")

        hub = start_sim_hub(watcher, mqtt_broker, table_id, data, log)
        wait_for(lambda: len(watcher.events()) == 4, what="the removal")
        time.sleep(0.5)  # a while longer: nothing else may come
        assert watcher.events() == [
            (1, "cell", "placed", "1,1", "blue-a-4"),
            (2, "cell", "placed", "1,2", "red-b-2"),
            (3, "pad", "placed", "pad:0", "immuto-1"),
            (4, "cell", "removed", "1,2", "red-b-2"),
        ]
        assert [e.seq for e in watcher.received] == [1, 2, 3, 4]  # no placement repeated
        assert watcher.sim({"action": "state"}) == {
            "lying": {"1,1": "blue-a-4", "pad:0": "immuto-1"}}
        watcher.sim({"action": "remove", "where": "pad:0"})  # and play goes on
        wait_for(lambda: watcher.events()[-1:] == [(5, "pad", "removed", "pad:0", "immuto-1")])
        hub.send_signal(signal.SIGINT)
        assert hub.wait(EXIT_WITHIN) == 0, log.read_text()
    finally:
        if hub.poll() is None:
            hub.kill()
            hub.wait(EXIT_WITHIN)


KILLED_BETWEEN_STORE_AND_PUBLISH = """
import os, signal, sys
from pathlib import Path
from engine.wire.contract import Topics
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.config import HubConfig
from hub.outbox import Outbox
from hub.service import Hub

url, table, data = sys.argv[1:4]
config = HubConfig(table=table, data_dir=Path(data))
tagmap = virtual_box_tagmap()
sim = SimulatedTable(tagmap=tagmap, state_path=config.sim_state_path)
client = WireClient(url, client_id="hub-" + table, state_topic=Topics(table).hub_state)
hub = Hub(table=table, backend=sim, client=client, outbox=Outbox(config.outbox_path),
          tagmap=tagmap)
publish = client.publish_raw

def publish_or_die(topic, payload, **kw):
    if topic == hub.topics.hub_event and b'"removed"' in payload:
        os.kill(os.getpid(), signal.SIGKILL)  # the removal is stored, not yet published
    return publish(topic, payload, **kw)

client.publish_raw = publish_or_die
hub.start()
assert client.wait_ready(10)
print("ready", flush=True)
sys.stdin.readline()
sim.remove("1,1")
sys.stdin.readline()  # never: the hub kills itself
"""


def test_killed_between_storing_an_event_and_publishing_it(
    watcher: Watcher, mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    """The removal is in the outbox with the state it implies, never published: the next hub
    publishes it once and does not see that removal again (the seeded state agrees)."""
    data = tmp_path / "hub"
    config = HubConfig(table=table_id, data_dir=data)
    log = tmp_path / "hub.log"
    hub = start_sim_hub(watcher, mqtt_broker, table_id, data, log)
    try:
        watcher.sim({"action": "place", "where": "1,1", "card_id": "blue-a-4"})
        watcher.sim({"action": "place", "where": "2,2", "card_id": "accio-1"})
        wait_for(lambda: len(watcher.events()) == 2, what="two placements")
        hub.send_signal(signal.SIGINT)
        assert hub.wait(EXIT_WITHIN) == 0, log.read_text()

        code = textwrap.dedent(KILLED_BETWEEN_STORE_AND_PUBLISH)
        dying = subprocess.Popen([sys.executable, "-c", code, mqtt_broker, table_id, str(data)],
                                 cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=log.open("ab"))
        assert dying.stdout is not None and dying.stdin is not None
        assert dying.stdout.readline() == b"ready\n", log.read_text()
        dying.stdin.write(b"go\n")
        dying.stdin.flush()
        assert dying.wait(EXIT_WITHIN) == -signal.SIGKILL
        assert len(watcher.events()) == 2  # the removal never went out...
        assert pending(config.outbox_path) == 1  # ...but it is stored, with its state
        uid_accio = virtual_box_tagmap().uid_for("accio-1")
        assert stored_readers(config.outbox_path) == {
            Layout().reader_for("2,2"): uid_accio}

        hub = start_sim_hub(watcher, mqtt_broker, table_id, data, log)
        wait_for(lambda: len(watcher.events()) == 3, what="the stored removal")
        time.sleep(0.5)
        assert watcher.events() == [
            (1, "cell", "placed", "1,1", "blue-a-4"),
            (2, "cell", "placed", "2,2", "accio-1"),
            (3, "cell", "removed", "1,1", "blue-a-4"),
        ]
        assert [e.seq for e in watcher.received] == [1, 2, 3]
        wait_for(lambda: pending(config.outbox_path) == 0, what="the removal acknowledged")
    finally:
        if hub.poll() is None:
            hub.kill()
            hub.wait(EXIT_WITHIN)


class Readers(RawBackend):
    """Readers whose sweep reads ``lying`` (reader -> UID), as real ones would."""

    name = "fake"

    def __init__(self, lying: dict[int, str]) -> None:
        super().__init__(Layout())
        self.lying = lying

    def sweep(self) -> list[ReaderRead]:
        return [ReaderRead(uid=self.lying.get(r)) for r in range(self.n_readers)]


def test_raw_backend_restart_lifted_swapped_and_kept_cards(
    watcher: Watcher, mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    """In-process, a back-end with real sweeps: the hub abandoned without a clean stop; on the
    same outbox a new hub sees a card lifted (removed), one swapped for another tag
    (removed + placed), one kept (nothing), one laid meanwhile (placed)."""
    outbox = tmp_path / "outbox.sqlite"
    layout = Layout()
    r1, r2, r3, r4 = (layout.reader_for(w) for w in ("1,1", "1,2", "2,2", "pad:1"))
    tagmap = TagMap(tags={UID_A: "blue-a-4", UID_B: "red-b-2", UID_C: "immuto-1",
                          UID_D: "accio-2"})

    def start(lying: dict[int, str]) -> Hub:
        client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                            state_topic=Topics(table_id).hub_state)
        hub = Hub(table=table_id, backend=Readers(lying), client=client, outbox=Outbox(outbox),
                  tagmap=tagmap, poll_interval=0.002)
        return hub.start()

    first = start({r1: UID_A, r2: UID_B, r3: UID_C})
    wait_for(lambda: len(watcher.events()) == 3, what="three placements")
    first._stop.set()  # its polling ends; the outbox is left as a kill leaves it
    first.client._client.disconnect()  # no clean 'offline' either
    second = start({r1: UID_A, r3: UID_D, r4: UID_B})
    try:
        wait_for(lambda: len(watcher.events()) == 7, what="the changes")
        time.sleep(0.3)
        assert watcher.events() == [
            (1, "cell", "placed", "1,1", "blue-a-4"),
            (2, "cell", "placed", "1,2", "red-b-2"),
            (3, "cell", "placed", "2,2", "immuto-1"),
            (4, "cell", "removed", "1,2", "red-b-2"),
            (5, "cell", "removed", "2,2", "immuto-1"),
            (6, "cell", "placed", "2,2", "accio-2"),
            (7, "pad", "placed", "pad:1", "red-b-2"),
        ]
        assert second.outbox.reader_state() == {r1: UID_A, r3: UID_D, r4: UID_B}
    finally:
        second.stop()
        first.client.stop()


def test_a_sim_script_starts_from_an_empty_table(mqtt_broker: str, table_id: str,
                                                 tmp_path: Path) -> None:
    """`cauldron hub --sim-script` twice on one data dir: the second run lifts what the first
    left (reported as removals) instead of failing on occupied readers."""
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("place 1,1 blue-a-4\nplace pad:0 red-b-2\nwait 0.1\n")
    second.write_text("place 2,2 blue-a-4\nwait 0.1\n")
    code = "import sys; from engine.app.cli import main; sys.exit(main(sys.argv[1:]))"
    runs = []
    for script in (first, second):
        args = ["hub", "--backend", "sim", "--mqtt", mqtt_broker, "--table", table_id,
                "--data-dir", str(tmp_path / "hub"), "--sim-script", str(script),
                "--exit-when-done", "-q"]
        run = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                             text=True, timeout=60, check=False, cwd=ROOT)
        assert run.returncode == 0, run.stderr
        assert "already" not in run.stderr, run.stderr  # no step refused
        runs.append(run)
    assert "2 card(s) left from before lifted" in runs[1].stderr
    config = HubConfig(table=table_id, data_dir=tmp_path / "hub")
    events = [HubEvent.model_validate_json(row.payload)
              for row in Outbox(config.outbox_path).rows(1)]
    assert [(e.seq, e.action, e.cell or e.seat, e.card_id) for e in events[:2]] == [
        (1, "placed", "1,1", "blue-a-4"), (2, "placed", 0, "red-b-2")]
    assert sorted((e.action or "", str(e.cell or e.seat), e.card_id or "")
                  for e in events[2:]) == [
        ("placed", "2,2", "blue-a-4"), ("removed", "0", "red-b-2"),
        ("removed", "1,1", "blue-a-4")]
    assert SimulatedTable(state_path=config.sim_state_path).truth() == {
        Layout().reader_for("2,2"): virtual_box_tagmap().uid_for("blue-a-4")}


def test_a_restart_on_a_changed_tag_map_keeps_what_queued_events_meant(
    watcher: Watcher, mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    """Events queued while the broker was away, the hub killed, its tag map changed, then
    restarted: the queued events go out as they were read; a card lifted meanwhile is
    removed under the name it was laid with; one still lying is renamed (removed old,
    placed new); and it is lifted later under its new name."""
    from engine.wire.broker import free_port

    outbox = tmp_path / "outbox.sqlite"
    layout = Layout()
    r1, r2, r3 = (layout.reader_for(w) for w in ("1,1", "1,2", "2,2"))
    before = TagMap(tags={UID_A: "blue-a-4", UID_B: "red-b-2", UID_C: "accio-1"})
    after = TagMap(tags={UID_A: "immuto-1", UID_B: "red-b-2", UID_C: "accio-2"})

    def hub(url: str, lying: dict[int, str], tagmap: TagMap) -> Hub:
        client = WireClient(url, client_id=f"hub-{table_id}",
                            state_topic=Topics(table_id).hub_state)
        return Hub(table=table_id, backend=Readers(lying), client=client,
                   outbox=Outbox(outbox), tagmap=tagmap, poll_interval=0.002).start()

    # No broker answers this one: its three events stay queued in the outbox.
    first = hub(f"mqtt://127.0.0.1:{free_port()}", {r1: UID_A, r2: UID_B, r3: UID_C}, before)
    wait_for(lambda: first.outbox.pending_count() == 3, what="three queued events")
    first._stop.set()  # killed: no clean stop
    assert first._thread is not None
    first._thread.join(5)
    first.client.stop()
    lying = {r1: UID_A}  # the red and the accio card lifted while the hub was down
    second = hub(mqtt_broker, lying, after)
    try:
        wait_for(lambda: len(watcher.events()) == 7, what="queued, lifted and renamed")
        assert watcher.events() == [
            (1, "cell", "placed", "1,1", "blue-a-4"),  # queued: sent as read
            (2, "cell", "placed", "1,2", "red-b-2"),
            (3, "cell", "placed", "2,2", "accio-1"),
            (4, "cell", "removed", "1,2", "red-b-2"),  # lifted while down
            (5, "cell", "removed", "2,2", "accio-1"),  # under the name it was laid with
            (6, "cell", "removed", "1,1", "blue-a-4"),  # lying: named again
            (7, "cell", "placed", "1,1", "immuto-1"),
        ]
        del lying[r1]
        wait_for(lambda: len(watcher.events()) == 8, what="the renamed card lifted")
        assert watcher.events()[-1] == (8, "cell", "removed", "1,1", "immuto-1")
        time.sleep(0.3)
        assert len(watcher.events()) == 8
    finally:
        second.stop()

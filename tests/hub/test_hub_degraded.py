"""The hub says when it cannot do its work: ``degraded`` with a code on its retained
``hub/health`` (a full or read-only disk under its outbox, a failing readers' bus), keeps
the events it could not store in memory, in order, and stores and sends them once it can.

Real broker. The disk is a small tmpfs of the test's own, so a full or read-only disk is
real: as root a tmpfs is mounted (those tests are skipped elsewhere)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_hub_restart import UID_A, UID_B, Readers, Watcher, watcher  # noqa: F401
from waiting import wait_for

from engine.wire.contract import HubHealth, Topics, WireModel
from engine.wire.mqtt import WireClient
from hub.errors import BackendError
from hub.layout import Layout
from hub.outbox import Outbox
from hub.service import Hub
from hub.tagmap import TagMap

ROOT = Path(__file__).resolve().parents[2]
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs (root only)")


class HealthWatcher:
    """The latest retained ``hub/health``, as the dashboard and doctor read it."""

    def __init__(self, url: str, table: str) -> None:
        self.latest: HubHealth | None = None
        self.lock = threading.Lock()
        self.client = WireClient(url).start(wait=5)
        self.client.subscribe(Topics(table).hub_health, self._health, wait=5)

    def _health(self, topic: str, model: WireModel) -> None:
        assert isinstance(model, HubHealth)
        with self.lock:
            self.latest = model

    def code(self) -> str | None:
        with self.lock:
            return self.latest.degraded.code if self.latest and self.latest.degraded else None

    def reason(self) -> str:
        with self.lock:
            assert self.latest is not None and self.latest.degraded is not None
            return self.latest.degraded.reason


@pytest.fixture
def health(mqtt_broker: str, table_id: str) -> Iterator[HealthWatcher]:
    w = HealthWatcher(mqtt_broker, table_id)
    yield w
    w.client.stop()


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "disk"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        for _ in range(50):
            if subprocess.run(["umount", str(folder)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)


TAGS = TagMap(tags={UID_A: "blue-a-4", UID_B: "red-b-2"})


def start_hub(url: str, table: str, outbox: Path, lying: dict[int, str],
              tagmap: TagMap = TAGS) -> Hub:
    client = WireClient(url, client_id=f"hub-{table}", state_topic=Topics(table).hub_state)
    return Hub(table=table, backend=Readers(lying), client=client, outbox=Outbox(outbox),
               tagmap=tagmap, poll_interval=0.002, probe_interval=0.2).start()


@root_only
def test_a_full_disk_degrades_the_hub_and_loses_no_event(
        watcher: Watcher, health: HealthWatcher, mqtt_broker: str,  # noqa: F811
        table_id: str, disk: Path) -> None:
    layout = Layout()
    r1, r2 = layout.reader_for("1,1"), layout.reader_for("1,2")
    lying = {r1: UID_A}
    hub = start_hub(mqtt_broker, table_id, disk / "outbox.sqlite", lying)
    try:
        wait_for(lambda: len(watcher.events()) == 1, what="the first card")
        wait_for(lambda: health.latest is not None, what="the hub's health")
        assert health.code() is None
        subprocess.run(["dd", "if=/dev/zero", f"of={disk / 'filler'}", "bs=64k"],
                       capture_output=True, check=False)
        lying[r2] = UID_B  # laid while the disk is full
        wait_for(lambda: health.code() == "disk_full", what="degraded: the disk is full")
        assert "the disk is full" in health.reason(), health.reason()
        wait_for(lambda: hub.counts.get("store_failures", 0) > 0, what="a refused store")
        assert len(watcher.events()) == 1  # the new card waits in memory, not sent unstored
        # Commands still work (the turn LEDs, the buzzer): their replay ledger is in memory.
        reply = watcher.client.request(watcher.topics.hub_cmd("readers"), {}, timeout=10)
        assert reply.status == "ok", reply.error
        (disk / "filler").unlink()
        wait_for(lambda: len(watcher.events()) == 2, what="the held event, once stored")
        wait_for(lambda: health.code() is None, what="degraded no more")
        assert watcher.events() == [(1, "cell", "placed", "1,1", "blue-a-4"),
                                    (2, "cell", "placed", "1,2", "red-b-2")]
        assert hub.outbox.reader_state() == {r1: UID_A, r2: UID_B}
    finally:
        hub.stop()


@root_only
def test_a_hub_that_cannot_open_its_outbox_says_why_and_exits(
        health: HealthWatcher, mqtt_broker: str, table_id: str, disk: Path) -> None:
    """A read-only card at start: `cauldron hub` says why in a sentence (no traceback), and
    its retained health says ``read_only`` for doctor and the dashboard."""
    Outbox(disk / f"outbox-{table_id}.sqlite").close()
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    code = "import sys; from engine.app.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run([sys.executable, "-c", code, "hub", "--backend", "sim", "--table",
                          table_id, "--data-dir", str(disk), "--mqtt", mqtt_broker, "-q"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr, run.stderr
    assert "read-only file system" in run.stderr, run.stderr
    wait_for(lambda: health.code() == "read_only", what="degraded: read-only")
    assert "cannot open its outbox" in health.reason()


class Failing(Readers):
    """Readers whose bus fails while ``broken`` is set (a cable out, a dead SPI bus)."""

    broken = False

    def sweep(self) -> list:  # type: ignore[type-arg]
        if self.broken:
            raise BackendError("the SPI bus /dev/spidev0.0 does not answer")
        return super().sweep()


def test_a_failing_readers_bus_degrades_the_hub_until_it_answers(
        health: HealthWatcher, mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    backend = Failing({})
    client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                        state_topic=Topics(table_id).hub_state)
    hub = Hub(table=table_id, backend=backend, client=client,
              outbox=Outbox(tmp_path / "o.sqlite"), tagmap=TAGS, poll_interval=0.002).start()
    try:
        wait_for(lambda: health.latest is not None, what="the hub's health")
        backend.broken = True
        wait_for(lambda: health.code() == "readers_failed", what="degraded: readers")
        assert "/dev/spidev0.0 does not answer" in health.reason()
        backend.broken = False
        wait_for(lambda: health.code() is None, what="degraded no more")
    finally:
        hub.stop()


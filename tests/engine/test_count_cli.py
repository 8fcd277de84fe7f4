"""`cauldron count`: the score-only mode as a person starts it, in a subprocess. With the
simulated reader it works without hardware; a count survives the process being killed; a
missing USB reader stack or a busy port is a one-line error saying what to do."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from waiting import EXIT_WITHIN

from engine.wire.broker import free_port

ROOT = Path(__file__).resolve().parents[2]
CAULDRON = str(Path(sys.executable).parent / "cauldron")
PIN = "135790"


def request(url: str, method: str = "GET", body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={
        "X-Host-Pin": PIN, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.loads(answer.read() or b"null")


def wait_up(url: str, proc: subprocess.Popen[str], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            request(url + "/api/count")
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    raise AssertionError("cauldron count did not come up")


@contextmanager
def count_process(data: Path, port: int, *extra: str) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    proc = subprocess.Popen(
        [CAULDRON, "count", "--backend", "sim", "--port", str(port), "--pin", PIN, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        wait_up(f"http://127.0.0.1:{port}", proc)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(EXIT_WITHIN)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(EXIT_WITHIN)


def test_count_with_the_simulated_reader_survives_a_kill(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with count_process(tmp_path, port) as proc:
        state = request(url + "/api/count/setup", "POST", {"colours": ["red", "blue"]})
        assert state["count"]["setup"]["removed"] == "yellow"
        assert state["reader"]["simulated"] is True
        for card in ("red-a-4", "red-a-3", "red-a-2"):
            state = request(url + "/api/count/reader/tap", "POST", {"card": card})
        assert state["message"]["kind"] == "counted"
        last = state["count"]["seats"][0]["taps"][-1]
        assert (last["card"], last["source"]) == ("red-a-2", "tag")
        assert state["count"]["scores"]["seats"][0]["total"] == 18  # (4+3+2) x 2 own colour
        state = request(url + "/api/count/reader/tap", "POST", {"card": "yellow-b-1"})
        assert "yellow cards are out of the box" in state["message"]["text"]
        with urllib.request.urlopen(url + "/count") as page:
            assert b"count.js" in page.read()
        wrong = urllib.request.Request(url + "/api/count/seats/0/undo", method="POST",
                                       headers={"X-Host-Pin": "0000"})
        try:
            urllib.request.urlopen(wrong, timeout=10)
            raise AssertionError("a wrong PIN was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(EXIT_WITHIN)
    with count_process(tmp_path, port):
        state = request(url + "/api/count")
        assert [t["card"] for t in state["count"]["seats"][0]["taps"]] == [
            "red-a-4", "red-a-3", "red-a-2"]


def run_count(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAULDRON, "count", *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "XDG_DATA_HOME": str(data)}, cwd=ROOT,
                          check=False)


def test_without_the_pcsc_stack_the_error_says_what_to_install(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['smartcard'] = None; from engine.app.cli import main; "
            "sys.exit(main(['count', '--backend', 'pcsc', '--port', '0']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "XDG_DATA_HOME": str(tmp_path)},
                          cwd=ROOT, check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr  # one line, no traceback
    assert "apt install pcscd" in done.stderr and "--backend sim" in done.stderr


def test_a_busy_port_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_count("--backend", "sim", "--port", str(port), data=tmp_path)
    assert done.returncode == 2
    assert "choose another --port" in done.stderr and "Traceback" not in done.stderr


def test_count_and_readers_on_the_usb_back_end_with_the_mock_factory(tmp_path: Path) -> None:
    """The pcsc back-end through the real commands, on the PC/SC fake (no reader here)."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "CAULDRON_PCSC_FACTORY": "mock"}
    done = subprocess.run([CAULDRON, "readers", "--backend", "pcsc", "--once", "--direct"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=ROOT,
                          check=False)
    assert done.returncode == 0, done.stderr
    pads = next(line for line in done.stdout.splitlines() if line.startswith("pads"))
    assert pads.split()[1:3] == ["1:", "."]  # the mock reader: the first pad, empty
    enrol = subprocess.run([CAULDRON, "enroll", "--backend", "pcsc", "--offline", "--write",
                            "--idle-timeout", "0.5"], capture_output=True, text=True,
                           timeout=60, env=env, cwd=ROOT, check=False, stdin=subprocess.DEVNULL)
    assert "next: Sulphur scent 1 (yellow)" in enrol.stdout, enrol.stdout + enrol.stderr
    assert "Stopped." in enrol.stdout and "Traceback" not in enrol.stderr  # stdin closed: q
    port = free_port()
    proc = subprocess.Popen([CAULDRON, "count", "--port", str(port), "--pin", PIN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)
    try:
        wait_up(f"http://127.0.0.1:{port}", proc)
        reader = request(f"http://127.0.0.1:{port}/api/count")["reader"]
        assert reader == {"kind": "pcsc", "label": "Mock PC/SC reader 00 00", "health": "ok",
                          "simulated": False}
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(EXIT_WITHIN)


def test_on_a_table_with_a_pad_per_seat_each_pad_counts_for_its_seat(tmp_path: Path) -> None:
    from dashboard.count import CountDesk, CountSetup
    from engine.app.count import connect
    from hub.backends.sim import SimulatedTable, virtual_box_tagmap
    from hub.layout import Layout

    tagmap = virtual_box_tagmap()
    sim = SimulatedTable(Layout(pads=4), tagmap=tagmap)
    desk = CountDesk(tmp_path / "count.json")
    loop = connect(sim, tagmap, desk)
    try:
        desk.start(CountSetup(("yellow", "red", "green")))
        for pad, card in ((2, "red-a-1"), (1, "red-a-2"), (3, "red-a-3"), (0, "red-a-4")):
            reader = sim.layout.pad_reader(pad)
            placed = loop._expect("placed", sim.uid_of(card))
            sim.place(reader, card_id=card)
            assert placed.wait(5)
        assert desk.session is not None
        lists = [s.cards() for s in desk.session.seats]
        # pad 4 has no seat in a 3-player count: its card goes to the seat being counted
        assert lists == [["red-a-3", "red-a-4"], ["red-a-2"], ["red-a-1"]]
    finally:
        loop.stop.set()
        loop.thread.join(5)


def test_a_usb_reader_count_unplugged_and_back_and_tags_carrying_their_ids(
        tmp_path: Path) -> None:
    """The count on the PC/SC back-end (its fake): a box whose tags carry their card ids
    counts without a tag map; an unknown blank tag says so; unplugging shows on the page."""
    from dashboard.count import CountDesk, CountSetup
    from engine.app.count import connect
    from hub.backends.pcsc import MockPcscFactory, PcscBackend
    from hub.layout import Layout
    from hub.tagmap import TagMap

    reader = "ACS ACR122U PICC Interface 00 00"
    fake = MockPcscFactory(reader)
    backend = PcscBackend(Layout(pads=1), factory=fake)
    backend.open()
    desk = CountDesk()
    loop = connect(backend, TagMap(tmp_path / "tagmap.json"), desk)

    def lay(uid: str, card: str | None = None) -> None:
        placed, removed = loop._expect("placed", uid), loop._expect("removed", uid)
        fake.lay(reader, uid, card_id=card)
        assert placed.wait(5)
        fake.lift(reader)
        assert removed.wait(5)

    try:
        assert desk.state()["reader"] == {"kind": "pcsc", "label": reader, "health": "ok",
                                          "simulated": False}
        desk.start(CountSetup(("yellow", "red")))
        lay("04000000000011", "yellow-a-4")
        lay("04000000000012", "accio-1")
        lay("04000000000013")
        assert desk.message is not None and desk.message["kind"] == "unknown_tag"
        assert desk.session is not None
        assert desk.session.seats[0].cards() == ["yellow-a-4", "accio-1"]
        fake.unplug(reader)
        deadline = time.monotonic() + 5
        while desk.reader.health != "absent" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert desk.reader.health == "absent"
        fake.plug(reader)
        while desk.reader.health != "ok" and time.monotonic() < deadline + 5:
            time.sleep(0.01)
        assert desk.reader.health == "ok"
        lay("04000000000014", "red-b-2")
        assert desk.session.seats[0].cards()[-1] == "red-b-2"
    finally:
        loop.stop.set()
        loop.thread.join(5)

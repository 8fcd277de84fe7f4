"""The virtual table survives a dashboard restart (even a SIGKILL): its whole physical state
is saved in the data dir after every change and restored, reconciled with what the simulated
hub really holds, when the engine still has that game in progress.

Real broker, real engine service (in-process), `cauldron hub --backend sim` as a subprocess;
the dashboard in-process (uvicorn thread) or as `cauldron dashboard` killed with SIGKILL."""

from __future__ import annotations

import json
import logging
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import PIN, Server, wait_until
from virtual_player import expected_inputs, inputs, next_step

from dashboard.bridge import Bridge
from dashboard.config import Settings
from dashboard.main import create_app
from engine.wire.broker import free_port
from engine.wire.contract import Topics
from engine.wire.mqtt import RequestTimeout, WireClient

pytestmark = pytest.mark.e2e  # the whole table, as processes

HOST = {"X-Host-Pin": PIN}
ROOT = Path(__file__).resolve().parents[2]
CAULDRON = str(Path(sys.executable).parent / "cauldron")
PUBLIC_KEYS = ("dealt", "cells", "pads", "hand", "hand_from", "pile_size", "tops", "sizes")


class Table:
    """One table whose dashboard and hub can be stopped, killed and started again; the
    engine service (in-process) keeps running throughout."""

    def __init__(self, mqtt: str, table: str, tmp: Path, engine: Any) -> None:
        self.mqtt, self.table, self.tmp, self.engine = mqtt, table, tmp, engine
        self.topics = Topics(table)
        self.wire = WireClient(mqtt, client_id=f"test-restore-{uuid.uuid4().hex[:6]}")
        self.wire.start(wait=10)
        self.hub: subprocess.Popen[bytes] | None = None
        self.hub_log = (tmp / "hub.log").open("ab")
        self.server: Server | None = None
        self.app: Any = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.http: httpx.Client | None = None

    @property
    def data_dir(self) -> Path:
        return self.tmp / "dash"

    @property
    def saved(self) -> Path:
        return self.data_dir / f"virtual-{self.table}.json"

    @property
    def virtual(self) -> Any:
        return self.app.state.virtual

    # ------------------------------------------------------------ the hub

    def sim(self, args: dict[str, Any], timeout: float = 5.0) -> Any:
        reply = self.wire.request(self.topics.hub_cmd("sim"), args, timeout=timeout)
        assert reply.status == "ok", reply.error
        return reply.data

    def lying(self) -> dict[str, str]:
        return dict(self.sim({"action": "state"})["lying"])

    def start_hub(self) -> None:
        self.hub = subprocess.Popen(
            [CAULDRON, "hub", "--backend", "sim", "--table", self.table,
             "--data-dir", str(self.tmp / "hub"), "--mqtt", self.mqtt, "-q"],
            stdout=subprocess.DEVNULL, stderr=self.hub_log, cwd=ROOT,
        )

        def answers() -> bool:
            assert self.hub is not None and self.hub.poll() is None, (
                (self.tmp / "hub.log").read_text())
            try:
                reply = self.wire.request(self.topics.hub_cmd("sim"), {"action": "state"},
                                          timeout=0.5)
            except RequestTimeout:
                return False
            return reply.status == "ok"

        wait_until(answers, 15, "the simulated hub to answer")

    def kill_hub(self) -> None:
        assert self.hub is not None
        self.hub.kill()
        self.hub.wait(5)
        self.hub = None

    # ------------------------------------------------------------ the dashboard

    def settings(self, **extra: Any) -> Settings:
        return Settings(**{"mqtt": self.mqtt, "table": self.table, "pin": PIN,
                           "data_dir": self.data_dir, **extra})

    def start_dash(self, **extra: Any) -> httpx.Client:
        """A new dashboard app (in-process, served) on the same data dir."""
        settings = self.settings(**extra)
        bridge = Bridge(settings)
        self.app = create_app(settings, bridge)
        self.server = Server(self.app).start()
        wait_until(lambda: bridge.connected, 10, "the dashboard to reach the broker")
        self.http = httpx.Client(base_url=self.server.url, timeout=10)
        return self.http

    def stop_dash(self) -> None:
        assert self.server is not None and self.http is not None
        self.http.close()
        self.server.stop()
        self.server = self.http = None

    def start_dash_process(self) -> httpx.Client:
        """`cauldron dashboard` as its own process (to be killed with SIGKILL)."""
        port = free_port()
        self.proc = subprocess.Popen(
            [CAULDRON, "dashboard", "--port", str(port), "--mqtt", self.mqtt, "--table",
             self.table, "--pin", PIN, "--data-dir", str(self.data_dir)],
            stdout=subprocess.DEVNULL, stderr=(self.tmp / "dash.log").open("ab"), cwd=ROOT,
        )
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)

        def up() -> bool:
            assert self.proc is not None and self.proc.poll() is None, (
                (self.tmp / "dash.log").read_text())
            try:
                return self.http is not None and self.http.get("/api/table").json()[
                    "status"]["broker"] is True
            except httpx.HTTPError:
                return False

        wait_until(up, 15, "`cauldron dashboard` to serve")
        return self.http

    def kill_dash_process(self) -> None:
        assert self.proc is not None and self.http is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(5)
        self.http.close()
        self.proc = self.http = None

    def close(self) -> None:
        if self.server is not None:
            self.stop_dash()
        if self.proc is not None:
            self.kill_dash_process()
        if self.hub is not None:
            self.hub.send_signal(signal.SIGINT)
            try:
                self.hub.wait(10)
            except subprocess.TimeoutExpired:
                self.hub.kill()
                self.hub.wait(5)
        self.hub_log.close()
        self.wire.stop()

    # ------------------------------------------------------------ play

    def state(self) -> dict[str, Any]:
        assert self.http is not None
        state: dict[str, Any] = self.http.get("/api/table").json()
        return state

    def new_game(self, seed: int = 7) -> dict[str, Any]:
        assert self.http is not None
        reply = self.http.post("/api/host/new_game", headers=HOST, json={
            "colours": ["yellow", "red"], "deal": "virtual", "seed": seed})
        assert reply.status_code == 200, reply.text
        return wait_until(lambda: (s := self.state())["game"] and s["game"]["view"].get(
            "table", {}).get("status") == "playing" and s, 10, "the game to start")

    def step(self, state: dict[str, Any]) -> dict[str, Any]:
        """One gesture or button of the scripted player; waits until the engine saw it."""
        assert self.http is not None
        assert not state["alerts"], state["alerts"]
        kind, body = next_step(state)
        assert kind != "wait", state
        if kind == "gesture":
            reply = self.http.post("/api/virtual/gesture", json=body)
            assert reply.status_code == 200, (body, reply.text)
        else:
            assert self.http.post(f"/api/virtual/{kind}").status_code == 200
        target = expected_inputs(state, kind, body)
        return wait_until(lambda: (s := self.state()) != state and inputs(s) >= target and s,
                          5, f"the engine to see {kind} {body}")

    def play_turns(self, turns: int) -> dict[str, Any]:
        state = self.state()
        goal = state["game"]["view"]["turns"] + turns
        for _ in range(200):
            if state["game"]["view"]["turns"] >= goal:
                break
            state = self.step(state)
        assert state["game"]["view"]["turns"] >= goal
        assert not state["alerts"], state["alerts"]
        return state

    def play_until_lift(self) -> tuple[dict[str, Any], str]:
        """Play until the next step is lifting a card from a cell; returns that cell."""
        state = self.state()
        for _ in range(200):
            kind, body = next_step(state)
            if kind == "gesture" and body["action"] == "lift":
                return state, str(body["where"])
            state = self.step(state)
        raise AssertionError("never reached a lift")

    def restored(self) -> dict[str, Any]:
        assert self.virtual.wait_restored(10), "the virtual table was not restored in 10 s"
        return wait_until(lambda: (s := self.state())["virtual"]["message"] is None and s, 5,
                          "the restored table on /api/table")


def public(state: dict[str, Any]) -> dict[str, Any]:
    return {k: state["virtual"][k] for k in PUBLIC_KEYS}


def physical(virtual: Any) -> dict[str, Any]:
    """The virtual table's whole physical state, read from its attributes (not through the
    code that saves it)."""
    return {"game_id": virtual.game_id, "dealt": virtual.dealt, "cells": dict(virtual.cells),
            "pads": dict(virtual.pads), "hand": virtual.hand, "hand_from": virtual.hand_from,
            "cauldrons": [list(c) for c in virtual.cauldrons],
            "beside": [list(b) for b in virtual.beside], "pile": list(virtual.pile),
            "out": list(virtual.out)}


def no_alerts(table: Table, what: str) -> dict[str, Any]:
    return wait_until(lambda: not (s := table.state())["alerts"] and s, 5, what)


@pytest.fixture
def table(mqtt_broker: str, table_id: str, tmp_path: Path, engine_service: Any) -> Iterator[Table]:
    t = Table(mqtt_broker, table_id, tmp_path, engine_service)
    try:
        yield t
    finally:
        t.close()


@pytest.fixture
def table_with_hub(table: Table) -> Table:
    table.start_hub()
    return table


# ---------------------------------------------------------------------------------- tests


def test_sigkilled_dashboard_comes_back_exactly(
    table_with_hub: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """`cauldron dashboard` killed with SIGKILL mid-game; a new dashboard on the same data dir
    has the same virtual table (pile order, covered cards included) and play goes on."""
    t = table_with_hub
    t.start_dash_process()
    t.new_game()
    before = t.play_turns(3)
    # a card in hand at the kill (drawn or lifted) is part of the state too
    before = t.step(before)
    saved = json.loads(t.saved.read_text())
    assert saved["game_id"] == t.engine.tables[t.table].interp.game_id
    assert len(saved["pile"]) == before["virtual"]["pile_size"]
    t.kill_dash_process()

    caplog.set_level(logging.INFO, logger="cauldron.dashboard")
    t.start_dash()
    after = t.restored()
    assert public(after) == public(before)
    state = t.virtual.state().model_dump(exclude={"saved_at"})
    assert state == {k: v for k, v in saved.items() if k != "saved_at"} | {
        "pads": {int(s): c for s, c in saved["pads"].items()}}
    assert f"virtual table restored for game {saved['game_id']}" in caplog.text
    assert not after["alerts"]
    t.play_turns(3)


@pytest.mark.parametrize("outbox", ["kept", "new"])
def test_fresh_hub_gets_the_cards_laid_again(table_with_hub: Table, outbox: str) -> None:
    """The whole demo restarted. With its data dir kept, the simulated hub comes back with
    its cards (they lie on the table: its physical truth is saved) and its outbox: the
    virtual table finds them where it left them and nothing is raised. With its data dir
    lost, the hub comes back empty with a new outbox: the engine resyncs to the empty table
    and raises alerts for the missing cards; the restore lays every cell and pad card again
    and the alerts clear. The card left on a pad is then a second lay for the engine, which
    had seen the pad emptied (`unexpected_pad`, "lift it from the pad"): the next gesture,
    sliding it onto the cauldron, clears it. Play goes on in both cases."""
    t = table_with_hub
    t.start_dash()
    t.new_game(seed=11)
    t.play_turns(2)
    state, _ = t.play_until_lift()
    state = t.step(state)  # lift
    state = t.step(state)  # lay on the pad: a card lies on a pad at the restart
    pads = state["virtual"]["pads"]
    assert pads
    before = public(state)
    truth = physical(t.virtual)
    assert truth["pile"] and any(truth["cauldrons"])
    t.stop_dash()
    t.kill_hub()
    if outbox == "new":
        shutil.rmtree(t.tmp / "hub")
    t.start_hub()
    expected = {**before["cells"], **{f"pad:{s}": c for s, c in before["pads"].items()}}
    assert t.lying() == ({} if outbox == "new" else expected)
    interp = t.engine.tables[t.table].interp
    if outbox == "new":
        wait_until(lambda: len(interp.alerts) == len(before["cells"]), 10,
                   "the engine to see the cards gone (one alert per cell)")

    t.start_dash()
    after = t.restored()
    assert public(after) == before
    assert physical(t.virtual) == truth
    assert t.lying() == expected
    (seat, card), = pads.items()
    second_lay = [{"code": "unexpected_pad", "card": card, "pad": int(seat)}]
    expected_alerts = second_lay if outbox == "new" else []
    wait_until(lambda: [a["params"] for a in t.state()["alerts"]] == expected_alerts, 5,
               "only the expected alerts")
    if outbox == "kept":
        time.sleep(0.3)  # nothing comes later either
        assert t.state()["alerts"] == []
    assert t.http is not None
    # Not `step` (it refuses a state with alerts): the slide by hand, then wait until the
    # engine has seen it. The hub reports the slide after its own polls, so the gesture's
    # reply can come first; with no alert to clear ([kept]) only the engine's input count
    # says it was seen, and `play_turns` counts its own gestures' inputs from there.
    settled = t.state()
    slide = {"action": "slide", "seat": int(seat)}
    reply = t.http.post("/api/virtual/gesture", json=slide)
    assert reply.status_code == 200, reply.text
    seen = expected_inputs(settled, "gesture", slide)
    wait_until(lambda: inputs(s := t.state()) >= seen and not s["alerts"], 5,
               "the engine to see the slide (and its alerts to clear)")
    t.play_turns(2)


def test_gestures_cut_in_half_are_reconciled(table_with_hub: Table) -> None:
    """(1) A lay cut in half: the hub has the card on the pad, the saved state still has it
    in hand. (2) A lift cut in half: the hub no longer has the card, the saved state still
    has it on its cell. The hub is right: the card is on the pad / in hand."""
    t = table_with_hub
    t.start_dash()
    t.new_game(seed=3)
    state, cell = t.play_until_lift()
    state = t.step(state)
    card, seat = state["virtual"]["hand"], state["game"]["view"]["turn"]
    assert card and state["virtual"]["hand_from"] == cell
    t.stop_dash()
    t.sim({"action": "place", "where": f"pad:{seat}", "card_id": card})  # the lay's half
    assert json.loads(t.saved.read_text())["hand"] == card

    t.start_dash()
    state = t.restored()
    assert state["virtual"]["hand"] is None and state["virtual"]["pads"] == {str(seat): card}
    assert json.loads(t.saved.read_text())["pads"] == {str(seat): card}
    state = no_alerts(t, "the engine to take the lay")
    state, cell = t.play_until_lift()
    card = state["virtual"]["cells"][cell]
    t.stop_dash()
    t.sim({"action": "remove", "where": cell})  # the lift's half
    assert json.loads(t.saved.read_text())["cells"][cell] == card

    t.start_dash()
    state = t.restored()
    assert state["virtual"]["hand"] == card and state["virtual"]["hand_from"] == cell
    assert cell not in state["virtual"]["cells"]
    no_alerts(t, "the engine to take the lift")
    t.play_turns(2)


def saved_file(game_id: str | None, **extra: Any) -> str:
    return json.dumps({"version": 1, "game_id": game_id, "dealt": True,
                       "cells": {"1,1": "vanesco-1", "2,2": "accio-1"}, "pile": ["vanesco-2"],
                       **extra})


def test_corrupt_and_foreign_files_are_ignored(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """No hub needed: these are decided before asking it. A damaged file, a file of another
    game, and a file of a game that is over all leave an empty virtual table with a warning
    (never a traceback)."""
    caplog.set_level(logging.INFO, logger="cauldron.dashboard")
    t = table
    t.data_dir.mkdir(parents=True)
    # 1. damaged: not JSON, then JSON that is not a table (a card in two places)
    for text in ('{"version": 1, "cells": {"1,1"', saved_file("g", out=["accio-1"])):
        t.saved.write_text(text)
        caplog.clear()
        t.start_dash()
        assert not t.virtual.restoring
        assert t.state()["virtual"]["dealt"] is False
        assert "is damaged or unreadable" in caplog.text and "Traceback" not in caplog.text
        assert not t.saved.exists() and t.saved.with_name(t.saved.name + ".bad").exists()
        t.stop_dash()
    # 2. another game than the engine's
    t.engine.command(t.table, "new_game", {"colours": ["yellow", "red"]})
    game_id = t.engine.tables[t.table].interp.game_id
    t.saved.write_text(saved_file("19990101-000000-1"))
    caplog.clear()
    t.start_dash()
    state = t.restored()
    assert state["virtual"]["dealt"] is False and state["virtual"]["cells"] == {}
    assert "belongs to game 19990101-000000-1" in caplog.text and game_id in caplog.text
    assert not t.saved.exists()
    t.stop_dash()
    # 3. this very game, but it is over
    t.engine.command(t.table, "end", {})
    t.saved.write_text(saved_file(game_id))
    caplog.clear()
    t.start_dash()
    state = t.restored()
    assert state["virtual"]["dealt"] is False
    assert "(ended)" in caplog.text and not t.saved.exists()
    assert "Traceback" not in caplog.text


def test_no_hub_answer_gives_up_in_bounded_time_and_keeps_the_file(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    """The engine's game matches but no hub answers: gestures are refused while the restore
    waits, which gives up after `virtual_restore_wait` and keeps the file for next time."""
    t = table
    t.engine.command(t.table, "new_game", {"colours": ["yellow", "red"]})
    t.data_dir.mkdir(parents=True)
    t.saved.write_text(saved_file(t.engine.tables[t.table].interp.game_id))
    http = t.start_dash(virtual_restore_wait=2.0, command_timeout=0.3)
    reply = http.post("/api/virtual/gesture", json={"action": "lift", "where": "1,1"})
    assert reply.status_code == 409 and "being restored" in reply.text
    started = time.monotonic()
    assert t.virtual.wait_restored(5)
    assert time.monotonic() - started < 4
    assert "did not tell what lies on it" in caplog.text
    assert t.saved.exists() and t.state()["virtual"]["dealt"] is False


def test_without_a_data_dir_nothing_is_saved(table_with_hub: Table, tmp_path: Path) -> None:
    t = table_with_hub
    t.start_dash(data_dir=None)
    assert t.virtual.path is None
    t.new_game()
    t.play_turns(1)
    assert not list(tmp_path.rglob("virtual-*.json"))

"""Spares from the host page (issue 23), end to end over a real broker: the hub (simulated
readers, a tag map file), the engine service and the dashboard. The host chooses a chip's
kind and a pad, the chip with its new tag is tapped there during a Quacks game, and the
page counts it, in the words of the hub's game (chips, never cards; names, never ids). A
hub that serves another game than the table's is said on the host page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import PIN, Dash, make_dash, wait_until

from engine import games
from engine.wire.contract import Topics
from engine.wire.mqtt import WireClient
from hub import game as hub_game
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.layout import Layout
from hub.outbox import Outbox
from hub.service import Hub
from hub.tagmap import TagMap

HOST = {"X-Host-Pin": PIN}
QUACKS = games.get("quacks")
NEW_TAG = "04C0FFEE00AB01"
LOST = next(c for c in QUACKS.catalogue.pieces if QUACKS.catalogue.kinds[c] == "white-1")


@pytest.fixture
def quacks_hub(mqtt_broker: str, table_id: str, tmp_path: Path
               ) -> Iterator[tuple[Hub, SimulatedTable]]:
    """A running hub serving Quacks: every chip enrolled, in a tag map file."""
    hub_game.use("quacks")
    box = TagMap(tmp_path / "tagmap.json", tags=dict(virtual_box_tagmap().items()))
    box.save()
    sim = SimulatedTable(Layout(), tagmap=box)
    client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                        state_topic=Topics(table_id).hub_state)
    hub = Hub(table=table_id, backend=sim, client=client, outbox=Outbox(tmp_path / "o.sqlite"),
              tagmap=box, poll_interval=0.002).start()
    try:
        yield hub, sim
    finally:
        hub.stop()
        hub_game.use(None)


def start_quacks(dash: Dash, http: httpx.Client) -> None:
    wait_until(lambda: dash.bridge.status().hub == "online", 10, "the hub online")
    started = http.post("/api/host/new_game", json={"game": "quacks", "players": 2,
                                                    "fortune_cards": False, "deal": "table"})
    assert started.status_code == 200, started.text
    wait_until(lambda: dash.bridge.table_game().id == "quacks", 10, "the Quacks game")


def test_a_spare_chip_asked_from_the_host_api_during_a_quacks_game_is_enrolled_and_counted(
        dash: Dash, engine_service: Any, quacks_hub: tuple[Hub, SimulatedTable],
        tmp_path: Path) -> None:
    hub, sim = quacks_hub
    old = hub.tagmap.uid_for(LOST)
    with httpx.Client(base_url=dash.url, headers=HOST, timeout=15) as http:
        start_quacks(dash, http)
        assert dash.bridge.status().hub_other_game is None  # the hub serves the table's game
        asked = http.post("/api/host/enrol", json={"action": "spare", "seat": 2,
                                                   "piece": "white-1"})
        assert asked.status_code == 200, asked.text
        assert asked.json()["data"]["spare"] == LOST
        # The dashboard hears the hub's enrolment status a moment after the hub answered.
        wait_until(lambda: ((s := http.get("/api/host/enrolment").json())["active"],
                            s["spare"], s["game"]) == (True, LOST, "quacks"), 10,
                   "the spare shown as waiting")
        sim.place("pad:1", uid=NEW_TAG)
        wait_until(lambda: http.get("/api/host/enrolment").json().get("spares") == 1, 10,
                   "the spare counted")
        done = http.get("/api/host/enrolment").json()
        assert done["active"] is False and done["spare"] is None
        assert [s["code"] for s in done["said"]] == ["spare_enrolled"]
        saved = TagMap.load(tmp_path / "tagmap.json")
        assert saved.card_for(NEW_TAG) == LOST and saved.retired_for(str(old)) == LOST
        # A kind the hub's game does not have: refused with its code, nothing waits.
        bad = http.post("/api/host/enrol", json={"action": "spare", "seat": 1,
                                                 "piece": "dragon-9"})
        assert bad.status_code == 409 and bad.json()["error"]["code"] == "unknown_piece"
        assert http.get("/api/host/enrolment").json()["active"] is False
    assert dash.bridge.game_id is not None  # the game went on


@pytest.mark.browser
def test_the_host_page_enrols_a_spare_chip_by_kind_in_french(
        dash: Dash, engine_service: Any, quacks_hub: tuple[Hub, SimulatedTable],
        page: Any) -> None:
    """The host page: choose the kind and the pad, press "Enrol a spare", tap the chip: the
    page says each step in French with the chip's name (never an id, never "carte") and
    counts the spare."""
    _hub, sim = quacks_hub
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    name = QUACKS.names.piece(LOST, "fr")
    said = "document.querySelector('#enrol-said').textContent"
    with httpx.Client(base_url=dash.url, headers=HOST, timeout=15) as http:
        start_quacks(dash, http)
    page.goto(dash.url + "/host?lang=fr")
    page.fill("#pin", PIN)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#enrol-spare-piece option[value='white-1']", state="attached")
    page.click("#enrol-controls details.enrol-spare summary")  # (folded: now and then)
    labels = page.inner_text("#enrol-controls")
    assert "jeton" in labels and "carte" not in labels.lower(), labels
    options = page.eval_on_selector_all("#enrol-spare-piece option", "os => os.map(o => o.text)")
    kinds = set(QUACKS.catalogue.kinds.values())
    assert name in options and len(options) == len(kinds) and not kinds & set(options)
    page.select_option("#enrol-spare-piece", "white-1")
    page.select_option("#enrol-seat", "2")
    page.click("#enrol-controls button[data-enrol=spare]")
    page.wait_for_function(f"(n) => {said}.startsWith('Rechange pour ' + n)", arg=name)
    page.wait_for_function("(n) => document.querySelector('#enrolment').textContent"
                           ".includes(n)", arg=name)
    sim.place("pad:1", uid=NEW_TAG)
    page.wait_for_function(f"{said}.includes('{NEW_TAG} est maintenant')")
    text = page.evaluate(said)
    assert f"{NEW_TAG} est maintenant {name}" in text and LOST not in text, text
    page.wait_for_function("document.querySelector('#enrol-spares').textContent"
                           ".startsWith('1 rechange enregistrée')")
    assert not errors, errors


@pytest.fixture
def quacks_dash(mqtt_broker: str, table_id: str, tmp_path: Path) -> Iterator[Dash]:
    """A dashboard whose table plays Quacks (its config), no game yet."""
    yield from make_dash(mqtt_broker, table_id, tmp_path, serve=True, game="quacks")


@pytest.mark.browser
def test_a_hub_serving_another_game_than_the_tables_is_said_on_the_host_page(
        quacks_dash: Dash, mqtt_broker: str, table_id: str, tmp_path: Path,
        page: Any) -> None:
    """The table plays Quacks, the hub serves Glastonbury (its config's default): the status,
    the reader health and the host page say so, naming both games."""
    tagmap = virtual_box_tagmap()  # the hub's own game: Glastonbury
    client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                        state_topic=Topics(table_id).hub_state)
    hub = Hub(table=table_id, backend=SimulatedTable(tagmap=tagmap), client=client,
              outbox=Outbox(tmp_path / "o.sqlite"), tagmap=tagmap, poll_interval=0.002).start()
    try:
        bridge = quacks_dash.bridge
        wait_until(lambda: bridge.status().hub_other_game == "glastonbury", 10,
                   "the dashboard to see the hub's game")
        with httpx.Client(base_url=quacks_dash.url, headers=HOST, timeout=15) as http:
            readers = http.get("/api/host/readers").json()
        assert (readers["game"], readers["other_game"]) == ("glastonbury", True)
        page.goto(quacks_dash.url + "/host?lang=de")
        page.fill("#pin", PIN)
        page.click("#login-form button[type=submit]")
        page.wait_for_selector("#hub-game", state="visible")
        warning = page.inner_text("#hub-game")
        titles = (games.get("glastonbury").titles["de"], QUACKS.titles["de"])
        assert f"Der Hub bedient {titles[0]}, nicht {titles[1]}" in warning, warning
    finally:
        hub.stop()

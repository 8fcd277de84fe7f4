"""Enrolment from /host with the hub running: the host page asks the running hub, no second
process writes the hub's topics, no alert is raised, and the new tag is used at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import PIN, Dash, wait_until

from engine.games.glastonbury.rules.cards import CARDS, enrolment_order, family_name
from engine.games.glastonbury.rules.names import card_name
from engine.wire.contract import GameAlert, HubEvent, ServiceState, Topics, WireModel
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable
from hub.outbox import Outbox
from hub.service import Hub
from hub.tagmap import TagMap

HOST = {"X-Host-Pin": PIN}
NEW_TAG = "04C0FFEE000001"


def test_enrolment_from_host_page_with_the_hub_running(
        dash: Dash, engine_service: Any, mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    topics = Topics(table_id)
    tagmap = TagMap.load(tmp_path / "tagmap.json")
    sim = SimulatedTable(tagmap=tagmap)
    client = WireClient(mqtt_broker, client_id=f"hub-{table_id}", state_topic=topics.hub_state)
    hub = Hub(table=table_id, backend=sim, client=client, outbox=Outbox(tmp_path / "o.sqlite"),
              tagmap=tagmap, poll_interval=0.002).start()
    seen: list[tuple[str, WireModel]] = []
    watcher = WireClient(mqtt_broker, client_id=f"watch-{table_id}").start(wait=10)
    for topic in (topics.game_alert, topics.hub_event, topics.hub_state):
        watcher.subscribe(topic, lambda t, m: seen.append((t, m)), wait=5)
    first = enrolment_order()[0]
    try:
        wait_until(lambda: dash.bridge.status().hub == "online", 10, "the hub online")
        with httpx.Client(base_url=dash.url, headers=HOST, timeout=15) as http:
            started = http.post("/api/host/enrol", json={"action": "start", "seat": 1})
            assert started.status_code == 200, started.text
            assert started.json()["data"]["next"] == first
            wait_until(lambda: http.get("/api/host/enrolment").json()["active"], 10,
                       "the host page to see the enrolment")
            sim.place("pad:0", uid=NEW_TAG)
            wait_until(lambda: http.get("/api/host/enrolment").json()["done"] == 1, 10,
                       "the tag to be enrolled")
            shown = http.get("/api/host/enrolment").json()
            assert f"Enrolled {card_name(first)}" in shown["message"]
            sim.remove("pad:0")
            stopped = http.post("/api/host/enrol", json={"action": "stop"})
            assert stopped.status_code == 200 and "saved" in stopped.json()["data"]["message"]
            wait_until(lambda: not http.get("/api/host/enrolment").json()["active"], 10,
                       "the enrolment to end on the host page")
            # A refusal reaches the host with the hub's reason (409), not a crash.
            refused = http.post("/api/host/enrol", json={"action": "undo"})
            assert refused.status_code == 409 and "no enrolment is running" in refused.text
        # No alert, no event from the pad, and the hub never went offline.
        assert not [m for t, m in seen if isinstance(m, GameAlert)]
        assert not [m for t, m in seen if isinstance(m, HubEvent)]
        assert all(m.state == "online" for t, m in seen if isinstance(m, ServiceState))
        # The new tag is used without a restart: laid on a cell, it is that card.
        sim.place("3,3", uid=NEW_TAG)
        wait_until(lambda: any(isinstance(m, HubEvent) and m.card_id == first
                               for _, m in seen), 10, "the event naming the new card")
        # During a game the pads are the players': enrolment is refused.
        with httpx.Client(base_url=dash.url, headers=HOST, timeout=15) as http:
            game = http.post("/api/host/new_game", json={"colours": ["yellow", "red"],
                                                         "deal": "table"})
            assert game.status_code == 200, game.text
            wait_until(lambda: dash.bridge.game_id is not None, 10, "the game on the bridge")
            refused = http.post("/api/host/enrol", json={"action": "start", "seat": 1})
            assert refused.status_code == 409 and "a game is in progress" in refused.text
    finally:
        watcher.stop()
        hub.stop()


def _enrolling_hub(mqtt_broker: str, table_id: str, tmp_path: Path) -> tuple[Hub, SimulatedTable]:
    """A running hub on a simulated table whose tag map is empty (a box to enrol)."""
    tagmap = TagMap.load(tmp_path / "tagmap.json")
    sim = SimulatedTable(tagmap=tagmap)
    client = WireClient(mqtt_broker, client_id=f"hub-{table_id}",
                        state_topic=Topics(table_id).hub_state)
    hub = Hub(table=table_id, backend=sim, client=client, outbox=Outbox(tmp_path / "o.sqlite"),
              tagmap=tagmap, poll_interval=0.002).start()
    return hub, sim


def _label(page: Any, card: str) -> str:
    """``card`` as the page names it, in its language (core.js ``cardLabel``)."""
    label: str = page.evaluate("async (id) => (await import('/static/core.js')).cardLabel(id)",
                               card)
    return label


@pytest.mark.browser
def test_enrolment_buttons_on_the_host_page(dash: Dash, mqtt_broker: str, table_id: str,
                                            tmp_path: Path, page: Any) -> None:
    """The host presses Start, taps a card on the pad, Undo, Stop: the page says each step
    and the browser logs no error."""
    hub, sim = _enrolling_hub(mqtt_broker, table_id, tmp_path)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    first = enrolment_order()[0]
    try:
        wait_until(lambda: dash.bridge.status().hub == "online", 10, "the hub online")
        page.goto(dash.url + "/host?lang=en")
        page.fill("#pin", PIN)
        page.click("#login-form button[type=submit]")
        page.wait_for_selector("#enrol-controls button[data-enrol=start]")
        page.select_option("#enrol-seat", "2")
        page.click("#enrol-controls button[data-enrol=start]")
        page.wait_for_function("document.querySelector('#enrol-said').textContent"
                               ".includes(\"Seat 2's pad\")")
        sim.place("pad:1", uid=NEW_TAG)
        page.wait_for_function("document.querySelector('#enrol-said').textContent"
                               f".includes('Enrolled {_label(page, first)}')")
        # The progress line names the next card as printed on it, never its id.
        page.wait_for_function("document.querySelector('#enrolment').textContent"
                               ".includes('1 of ')")
        progress = page.inner_text("#enrolment")
        second = CARDS[enrolment_order()[1]]
        assert second.family is not None
        assert f"next: {family_name(second.family)} {second.value}" in progress, progress
        assert second.id not in progress
        sim.remove("pad:1")
        page.click("#enrol-controls button[data-enrol=undo]")
        page.wait_for_function("document.querySelector('#enrol-said').textContent"
                               ".startsWith('Undone')")
        page.click("#enrol-controls button[data-enrol=stop]")
        page.wait_for_function("document.querySelector('#enrol-said').textContent"
                               ".includes('nothing new was enrolled')")
        # nothing runs: undo / skip / stop wait for the next enrolment
        page.wait_for_function("document.querySelector('#enrol-controls button"
                               "[data-enrol=undo]').disabled")
        assert page.is_disabled("#enrol-controls button[data-enrol=skip]")
        assert page.is_disabled("#enrol-controls button[data-enrol=stop]")
        assert page.is_enabled("#enrol-controls button[data-enrol=start]")
        assert TagMap.load(tmp_path / "tagmap.json").card_for(NEW_TAG) is None
    finally:
        hub.stop()
    assert not [e for e in errors if "409" not in e], errors


@pytest.mark.browser
def test_enrolment_line_is_in_the_page_language(dash: Dash, mqtt_broker: str, table_id: str,
                                                tmp_path: Path, page: Any) -> None:
    """On a French host page what enrolment says is French (the hub sends codes with
    parameters, issue 18), the card by its French name; the hub's English stays for the
    terminal."""
    hub, sim = _enrolling_hub(mqtt_broker, table_id, tmp_path)
    said = "document.querySelector('#enrol-said').textContent"
    try:
        wait_until(lambda: dash.bridge.status().hub == "online", 10, "the hub online")
        page.goto(dash.url + "/host?lang=fr")
        page.fill("#pin", PIN)
        page.click("#login-form button[type=submit]")
        page.wait_for_selector("#enrol-controls button[data-enrol=start]")
        page.select_option("#enrol-seat", "2")
        page.click("#enrol-controls button[data-enrol=start]")
        page.wait_for_function(f"{said}.startsWith('Enregistrement sur le lecteur de la place 2')")
        first = _label(page, enrolment_order()[0])
        sim.place("pad:1", uid=NEW_TAG)
        page.wait_for_function(f"{said}.includes({first + ' enregistrée'!r})")
        sim.remove("pad:1")
        page.click("#enrol-controls button[data-enrol=skip]")
        page.wait_for_function(f"{said}.includes('sautée')")
        page.click("#enrol-controls button[data-enrol=stop]")
        page.wait_for_function(f"{said}.includes('la carte enregistrée cette fois est gardée')")
        text = page.inner_text("#enrol-said")
        assert "Arrêté. 1/84, 1 sautée" in text, text
        for english in ("Enrolled", "Stopped", "Skipped", "card", "tag "):
            assert english not in text, text
    finally:
        hub.stop()

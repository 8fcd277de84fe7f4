"""Alerts are always true (issue 18, item 2), seen on a phone in real Chromium: while a seat must
refill a hole, the host lifts another card. The phone's refill is held, with a word; the host
refills meanwhile and the alert stops naming the filled hole; the card back, the alert is gone.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from dashkit import PIN, Stack, wait_until

pytestmark = pytest.mark.browser
HOST = {"X-Host-Pin": PIN}


def table(stack: Stack) -> dict[str, Any]:
    state: dict[str, Any] = stack.dash.bridge.table_state().model_dump(mode="json", by_alias=True)
    return state


def view(stack: Stack) -> dict[str, Any]:
    game = table(stack)["game"] or {}
    return game.get("view") or {}


def standing(stack: Stack) -> list[dict[str, Any]]:
    return [a for a in table(stack)["alerts"] if a.get("kind") != "notice"]


def cell_label(key: str) -> str:
    r, c = (int(x) for x in key.split(","))
    return f"row {r + 1}, column {c + 1}"


def test_G4_a_refill_is_held_while_the_square_is_wrong_and_the_alert_follows_the_table(
        table_stack: Stack, browser: Any) -> None:
    dash = table_stack.dash
    http = httpx.Client(base_url=dash.url, timeout=20)
    started = http.post("/api/host/new_game", headers=HOST,
                        json={"colours": ["yellow", "red"], "deal": "virtual", "seed": 11})
    assert started.status_code == 200, started.text
    wait_until(lambda: (view(table_stack).get("table") or {}).get("status") == "playing", 30,
               "the game to start")
    seat = view(table_stack)["turn"]
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-GB",
                                  has_touch=True, is_mobile=True)
    phone = context.new_page()
    phone.set_default_timeout(10000)
    try:
        link = http.get(f"/api/seats/{seat}/join").json()["url"]
        phone.goto(link + "&lang=en")
        phone.wait_for_selector("#seat-board .cell")
        screen = context.new_page()
        screen.set_viewport_size({"width": 1920, "height": 1080})
        screen.goto(dash.url + "/?lang=en")
        take = view(table_stack)["expected"]["take"][0]
        phone.click(f"#seat-board [data-act='cell'][data-where='{take}']")  # tapped on the square
        wait_until(lambda: (view(table_stack)["table"].get("prompt") or {}).get("code")
                   == "refill", 30, "the refill to be asked")
        hole = view(table_stack)["expected"]["refill_cell"]
        phone.wait_for_selector("#seat-action [data-kind='refill']")
        # The host lifts another card from the square (not the hole).
        other = next(f"{r},{c}" for r in range(1, 5) for c in range(1, 5)
                     if f"{r},{c}" != hole)
        lifted = http.post("/api/virtual/gesture", headers=HOST,
                           json={"action": "lift", "where": other})
        assert lifted.status_code == 200, lifted.text
        wait_until(lambda: any(a["params"].get("code") == "refill_first"
                               for a in standing(table_stack)), 30, "the refill_first alert")
        # The phone's refill waits, and says why.
        phone.wait_for_selector("#seat-action .held")
        inputs = view(table_stack)["table"]["inputs"]
        phone.click("#seat-action [data-kind='refill']")
        phone.wait_for_function("() => document.getElementById('play-msg')"
                                " && document.getElementById('play-msg').textContent")
        said = phone.inner_text("#play-msg")
        assert "put right first" in said, said
        assert view(table_stack)["table"]["prompt"]["code"] == "refill"
        assert view(table_stack)["table"]["inputs"] == inputs  # nothing reached the table
        # The host refills meanwhile with the seat's hand (the host is not held; its own hand
        # holds the lifted card): the hole is filled, the alert now says only what remains.
        done = http.post("/api/virtual/gesture", headers=HOST,
                         json={"action": "refill", "where": hole, "as_seat": seat})
        assert done.status_code == 200, done.text
        wait_until(lambda: (view(table_stack)["table"].get("prompt") or {}).get("code")
                   != "refill", 30, "the refill to be made")

        def alert_text() -> str:  # the big screen's alert area
            return str(screen.evaluate("document.getElementById('alerts').innerText"))
        wait_until(lambda: cell_label(other) in alert_text() and cell_label(hole) not in
                   alert_text() and "refill" not in alert_text().lower(), 30,
                   "the alert to stop naming the filled hole")
        back = http.post("/api/virtual/gesture", headers=HOST,
                         json={"action": "lay", "where": other})
        assert back.status_code == 200, back.text
        wait_until(lambda: not standing(table_stack), 30, "the alert to clear")
        screen.wait_for_selector("#alerts .alert", state="detached")
        phone.wait_for_selector("#seat-action .held", state="detached")
    finally:
        context.close()
        http.close()

"""Sensed pawns on the virtual table (hardware issue 13), in the browser: the host moves a
pawn to a wrong position on a simulated table with pawn sensors, the engine's G4 alert shows
on the page with the way back, moving it back clears it, and the game goes on. Against the
real engine service, a real hub subprocess and Chromium."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from dashkit import PIN, Stack, wait_until
from virtual_player import MOVE_WAIT, play_until

pytestmark = pytest.mark.browser
HOST = {"X-Host-Pin": PIN}


def table_state(stack: Stack) -> dict[str, Any]:
    state: dict[str, Any] = stack.dash.bridge.table_state().model_dump(mode="json", by_alias=True)
    return state


def view(stack: Stack) -> dict[str, Any]:
    game = table_state(stack)["game"]
    return game["view"] if game else {}


def pos(p: int) -> str:
    return f"#board button[data-act='pos'][data-pos='{p}']"


def start_game(stack: Stack) -> str:
    """A 2-player game on the virtual table, playing; the dashboard's URL."""
    url = stack.dash.url
    reply = httpx.post(f"{url}/api/host/new_game", headers=HOST, timeout=30,
                       json={"colours": ["yellow", "red"], "deal": "virtual", "seed": 7})
    assert reply.status_code == 200, reply.text
    wait_until(lambda: (view(stack).get("table") or {}).get("status") == "playing", 15,
               "the game to start")
    return url


def test_a_wrong_pawn_move_alerts_on_the_page_and_moving_it_back_clears_it(
        pawn_table_stack: Stack, page: Any) -> None:
    stack = pawn_table_stack
    url = start_game(stack)
    v = view(stack)
    seat, value = v["turn"], v["move_value"]
    target = v["seats"][seat]["pawn"]
    start = (target - value) % 20
    others = {s["pawn"] for s in v["seats"] if s["seat"] != seat}
    # The simulated table laid the pawns where the turn starts; its sensors report them.
    wait_until(lambda: (view(stack).get("table") or {}).get("pawns_sensed")
               == sorted({start, *others}), 15, "the pawns laid at their start")

    page.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    page.goto(url + "/virtual?lang=en")
    page.wait_for_selector(pos(start) + ".pawn-sensed")
    assert page.locator("#board button[data-act='pos']").count() == 20
    assert page.get_attribute(pos(start), "aria-label").startswith(f"position {start + 1}")

    # A position without a pawn: refused in the page's message area, named 1-based.
    empty = next(p for p in range(20) if p not in {start, target, *others})
    page.click(pos(empty))
    page.wait_for_selector("#play-msg.error")
    assert f"No pawn stands at position {empty + 1}" in page.inner_text("#play-msg")

    # By keyboard: focus the pawn's position, Enter lifts it.
    page.focus(pos(start))
    page.keyboard.press("Enter")
    page.wait_for_selector(pos(start) + "[aria-pressed='true']")
    assert f"Pawn lifted from position {start + 1}" in page.inner_text("#play-msg")
    wrong = next(p for p in ((target + k) % 20 for k in (1, 2, 3)) if p not in others
                 and p != start)
    page.focus(pos(wrong))
    page.keyboard.press("Enter")
    # The alert's fix follows the sensors: "put the pawn back" while it is in the air, then
    # "move it from … to …" once the wrong position senses it (waited for, not read once).
    page.wait_for_function(
        "t => (document.querySelector(\"#alerts .alert[data-rule='G4'] .fix\") || {})"
        ".textContent?.includes(t)", arg=f"from position {wrong + 1} to position {target + 1}")
    page.wait_for_selector(pos(wrong) + ".pawn-sensed")  # the table view: pawns as sensed

    # Moved where the rules put it (by mouse this time): the alert clears.
    page.click(pos(wrong))
    page.click(pos(target))
    page.wait_for_function("document.querySelector('#alerts .alert') === null")
    # (the alert may clear as the pawn leaves the wrong position: wait for it to land)
    moved = f"Pawn moved from position {wrong + 1} to position {target + 1}"
    page.wait_for_function("t => document.getElementById('play-msg').textContent.includes(t)",
                           arg=moved)
    wait_until(lambda: (view(stack).get("table") or {}).get("pawns_sensed")
               == sorted({target, *others}), 15, "the pawn sensed where it belongs")

    # The game goes on: the turn's take is accepted, with no alert.
    state = table_state(stack)
    turns = state["game"]["view"]["turns"]
    with httpx.Client(base_url=url, headers=HOST, timeout=30) as client:
        state = play_until(client, lambda s: bool(s["alerts"]) or s["game"]["view"]["turns"]
                           != turns, "the turn's take", read=lambda: table_state(stack))
    assert not state["alerts"], state["alerts"]
    wait_until(lambda: not table_state(stack)["alerts"], MOVE_WAIT, "no alert after the take")


def test_without_pawn_sensors_the_positions_are_not_buttons(table_stack: Stack,
                                                            page: Any) -> None:
    url = start_game(table_stack)
    assert (view(table_stack).get("table") or {}).get("pawns_sensed") is None
    page.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    page.goto(url + "/virtual?lang=en")
    page.wait_for_selector("#board [data-act='cell'] .card")
    assert page.locator("#board div.pos[data-pos]").count() == 20
    assert page.locator("#board [data-act='pos']").count() == 0

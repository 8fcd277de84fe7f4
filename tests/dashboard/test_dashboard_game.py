"""Whole games in the browser: the host page starts a game, people play it by clicking (and
by keyboard) on the virtual table, the real engine service follows it through the real hub
on the simulated table, and the score screen ends it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from dashkit import PIN, Stack, screenshot, wait_until
from virtual_player import MOVE_WAIT, expected_inputs, inputs, next_step

pytestmark = pytest.mark.browser


def table_state(stack: Stack) -> dict[str, Any]:
    """What GET /api/table answers, read in-process (no HTTP polling load on the server)."""
    state: dict[str, Any] = stack.dash.bridge.table_state().model_dump(mode="json", by_alias=True)
    return state


def playing(stack: Stack) -> bool:
    game = table_state(stack)["game"]
    return bool(game) and (game["view"].get("table") or {}).get("status") == "playing"


def start_from_host_page(page: Any, stack: Stack, players: int, memory_aid: bool = False) -> None:
    page.goto(stack.dash.url + "/host?lang=en")
    page.fill("#pin", PIN)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#new-game", state="visible")
    page.select_option("#players", str(players))
    if memory_aid:
        page.check("#memory")
    page.select_option("#deal", "virtual")
    page.click("#start")
    page.wait_for_function("document.querySelector('#host-msg').textContent"
                           f".startsWith('Game started: {players} players')")
    wait_until(lambda: playing(stack), 10, "the game to start")


def selector_for(kind: str, body: dict[str, Any]) -> str:
    if kind in ("pass", "keep"):
        return f"#{kind}-btn"
    action = body["action"]
    if action == "draw":
        return "#draw-btn"
    if action in ("slide", "tap"):
        return f"[data-act='{action}'][data-seat='{body['seat']}']"
    where = body["where"]
    if where.startswith("pad:"):
        return f"[data-act='pad'][data-seat='{where[4:]}']"
    return f"[data-act='cell'][data-where='{where}']"


def virtual_key(state: dict[str, Any]) -> str:
    """The page's ``data-virtual`` for this state (hand, pads, pile size, cards on cells,
    cauldron sizes): every gesture changes it."""
    v = state["virtual"]
    pads = ",".join(f"{k}:{c}" for k, c in sorted(v["pads"].items()))
    sizes = ",".join(f"{k}:{n}" for k, n in sorted(v["sizes"].items()))
    return "|".join([v["hand"] or "", pads, str(v["pile_size"]), str(len(v["cells"])), sizes])


def synced(page: Any, stack: Stack) -> dict[str, Any]:
    """The table state, once the page shows it too (the engine's input count and the
    virtual table)."""

    def check() -> dict[str, Any] | None:
        state = table_state(stack)
        shown = page.evaluate("() => [document.body.dataset.inputs, document.body.dataset.virtual]")
        return state if shown == [str(inputs(state)), virtual_key(state)] else None

    result: dict[str, Any] = wait_until(check, MOVE_WAIT, "the page to show the table state")
    return result


def click(page: Any, stack: Stack, selector: str) -> dict[str, Any]:
    """Click `selector` once the page shows the current state; returns that state."""
    state = synced(page, stack)
    page.locator(selector).dispatch_event("click")
    return state


def wait_engine(stack: Stack, state: dict[str, Any], target: int, what: str,
                timeout: float = MOVE_WAIT,
                virtual: Callable[[dict[str, Any]], bool] = lambda v: True) -> dict[str, Any]:
    """The table state once the engine has counted `target` inputs and the virtual table
    shows what `virtual` expects."""
    return wait_until(lambda: (s := table_state(stack)) != state and inputs(s) >= target
                      and virtual(s["virtual"]) and s, timeout, what)


def host_tab(page: Any) -> None:
    """The host logged in on this tab: the virtual table plays with the host's hand."""
    page.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")


def test_whole_short_game_in_the_browser(table_stack: Stack, page: Any) -> None:
    url = table_stack.dash.url
    start_from_host_page(page, table_stack, players=2, memory_aid=True)
    host_tab(page)
    page.goto(url + "/virtual?lang=en")
    page.wait_for_selector("#board [data-act='cell'] .card")
    steps = 0
    retries = 0
    deadline = time.monotonic() + 240  # a whole game on a loaded 2-core machine
    while True:
        state = synced(page, table_stack)
        if state["game"]["view"]["over"]:
            break
        assert time.monotonic() < deadline, f"stuck after {steps} steps"
        assert not state["alerts"], state["alerts"]
        kind, body = next_step(state)
        page.locator(selector_for(kind, body)).dispatch_event("click")
        before = virtual_key(state)
        if kind == "gesture":

            def shown(b: str = before) -> bool:
                return virtual_key(table_state(table_stack)) != b

            try:  # the gesture itself shows at once on the virtual table ...
                wait_until(shown, 10, "the gesture")
            except AssertionError:
                # ... unless the element was redrawn between finding and clicking it (a
                # late update): look again and click what the table now asks for.
                retries += 1
                assert retries <= 5, f"{kind} {body} had no effect, 5 times"
                continue
        wait_engine(table_stack, state, expected_inputs(state, kind, body), f"{kind} {body}",
                    timeout=MOVE_WAIT)
        steps += 1
        if steps == 40:
            screenshot(page, "virtual-table")
    page.goto(url + "/?lang=en")  # the big screen's podium
    page.wait_for_selector("#podium:not([hidden]) .podium-list li")
    assert page.locator("#podium .podium-list li").count() == 2
    truth = table_stack.engine.tables[table_stack.dash.table].interp.game.scores()
    for seat in truth.seats:
        total = page.inner_text(f"#podium li[data-seat='{seat.seat}'] .total")
        assert int(total.split()[0]) == seat.total
    page.goto(url + "/scores?lang=en")
    page.wait_for_selector("#scores .score-seat")
    said = page.inner_text("#scores .winners")  # a deal of its own: a tie can happen
    assert ("Winner: " if len(truth.winners) == 1 else "Shared win: ") in said, said
    screenshot(page, "score-screen")


def test_keyboard_only_turn_on_the_virtual_table(table_stack: Stack, page: Any) -> None:
    url = table_stack.dash.url
    httpx.post(f"{url}/api/host/new_game", headers={"X-Host-Pin": PIN}, timeout=30,
               json={"colours": ["green", "blue", "red"], "deal": "virtual", "seed": 3})
    wait_until(lambda: playing(table_stack), 10, "the game to start")
    host_tab(page)
    page.goto(url + "/virtual?lang=en")
    page.wait_for_selector("#board [data-act='cell'] .card")
    state = table_state(table_stack)
    turns = state["game"]["view"]["turns"]

    def press_on(selector: str) -> None:
        """Tab (forward, wrapping) until `selector` has the focus, then press Enter."""
        page.wait_for_selector(selector)
        for _ in range(200):
            if page.evaluate(f"document.activeElement && document.activeElement.matches("
                             f"{selector!r})"):
                page.keyboard.press("Enter")
                return
            page.keyboard.press("Tab")
        raise AssertionError(f"Tab never reached {selector}")

    while state["game"]["view"]["turns"] == turns:
        state = synced(page, table_stack)
        kind, body = next_step(state)
        assert kind != "wait", state
        press_on(selector_for(kind, body))
        before = state["virtual"]

        def moved(v: dict[str, Any], b: dict[str, Any] = before, k: str = kind) -> bool:
            return k != "gesture" or v != b

        state = wait_engine(table_stack, state, expected_inputs(state, kind, body),
                            f"{kind} {body}", virtual=moved)
    assert not state["alerts"]
    # the live region announced the take
    page.wait_for_function("document.querySelector('#announce').textContent.length > 0")


def test_fault_on_the_virtual_table_raises_an_alert_that_clears(
    table_stack: Stack, page: Any
) -> None:
    """A taken card laid on the wrong seat's pad: the engine's alert shows with its rule and
    what to do; putting the card back where it was clears it."""
    url = table_stack.dash.url
    httpx.post(f"{url}/api/host/new_game", headers={"X-Host-Pin": PIN}, timeout=30,
               json={"colours": ["yellow", "blue"], "deal": "virtual", "seed": 5})
    wait_until(lambda: playing(table_stack), 10, "the game to start")
    host_tab(page)
    page.goto(url + "/virtual?lang=en")
    page.wait_for_selector("#board [data-act='cell'] .card")
    state = synced(page, table_stack)
    source = state["game"]["view"]["expected"]["take"][0]
    state = click(page, table_stack, f"[data-act='cell'][data-where='{source}']")
    # The engine may count the lift a moment before the virtual table shows the card in
    # hand (the hub reports it while the gesture still settles): wait for both.
    state = wait_engine(table_stack, state, inputs(state) + 1, "the lift",
                        virtual=lambda v: v["hand"] is not None)
    # lay it on the wrong seat's pad
    other = 1 - state["game"]["view"]["turn"]
    state = click(page, table_stack, f"[data-act='pad'][data-seat='{other}']")

    seen: list[str] = []

    def raised() -> bool:  # on a timeout, the output says where the gesture stopped
        now = table_state(table_stack)
        if now["alerts"]:
            return True
        shown = page.evaluate("() => document.getElementById('play-msg').textContent")
        line = f"no alert yet: virtual {now['virtual']}, page says {shown!r}"
        if not seen or seen[-1] != line:
            seen.append(line)
            print(line)
        return False

    wait_until(raised, 15, "the engine's alert for the card on the wrong pad")
    alert = page.wait_for_selector("#alerts .alert", timeout=15000)
    text = alert.inner_text()
    assert "Rule G" in text and "What to do:" in text
    page.wait_for_function("document.querySelector('#announce-alert').textContent.length > 0")
    screenshot(page, "virtual-table-alert")
    state = click(page, table_stack, f"[data-act='pickpad'][data-seat='{other}']")
    wait_engine(table_stack, state, inputs(state) + 1, "the pick-up",
                virtual=lambda v: v["hand"] is not None)
    click(page, table_stack, f"[data-act='cell'][data-where='{source}']")  # put it back
    page.wait_for_selector("#alerts .alert", state="detached")
    assert not table_state(table_stack)["alerts"]


def test_host_page_pin_readers_and_seat_codes(table_stack: Stack, page: Any) -> None:
    url = table_stack.dash.url
    page.goto(url + "/host?lang=en")
    page.fill("#pin", "0000")
    page.click("#login-form button[type=submit]")
    page.wait_for_function("document.querySelector('#login-msg').textContent === 'Wrong PIN.'")
    assert page.is_hidden("#host")
    page.fill("#pin", PIN)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#readers .reader-grid")
    readers = page.locator("#readers .reader")
    assert readers.count() == 36  # 32 cells + 4 pads of the simulated table
    assert page.locator("#readers .reader.h-ok").count() == 36
    assert "No enrolment running." in page.inner_text("#enrolment")
    httpx.post(f"{url}/api/host/new_game", headers={"X-Host-Pin": PIN}, timeout=30,
               json={"colours": ["yellow", "red", "green"], "deal": "virtual", "seed": 2})
    wait_until(lambda: playing(table_stack), 10, "the game to start")
    page.wait_for_selector("#links figure.qr[data-seat='2'] svg", timeout=10000)
    assert page.locator("#links figure.qr").count() == 3
    screenshot(page, "host-page")

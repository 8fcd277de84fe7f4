"""axe-core (axe-playwright-python, in Chromium) on every page of a live game with an alert
standing: no serious or critical violation. And /host never throws, in any state."""

from __future__ import annotations

from typing import Any

import pytest
from dashkit import PIN, Dash, drive_engine, join_in_browser, new_game, wait_until

pytestmark = pytest.mark.browser


def axe_violations(page: Any) -> list[dict[str, Any]]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    violations: list[dict[str, Any]] = results.response["violations"]
    return violations


def summary(violations: list[dict[str, Any]]) -> list[str]:
    return [f"{v['impact']}: {v['id']} ({len(v['nodes'])}× e.g. {v['nodes'][0]['target']})"
            for v in violations]


@pytest.mark.parametrize("path", ["/", "/virtual", "/scores", "/host", "seat"])
def test_axe_no_serious_or_critical_violation_in_a_live_game_with_an_alert(
    dash: Dash, engine_service: Any, table_id: str, page: Any, path: str
) -> None:
    interp = drive_engine(engine_service, table_id, seed=7, until="take", players=3)
    wait_until(lambda: dash.bridge.public is not None and dash.bridge.public.view.table
               is not None and dash.bridge.public.view.table.inputs == interp.inputs, 10,
               "the live game")
    dash.publish_alert("a-1", rule="G6", message="Row 3, column 4 is not in column 2, the line "
                       "the pawn faces.", instruction="Put the card back on row 3, column 4.",
                       game_id=dash.bridge.game_id or "")
    wait_until(lambda: dash.bridge.alerts, 5, "the alert")
    if path == "seat":
        seat = interp.turn
        join_in_browser(page, dash.url, dash.bridge, seat)
        page.wait_for_selector("#seat-action:not([hidden]) :is(.choices, .pick-on-square)")
        page.wait_for_selector("#seat-alerts .alert")
    else:
        page.goto(f"{dash.url}{path}?lang=en")
        if path == "/host":
            page.fill("#pin", PIN)
            page.click("#login-form button[type=submit]")
            page.wait_for_selector("#links figure.qr svg")
        elif path == "/scores":
            page.wait_for_selector("#scores [data-running]")
        else:
            page.wait_for_selector("#alerts .alert")
            page.wait_for_selector("#board .cell .card")
    violations = axe_violations(page)
    bad = [v for v in violations if v["impact"] in ("serious", "critical")]
    print(path, "axe:", summary(violations) or "no violation")
    assert not bad, summary(bad)
    if path == "seat":  # the phone controller as a phone shows it
        from dashkit import screenshot

        page.set_viewport_size({"width": 390, "height": 844})
        over = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert over <= 0, f"the seat page scrolls sideways by {over} px"
        screenshot(page, "phone-seat-390x844")


def test_host_page_has_no_script_error_in_any_state(dash: Dash, page: Any) -> None:
    """No game, a game being dealt, playing, over, offline banners: no console error."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(dash.url + "/host?lang=en")
    page.fill("#pin", PIN)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#host-status")
    page.wait_for_function("document.querySelector('#host-status').textContent.length > 0")
    assert "No game" in page.inner_text("#host-status")
    # dealing: the engine's view before the game (no seats, no turn)
    dash.publisher.publish(dash.topics.game_public, _dealing(dash), retain=True)
    page.wait_for_function("document.querySelector('#host-status').textContent.includes('32')")
    game = new_game(players=2, seed=3)
    dash.publish_game(game, ts=5.0)
    page.wait_for_function("document.querySelector('#host-status').textContent.includes('Seat')")
    dash.publish_state("engine", "offline")
    page.wait_for_selector("[data-banner='engine']")
    import random

    rng = random.Random(1)
    while not game.is_over():
        game.apply(rng.choice(game.legal_actions()))
    dash.publish_game(game, ts=6.0)
    page.wait_for_function("document.querySelector('#host-status').textContent.includes('over')")
    assert not errors, errors


def _dealing(dash: Dash) -> Any:
    import time

    from engine.wire.contract import GamePublic

    grid: list[list[str | None]] = [[None] * 6 for _ in range(6)]
    grid[1][1] = "yellow-a-1"
    view = {
        "players": 2, "grid": grid, "phase": "dealing", "seats": [], "turn": None,
        "config": {"colours": ["yellow", "red"], "removed_colour": "grey"},
        "table": {"status": "dealing", "prompt": {"code": "dealing", "seat": None,
                                                  "text": "Deal 32 cards (1/32 read)."},
                  "dealing": {"filled": 1, "missing": []}, "inputs": 1},
    }
    return GamePublic.model_validate({"table": dash.table, "game_id": "deal-1", "turn": None,
                                      "ts": time.time(), "view": view})

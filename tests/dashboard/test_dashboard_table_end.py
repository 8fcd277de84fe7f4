"""The big table view (/) once a game has ended: by the host's End, or by the rules (G10a).
Nobody is to play any more, so the screen says the game is over (and shows the podium when
the rules ended it), never "<seat> to play" nor an active seat."""

from __future__ import annotations

from typing import Any

from dashkit import Dash, drive_engine, wait_until

TURN = "document.querySelector('#turn').textContent"


def _live(dash: Dash, interp: Any) -> None:
    wait_until(lambda: dash.bridge.public is not None and dash.bridge.public.view.table
               is not None and dash.bridge.public.view.table.inputs == interp.inputs, 10,
               "the live game on the dashboard")


def _shows_game_over(page: Any) -> None:
    page.wait_for_function(f"{TURN}.includes('Game over')")
    text = page.inner_text("#turn")
    assert "to play" not in text, text
    assert page.locator("#seats .seat.active").count() == 0
    assert page.locator("#join .qr").count() == 0  # nobody joins a game that is over


def test_table_view_after_the_host_ends_the_game(dash: Dash, engine_service: Any,
                                                 table_id: str, page: Any) -> None:
    interp = drive_engine(engine_service, table_id, seed=7, until="take", players=3)
    _live(dash, interp)
    page.goto(dash.url + "/?lang=en")
    page.wait_for_function(f"{TURN}.includes('to play')")  # a game in progress first
    assert page.locator("#seats .seat.active").count() == 1
    engine_service.command(table_id, "end", {})
    wait_until(lambda: dash.bridge.public is not None and dash.bridge.public.view.table
               is not None and dash.bridge.public.view.table.status == "ended", 10, "the end")
    _shows_game_over(page)
    assert "The host ended the game." in page.inner_text("#turn")


def test_table_view_after_the_rules_end_the_game_shows_the_podium_g10a(
        dash: Dash, engine_service: Any, table_id: str, page: Any) -> None:
    interp = drive_engine(engine_service, table_id, seed=5, until="over", players=2)
    _live(dash, interp)
    page.goto(dash.url + "/?lang=en")
    _shows_game_over(page)
    page.wait_for_selector("#podium:not([hidden])")
    assert page.locator("#podium").inner_text().strip()

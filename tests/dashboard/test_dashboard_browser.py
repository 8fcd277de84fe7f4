"""Browser tests in a real headless Chromium against a served dashboard and a real broker."""

from __future__ import annotations

from typing import Any

import pytest
from dashkit import Dash, new_game, play, screenshot

pytestmark = pytest.mark.browser


def test_table_view_updates_live_when_game_public_is_published(dash: Dash, page: Any) -> None:
    game = play(new_game(players=4, seed=3), 9)
    dash.publish_game(game)
    page.goto(dash.url + "/?lang=fr")
    page.wait_for_selector("#board .cell[data-cell='0,1'] .card")
    renders = int(page.get_attribute("body", "data-renders") or 0)
    before = game.view_public()
    taken = before["expected"]["take"][0]
    game.apply(next(a for a in game.legal_actions() if getattr(a, "cell", None) is not None
                    and f"{a.cell // 6},{a.cell % 6}" == taken))
    after = game.view_public()
    dash.publish_game(game)
    page.wait_for_function(f"Number(document.body.dataset.renders) > {renders}")
    r, c = (int(x) for x in taken.split(","))
    now = after["grid"][r][c]
    cell = page.locator(f"#board .cell[data-cell='{taken}'] .card")
    shown = cell.get_attribute("data-card") if now else None
    assert shown == now
    # the pile count and whose turn it is follow
    assert str(after["pile_size"]) in page.inner_text(".pile-size")
    active = page.get_attribute("#seats .seat.active", "data-seat")
    assert active == str(after["turn"])
    screenshot(page, "table-view")

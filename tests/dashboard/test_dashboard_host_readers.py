"""The host page's reader-health grid on a laptop (1280 px, found by hand): every reader's
place ("row 1, column 2", "Pad of Seat 1") is read whole inside its box, and the grid stays
inside its panel, in each language. A real Chromium; the hub's health as the hub sends it."""

from __future__ import annotations

import time
from typing import Any

import pytest
from dashkit import PIN, Dash, screenshot, wait_until

from engine.wire.contract import HubHealth, ReaderHealthSeen

pytestmark = pytest.mark.browser

# Each reader's box whose text is wider or taller than the box (cut), and the grid's
# overflow of its panel (px).
CUT = """() => {
  const cut = [...document.querySelectorAll('#readers .reader')]
    .filter((r) => r.scrollWidth > r.clientWidth + 1 || r.scrollHeight > r.clientHeight + 1)
    .map((r) => r.innerText.replace(/\\n/g, ' '));
  const grid = document.querySelector('#readers .reader-grid').getBoundingClientRect();
  const panel = document.querySelector('#readers').closest('.panel').getBoundingClientRect();
  const sideways = document.documentElement.scrollWidth - innerWidth;
  return [cut, Math.round(grid.right - panel.right), sideways];
}"""


def health() -> HubHealth:
    readers = [ReaderHealthSeen(reader=r * 6 + c, cell=f"{r},{c}",
                                health="flicker" if (r, c) == (0, 1) else "ok")
               for r in range(6) for c in range(6)]
    readers += [ReaderHealthSeen(reader=36 + s, seat=s, health="silent" if s == 2 else "ok")
                for s in range(4)]
    return HubHealth(hub_id="h", ts=time.time(), backend="sim", readers=readers)


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_reader_names_are_whole_in_the_grid_at_1280px(dash: Dash, browser: Any,
                                                      lang: str) -> None:
    dash.publisher.publish(dash.topics.hub_health, health(), retain=True)
    wait_until(lambda: dash.bridge.health is not None, 5, "hub health")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    page = context.new_page()
    page.set_default_timeout(10000)
    try:
        page.goto(f"{dash.url}/host?lang={lang}")
        page.wait_for_selector("#readers .reader-grid .reader")
        assert page.locator("#readers .reader").count() == 40
        cut, past_panel, sideways = page.evaluate(CUT)
        screenshot(page, f"host-readers-1280-{lang}")
        assert cut == [], f"reader names cut at 1280 px ({lang}): {cut}"
        assert past_panel <= 0, f"the reader grid runs {past_panel} px out of its panel"
        assert sideways <= 0
    finally:
        context.close()

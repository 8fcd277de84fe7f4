"""/count at an event on a phone (issue 18): after the last seat's Done the podium is on
screen (it was 3,000 px above the viewport), and the host's count page and a seat's page fit
a 390x844 phone in a few screens (9,979 px before: every seat's every card, every breakdown)
with no sideways scroll, in en and de. The count app as `cauldron count --backend sim` serves
it, in real Chromium."""

from __future__ import annotations

from typing import Any

import pytest
from dashkit import PIN
from test_count_browser import COLOURS, HANDS, CountTable, count_table

from dashboard.count import CountSetup

__all__ = ["count_table"]  # the fixture, used by name
pytestmark = pytest.mark.browser
SCREENS = 3  # the host's page at most 3 phone screens tall once counted

MEASURE = """() => {
  const p = document.getElementById("podium");
  const r = p && !p.hidden ? p.getBoundingClientRect() : null;
  return {sw: document.documentElement.scrollWidth, sh: document.documentElement.scrollHeight,
          w: innerWidth, h: innerHeight, top: r ? r.top : null, bottom: r ? r.bottom : null};
}"""


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_podium_is_on_screen_and_the_count_fits_a_phone(browser: Any,
                                                            count_table: CountTable,
                                                            lang: str) -> None:
    count_table.desk.start(CountSetup(COLOURS, recipes=True, last_card_seat=0))
    for seat_number, cards in HANDS.items():
        for card in cards:
            count_table.desk.tap(card, seat_number, "manual")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                  has_touch=True)
    host, phone = context.new_page(), context.new_page()
    try:
        host.goto(f"{count_table.url}/count?lang={lang}#pin={PIN}")
        phone.goto(f"{count_table.url}/count/seat/2?lang={lang}")
        for n in range(len(COLOURS)):  # each seat's Done, far down the page, as a host taps it
            done = f".count-seat[data-seat='{n}'] [data-act=done][data-done='1']"
            host.wait_for_selector(done)
            host.locator(done).tap()
        host.wait_for_selector("#podium:not([hidden]) li")
        phone.wait_for_selector("#podium:not([hidden]) li")
        host.wait_for_function("() => { const r = document.getElementById('podium')"
                               ".getBoundingClientRect(); return r.top >= -1 && r.bottom <= "
                               "innerHeight + 1; }", timeout=5000)
        for name, page, screens in (("host", host, SCREENS), ("seat", phone, SCREENS)):
            m = page.evaluate(MEASURE)
            assert m["sw"] <= m["w"], f"{lang} {name}: scrolls sideways: {m}"
            assert m["top"] is not None and m["top"] >= -1 and m["bottom"] <= m["h"] + 1, (
                f"{lang} {name}: the podium is not on screen: {m}")
            assert m["sh"] <= screens * m["h"], f"{lang} {name}: {m['sh']} px tall: {m}"
        # A folded seat still opens to show its cards.
        host.locator(".count-seat[data-seat='1'] details.taps > summary").tap()
        assert host.locator(".count-seat[data-seat='1'] li[data-card='vanesco-1']").is_visible()
    finally:
        context.close()

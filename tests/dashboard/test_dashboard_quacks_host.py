"""The host page's New game form for Quacks (issue 23): an option that names a seat
(`engine.games.base.seat_option`: Quacks' start player, D31) is a choice of the game's seats,
"Seat 1" to "Seat N" for the players chosen, and "at random" where the option allows None;
the game's choice shows whole titles at 1280 px. The form is the generic one, built from the
options' types. A real Chromium; the engine's side of the wire answered by the test."""

from __future__ import annotations

from typing import Any

import pytest
from dashkit import Dash, wait_until
from test_dashboard_host_games import host_page

pytestmark = pytest.mark.browser

BOX = "fieldset[data-game=quacks]"
START = f"{BOX} [data-option=start_player]"


def offered(page: Any) -> list[list[Any]]:
    return page.eval_on_selector_all(  # type: ignore[no-any-return]
        f"{START} option", "os => os.map(o => [o.value, o.textContent, !o.disabled])")


def test_Q8_D31_the_start_player_is_a_choice_of_the_games_seats_or_random(
        dash: Dash, browser: Any) -> None:
    dash.answer_commands()
    page = host_page(browser, dash, "fr")
    try:
        page.select_option("#game", "quacks")
        page.wait_for_selector(START, state="visible")
        assert page.eval_on_selector(START, "e => e.tagName") == "SELECT"
        assert page.inner_text(f"label[for='{page.get_attribute(START, 'id')}']") == \
            "Place qui commence"
        assert offered(page) == [["", "Au hasard", True], ["0", "Place 1", True],
                                 ["1", "Place 2", True], ["2", "Place 3", True],
                                 ["3", "Place 4", True]]
        assert page.input_value(START) == "0"  # the option's default: seat 1
        page.select_option(START, "3")
        page.fill(f"{BOX} [data-option=players]", "2")  # seats 3 and 4 go
        assert [o[2] for o in offered(page)] == [True, True, True, False, False]
        assert page.input_value(START) == ""  # seat 4 no longer plays: the first choice
        page.select_option(START, "1")
        page.click("#start")
        wait_until(lambda: any(v == "new_game" for v, _ in dash.requests), 10,
                   "the new game to reach the engine")
        args = next(r for v, r in dash.requests if v == "new_game").args
        assert args["game"] == "quacks" and args["players"] == 2 and args["start_player"] == 1
        dash.requests.clear()
        page.select_option(START, "")
        page.click("#start")
        wait_until(lambda: any(v == "new_game" for v, _ in dash.requests), 10,
                   "the second new game to reach the engine")
        args = next(r for v, r in dash.requests if v == "new_game").args
        assert args["start_player"] is None  # at random: the engine draws it (D31)
    finally:
        page.context.close()


@pytest.mark.parametrize("lang", ["en", "fr", "de"])
def test_the_game_choice_shows_each_whole_title_at_1280_px(dash: Dash, browser: Any,
                                                           lang: str) -> None:
    page = host_page(browser, dash, lang)
    try:
        for game in ("quacks", "glastonbury"):
            page.select_option("#game", game)
            room, text = page.evaluate("""() => {
              const s = document.querySelector('#game'); const cs = getComputedStyle(s);
              const c = document.createElement('canvas').getContext('2d'); c.font = cs.font;
              const pad = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
              return [s.clientWidth - pad - 20,
                      c.measureText(s.selectedOptions[0].textContent).width]; }""")
            assert text <= room, f"{game}: {text} px of title in {room} px"  # 20 px: the arrow
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    finally:
        page.context.close()

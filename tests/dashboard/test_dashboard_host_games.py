"""The host page offers the table's games (issue 22, the game seam): the New game form lists
the registry's games by their title in the page's language, shows the chosen game's options
(its own fields for Glastonbury, the fields of its options model for a game without its
own, Quacks), and sends the game's id with typed options to the engine (`cmd/new_game`). A
real Chromium on the dashboard, the engine's side of the wire answered by the test."""

from __future__ import annotations

from typing import Any

import pytest
from dashkit import PIN, Dash, wait_until

from engine import games

pytestmark = pytest.mark.browser


def host_page(browser: Any, dash: Dash, lang: str) -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"{dash.url}/host?lang={lang}")
    page.wait_for_selector("#host", state="visible")
    return page


@pytest.mark.parametrize("lang", ["fr", "de"])
def test_the_new_game_form_lists_the_games_by_their_titles(dash: Dash, browser: Any,
                                                          lang: str) -> None:
    page = host_page(browser, dash, lang)
    try:
        offered = page.eval_on_selector_all(
            "#game option", "os => os.map(o => [o.value, o.textContent])")
        assert offered == [[g.id, g.titles[lang]] for g in games.games()]  # type: ignore[index]
        # The table's game is chosen, its own fields shown; the other game's are not.
        assert page.input_value("#game") == "glastonbury"
        assert page.is_visible("#players") and page.is_visible("#colour-fields select.colour")
        assert not page.is_visible("fieldset[data-game=quacks]")
    finally:
        page.context.close()


def test_a_game_without_its_own_form_gets_its_options_model_as_fields(dash: Dash,
                                                                      browser: Any) -> None:
    dash.answer_commands()
    page = host_page(browser, dash, "fr")
    try:
        page.select_option("#game", "quacks")
        box = "fieldset[data-game=quacks]"
        page.wait_for_selector(box, state="visible")
        assert not page.is_visible("#players")  # Glastonbury's fields went with it
        fields = page.eval_on_selector_all(
            f"{box} [data-option]",
            "els => els.map(e => [e.dataset.option, e.type, e.min, e.max, "
            "document.querySelector(`label[for='${e.id}']`)?.textContent || "
            "e.closest('label')?.textContent.trim()])")
        by_name = {f[0]: f for f in fields}
        quacks = games.get("quacks")
        assert set(by_name) == set(quacks.options.model_fields)  # every option, none made up
        assert by_name["players"][1:4] == ["number", "2", "4"]  # the model's bounds
        assert by_name["players"][4] == "Joueurs"  # the game's own words, in French
        assert by_name["show_odds"][1] == "checkbox"
        page.fill(f"{box} [data-option=players]", "3")
        page.uncheck(f"{box} [data-option=show_odds]")
        page.select_option("#deal", "table")
        page.click("#start")
        wait_until(lambda: any(v == "new_game" for v, _ in dash.requests), 10,
                   "the new game to reach the engine")
        args = next(r for v, r in dash.requests if v == "new_game").args
        assert args["game"] == "quacks" and args["players"] == 3
        assert args["show_odds"] is False and args["ingredient_set"] == 1
        page.wait_for_function("document.querySelector('#host-msg').textContent"
                               ".includes('Charlatans')")
    finally:
        page.context.close()


def test_a_form_the_games_model_refuses_names_the_option(dash: Dash, browser: Any) -> None:
    """The form's bounds are the browser's first check; the server checks again by the
    chosen game's model (a stale page, a script): 422 naming the option, never sent on."""
    dash.answer_commands()
    page = host_page(browser, dash, "en")
    try:
        answer = page.evaluate("""async (pin) => {
            const r = await fetch('/api/host/new_game', {method: 'POST',
              headers: {'Content-Type': 'application/json', 'X-Host-Pin': pin},
              body: JSON.stringify({game: 'quacks', players: 9})});
            return [r.status, await r.json()]; }""", PIN)
        assert answer[0] == 422
        assert answer[1]["error"]["code"] == "bad_form"
        assert answer[1]["error"]["params"] == {"field": "players"}
        unknown = page.evaluate("""async (pin) => {
            const r = await fetch('/api/host/new_game', {method: 'POST',
              headers: {'Content-Type': 'application/json', 'X-Host-Pin': pin},
              body: JSON.stringify({game: 'chess'})});
            return [r.status, await r.json()]; }""", PIN)
        assert unknown[0] == 422 and unknown[1]["error"]["code"] == "unknown_game"
        assert not any(v == "new_game" for v, _ in dash.requests)
    finally:
        page.context.close()


@pytest.fixture
def quacks_dash(mqtt_broker: str, table_id: str, tmp_path: Any) -> Any:
    """A served dashboard of a table that plays Quacks (no game yet)."""
    from dashkit import make_dash

    yield from make_dash(mqtt_broker, table_id, tmp_path, serve=True, game="quacks")


def test_the_pages_of_a_quacks_table_load_its_fragments(quacks_dash: Dash,
                                                        browser: Any) -> None:
    """The shell serves the table's game: the big screen and the score page import Quacks'
    fragments (and call them, with no game yet), the host page's form is Quacks', and a
    game without a virtual table has no /virtual."""
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    page.set_default_timeout(10000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{quacks_dash.url}/?lang=de")
        page.wait_for_selector("#game-root .q-no-game")
        assert page.evaluate("JSON.parse(document.getElementById('boot').textContent)"
                             ".game.scripts") == ["/games/quacks/static/quacks-table.js"]
        assert page.is_visible("#alerts") and page.locator("#join").count() == 1
        assert page.locator("link[href='/games/quacks/static/quacks.css']").count() == 1
        for page_path in ("/scores", "/host"):
            page.goto(f"{quacks_dash.url}{page_path}?lang=de")
            page.wait_for_load_state("networkidle")
        page.evaluate(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
        page.reload()
        page.wait_for_selector("#host", state="visible")
        assert page.input_value("#game") == "quacks"
        assert page.is_visible("fieldset[data-game=quacks] [data-option=players]")
        assert not page.is_visible("#players")
        assert page.goto(f"{quacks_dash.url}/virtual").status == 404
        assert errors == [], errors
    finally:
        context.close()


@pytest.fixture
def quacks_virtual_dash(mqtt_broker: str, table_id: str, tmp_path: Any) -> Any:
    """A served demo-like dashboard (a virtual table) of a table that plays Quacks."""
    from dashkit import make_dash

    yield from make_dash(mqtt_broker, table_id, tmp_path, serve=True, game="quacks",
                         virtual=True)


def test_a_game_with_a_virtual_table_is_dealt_on_it_from_another_games_table(
        quacks_virtual_dash: Dash, browser: Any) -> None:
    """The host page of a Quacks table (no virtual page) starting Glastonbury on the demo's
    table: the deal is the virtual table's (auto), not "at the table", where nobody can
    deal; Quacks itself has no virtual deal to choose."""
    page = host_page(browser, quacks_virtual_dash, "en")
    try:
        page.evaluate("document.querySelector('#new-game-box').open = true")
        assert page.input_value("#game") == "quacks"
        deals = "els => els.filter(o => !o.disabled).map(o => o.value)"
        assert page.eval_on_selector_all("#deal option", deals) == ["auto", "table"]
        page.select_option("#game", "glastonbury")
        assert page.eval_on_selector_all("#deal option", deals) == ["auto", "virtual", "table"]
        assert page.input_value("#deal") == "auto"
        page.select_option("#deal", "virtual")
        page.select_option("#game", "quacks")  # a virtual deal Quacks has not: back to auto
        assert page.input_value("#deal") == "auto"
        # Each way to deal in the chosen game's words: Quacks' chips wait in their bags.
        at_table = "#deal option[value='table']"
        assert "bags" in page.inner_text(at_table) and "cards" not in page.inner_text(at_table)
        page.select_option("#game", "glastonbury")
        assert page.inner_text(at_table) == "cards already on the table"
    finally:
        page.context.close()


def test_the_host_page_follows_the_table_to_a_game_started_from_another_games_page(
        quacks_virtual_dash: Dash, browser: Any) -> None:
    """A host page served for Quacks, and the table now plays Glastonbury (the host started
    it): the page loads again as Glastonbury's (it once stayed, could not draw the status,
    and named the cards "unknown card"), keeping what the last command said."""
    from dashkit import new_game

    dash = quacks_virtual_dash

    def engine(info: Any, request: Any) -> Any:
        return {"undone_codes": [{"code": "take", "cell": "1,5"}],
                "steps": [{"code": "put_back", "card": "black-a-4", "cell": "1,5", "seat": None}]}

    dash.publisher.serve(dash.topics.cmd("+"), engine, wait=10)
    page = host_page(browser, dash, "en")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    boot_game = "JSON.parse(document.getElementById('boot').textContent).game.id"
    try:
        assert page.evaluate(boot_game) == "quacks"
        page.evaluate("document.getElementById('host-msg').textContent = 'said before'")
        dash.publish_game(new_game())  # the table now plays Glastonbury
        page.wait_for_function(f"() => {boot_game} === 'glastonbury'")
        page.wait_for_selector("#host", state="visible")  # logged in still
        assert page.inner_text("#host-msg") == "said before"
        page.wait_for_function("() => document.getElementById('host-status').textContent"
                               ".includes('Seat 1')")
        page.click("#undo")
        name = games.get("glastonbury").names.piece("black-a-4", "en").split(" (")[0]
        page.wait_for_function(
            "name => document.getElementById('host-msg').textContent.includes(name)", arg=name)
        assert "unknown" not in page.inner_text("#host-msg")
        assert errors == [], errors
    finally:
        page.context.close()

"""Browser tests in a real headless Chromium against a served dashboard and a real broker."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest
from dashkit import (
    Dash,
    join_in_browser,
    new_game,
    play,
    screenshot,
    wait_until,
    wrong_seat_cookie,
)

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


def open_seat(dash: Dash, page: Any, seat: int) -> str:
    """The seat's join URL, as its QR code on the table view encodes it."""
    from dashboard.routers.seats import qr_svg

    link = httpx.get(f"{dash.url}/api/seats/{seat}/join").json()["url"]
    served = httpx.get(f"{dash.url}/api/seats/{seat}/qr.svg").text
    assert served == qr_svg(link)  # the QR on the table view is exactly this link
    page.goto(link + "&lang=en")
    return link


@pytest.mark.parametrize("memory_aid", [True, False])
def test_seat_view_from_its_qr_secret(dash: Dash, page: Any, memory_aid: bool) -> None:
    game = play(new_game(players=3, seed=11, memory_aid=memory_aid), 25)
    dash.publish_game(game)
    for seat in range(3):
        dash.publish_seat(game, seat)
    wait_until(lambda: len(dash.bridge.seat_views) == 3, 5, "seat views")
    page.goto(dash.url + "/")
    # 127.0.0.1: phones cannot reach it, so the table view says so instead of a code
    page.wait_for_selector("#join .no-phones")
    open_seat(dash, page, 1)
    page.wait_for_selector("#seat-public")
    page.wait_for_function("document.querySelector('#stack').textContent.length > 0")
    stack = page.locator("#stack [data-stack] .card")
    if memory_aid:
        shown = [stack.nth(i).get_attribute("data-card") for i in range(stack.count())]
        assert shown == game.cauldrons[1]
        screenshot(page, "seat-view")
    else:
        assert stack.count() == 0
        assert page.locator("#stack [data-memory-off]").count() == 1
    html = page.content()
    for other in (0, 2):
        for card in game.cauldrons[other][:-1]:
            assert card not in html
    # the table view now says the seat joined, and its QR code is gone
    page.goto(dash.url + "/")
    page.wait_for_selector("#join figure.qr.joined[data-seat='1']")


def test_wrong_seat_secret_is_refused_in_the_browser(dash: Dash, page: Any) -> None:
    dash.publish_game(new_game(players=2))
    wait_until(lambda: dash.bridge.game_id == "g1", 5, "game")
    other = dash.bridge.secrets.secret("g1", 1)
    wrong_seat_cookie(page, dash.url, 0, other)  # seat 1's secret held as seat 0's
    page.goto(f"{dash.url}/seat/0?lang=en")
    page.wait_for_selector("#seat-msg .error")
    assert "does not open" in page.inner_text("#seat-msg")


def test_table_websocket_never_carries_a_covered_card(dash: Dash, page: Any) -> None:
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, str) else payload.decode())))
    game = new_game(players=4, seed=21)
    dash.publish_game(game, ts=1.0)
    page.goto(dash.url + "/virtual")
    page.wait_for_selector("#board .card")
    covered_at: dict[float, set[str]] = {1.0: set()}
    rng = random.Random(4)
    ts = 1.0
    while not game.is_over():
        game.apply(rng.choice(game.legal_actions()))
        ts += 1.0
        covered_at[ts] = {c for cauldron in game.cauldrons for c in cauldron[:-1]}
        if rng.random() < 0.15 or game.is_over():
            dash.publish_game(game, ts=ts)
            page.wait_for_function(f"document.body.dataset.gameTs === '{ts:g}' || "
                                   f"Number(document.body.dataset.gameTs) === {ts}")
    checked = 0
    for text in frames:
        state = json.loads(text)
        if state.get("type") != "table" or state["game"] is None:
            continue
        frame_ts = state["game"]["ts"]
        if state["game"]["view"]["over"]:
            continue  # the cauldrons are turned face up for scoring
        checked += 1
        for card in covered_at[frame_ts]:
            assert f'"{card}"' not in text, f"covered card {card} in a table frame"
    assert checked >= 5
    assert any(covered_at[t] for t in covered_at)


def test_alert_appears_and_clears(dash: Dash, page: Any) -> None:
    dash.publish_game(new_game())
    page.goto(dash.url + "/?lang=en")
    page.wait_for_selector("#board .card")
    dash.publish_alert("a-7", rule="G6", message="Row 3, column 4 is not in column 2, the line "
                       "the pawn faces.", instruction="Put the card back on row 3, column 4.")
    alert = page.wait_for_selector("#alerts .alert[data-alert='a-7']")
    assert "Rule G6" in alert.inner_text()
    # the engine words it for people already (engine/games/glastonbury/rules/names.py): nothing
    # renumbered
    assert "Put the card back on row 3, column 4." in alert.inner_text()
    assert "is not in column 2, the line" in alert.inner_text()
    page.wait_for_function("document.querySelector('#announce-alert').textContent.includes('G6')")
    screenshot(page, "table-alert")
    dash.publish_alert("a-7", active=False, rule="G6")
    page.wait_for_selector("#alerts .alert[data-alert='a-7']", state="detached")


def test_offline_banners(dash: Dash, page: Any) -> None:
    dash.publish_game(new_game())
    page.goto(dash.url + "/?lang=en")
    page.wait_for_selector("#board .card")
    dash.publish_state("engine", "offline")
    page.wait_for_selector("[data-banner='engine']")
    dash.publish_state("engine", "online")
    page.wait_for_selector("[data-banner='engine']", state="detached")


@pytest.mark.parametrize(("lang", "nav", "family"), [
    ("fr", "Table virtuelle", "Parfum de soufre"),
    ("en", "Virtual table", "Sulphur scent"),
    ("de", "Virtueller Tisch", "Schwefelduft"),
])
def test_table_page_in_each_language(dash: Dash, page: Any, lang: str, nav: str,
                                     family: str) -> None:
    game = new_game(players=2, seed=1)
    grid = {f"{r},{c}": card for r, row in enumerate(game.view_public()["grid"])
            for c, card in enumerate(row)}
    cell = next(k for k, v in grid.items() if v and v.startswith("yellow-a-"))
    dash.publish_game(game)
    page.goto(f"{dash.url}/?lang={lang}")
    page.wait_for_selector(f"#board .cell[data-cell='{cell}'] .card")
    assert page.get_attribute("html", "lang") == lang
    assert nav in page.inner_text("header nav")
    # long names carry a soft hyphen (U+00AD) where a narrow cell may break them
    assert family in page.inner_text(f"#board .cell[data-cell='{cell}']").replace("\xad", "")
    # the choice sticks (cookie) and the switch changes it
    page.goto(dash.url + "/scores")
    assert page.get_attribute("html", "lang") == lang
    other = "en" if lang != "en" else "de"
    page.click(f"a.lang-switch[data-lang='{other}']")
    page.wait_for_load_state()
    assert page.get_attribute("html", "lang") == other


def test_broker_outage_shows_a_banner_and_the_view_recovers(
    restartable_broker: Any, table_id: str, tmp_path: Any, page: Any
) -> None:
    from dashkit import make_dash

    gen = make_dash(restartable_broker.url, table_id, tmp_path, serve=True)
    dash = next(gen)
    try:
        game = new_game(players=2, seed=8)
        dash.publish_game(game)
        page.goto(dash.url + "/?lang=en")
        page.wait_for_selector("#board .card")
        restartable_broker.stop()
        page.wait_for_selector("[data-banner='broker']", timeout=15000)
        restartable_broker.start()
        page.wait_for_selector("[data-banner='broker']", state="detached", timeout=20000)
        wait_until(lambda: dash.publisher.connected, 20, "the publisher to reconnect")
        play(game, 3)
        dash.publish_game(game, ts=12345.0)
        page.wait_for_function("document.body.dataset.gameTs === '12345'", timeout=15000)
    finally:
        next(gen, None)


def test_table_view_reconnects_by_itself_after_a_dashboard_restart(dash: Dash, page: Any) -> None:
    from dashkit import Server

    dash.publish_game(new_game(players=2, seed=4))
    page.goto(dash.url + "/?lang=en")
    page.wait_for_selector("#board .card")
    assert dash.server is not None
    port = dash.server.port
    dash.server.stop()
    page.wait_for_selector("[data-banner='socket']")
    restarted = Server(dash.app, port=port).start()
    dash.server = restarted
    page.wait_for_selector("[data-banner='socket']", state="detached", timeout=15000)
    wait_until(lambda: dash.bridge.connected, 10, "the bridge to reconnect")
    game = play(new_game(players=2, seed=4), 2)
    dash.publish_game(game, ts=777.0)
    page.wait_for_function("document.body.dataset.gameTs === '777'")


def test_declinatio_line_is_shown_at_a_corner(dash: Dash, page: Any) -> None:
    from engine.games.glastonbury.rules.board import FACED_LINE, LINES, cell_name

    found = None
    for seed in range(200):
        game = new_game(players=2, seed=seed)
        rng = random.Random(seed)
        while not game.is_over():
            if game.view_public()["expected"]["declinatio"]:
                found = game
                break
            game.apply(rng.choice(game.legal_actions()))
        if found:
            break
    assert found is not None, "no game reached a corner with Declinatio"
    dash.publish_game(found)
    page.goto(dash.url + "/?lang=en")
    page.wait_for_selector("#board .card")
    seat = found.seat
    line = FACED_LINE[(found.pawns[seat] + found.move_value) % 20]
    assert line is not None
    want = {cell_name(c) for c in LINES[line]
            if found.grid[c] and not found.grid[c].startswith(("vanesco", "perluceo"))}
    shown = set(page.eval_on_selector_all("#board .cell.decl",
                                          "els => els.map(e => e.dataset.cell)"))
    assert shown == want
    assert "Declinatio" in page.inner_text("#turn")


def test_declinatio_button_on_the_phone_and_the_virtual_table_G7(
    dash: Dash, engine_service: Any, table_id: str, page: Any
) -> None:
    """At a corner where Declinatio would face only Vanesco/Perluceo (seed 24), the active
    seat's phone shows the button that ends the game, the other seat's does not; the table
    translates the prompt and the virtual table shows its own button."""
    from dashkit import drive_engine

    interp = drive_engine(engine_service, table_id, seed=24, until="corner_blocked")
    seat = interp.turn
    wait_until(lambda: dash.bridge.public is not None and dash.bridge.public.view.table
               and dash.bridge.public.view.table.inputs == interp.inputs, 5, "the view")
    page.goto(dash.url + "/virtual?lang=fr")  # translated, not the engine's English text
    prompt = page.wait_for_selector("#turn [data-prompt='corner_blocked']").inner_text()
    assert "face à la ligne 4, qui ne contient que des Vanesco/Perluceo" in prompt  # 1-based
    page.wait_for_selector("#declinatio-btn", state="visible")
    assert page.is_visible("#pass-btn")
    join_in_browser(page, dash.url, dash.bridge, 1 - seat)
    page.wait_for_function("document.querySelector('#seat-msg').textContent.length > 0")
    assert page.is_hidden("#seat-declinatio")
    open_seat(dash, page, seat)
    page.wait_for_selector("#seat-declinatio", state="visible")
    assert "ends the game" in page.inner_text("#seat-declinatio")
    page.click("#declinatio")
    page.wait_for_selector("#seat-declinatio", state="hidden")
    page.wait_for_function("document.querySelector('#seat-msg a[href=\"/scores\"]') !== null")
    assert interp.game.is_over() and interp.game.end_reason == "declinatio_blocked"

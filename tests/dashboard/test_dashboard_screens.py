"""The screens at the sizes people use them (issue 11): the big screen fits 1920×1080 and
1280×720 with no scrolling (all 36 cells and 20 pawn positions in view, with alerts standing
and at the end of a game); no page scrolls sideways on a 360 px phone; the words (no
untranslated key, plurals for 0, 1, 2 in fr, en, de)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashkit import Dash, join_in_browser, make_dash, new_game, play, screenshot, wait_until

from engine.wire.contract import GameAlert

pytestmark = pytest.mark.browser

BIG = [(1920, 1080), (1280, 720)]
LAN_URL = "http://192.0.2.10:8000/"  # a network address (documentation range): phones reach it


@pytest.fixture
def lan_dash(mqtt_broker: str, table_id: str, tmp_path: Path) -> Iterator[Dash]:
    """A served dashboard whose public address phones can open (`--public-url`)."""
    yield from make_dash(mqtt_broker, table_id, tmp_path / "lan", serve=True, public_url=LAN_URL)

# What is inside the viewport, and whether the page scrolls.
MEASURE = """() => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const doc = document.documentElement;
  const inside = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.top >= -0.5 && r.left >= -0.5
      && r.bottom <= vh + 0.5 && r.right <= vw + 0.5;
  };
  const all = (sel) => [...document.querySelectorAll(sel)];
  const count = (sel) => [all(sel).length, all(sel).filter(inside).length];
  return {
    scrollY: doc.scrollHeight - vh, scrollX: doc.scrollWidth - vw,
    cells: count('#board .cell'), positions: count('#board .pos'),
    turn: count('#turn'), seats: count('#seats .seat'), pile: count('#pile .pile-size'),
    qr: count('#join figure.qr'), alerts: count('#alerts .alert'),
    podium: count('#podium:not([hidden]) .podium-list li'),
  };
}"""

# The smallest rendered text on the page (px), ignoring screen-reader-only text.
SMALLEST_TEXT = """() => {
  let min = 1e9, where = '';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim()) continue;
    const el = node.parentElement;
    if (el.closest('.sr-only, [hidden], script, .skip')) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (size < min) { min = size; where = el.className + ': ' + node.textContent.trim(); }
  }
  return [min, where];
}"""


# Which elements stick out on the right (for the failure message).
TOO_WIDE = """() => [...document.querySelectorAll('body *')].filter((el) => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.right > window.innerWidth + 0.5;
}).slice(0, 8).map((el) => `${el.tagName}#${el.id}.${el.className}`)"""


def alerts(dash: Dash, n: int = 3) -> None:
    texts = [
        ("G6", "Row 3, column 4 is not in column 2, the line the pawn faces.",
         "Put the card back on row 3, column 4."),
        ("G4", "Seat 2 laid a card on Seat 1's pad.", "Lift it from Seat 1's pad and "
         "lay it on your own pad."),
        ("G8", "Seat 3 must tap the top card of its cauldron (Vanesco) before anything else.",
         "Tap it on your pad, then put it under the draw pile."),
    ]
    for i in range(n):
        rule, message, instruction = texts[i % len(texts)]
        dash.publish_alert(f"a-{i}", rule=rule, message=message, instruction=instruction)


def finished(players: int = 4, seed: int = 5) -> Any:
    game = new_game(players=players, seed=seed)
    rng = random.Random(seed)
    while not game.is_over():
        game.apply(rng.choice(game.legal_actions()))
    return game


def measure(page: Any) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(MEASURE)
    return result


def assert_fits(m: dict[str, Any], size: tuple[int, int]) -> None:
    assert m["scrollY"] <= 0, f"{size}: the page scrolls down by {m['scrollY']} px"
    assert m["scrollX"] <= 0, f"{size}: the page scrolls sideways by {m['scrollX']} px"
    assert m["cells"] == [36, 36], f"{size}: cells in view {m['cells']}"
    assert m["positions"] == [20, 20], f"{size}: pawn positions in view {m['positions']}"
    assert m["turn"] == [1, 1], size


@pytest.mark.parametrize("size", BIG, ids=lambda s: f"{s[0]}x{s[1]}")
def test_big_screen_fits_with_alerts_and_at_the_end(lan_dash: Dash, browser: Any,
                                                    size: tuple[int, int]) -> None:
    dash = lan_dash  # the join codes show only where phones can open them
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(8000)
    try:
        game = play(new_game(players=4, seed=3), 9)
        dash.publish_game(game)
        page.goto(dash.url + "/?lang=fr")  # French: the longest words
        page.wait_for_selector("#join figure.qr img")
        m = measure(page)
        assert_fits(m, size)
        assert m["seats"] == [4, 4] and m["pile"] == [1, 1], m
        assert m["qr"] == [4, 4], f"the join codes are in view: {m['qr']}"
        smallest, where = page.evaluate(SMALLEST_TEXT)
        print(f"{size}: smallest text {smallest:.1f} px ({where})")
        if size == (1920, 1080):
            assert smallest >= 12, (smallest, where)
        screenshot(page, f"big-screen-{size[0]}x{size[1]}")

        alerts(dash, 3)
        page.wait_for_selector("#alerts .alert[data-alert='a-2']")
        page.wait_for_selector("#alerts .more-alerts summary")
        assert "2" in page.inner_text("#alerts .more-alerts summary")
        m = measure(page)
        assert_fits(m, size)
        assert m["alerts"][1] >= 1, "the newest alert is in view"
        assert m["qr"] == [4, 4] and m["seats"] == [4, 4], m
        screenshot(page, f"big-screen-alerts-{size[0]}x{size[1]}")

        end = finished()
        dash.publish_game(end, ts=999.0)
        page.wait_for_selector("#podium:not([hidden]) .podium-list li")
        m = measure(page)
        assert_fits(m, size)
        assert m["podium"][0] == 4 and m["podium"] == [4, 4], m
        winners = end.scores().winners
        assert page.locator("#podium .podium-list li.winner").count() == len(winners)
        assert page.locator("#podium a[href='/scores']").count() == 1
        screenshot(page, f"big-screen-end-{size[0]}x{size[1]}")
        # the podium stays until the next game starts
        dash.publish_alert("a-9", rule="G4", message="Late alert", instruction="Do it.")
        page.wait_for_selector("#alerts .alert[data-alert='a-9']")
        assert page.is_visible("#podium")
        dash.publish_game(new_game(players=2, seed=9), game_id="g2")
        page.wait_for_selector("#podium", state="hidden")
    finally:
        context.close()


# Each element's box against the viewport and against every ancestor that clips.
UNCLIPPED = """(sel) => [...document.querySelectorAll(sel)].map((el) => {
  const r = el.getBoundingClientRect();
  const out = (q) => r.top < q.top - 0.5 || r.bottom > q.bottom + 0.5
    || r.left < q.left - 0.5 || r.right > q.right + 0.5;
  const clips = [];
  if (r.height <= 0 || out({top: 0, left: 0, bottom: innerHeight, right: innerWidth})) {
    clips.push('viewport');
  }
  for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
    const cs = getComputedStyle(a);
    const clipping = cs.overflowX !== 'visible' || cs.overflowY !== 'visible';
    if (clipping && out(a.getBoundingClientRect())) {
      clips.push(`${a.tagName}#${a.id}.${a.className}`);
    }
  }
  return [el.textContent, clips];
})"""

UNDO_STEPS = [
    "Lift Egg 4 (orange) from row 2, column 5 and put it back on top of the draw pile.",
    "Put Wax doll 4 (yellow) back on row 2, column 5.",
    "Take Wax doll 4 (yellow) from under the draw pile and put it back on top of Seat 1's "
    "cauldron.",
    "Take Maggot juice 3 (blue) from under the draw pile and put it back on top of Seat 3's "
    "cauldron.",
]


def publish_undo_notice(dash: Dash) -> None:
    """The engine's notice after an undo of a Vanesco take and its refill: four steps."""
    steps = [{"n": n, "text": text, "done": n == 1, "seen": n <= 2}
             for n, text in enumerate(UNDO_STEPS, 1)]
    dash.publisher.publish(dash.topics.game_alert, GameAlert(
        alert_id="undo-1", rule="G4", kind="notice", severity="info",
        message="Undone: the card taken from row 2, column 5; the refill with Egg 4 (orange).",
        instruction=" ".join(f"{s['n']}. {'✓ ' if s['done'] else ''}{s['text']}" for s in steps),
        params={"steps": steps}, game_id="g1", ts=time.time()))


@pytest.mark.parametrize("size", BIG, ids=lambda s: f"{s[0]}x{s[1]}")
def test_big_screen_shows_every_undo_step(lan_dash: Dash, browser: Any,
                                          size: tuple[int, int]) -> None:
    """HANDTEST M1: after an undo every step of the newest alert can be read on the big
    screen (older alerts folded under a count), and the screen still does not scroll."""
    dash = lan_dash
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(8000)
    try:
        dash.publish_game(play(new_game(players=4, seed=3), 9))
        page.goto(dash.url + "/?lang=fr")  # French: the longest words around the steps
        page.wait_for_selector("#join figure.qr img")
        alerts(dash, 2)
        page.wait_for_selector("#alerts .alert[data-alert='a-1']")
        publish_undo_notice(dash)
        page.wait_for_selector("#alerts > .alert[data-alert='undo-1'] .steps li")
        steps = page.evaluate(UNCLIPPED, "#alerts > .alert[data-alert='undo-1'] .steps li")
        assert [text.removeprefix("✓ ") for text, _ in steps] == [
            s.replace("Seat 1", "Place 1 (jaune ☀)").replace("Seat 3", "Place 3 (vert ♣)")
            for s in UNDO_STEPS], steps
        for text, clips in steps:
            assert not clips, f"{size}: {text!r} is cut off by {clips}"
        message = page.evaluate(UNCLIPPED, "#alerts > .alert[data-alert='undo-1'] .msg")
        assert message and not message[0][1], message
        assert "2" in page.inner_text("#alerts .more-alerts summary")  # the others folded
        m = measure(page)
        assert_fits(m, size)
        assert m["seats"][0] == 4, m
        screenshot(page, f"big-screen-undo-steps-{size[0]}x{size[1]}")
        # the steps gone, the join codes are back
        dash.publisher.publish(dash.topics.game_alert, GameAlert(
            alert_id="undo-1", rule="G4", kind="notice", severity="info", message="x",
            instruction="", active=False, game_id="g1", ts=time.time()))
        page.wait_for_selector("#alerts .steps", state="detached")
        page.wait_for_selector("#join figure.qr img", state="visible")
    finally:
        context.close()


def test_join_codes_only_where_phones_can_open_them(dash: Dash, lan_dash: Dash,
                                                    page: Any) -> None:
    """HANDTEST M3: on a dashboard phones cannot reach (127.0.0.1, the default) the table
    view says how to let them in instead of showing codes that open the phone itself."""
    game = play(new_game(players=3, seed=4), 3)
    dash.publish_game(game)  # both follow the same table
    page.goto(dash.url + "/?lang=en")
    page.wait_for_selector("#join .no-phones")
    # what the audience can do, never a command-line option (issue 18 item 1)
    assert page.inner_text("#join") == "Phones can't join this table yet: ask the host."
    assert page.locator("#join figure.qr").count() == 0
    page.goto(dash.url + "/?lang=fr")
    page.wait_for_selector("#join .no-phones")
    assert "--host" not in page.inner_text("#join .no-phones")
    assert "téléphones" in page.inner_text("#join .no-phones")

    page.goto(lan_dash.url + "/?lang=en")
    page.wait_for_selector("#join figure.qr img")
    assert page.locator("#join figure.qr img").count() == 3
    assert page.locator("#join .no-phones").count() == 0
    assert "Join with your phone" in page.inner_text("#join")
    link = lan_dash.bridge.join_info(0, lan_dash.url)
    assert link is not None and link.url.startswith(LAN_URL + "join/0?token=")


PAGES = ["/", "/virtual", "/scores", "/host"]


@pytest.mark.parametrize("path", [*PAGES, "seat"])
def test_no_page_scrolls_sideways_at_360px(dash: Dash, browser: Any, path: str) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740}, locale="de-DE")
    page = context.new_page()
    page.set_default_timeout(8000)
    try:
        game = play(new_game(players=4, seed=3, memory_aid=True), 30)
        dash.publish_game(game)
        for seat in range(4):
            dash.publish_seat(game, seat)
        alerts(dash, 2)
        wait_until(lambda: len(dash.bridge.alerts) == 2 and dash.bridge.game_id == "g1", 5,
                   "the game and alerts")
        if path == "seat":
            join_in_browser(page, dash.url, dash.bridge, game.seat, "de")
            page.wait_for_selector("#seat-board .cell")
            page.wait_for_selector("#seat-alerts .alert")
        else:
            page.goto(f"{dash.url}{path}?lang=de")
            if path == "/host":
                page.fill("#pin", dash.settings.pin)
                page.click("#login-form button[type=submit]")
                page.wait_for_selector("#links figure.qr")
            elif path != "/scores":
                page.wait_for_selector("#board .cell .card")
            else:
                page.wait_for_selector("#scores [data-running]")
        over = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert over <= 0, (f"{path} scrolls sideways by {over} px at 360 px: "
                           f"{page.evaluate(TOO_WIDE)}")
        screenshot(page, f"phone-360-{path.strip('/') or 'table'}")
    finally:
        context.close()


PLURALS = {
    # language: cards_n for 0, 1, 2 (French counts 0 as singular)
    "fr": ["0 carte", "1 carte", "2 cartes"],
    "en": ["0 cards", "1 card", "2 cards"],
    "de": ["0 Karten", "1 Karte", "2 Karten"],
}


@pytest.mark.parametrize("lang", sorted(PLURALS))
def test_plurals_and_no_untranslated_key(dash: Dash, page: Any, lang: str) -> None:
    import json
    from pathlib import Path

    game = play(new_game(players=3, seed=2), 12)
    dash.publish_game(game)
    page.goto(f"{dash.url}/?lang={lang}")
    page.wait_for_selector("#board .cell .card")
    forms = page.evaluate("async () => { const m = await import('/static/core.js');"
                          " return [0, 1, 2].map((n) => m.tn('cards_n', n)); }")
    assert forms == PLURALS[lang]
    uses = page.evaluate("async () => { const m = await import('/static/core.js');"
                         " return [0, 1, 2].map((n) => m.usesText(n)); }")
    assert uses[1] != uses[2] and uses[0] != uses[1]
    keys = json.loads((Path(__file__).resolve().parents[2] / "dashboard" / "i18n" /
                       f"{lang}.json").read_text("utf-8"))
    names = {k.partition("#")[0] for k in keys}
    for path in PAGES:
        page.goto(f"{dash.url}{path}?lang={lang}")
        page.wait_for_load_state("networkidle")
        text = page.inner_text("body")
        shown = {w for w in names if "_" in w and w in text}
        assert not shown, f"{path} shows raw keys {shown}"
        assert "(to be named)" not in text and "(à nommer)" not in text


def test_deal_guidance_for_2_players_on_the_table_view(dash: Dash, engine_service: Any,
                                                        browser: Any) -> None:
    """The table view while a 2-player game is dealt: the removed colour's 8 cards named,
    how many cells are read, the missing ones, and what happens next (issue 12)."""
    import httpx
    from dashkit import PIN

    from engine.games.glastonbury.rules.cards import CARDS

    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    page.set_default_timeout(8000)
    try:
        page.goto(dash.url + "/?lang=en")
        started = httpx.post(f"{dash.url}/api/host/new_game", headers={"X-Host-Pin": PIN},
                             timeout=15, json={"colours": ["blue", "red"], "first_seat": 1,
                                               "deal": "table", "removed_colour": "yellow"})
        assert started.status_code == 200, started.text
        page.wait_for_selector("#turn .set-aside[data-set-aside='yellow']")
        cards = page.eval_on_selector_all("#turn .set-aside .card",
                                          "els => els.map((e) => e.dataset.card)")
        assert len(cards) == 8 and all(CARDS[c].colour == "yellow" for c in cards)
        text = page.inner_text("#turn")
        assert "set aside the 8 cards of yellow" in text
        assert "Sulphur scent" in text and "Wax doll" in text  # the cards are named
        assert "0 of 32 cells read." in text
        assert "32 cells still empty." in text
        assert "Seat 2 (red ♥) plays first." in text
        assert page.get_attribute("#turn .deal-next", "data-next") == "set_aside"
        m = measure(page)
        assert m["scrollY"] <= 0 and m["cells"] == [36, 36]
        screenshot(page, "big-screen-deal-2-players")
    finally:
        context.close()


def recipe_game() -> Any:
    """A 3-player recipe game (G11) that ended by emptying column 3, whose last card Seat 2
    took while Seat 1 holds "Take the last card"."""
    from engine.games.glastonbury.rules.game import Game, GameConfig

    game = Game.new(GameConfig(colours=("yellow", "red", "green"), recipes=True),
                    random.Random(1))
    play(game, 10_000, random.Random(1))
    assert (game.end_reason, game.last_card_seat, game.last_card[2]) == ("line_emptied", 1, 8)
    return game


def test_scores_page_words_recipe_reasons_in_french(dash: Dash, page: Any) -> None:
    game = recipe_game()
    dash.publish_game(game)
    page.goto(f"{dash.url}/scores?lang=fr")
    page.wait_for_selector("#scores .score-seat[data-seat='0']")
    seat1 = page.inner_text("#scores .score-seat[data-seat='0']")
    text = page.inner_text("#scores")
    # Named 1-based with the colour, in French; nothing left in English.
    # French puts a no-break space before a colon
    assert "Recette B\u00a0: Prendre la dernière carte" in seat1, seat1
    assert "Place 2 (rouge ♥) a pris la dernière carte" in seat1, seat1
    assert "égalité pour le plus de cartes de couleur violet" in seat1, seat1
    assert "Recette A\u00a0: " in seat1 and "Recettes" not in text, text
    for english in ("took the last card", "not the", "most ", "fewest", "seat 0", " vs "):
        assert english not in text, (english, text)
    assert "Place 2 (rouge ♥) a pris la dernière carte de la colonne 3" in text, text
    assert "Immuto (Métamorphose)" not in text, text
    screenshot(page, "scores-recipes-fr")

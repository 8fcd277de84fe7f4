"""Quacks end to end in the demo (issues 22 and 23): the whole stack in-process (broker,
simulated hub, engine service, dashboard, the demo's Quacks bots), in a real Chromium. The
big screen follows a whole bot game (mid-round with every pot's odds, in one 1920x1080
screen, then the winners) and nothing hidden reaches the public view; a phone takes a seat
through its join link and plays a whole round with its buttons, the shop included, while
the bots play the other seats. Screenshots: artifacts/screenshots/ (QUACKS_SHOTS: a copy)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import screenshot, wait_until
from hidden import keys_of
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from engine.app.demo.stack import DemoOptions, DemoStack

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

PIN = "246813"
SHOTS = os.environ.get("QUACKS_SHOTS")  # e.g. /work/wt/shots: keep a copy there
# What a public view never holds: a bag (its contents), a hand, a seat's legal moves, the
# fortune deck, the random state.
SECRET_KEYS = frozenset({"bag", "hand", "deck", "rng", "options", "start_deck"})
FITS = "[document.documentElement.scrollHeight <= innerHeight, " \
       "document.documentElement.scrollWidth <= innerWidth]"  # fmt: skip


def shot(page: Any, name: str) -> None:
    path = screenshot(page, name)
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(SHOTS) / path.name)


def quacks_demo(tmp_path: Path, players: int, pace: float, games: int | None) -> DemoStack:
    return DemoStack(DemoOptions(port=0, pace=pace, players=players, seed=7, linger=60,
                                 pin=PIN, game="quacks", bot="push", games=games,
                                 options={"players": players}, data_dir=tmp_path / "demo"),
                     say=lambda _: None)


@pytest.fixture
def bot_game(tmp_path: Path) -> Iterator[DemoStack]:
    stack = quacks_demo(tmp_path, players=4, pace=0.05, games=1)
    try:
        yield stack.start()
    finally:
        stack.stop()


@pytest.mark.timeout(300)
def test_a_whole_quacks_bot_game_on_the_big_screen(bot_game: DemoStack, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    page.set_default_timeout(120000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(bot_game.url + "?lang=en")
        # Mid-round: round 2 or later, brewing, a pot at risk (its odds of exploding shown).
        page.wait_for_function(
            "() => { const p = document.querySelector('.q-phase');"
            " return p && p.dataset.phase === 'brew' && document.querySelector('.q-dots i.done')"
            " && document.querySelectorAll('.q-odds:not(.safe)').length >= 1; }")
        shot(page, "quacks-table-1920-mid-round")
        assert page.evaluate(FITS) == [True, True], "the big screen scrolls"
        assert page.locator(".q-seat").count() == 4
        odds = page.eval_on_selector_all(".q-odds", "els => els.map(e => e.textContent)")
        assert odds and all(text.strip() for text in odds)
        public = httpx.get(bot_game.url + "api/table").json()
        assert public["table_game"] == "quacks" and public["game"]["game"] == "quacks"
        assert not keys_of(public["game"]["view"]) & SECRET_KEYS, "hidden state in public"
        # The whole game: the winners on the screen, the demo done.
        wait_until(lambda: bot_game.driver.finished.is_set(), 240, "the bots' game to end")
        page.wait_for_selector(".q-over")
        shot(page, "quacks-table-1920-over")
        winners = bot_game.driver.results[0]["winners"]
        assert winners and all(f"{w + 1}" in page.inner_text(".q-over") for w in winners)
        assert errors == [], errors
    finally:
        context.close()


@pytest.fixture
def phone_table(tmp_path: Path) -> Iterator[DemoStack]:
    stack = quacks_demo(tmp_path, players=3, pace=0.05, games=None)
    try:
        yield stack.start()
    finally:
        stack.stop()


def seat_view(page: Any) -> str:
    """What the phone was last told (its seat view), as text to compare."""
    return str(page.evaluate("JSON.stringify((window.__seat || {}).seat_view || null)"))


@pytest.mark.timeout(300)
def test_a_phone_plays_a_round_through_its_join_link(phone_table: DemoStack,
                                                     browser: Any) -> None:
    http = httpx.Client(base_url=phone_table.url, headers={"X-Host-Pin": PIN}, timeout=10)
    wait_until(lambda: (http.get("/api/table").json().get("game") or {}).get("game")
               == "quacks", 60, "the demo's Quacks game to start")
    link = http.get("/api/seats/0/join").json()["url"]
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="fr-FR",
                                  is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(60000)  # (a loaded machine: each wait is for a condition)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(link)
        page.wait_for_url("**/seat/0")
        page.wait_for_selector(".q-phone")
        wait_until(lambda: http.get("/api/table").json()["joined"][0], 10,
                   "the seat to count as joined (the bots leave it)")
        seen_shop = False

        def round_of_seat() -> int:
            view = http.get("/api/table").json()["game"]["view"]
            return len(view["seats"][0].get("history") or [])

        for _ in range(300):
            if round_of_seat() >= 1 and seen_shop:
                break
            if page.locator("button.q-act").count() == 0:
                before = seat_view(page)
                page.wait_for_function("(b) => JSON.stringify((window.__seat || {}).seat_view"
                                       " || null) !== b", arg=before)
                continue
            before = seat_view(page)

            def tap(selector: str) -> bool:
                """Tap a button the phone shows now; False when the page changed first (the
                other seats' moves redraw it: the button may be gone)."""
                try:
                    page.locator(selector).first.click(timeout=3000)
                except PlaywrightTimeout:
                    return False
                return True

            pot = (json.loads(before) or {"seats": [{"pot": []}]})["seats"][0]["pot"]
            if page.locator(".q-afford").count():  # the shop: tick what fits, then buy
                boxes = page.locator(".q-afford input:not([disabled])")
                if boxes.count():
                    try:
                        boxes.first.check(timeout=3000)
                    except PlaywrightTimeout:
                        continue
                if not seen_shop:
                    shot(page, "quacks-phone-390-shop")
                seen_shop = True
                tapped = tap('button[data-verb="buy"]')
            elif page.locator('button[data-verb="draw"]').count() and len(pot) < 4:
                tapped = tap('button[data-verb="draw"]')
            elif page.locator('button[data-verb="stop"]').count():
                tapped = tap('button[data-verb="stop"]')
            else:
                tapped = tap("button.q-act")
            if tapped:
                page.wait_for_function("(b) => JSON.stringify((window.__seat || {}).seat_view"
                                       " || null) !== b", arg=before)
        assert seen_shop, "the phone never reached the shop"
        assert round_of_seat() >= 1, "seat 1 did not finish a round"
        widths = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert widths[0] <= widths[1], "the phone scrolls sideways"
        assert errors == [], errors
    finally:
        context.close()
        http.close()

"""Quacks' page fragments in a real Chromium (issue 23), served by `pagekit`'s small shell
around a real `QuacksTable`: the big screen mid-round at 1920x1080 (every seat's exact odds
as the engine counts them, nothing scrolls; the memory-aid switch hides the odds), a phone
that plays a whole round with its buttons (draw, stop, the die, buying with what the coins
afford, rubies), a phone on a table with pads (the untapped draw, undo my last draw, a
refusal in words), and the printable breakdown after a whole game."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from pagekit import Server, bot_step, make_app, wait_until

from engine.games.quacks.rules import QuacksConfig
from engine.games.quacks.rules.observer import public_view
from engine.games.quacks.table import QuacksTable

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("QUACKS_SHOTS")  # e.g. /work/wt/shots: keep the screenshots there
FITS = "[document.documentElement.scrollHeight <= innerHeight, " \
       "document.documentElement.scrollWidth <= innerWidth]"  # fmt: skip


def click(table: QuacksTable, button: Any) -> None:
    """Click a phone button and wait until the table took the action."""
    before = len(table.game.log)
    button.click()
    wait_until(lambda: len(table.game.log) > before, 5, "the table to take the action")


def served(table: QuacksTable, virtual: bool = True) -> Iterator[Server]:
    server = Server(make_app(table, virtual)).start()
    try:
        yield server
    finally:
        server.stop()


def shot(page: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    page.screenshot(path=str(path))
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(SHOTS) / name)


def mid_round(seed: int = 5, show_odds: bool = True) -> QuacksTable:
    """Round 3 of a 4-player game, brewing, every pot holding chips, nobody stopped."""
    table = QuacksTable(QuacksConfig(players=4), random.Random(seed), show_odds=show_odds)
    rng = random.Random(seed)
    while table.game.round < 3:
        assert bot_step(table, {0, 1, 2, 3}, rng, push=0.75)
    while table.game.phase.value != "brew":
        assert bot_step(table, {0, 1, 2, 3}, rng)
    for seat in range(4):  # draw until the pot is at risk (white sum 4+), at most 6 chips
        for _ in range(6):
            p = table.game.players[seat]
            if p.status != "brewing" or table.game.white_sum(seat) >= 4:
                break
            assert table.play(seat, "draw").ok
            while p.question is not None or p.to_draw:
                bot_step(table, {seat}, rng)
    return table


def test_the_big_screen_mid_round_shows_each_pots_exact_odds_in_one_screen(
    browser: Any, tmp_path: Path
) -> None:
    table = mid_round()
    brewing = [s for s, p in enumerate(table.game.players) if p.status == "brewing"]
    assert brewing, "nobody brewing: pick another seed"
    for server in served(table):
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(f"{server.url}/table?lang=en")
        page.wait_for_selector(".q-seat")
        for seat, p in enumerate(table.game.players):
            chance = table.game.explosion_chance(seat)
            odds = page.locator(f'.q-seat[data-seat="{seat}"] .q-odds')
            if p.status != "brewing":
                assert odds.count() == 0
                continue
            if chance == 0:
                assert odds.get_attribute("data-num") == "0"
                continue
            assert (
                Fraction(int(odds.get_attribute("data-num")), int(odds.get_attribute("data-den")))
                == chance
            )
            assert f"{chance.numerator} in {chance.denominator}" in odds.inner_text()
            white = page.locator(f'.q-seat[data-seat="{seat}"] .q-whites').inner_text()
            assert f"{table.game.white_sum(seat)} of {table.game.limit(seat)}" in white
            chips = page.locator(f'.q-seat[data-seat="{seat}"] .q-pot .q-chip').count()
            assert chips == len(p.pot)
        assert page.locator(".q-head").inner_text().count("Round 3 of 9") == 1
        fits = page.evaluate(FITS)
        assert fits == [True, True]
        shot(page, tmp_path, "quacks-table-1920x1080-mid-round.png")
        page.set_viewport_size({"width": 1280, "height": 720})
        page.evaluate("window.__refresh()")
        fits = page.evaluate(FITS)
        assert fits == [True, True]
        page.close()


MARKERS = """() => {
  const track = document.querySelector(".q-line-track").getBoundingClientRect();
  return [...document.querySelectorAll(".q-marker")].map((m) => {
    const r = m.getBoundingClientRect();
    return [r.left, r.right, r.top, r.bottom, track.left, track.right];
  });
}"""


def test_the_scoring_tracks_markers_never_hide_each_other(browser: Any, tmp_path: Path) -> None:
    """Every seat's marker stands clear of the others, at the start (all at 0), when seats
    are a point apart, at the track's far end and after a lap; none leaves the track."""
    table = mid_round()
    for server in served(table):
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(f"{server.url}/table?lang=en")
        page.wait_for_selector(".q-marker")
        for vps in ([0, 0, 0, 0], [10, 11, 10, 12], [48, 49, 50, 49], [3, 30, 31, 53]):
            for p, vp in zip(table.game.players, vps, strict=True):
                p.vp = vp
            page.evaluate("window.__refresh()")
            top = f"{max(vps)} VP"
            page.wait_for_function(
                "top => document.querySelector('.q-ranking strong').textContent === top", arg=top)
            boxes = page.evaluate(MARKERS)
            assert len(boxes) == 4
            for n, (left, right, top, bottom, start, end) in enumerate(boxes):
                assert start - 1 <= left and right <= end + 1, (vps, n, "off the track")
                for left2, right2, top2, bottom2, *_ in boxes[n + 1:]:
                    apart = right <= left2 + 0.5 or right2 <= left + 0.5 \
                        or bottom <= top2 + 0.5 or bottom2 <= top + 0.5
                    assert apart, (vps, n, "markers overlap")
            page.locator(".q-track").screenshot(
                path=str(tmp_path / f"quacks-track-{'-'.join(map(str, vps))}.png"))
        page.close()


def test_the_memory_aid_switch_hides_the_odds_on_the_wire_and_on_screen(browser: Any) -> None:
    table = mid_round(show_odds=False)
    assert all("explosion_chance" not in s for s in table.public_view()["seats"])
    for server in served(table):
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(f"{server.url}/table?lang=de")
        page.wait_for_selector(".q-seat")
        assert page.locator(".q-odds").count() == 0
        assert "Knallerbsen" in page.locator(".q-seat").first.inner_text()
        page.close()


def test_a_phone_plays_a_whole_round_with_its_buttons(browser: Any, tmp_path: Path) -> None:
    table = QuacksTable(QuacksConfig(players=3), random.Random(11))
    others = {1, 2}
    rng = random.Random(3)
    for server in served(table):
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(f"{server.url}/seat/0?lang=fr")
        page.wait_for_selector(".q-phone")
        seen_shop = False
        for _ in range(400):
            if table.game.round == 2:
                break
            while bot_step(table, others, rng):
                pass
            page.evaluate("window.__refresh()")
            buttons = page.locator("button.q-act")
            if buttons.count() == 0:
                continue
            if page.locator(".q-afford").count():  # the shop: tick what fits, then buy
                boxes = page.locator(".q-afford input:not([disabled])")
                buy = page.locator('button[data-verb="buy"]')
                if boxes.count():
                    boxes.first.check()
                    buy.filter(has_text="Acheter").wait_for()  # "Acheter citrouille 1"
                if not seen_shop:
                    shot(page, tmp_path, "quacks-phone-390-shop.png")
                seen_shop = True
                click(table, buy)
                continue
            draw = page.locator('button[data-verb="draw"]')
            if draw.count() and len(table.game.players[0].pot) < 4:
                click(table, draw)
                continue
            stop = page.locator('button[data-verb="stop"]')
            click(table, stop if stop.count() else buttons.first)
        assert table.game.round == 2, table.game.phase
        assert seen_shop
        assert table.game.players[0].history[0]["space"] >= 1
        page.close()


def test_a_phone_at_a_table_with_pads_repairs_an_untapped_draw_and_undoes_it(browser: Any) -> None:
    table = QuacksTable(QuacksConfig(players=2), random.Random(2))
    for server in served(table, virtual=False):
        page = browser.new_page(viewport={"width": 360, "height": 740})
        page.goto(f"{server.url}/seat/1?lang=en")
        page.wait_for_selector(".q-tap")
        page.locator(".q-untapped summary").click()
        page.locator('.q-untapped button[data-args*="orange-1"]').click()
        wait_until(lambda: len(table.game.players[1].pot) == 1, 5, "the untapped chip placed")
        assert table.game.players[1].pot[0][0].startswith("orange-1")
        page.locator('button[data-verb="undo_draw"]').click()
        wait_until(lambda: not table.game.players[1].pot, 5, "the draw undone")
        page.evaluate("window.__refresh()")
        assert page.locator('button[data-verb="undo_draw"]').count() == 0
        widths = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert widths[0] <= widths[1]
        page.close()


def test_the_printable_breakdown_after_a_whole_game(browser: Any, tmp_path: Path) -> None:
    table = QuacksTable(QuacksConfig(players=3), random.Random(8))
    rng = random.Random(8)
    while bot_step(table, {0, 1, 2}, rng, push=0.7):
        pass
    assert table.game.is_over()
    view = public_view(table.game)
    for server in served(table):
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"{server.url}/scores?lang=fr")
        page.wait_for_selector(".q-breakdown")
        assert page.locator(".q-breakdown").count() == 3
        assert page.locator(".q-breakdown tbody tr[data-round]").count() == 27
        result = page.locator(".q-result").inner_text()
        for seat in view["winners"]:
            assert f"Place {seat + 1}" in result
        best = max(p.vp for p in table.game.players)
        assert f"{best} PV" in page.locator(".q-breakdown caption").first.inner_text()
        shot(page, tmp_path, "quacks-breakdown.png")
        page.close()


def test_the_big_screen_follows_a_whole_bot_game_to_its_winners(browser: Any) -> None:
    """Three push/greedy/random bots (seeing only their seat views) play a whole game; the
    big screen is redrawn after every round and ends naming the winners (Q25)."""
    from engine.games import get

    quacks = get("quacks")
    table = QuacksTable(QuacksConfig(players=3), random.Random(21))
    bots = [quacks.bot("push"), quacks.bot("greedy"), quacks.bot("random")]
    rngs = [random.Random(s) for s in range(3)]
    for server in served(table):
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(f"{server.url}/table?lang=fr")
        page.wait_for_selector(".q-seat")
        shown = 0
        while not table.game.is_over():
            seat = table.game.actors()[0]
            legal = table.game.legal_actions(seat)
            action = bots[seat].choose(table.seat_view(seat), legal, rngs[seat])  # type: ignore[attr-defined]
            assert table.apply_wire(quacks.action_to_wire(action)).ok
            if table.game.round > shown:
                shown = table.game.round
                page.evaluate("window.__refresh()")
                assert f"Manche {shown} sur 9" in page.locator(".q-head").inner_text()
        page.evaluate("window.__refresh()")
        assert page.locator(".q-phase").get_attribute("data-phase") == "over"
        assert "partie terminée" in page.locator(".q-phase").inner_text().lower()
        for seat in table.game.winners:
            assert f"Place {seat + 1}" in page.locator(".q-over").inner_text()
        assert page.evaluate(FITS) == [True, True]
        page.close()

"""The virtual table (`/virtual`) and the host page (`/host`) at an event (issue 18): with 4
seats each fits a 1920x1080 screen without a vertical scroll, the pawns are at least half a
cell wide, and each seat's join QR code has modules of at least QR_MODULE_PX screen pixels.

The QR rule: a 55" 1080p screen has ~0.63 mm per pixel; a phone ~1.5 m away reads a code
reliably with modules of >= ~2 mm, so >= 4 px per module (2.5 mm). Against the real engine
service, a `cauldron hub --backend sim` subprocess and Chromium."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import PIN, Stack, screenshot, wait_until

pytestmark = pytest.mark.browser
HOST = {"X-Host-Pin": PIN}
QR_MODULE_PX = 4
SHOTS = os.environ.get("CAULDRON_EVENT_SHOTS")  # also save the pages there (the lead's note)

# The page's vertical overflow, its pawns against a cell, and each QR code's module size
# (the code's drawn width over its modules, counted from the SVG's viewBox: 1 unit each
# module at box size 10 is 1 mm in qrcode's SVG, so modules = viewBox width).
MEASURE = """() => {
  const doc = document.documentElement;
  const cell = document.querySelector('#board .cell:not(.corner)');
  const pawns = [...document.querySelectorAll('#board .pawn')]
    .map((p) => p.getBoundingClientRect().width);
  const qrs = [...document.querySelectorAll('.qr .qr-img svg, .qr img')].map((el) => {
    const svg = el.tagName.toLowerCase() === 'svg' ? el : null;
    const r = el.getBoundingClientRect();
    const vb = svg ? svg.viewBox.baseVal : null;
    const pad = parseFloat(getComputedStyle(el).paddingLeft) || 0;
    return { width: r.width - 2 * pad, units: vb ? vb.width : null };
  });
  return { scrollY: doc.scrollHeight - window.innerHeight,
           scrollX: doc.scrollWidth - window.innerWidth, height: doc.scrollHeight,
           cell: cell ? cell.getBoundingClientRect().width : 0, pawns, qrs };
}"""


def view(stack: Stack) -> dict[str, Any]:
    state = stack.dash.bridge.table_state().model_dump(mode="json", by_alias=True)
    game = state["game"]
    return game["view"] if game else {}


def start_four_seats(stack: Stack) -> str:
    url = stack.dash.url
    reply = httpx.post(f"{url}/api/host/new_game", headers=HOST, timeout=30,
                       json={"colours": ["yellow", "red", "green", "blue"], "deal": "virtual",
                             "seed": 7})
    assert reply.status_code == 200, reply.text
    wait_until(lambda: (view(stack).get("table") or {}).get("status") == "playing", 15,
               "the game to start")
    return url


def shoot(page: Any, name: str) -> None:
    screenshot(page, name)
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


def test_virtual_and_host_fit_1080p_with_four_seats_big_pawns_and_scannable_codes(
        table_stack: Stack, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1920, "height": 1080}, locale="en-GB")
    context.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    page = context.new_page()
    page.set_default_timeout(8000)
    try:
        # Before any game: the host's New game form stands open, 4 seats chosen.
        page.goto(table_stack.dash.url + "/host?lang=de")
        page.wait_for_selector("#new-game-box[open] #start")
        m = page.evaluate(MEASURE)
        shoot(page, "host-new-game-1920x1080")
        assert m["scrollY"] <= 0, f"/host with its New game form scrolls down by {m['scrollY']} px"

        url = start_four_seats(table_stack)
        page.goto(url + "/virtual?lang=fr")  # French: the longest words
        page.wait_for_selector("#seats .seat[data-seat='3'] .pad")
        page.wait_for_selector("#board .pawn")
        m = page.evaluate(MEASURE)
        print("virtual", m)
        shoot(page, "virtual-1920x1080")
        assert m["scrollY"] <= 0, f"/virtual scrolls down by {m['scrollY']} px"
        assert m["scrollX"] <= 0, f"/virtual scrolls sideways by {m['scrollX']} px"
        assert page.locator("#seats .seat").count() == 4
        assert m["pawns"] and min(m["pawns"]) >= 0.5 * m["cell"], (m["pawns"], m["cell"])

        page.goto(url + "/host?lang=fr")
        page.wait_for_selector("#links .qr .qr-img svg")
        wait_until(lambda: page.locator("#links .qr .qr-img svg").count() == 4, 10,
                   "the 4 join codes")
        m = page.evaluate(MEASURE)
        print("host", m)
        shoot(page, "host-1920x1080")
        assert m["scrollY"] <= 0, f"/host scrolls down by {m['scrollY']} px"
        assert m["scrollX"] <= 0, f"/host scrolls sideways by {m['scrollX']} px"
        for qr in m["qrs"]:
            modules = qr["units"]
            assert modules, qr
            assert qr["width"] / modules >= QR_MODULE_PX, (
                f"a join code's module is {qr['width'] / modules:.1f} px (< {QR_MODULE_PX})")
    finally:
        context.close()


# Each cell's label ("L1 C3") against the card's colour name and value in the same cell.
LABEL_OVERLAPS = """() => {
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
    && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const out = [];
  for (const cell of document.querySelectorAll('#board .cell')) {
    const coord = cell.querySelector('.coord');
    if (!coord) continue;
    const label = coord.getBoundingClientRect();
    for (const part of cell.querySelectorAll('.card .col, .card .val, .card .fam')) {
      if (part.textContent.trim() && hit(label, part.getBoundingClientRect()))
        out.push(`${coord.textContent}: ${part.className} ${part.textContent.trim()}`);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_cell_labels_never_cover_a_colour_name(table_stack: Stack, browser: Any,
                                              size: tuple[int, int]) -> None:
    url = start_four_seats(table_stack)
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(8000)
    try:
        for path in ("/virtual?lang=fr", "/?lang=de"):
            page.goto(url + path)
            page.wait_for_selector("#board .cell .card .col")
            assert page.evaluate(LABEL_OVERLAPS) == [], path
    finally:
        context.close()


def test_the_new_game_form_stays_in_its_column_on_a_laptop(table_stack: Stack,
                                                           browser: Any) -> None:
    """At 1280x900 the host page's left column is narrow: each field of the New game form
    lies inside it (side by side with its label, the fields ran into the seat links)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    context.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    page = context.new_page()
    try:
        page.goto(table_stack.dash.url + "/host?lang=en")
        page.wait_for_selector("#new-game select#players")
        out = page.evaluate("""() => {
          const box = document.getElementById('new-game-box').getBoundingClientRect();
          return [...document.querySelectorAll('#new-game select, #new-game input, #new-game .btn')]
            .filter((el) => el.getClientRects().length)
            .map((el) => [el.id || el.textContent.trim(),
                          el.getBoundingClientRect().right - box.right])
            .filter(([, over]) => over > 1);
        }""")
        assert not out, f"fields of the New game form run out of its column by (px): {out}"
    finally:
        context.close()

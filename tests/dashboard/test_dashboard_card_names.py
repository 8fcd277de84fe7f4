"""Card names never break inside a word (issue 18, item 7: "Pumpkin / s", "Cobwe bs"), in real
Chromium at 1920×1080, 1280×720 (the big screen) and 390×844 (a phone, its Perluceo and
spells): each piece of a name between spaces, hyphens and soft hyphens lies on one line, and
no name is cut off by its card."""

from __future__ import annotations

from typing import Any

import pytest
from dashkit import Dash, drive_engine, hold_seat_cookie, wait_until

pytestmark = pytest.mark.browser

BROKEN = """() => {
  const out = [];
  for (const fam of document.querySelectorAll(".card .fam")) {
    if (!fam.offsetParent) continue;  // not shown (the phone's small board hides names)
    const node = fam.firstChild;
    if (!node || node.nodeType !== 3) continue;
    const text = node.textContent;
    const re = /[^\\s\\u00ad-]+/g;
    let m;
    while ((m = re.exec(text))) {
      const lines = new Set();  // the line of each letter (a soft hyphen's glyph aside)
      for (let i = m.index; i < m.index + m[0].length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rects = [...range.getClientRects()].filter((x) => x.width > 0);
        const r = rects[rects.length - 1];  // the letter (not a hyphen drawn before it)
        if (r) lines.add(Math.round(r.top + r.height / 2));
      }
      if (lines.size > 1) out.push(`"${m[0]}" broken in "${text.replace(/\\u00ad/g, "")}"`);
    }
    const name = text.replace(/\\u00ad/g, "");
    if (fam.scrollWidth > fam.clientWidth + 1) out.push(`"${name}" cut off`);
  }
  return out;
}"""


def test_card_names_never_break_inside_a_word(dash: Dash, engine_service: Any, table_id: str,
                                              browser: Any) -> None:
    interp = drive_engine(engine_service, table_id, seed=7, until="take", players=4)
    wait_until(lambda: dash.bridge.game_id == interp.game_id, 20, "the dashboard's game")
    problems: list[str] = []
    for width, height in ((1920, 1080), (1280, 720), (390, 844)):
        for lang in ("en", "fr", "de"):
            context = browser.new_context(viewport={"width": width, "height": height})
            try:
                page = context.new_page()
                if width != 390:  # the big screen; a phone opens its seat's page
                    page.goto(f"{dash.url}/?lang={lang}")
                    page.wait_for_selector("#board .card .fam")
                    problems += [f"/ {width}x{height} {lang}: {p}"
                                 for p in page.evaluate(BROKEN)]
                else:
                    seat = interp.turn
                    secret = dash.bridge.secrets.secret(interp.game_id, seat)
                    hold_seat_cookie(page, dash.url, seat, secret)
                    page.goto(f"{dash.url}/seat/{seat}?lang={lang}")
                    page.wait_for_selector("#seat-board .cell")
                    problems += [f"phone {lang}: {p}" for p in page.evaluate(BROKEN)]
            finally:
                context.close()
    assert not problems, "\n".join(problems[:40])

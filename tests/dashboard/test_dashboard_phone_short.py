"""The phone is short and never sideways (issue 18, items 5, 6, 9), in real Chromium.

A scripted game (seed 30, 2 players: the reference game's decisions fed to the real engine as
the table's sensor events, so every situation is reached by construction) is followed by both
seats' phone pages at 360 px (German, the longest words) and 390 px (English). At every
moment of every turn — take, refill, Accio, Declinatio at a corner, a Vanesco tap, a Perluceo
reveal, keep/discard, waiting, game over — each page is measured: no sideways scroll, and the
action the seat must do is in the first screen. Then the host ends a game: no phone says
"Your turn".
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from dashkit import Dash, drive_engine, hold_seat_cookie, wait_until
from hub_events import hub_event

from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.table.table_driver import (
    deal_inputs,
    inputs_for,
    next_decision,
    refill_of,
)

pytestmark = pytest.mark.browser
SEED = 30  # reaches Perluceo, a Vanesco, Declinatio at a corner and Accio in 15 decisions
PHONES = [(360, 740, "de"), (390, 844, "en")]
SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
MEASURE = """() => {
  const a = document.getElementById("seat-action");
  const r = a.hidden ? null : a.getBoundingClientRect();
  const reveal = document.getElementById("reveal");
  return {sw: document.documentElement.scrollWidth, sh: document.documentElement.scrollHeight,
          w: innerWidth, h: innerHeight, action: r ? r.bottom + scrollY : null,
          todo: document.body.dataset.todo || "", reveal: !reveal.hidden,
          pick: !!document.querySelector("#seat-action .pick-on-square"),
          yourTurn: !!document.querySelector(".your-turn")};
}"""


def open_seat(page: Any, dash: Dash, seat: int, lang: str) -> None:
    """The seat's page in a browser that holds the seat's cookie (as after /join)."""
    game_id = dash.bridge.game_id
    assert game_id is not None
    hold_seat_cookie(page, dash.url, seat, dash.bridge.secrets.secret(game_id, seat))
    page.goto(f"{dash.url}/seat/{seat}?lang={lang}")


def kind_of(interp: Any, seat: int) -> str:
    """What the seat's phone is showing now, in the issue's words."""
    prompt = interp.prompt()
    view = interp.public_view().to_wire()
    if view["over"]:
        return "game over"
    if prompt["seat"] != seat:
        return "waiting"
    ex = view.get("expected") or {}
    code = prompt["code"]
    if code in ("corner", "corner_blocked"):
        return "declinatio at a corner"
    if code == "vanesco_tap":
        return "vanesco"
    if code == "last_card":
        return "keep/discard"
    if code == "refill":
        return "refill"
    if code == "lay_on_pad":
        return "take"  # the card in hand: lay it on the pad
    return "accio" if ex.get("accio") else "take"


def test_the_phone_is_short_and_never_sideways_in_every_kind_of_turn(
        dash: Dash, engine_service: Any, table_id: str, browser: Any) -> None:
    rng = random.Random(SEED)
    colours = ("yellow", "red")
    ref = Game.new(GameConfig(colours=colours), rng)
    engine_service.command(table_id, "new_game", {"colours": list(colours)})
    seq = 0

    def feed(inp: Any) -> None:
        nonlocal seq
        seq += 1
        engine_service.receive(table_id, hub_event(inp, seq, hub_id="hub-phone-test"))

    for inp in deal_inputs(ref.deal.grid):
        feed(inp)
    interp = engine_service.tables[table_id].interp
    wait_until(lambda: dash.bridge.game_id == interp.game_id, 20, "the dashboard's game")
    contexts, pages = [], []
    for width, height, lang in PHONES:
        context = browser.new_context(viewport={"width": width, "height": height},
                                      locale=lang, has_touch=True, is_mobile=True)
        contexts.append(context)
        for seat in range(2):
            page = context.new_page()
            page.set_default_timeout(15000)
            open_seat(page, dash, seat, lang)
            pages.append((width, height, lang, seat, page))
    seen: dict[str, int] = {}
    tallest: tuple[int, str, Any] = (0, "", None)
    problems: list[str] = []
    last_key: Any = None
    shot = False
    SHOTS.mkdir(parents=True, exist_ok=True)

    def measure() -> None:
        nonlocal tallest, last_key, shot
        key = (interp.inputs, str(interp.prompt()), interp.public_view().to_wire()["over"])
        if key[1:] == last_key:
            return
        last_key = key[1:]
        inputs = str(interp.inputs)
        for width, height, lang, seat, page in pages:
            page.wait_for_function(f"document.body.dataset.inputs === '{inputs}'")
            m = page.evaluate(MEASURE)
            kind = kind_of(interp, seat)
            if m["reveal"]:
                kind = "perluceo" if kind == "waiting" else kind + " + perluceo"
            seen[kind] = seen.get(kind, 0) + 1
            where = f"{width} px {lang}, seat {seat + 1}, {kind}"
            if m["sw"] > width:  # a phone's layout viewport widens to what overflows
                problems.append(f"{where}: {m['sw']} px wide in {width}")
            if m["action"] is not None and m["action"] > height:
                problems.append(f"{where}: the action ends at {m['action']:.0f} px, below "
                                f"the first screen ({height} px)")
            if kind == "accio" and not m["pick"]:
                problems.append(f"{where}: Accio not picked on the square")
            if len(problems) == 1 and not shot:  # what the first problem looked like
                page.screenshot(path=str(SHOTS / "phone-problem.png"), full_page=True)
            shot = shot or bool(problems)
            if width == 390 and m["sh"] > tallest[0]:
                tallest = (m["sh"], where, page)
                page.screenshot(path=str(SHOTS / "phone-tallest-390x844.png"), full_page=True)
            if m["sh"] > 2.2 * height:
                problems.append(f"{where}: the page is {m['sh']} px tall")

    try:
        measure()
        while not ref.is_over():
            decision = next_decision(ref, rng)
            for inp in inputs_for(interp, decision, refill_of(ref, decision)):
                feed(inp)
                measure()
        measure()
        kinds = {k.split(" + ")[0] for k in seen} | {"perluceo" for k in seen if "perluceo" in k}
        assert {"take", "refill", "accio", "declinatio at a corner", "vanesco", "perluceo",
                "waiting", "game over"} <= kinds, seen
        assert not problems, "\n".join(problems[:30])
    finally:
        print(f"tallest at 390 px: {tallest[0]} px ({tallest[1]}); measured: {seen}")
        for context in contexts:
            context.close()


def test_after_the_host_ends_the_game_no_phone_says_your_turn(
        dash: Dash, engine_service: Any, table_id: str, browser: Any) -> None:
    interp = drive_engine(engine_service, table_id, seed=7, until="take")
    seat = interp.turn
    wait_until(lambda: dash.bridge.game_id == interp.game_id, 20, "the dashboard's game")
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en")
    try:
        phone = context.new_page()
        open_seat(phone, dash, seat, "en")
        phone.wait_for_selector("#seat-action:not([hidden])")
        engine_service.command(table_id, "end", {})
        phone.wait_for_function("document.getElementById('seat-msg').innerText.includes"
                                "('Game over')")
        assert phone.locator(".your-turn").count() == 0
        assert phone.locator("#seat-action").is_hidden()
    finally:
        context.close()

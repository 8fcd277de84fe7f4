"""What the phone and the table say, in the page's language (issue 18, smaller items), in real
Chromium:

- a pawn that does not move (an Immuto on top, G5) is said to stay, never "moves 0 steps" /
  "zieht 0 Felder" / "move your pawn to 8" (it stands there already);
- a tap on a card the phone does not offer says why (whose turn it is, the line to take
  from), where it was silent;
- a refusal of an HTML route (the virtual table's draw pile with no hole) in the page's
  language, never the server's English on a fr/de page;
- a seat's phone has one connection state on the big screen: a closed phone is "not
  connected" in the join panel too, never a stale "connected" tick beside the alert.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from dashkit import PIN, Dash, Stack, drive_engine, hold_seat_cookie, seat_auth, wait_until

pytestmark = pytest.mark.browser
HOST = {"X-Host-Pin": PIN}
LANGS = ("en", "fr", "de")
# Seed 1, 2 players: the 9th decision is a take with an Immuto on top (move value 0).
STAY_SEED = 1
STAYS = {"en": "stays", "fr": "reste", "de": "bleibt"}
ZERO = ("0 step", "0 case", "0 Feld", "to 0", "move your pawn to", "avancez votre pion",
        "ziehe deine Figur")


def stays(interp: Any) -> bool:
    """A take whose pawn does not move (move value 0) and faces a line."""
    view = interp.public_view()
    return bool(interp.prompt()["code"] == "take" and view.move_value == 0
                and view.expected.faced_line is not None)


def test_a_pawn_that_does_not_move_is_said_to_stay(dash: Dash, engine_service: Any,
                                                    table_id: str, browser: Any) -> None:
    interp = drive_engine(engine_service, table_id, seed=STAY_SEED, until=stays)
    seat = interp.turn
    inputs = str(interp.inputs)
    wait_until(lambda: dash.bridge.game_id == interp.game_id, 20, "the dashboard's game")
    context = browser.new_context(viewport={"width": 390, "height": 844})
    problems: list[str] = []
    try:
        phone, table = context.new_page(), context.new_page()
        hold_seat_cookie(phone, dash.url, seat, dash.bridge.secrets.secret(interp.game_id, seat))
        for lang in LANGS:
            phone.goto(f"{dash.url}/seat/{seat}?lang={lang}")
            phone.wait_for_function(f"document.body.dataset.inputs === '{inputs}'")
            table.goto(f"{dash.url}/?lang={lang}")
            table.wait_for_selector("#turn .prompt")
            said = {"phone": phone.inner_text("#seat-action .situation"),
                    "table turn": table.inner_text("#turn")}
            for where, text in said.items():
                if STAYS[lang] not in text:
                    problems.append(f"{lang} {where}: the pawn is not said to stay: {text!r}")
                if any(z in text for z in ZERO):
                    problems.append(f"{lang} {where}: a 0-step move: {text!r}")
    finally:
        context.close()
    assert not problems, "\n".join(problems)


def _start(client: httpx.Client) -> dict[str, Any]:
    reply = client.post("/api/host/new_game", json={"colours": ["yellow", "red"], "seed": 3,
                                                    "deal": "virtual"}, headers=HOST)
    assert reply.status_code == 200, reply.text
    return wait_until(lambda: (s := client.get("/api/table").json())["game"] and s["game"]
                      ["view"]["table"]["status"] == "playing" and s["game"]["view"]
                      ["expected"].get("take") and s, 20, "the game to start")


def test_a_tap_on_a_card_not_offered_says_why_in_the_pages_language(
        table_stack: Stack, browser: Any) -> None:
    dash = table_stack.dash
    with httpx.Client(base_url=dash.url, timeout=20) as client:
        state = _start(client)
    view = state["game"]["view"]
    turn = view["turn"]
    offered = set(view["expected"]["take"])
    lines = {r: [f"{r},{c}" for c in range(6)] for r in range(6)}
    cell = next(k for cells in lines.values() for k in cells
                if k not in offered and k not in ("0,0", "0,5", "5,0", "5,5"))
    game_id = state["game"]["game_id"]
    words = {  # (the seat to play, the other seat)
        "en": ("You cannot take this card: you take from", "Not your turn"),
        "fr": ("Vous ne pouvez pas prendre cette carte : vous prenez dans", "Pas votre tour"),
        "de": ("Diese Karte kannst du nicht nehmen: Du nimmst aus", "Nicht dein Zug"),
    }
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                                  is_mobile=True)
    try:
        page = context.new_page()
        for seat in (turn, 1 - turn):
            hold_seat_cookie(page, dash.url, seat, dash.bridge.secrets.secret(game_id, seat))
            for lang in LANGS:
                page.goto(f"{dash.url}/seat/{seat}?lang={lang}")
                page.wait_for_selector(f"#seat-board .cell[data-cell='{cell}']")
                assert page.locator(f"#seat-board [data-act='cell'][data-where='{cell}']"
                                    ).count() == 0, "the card is offered after all"
                page.locator(f"#seat-board .cell[data-cell='{cell}']").tap()
                expected = words[lang][0 if seat == turn else 1]
                page.wait_for_function("(w) => document.getElementById('board-msg')"
                                       ".textContent.includes(w)", arg=expected)
                assert page.locator("#board-msg").is_visible()
    finally:
        context.close()


def test_a_tap_while_a_lifted_card_waits_says_to_lay_it_first(
        table_stack: Stack, browser: Any) -> None:
    """A card already lifted (a seat taken over mid-gesture) goes on the pad first: a tap on
    another card says so, not "take from the line" (the hand test found it)."""
    dash = table_stack.dash
    with httpx.Client(base_url=dash.url, timeout=20) as client:
        state = _start(client)
        view = state["game"]["view"]
        seat, take = view["turn"], view["expected"]["take"][0]
        secret = dash.bridge.secrets.secret(state["game"]["game_id"], seat)
        lifted = client.post("/api/virtual/gesture", json={"action": "lift", "where": take},
                             params={"seat": seat}, headers=seat_auth(secret))
        assert lifted.status_code == 200, lifted.text
        wait_until(lambda: (client.get("/api/table").json()["game"]["view"]["table"]
                            ["prompt"] or {}).get("code") == "lay_on_pad", 30, "the lift seen")
    other = next(f"{r},{c}" for r in range(1, 5) for c in range(1, 5) if f"{r},{c}" != take)
    words = {"en": "First finish the card in hand", "fr": "Terminez d'abord la carte en main",
             "de": "Zuerst die Karte in der Hand"}
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                                  is_mobile=True)
    try:
        page = context.new_page()
        hold_seat_cookie(page, dash.url, seat, secret)
        for lang in LANGS:
            page.goto(f"{dash.url}/seat/{seat}?lang={lang}")
            page.wait_for_selector(f"#seat-board .cell[data-cell='{other}']")
            page.locator(f"#seat-board .cell[data-cell='{other}']").tap()
            page.wait_for_function("(w) => document.getElementById('board-msg')"
                                   ".textContent.includes(w)", arg=words[lang])
    finally:
        context.close()


def test_a_refusal_on_the_virtual_table_is_in_the_pages_language(
        table_stack: Stack, browser: Any) -> None:
    dash = table_stack.dash
    with httpx.Client(base_url=dash.url, timeout=20) as client:
        _start(client)
    words = {"en": "No hole waits for a card from the draw pile now",
             "fr": "Aucun trou n'attend de carte de la pioche maintenant",
             "de": "Gerade wartet keine Lücke auf eine Karte vom Nachziehstapel"}
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    context.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    try:
        page = context.new_page()
        for lang, said in words.items():
            page.goto(f"{dash.url}/virtual?lang={lang}")
            page.wait_for_selector("#draw-btn:not([disabled])")
            page.click("#draw-btn")
            page.wait_for_function("(w) => document.getElementById('play-msg').textContent"
                                   ".includes(w)", arg=said)
            text = page.inner_text("#play-msg")
            assert "the draw pile" not in text or lang == "en", text
    finally:
        context.close()


def test_a_closed_phone_is_not_connected_everywhere_on_the_big_screen(
        dash: Dash, engine_service: Any, table_id: str, browser: Any) -> None:
    interp = drive_engine(engine_service, table_id, seed=7, until="take")
    seat = interp.turn
    wait_until(lambda: dash.bridge.game_id == interp.game_id, 20, "the dashboard's game")
    screen = browser.new_context(viewport={"width": 1920, "height": 1080})
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        table = screen.new_page()
        table.goto(f"{dash.url}/?lang=de")
        page = phone.new_page()
        hold_seat_cookie(page, dash.url, seat, dash.bridge.secrets.secret(interp.game_id, seat))
        page.goto(f"{dash.url}/seat/{seat}?lang=de")
        figure = f"#join figure.qr.joined[data-seat='{seat}']"
        table.wait_for_selector(f"{figure}[data-connected='1']")
        assert "Handy verbunden" in table.inner_text(figure)
        table.wait_for_selector(f".phone-waiting[data-phone='{seat}'][data-connected='1']")
        page.close()  # the phone's page is gone
        table.wait_for_selector(f".phone-waiting[data-phone='{seat}'][data-connected='0']")
        table.wait_for_selector(f"{figure}[data-connected='0']")
        said = table.inner_text(figure)
        assert "nicht verbunden" in said and "✓" not in said, said
        assert "nicht verbunden" in table.inner_text("#alerts")
    finally:
        screen.close()
        phone.close()


def test_a_page_route_that_cannot_serve_says_so_in_the_pages_language(
        dash: Dash, engine_service: Any, table_id: str) -> None:
    """A phone scanning an old code for a seat this game lacks, or a wrong seat page, gets a
    page in its language (it got the API's English JSON)."""
    interp = drive_engine(engine_service, table_id, seed=7, until="take")  # 2 players
    wait_until(lambda: dash.bridge.game_id == interp.game_id and dash.bridge.seats() == 2, 20,
               "the dashboard's 2-seat game")
    said = {"en": "That place is not at this table.",
            "fr": "Cette place n'est pas à cette table.",
            "de": "Diesen Platz gibt es an diesem Tisch nicht."}
    with httpx.Client(base_url=dash.url, timeout=20) as client:
        for lang, words in said.items():
            for path in (f"/join/3?token=old&lang={lang}", f"/seat/7?lang={lang}"):
                page = client.get(path, headers={"Accept": "text/html"})
                assert page.status_code == 404, (path, page.status_code)
                assert page.headers["content-type"].startswith("text/html"), path
                assert words in page.text.replace("&#39;", "'"), (path, page.text[-600:])

"""The host page at an event (issue 18, smaller items), in real Chromium against the real
engine service and a `cauldron hub --backend sim`:

- while a game runs, the host page shows its set-up (players and colours, who begins, the
  recipes, +2 and memory-aid variants) in the page's language; none once it is over;
- New game while a game runs offers "End and start": one click ends the running game
  (uncounted) and starts the new one, and the message says both;
- the message stands long enough to be read though the table moves on meanwhile (it went
  after 3-4 s when a bot moved), and goes once the game moves on after that.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from dashkit import PIN, Stack, wait_until
from virtual_player import inputs, play_until

pytestmark = pytest.mark.browser
HOST = {"X-Host-Pin": PIN}
READ_MS = 15000  # host.js MSG_READ_MS: a message stands at least this long


def start_four(client: httpx.Client) -> None:
    reply = client.post("/api/host/new_game", headers=HOST, json={
        "colours": ["yellow", "red", "green", "blue"], "first_seat": 2, "seed": 11,
        "second_player_bonus": True, "memory_aid": True})
    assert reply.status_code == 200, reply.text
    wait_until(lambda: ((client.get("/api/table").json()["game"] or {}).get("view") or {})
               .get("table", {}).get("status") == "playing", 20, "the first game to start")


def moment(state: dict[str, Any]) -> tuple[Any, ...]:
    """Where the game stands (a change of it is the game moving on)."""
    view = state["game"]["view"]
    return (view["turn"], view["phase"], view["pile_size"])


def host_page(stack: Stack, browser: Any, lang: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    context.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    page = context.new_page()
    page.clock.install()  # time flows; a test may move it on (no fixed waits)
    page.set_default_timeout(20000)
    page.goto(f"{stack.dash.url}/host?lang={lang}")
    page.wait_for_selector("#host", state="visible")
    return context, page


OPTIONS = {  # (players, who begins, +2 on, memory aid on)
    "en": ("4 players: Seat 1 (yellow", "Seat 3 (green ♣) begins",
           "+2 for the second player: on", "Memory aid: on"),
    "fr": ("4 joueurs : Place 1 (jaune", "Place 3 (vert ♣) commence",
           "+2 pour le deuxième joueur : activée", "Aide-mémoire : activée"),
    "de": ("4 Spieler: Platz 1 (gelb", "Platz 3 (grün ♣) beginnt",
           "+2 für den zweiten Spieler: an", "Gedächtnisstütze: an"),
}


def test_the_host_page_shows_the_running_games_set_up(table_stack: Stack,
                                                      browser: Any) -> None:
    with httpx.Client(base_url=table_stack.dash.url, timeout=20) as client:
        start_four(client)
    for lang, words in OPTIONS.items():
        context, page = host_page(table_stack, browser, lang)
        try:
            page.wait_for_selector("#host-options:not([hidden]) li[data-opt='opt_memory']")
            shown = page.inner_text("#host-options")
            for w in words:
                assert w in shown, (lang, w, shown)
            assert "opt_" not in shown and "{" not in shown, shown
        finally:
            context.close()
    with httpx.Client(base_url=table_stack.dash.url, timeout=20) as client:
        assert client.post("/api/host/end", headers=HOST).status_code == 200
    context, page = host_page(table_stack, browser, "en")
    try:
        page.wait_for_selector("#host-options", state="hidden")
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_end_and_start_says_what_happened_and_the_message_stays_to_be_read(
        table_stack: Stack, browser: Any, lang: str) -> None:
    refused = {"en": "A game is in progress", "de": "Ein Spiel läuft"}[lang]
    said = {"en": "The running game was ended (not counted). Game started: 2 players",
            "de": "Das laufende Spiel wurde beendet (nicht gezählt). Spiel gestartet: 2 "
                  "Spieler"}[lang]
    dash = table_stack.dash
    with httpx.Client(base_url=dash.url, headers=HOST, timeout=20) as client:
        start_four(client)
        first = client.get("/api/table").json()["game"]["game_id"]
        context, page = host_page(table_stack, browser, lang)
        questions: list[str] = []

        def answer(dialog: Any) -> None:
            questions.append(dialog.message)
            dialog.accept()

        page.on("dialog", answer)
        try:
            page.wait_for_selector("#host-options:not([hidden])")
            if not page.is_visible("#start"):
                page.click("#new-game-box summary")
            page.select_option("#players", "2")
            page.check("#recipes")
            page.click("#start")
            page.wait_for_selector("#host-msg-action #end-and-start")
            assert refused in page.inner_text("#host-msg")
            page.click("#end-and-start")
            page.wait_for_function("(w) => document.getElementById('host-msg').textContent"
                                   ".includes(w)", arg=said)
            assert questions, "End and start ends a game: it asks first"
            state = wait_until(lambda: (s := client.get("/api/table").json())["game"]
                               and s["game"]["game_id"] != first
                               and s["game"]["view"]["table"]["status"] == "playing" and s,
                               20, "the new game to start")
            assert state["game"]["view"]["config"]["recipes"] is True
            assert len(state["game"]["view"]["config"]["colours"]) == 2
            page.wait_for_selector("#host-options li[data-opt='opt_players']")
            # The table moves on 5 s later (past the old 3 s grace; the page's clock is
            # moved, no test waits): the message still stands, being read ...
            page.clock.fast_forward(5000)
            before = moment(state)
            play_until(client, lambda s: moment(s) != before, "a move of the new game")
            now = inputs(client.get("/api/table").json())
            page.wait_for_function("(n) => Number(document.body.dataset.inputs) >= n", arg=now)
            assert said in page.inner_text("#host-msg"), page.inner_text("#host-msg")
            # ... and goes once the game moves on after it has been read.
            page.clock.fast_forward(READ_MS)
            play_until(client, lambda s: not page.inner_text("#host-msg"),
                       "the host's message to clear as the game moves on")
        finally:
            context.close()

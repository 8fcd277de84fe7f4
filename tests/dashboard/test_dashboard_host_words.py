"""What the host page and the virtual table say to people (HANDTEST M4, M6, m1, m6): each
command's answer in words, refusals without header names or raw game ids, the new-game form's
own checks. A real Chromium on the dashboard, the real engine service and the simulated hub;
no bots, the moves are made through the virtual table's API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from dashkit import PIN, Stack, screenshot, wait_until
from virtual_player import MOVE_WAIT, inputs, next_step, play_until, settled

from engine.games.glastonbury.rules import Take

pytestmark = pytest.mark.browser
HOST = {"X-Host-Pin": PIN}
# httpx against the served app: a TestClient's exit would shut the app's bridge down.


def start_game(client: Any, colours: list[str]) -> None:
    reply = client.post("/api/host/new_game", json={"colours": colours, "seed": 7},
                        headers=HOST)
    assert reply.status_code == 200, reply.text
    wait_until(lambda: (client.get("/api/table").json()["game"] or {}).get("view", {})
               .get("table", {}).get("status") == "playing", MOVE_WAIT, "the game to start")


@pytest.fixture
def host_page(table_stack: Stack, browser: Any) -> Iterator[Any]:
    """The host page, unlocked (the PIN in this tab, as after a login)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    context.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
    page = context.new_page()
    page.clock.install()  # time flows; a test may move it on (no fixed waits)
    page.set_default_timeout(15000)
    page.goto(table_stack.dash.url + "/host?lang=en")
    page.wait_for_selector("#host", state="visible")
    try:
        yield page
    finally:
        context.close()


def host_said(page: Any, what: str) -> str:
    try:
        page.wait_for_function(
            "(w) => document.getElementById('host-msg').textContent.includes(w)", arg=what)
    except Exception as exc:
        raise AssertionError(f"the host page said {page.inner_text('#host-msg')!r}, "
                             f"not {what!r}") from exc
    return str(page.inner_text("#host-msg"))


def test_host_commands_say_what_they_did(table_stack: Stack, host_page: Any) -> None:
    """M6 and m1: Start, Undo and End each say what happened; the undo's answer names
    what was taken back and how to put the cards back; the message goes once the game
    moves on; End's question says the cauldrons will not be counted."""
    dash = table_stack.dash
    page = host_page
    page.select_option("#players", "2")
    page.select_option("#colour-0", "green")
    page.select_option("#colour-1", "red")
    page.select_option("#deal", "virtual")
    page.click("#start")
    said = host_said(page, "Game started")
    assert said == "Game started: 2 players (green ♣, red ♥).", said

    with httpx.Client(base_url=dash.url, headers=HOST, timeout=20) as client:
        wait_until(lambda: (client.get("/api/table").json()["game"] or {}).get("view", {})
                   .get("table", {}).get("status") == "playing", MOVE_WAIT, "the game to start")
        interp = table_stack.engine.tables[dash.table].interp
        # a whole take seen (the square refilled), the next one not begun
        play_until(client, lambda s: interp.game is not None
                   and any(isinstance(a, Take) for a in interp.game.actions)
                   and next_step(s)[0] == "gesture" and next_step(s)[1]["action"] == "lift",
                   "a take")
        assert interp.game is not None
        last = [a for a in interp.game.actions if isinstance(a, Take)][-1]
        row, column = divmod(last.cell, 6)
        page.click("#undo")
        said = host_said(page, "Undone")
        where = f"row {row + 1}, column {column + 1}"
        assert said.startswith(f"Undone: the card taken from {where}"), said
        assert "What to do: 1. " in said and f"back on {where}" in said, said
        assert "Done." not in said
        # The undo is carried out on the simulated table (the engine's restore): the next
        # gesture starts from the table as the game now holds it.
        wait_until(lambda: settled(client.get("/api/table").json(), interp), MOVE_WAIT,
                   "the undo laid out on the virtual table")

        # the game moves on: the answer stays to be read (15 s), then goes with the next move
        moved_from = inputs(client.get("/api/table").json())
        play_until(client, lambda s: inputs(s) > moved_from, "the game to move on")
        page.clock.fast_forward(16_000)  # the page's reading time, not the test's
        play_until(client, lambda s: not page.inner_text("#host-msg"),
                   "the host's message to clear as the game moves on")

    questions: list[str] = []

    def answer(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.accept()

    page.on("dialog", answer)
    page.click("#end")
    said = host_said(page, "Game ended")
    assert said == "Game ended (not counted).", said
    assert questions and "The cauldrons will not be counted" in questions[0], questions


def test_end_question_in_three_languages(table_stack: Stack, browser: Any) -> None:
    """m1: the question before End says the game will not be counted, in fr, en and de."""
    context = browser.new_context()
    page = context.new_page()
    try:
        for lang, words in [("en", "will not be counted"), ("fr", "ne seront pas comptés"),
                            ("de", "nicht gezählt")]:
            page.goto(f"{table_stack.dash.url}/host?lang={lang}")
            sure = page.evaluate("async () => (await import('/static/core.js')).t('end_sure')")
            assert words in sure, (lang, sure)
    finally:
        context.close()


def test_new_game_form_checks_and_refusals_in_words(table_stack: Stack, host_page: Any) -> None:
    """m6: two seats with one colour are said next to the form at once (Start waits);
    Start while a game runs says so without the game's id; the enrolment's buttons wait
    for an enrolment."""
    page = host_page
    page.select_option("#players", "3")
    assert page.is_hidden("#form-msg")
    page.select_option("#colour-2", page.input_value("#colour-0"))
    page.wait_for_selector("#form-msg", state="visible")
    colour = page.inner_text("#colour-0 option:checked")
    assert page.inner_text("#form-msg") == (
        f"Two seats have the same colour ({colour}): give each seat its own colour.")
    assert page.is_disabled("#start")
    screenshot(page, "host-same-colour")
    page.select_option("#colour-2", "blue" if page.input_value("#colour-0") != "blue" else "green")
    page.wait_for_selector("#form-msg", state="hidden")
    assert page.is_enabled("#start")

    page.select_option("#deal", "virtual")
    page.click("#start")
    host_said(page, "Game started")
    wait_until(lambda: table_stack.dash.bridge.game_id is not None, 10, "the game")
    game_id = table_stack.dash.bridge.game_id
    for deal in ("virtual", "table"):  # refused by the dashboard, then by the engine
        page.evaluate("document.getElementById('new-game-box').open = true")
        page.select_option("#deal", deal)
        page.click("#start")
        said = host_said(page, "in progress")
        assert said == "Error: A game is in progress: end it first.", (deal, said)
        assert game_id is not None and game_id not in said

    assert page.inner_text("#enrolment") == "No enrolment running."
    for action in ("undo", "skip", "stop"):
        assert page.is_disabled(f"#enrol-controls [data-enrol='{action}']"), action
    assert page.is_enabled("#enrol-controls [data-enrol='start']")


def test_virtual_table_asks_visitors_for_the_host_pin(table_stack: Stack,
                                                      browser: Any) -> None:
    """M4: a visitor's click on /virtual says what a person can do (unlock with the host
    PIN, or join from a QR code), never header names; the PIN field unlocks, and then a
    gesture works."""
    with httpx.Client(base_url=table_stack.dash.url, headers=HOST, timeout=20) as client:
        start_game(client, ["yellow", "red"])
        take = client.get("/api/table").json()["game"]["view"]["expected"]["take"][0]
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(15000)
    try:
        page.goto(table_stack.dash.url + "/virtual?lang=en")
        page.wait_for_selector("#board .cell .card")
        page.wait_for_selector("#unlock-form", state="visible")  # no credential in this tab
        page.click(f"[data-where='{take}']")
        page.wait_for_selector("#play-msg.error")
        said = page.inner_text("#play-msg")
        assert said == ("To play here, unlock with the host PIN, or join a seat from the "
                        "table view's QR code."), said
        assert "X-Host-Pin" not in said and "secret" not in said
        assert page.is_visible("#unlock-pin")
        assert page.inner_text("#unlock-form label") == "Host PIN"
        screenshot(page, "virtual-locked")
        assert page.evaluate("document.body.dataset.hand") == ""  # nothing lifted

        page.fill("#unlock-pin", "000000")  # a wrong PIN: said, still locked
        page.click("#unlock-form button[type=submit]")
        page.wait_for_function("document.getElementById('play-msg').textContent === 'Wrong PIN.'")
        assert page.is_visible("#unlock-form")

        page.fill("#unlock-pin", PIN)
        page.click("#unlock-form button[type=submit]")
        page.wait_for_selector("#unlock-form", state="hidden")
        assert page.evaluate("sessionStorage.getItem('cauldron-host-pin')") == PIN
        page.click(f"[data-where='{take}']")
        page.wait_for_function("document.body.dataset.hand !== ''")  # the card is in hand
        assert page.locator("#play-msg.error").count() == 0
    finally:
        context.close()

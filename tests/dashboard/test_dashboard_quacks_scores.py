"""Quacks' scores and end of game in the dashboard shell (issue 23, "Scores and history"): the
final breakdown per round is the public view's typed ``scores`` (`GameViews.scores`,
`QuacksScores`), ``/api/scores`` serves it and the score page shows and prints it (each
round's VP, rubies and bonus die, the final ranking with the tie-break, Q25 D21); at the end
the pots say each seat's result, not "brewing". Situations are built, never waited for: a
real engine service playing seeded bots to the end, and golden game 3 (a tie on VP broken by
round 9's pot) published with the wire's own model. Real broker, real Chromium."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashkit import Dash, join_in_browser, make_dash, screenshot, wait_until

from engine.games.quacks.bots.policies import make_bot
from engine.games.quacks.rules import Game, QuacksConfig, action_from_wire, to_wire
from engine.games.quacks.scoring import QuacksScores, breakdown
from engine.games.quacks.table import QuacksTable
from engine.wire.contract import public_model, seat_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine" / "games" / "quacks"))
from golden_runner import play_round
from quacks_helpers import new_game
from test_quacks_golden import GAME_3

pytestmark = pytest.mark.browser


def golden_3() -> Game:
    """Golden game 3 to its end: seats 1 and 2 on 29 VP, seat 2's pot one space further in
    round 9 (Q25, D21); seats 3 and 4 on 7 VP, equal on both."""
    game = new_game(4)
    for number, r in enumerate(GAME_3, start=1):
        play_round(game, r, number)
    return game


def publish(dash: Dash, table: QuacksTable, game_id: str, status: str,
            seats: tuple[int, ...] = ()) -> None:
    """The table's public view (and ``seats``' own views) as the engine service publishes
    them, typed by the wire's models for a Quacks table."""
    view = {**table.public_view(), "table": {"status": status, "game_id": game_id}}
    dash.publisher.publish(dash.topics.game_public, public_model("quacks").model_validate(
        {"table": dash.table, "game": "quacks", "game_id": game_id, "ts": time.time(),
         "view": view}), retain=True)
    for seat in seats:
        dash.publisher.publish(dash.topics.game_seat(seat), seat_model("quacks").model_validate(
            {"seat": seat, "game": "quacks", "game_id": game_id, "ts": time.time(),
             "view": {**table.seat_view(seat), "seat": seat}}), retain=True)


def shown_game(dash: Dash) -> dict[str, Any]:
    game = dash.bridge.table_state().game
    return game.model_dump() if game is not None else {}


def play_to_the_end(engine: Any, table: str, players: int, seed: int) -> Any:
    """A real engine service's Quacks game, its seats played by seeded bots through
    ``cmd/play`` from what each seat's view offers; the table's interpreter at the end."""
    engine.command(table, "new_game", {"game": "quacks", "players": players})
    interp = engine.tables[table].interp
    bots = [make_bot("push" if s % 2 else "greedy") for s in range(players)]
    rng = random.Random(seed)
    while interp.status.value == "playing":
        for seat in range(players):
            view = interp.seat_view(seat)
            legal = [action_from_wire(o) for o in view["options"]]
            if not legal or interp.status.value != "playing":
                continue
            move = to_wire(bots[seat].choose(view, legal, rng))
            args = {k: v for k, v in move.items() if k not in ("type", "seat") and v is not None}
            engine.command(table, "play", {"seat": seat, "verb": move["type"], "args": args})
    return interp


@pytest.mark.timeout(240)
def test_Q25_a_finished_engine_game_s_breakdown_is_served_typed_shown_and_printed(
        mqtt_broker: str, table_id: str, engine_service: Any, browser: Any,
        tmp_path: Path) -> None:
    interp = play_to_the_end(engine_service, table_id, players=3, seed=5)
    # The dashboard comes once the bots are done: it reads the retained views (the bots'
    # hundreds of moves a second would flood its views' lane, which sheds QoS 0).
    dashboard = make_dash(mqtt_broker, table_id, tmp_path, serve=True)
    dash = next(dashboard)
    try:
        scores_shown_and_printed(dash, interp, browser, tmp_path)
    finally:
        next(dashboard, None)


def scores_shown_and_printed(dash: Dash, interp: Any, browser: Any, tmp_path: Path) -> None:
    wait_until(lambda: shown_game(dash).get("view", {}).get("over") is True, 20,
               "the dashboard to see the game over")
    answer = httpx.get(f"{dash.url}/api/scores", timeout=10)
    assert answer.status_code == 200
    scores = QuacksScores.model_validate(answer.json())  # the view's model, on the wire
    assert scores == breakdown(interp.table.game) and scores.over
    assert scores.winners == list(interp.table.game.winners)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{dash.url}/scores?lang=en")  # served for Glastonbury: it follows Quacks
        page.wait_for_selector(".q-scores[data-over='1']")
        assert page.locator(".q-breakdown").count() == 3
        assert page.locator(".q-breakdown tbody tr[data-round]").count() == 27
        ranking = page.locator(".q-ranking-final li")
        assert ranking.count() == 3
        assert [int(r) for r in page.eval_on_selector_all(
            ".q-ranking-final li", "els => els.map(e => e.dataset.rank)")] == sorted(
            s.rank for s in scores.seats)
        first = ranking.first.inner_text()
        best = max(s.vp for s in scores.seats)
        assert f"Seat {scores.winners[0] + 1}" in first and f"{best} VP" in first
        # Each round: its VP, rubies and bonus die, as the breakdown says.
        seat = scores.seats[scores.winners[0]]
        row = page.locator(f".q-breakdown[data-seat='{seat.seat}'] tr[data-round='9'] td")
        cells = row.all_inner_texts()
        assert cells[-3:] == [str(seat.rounds[8].vp), str(seat.rounds[8].rubies),
                              str(seat.rounds[8].droplet)]
        rolled = next((s, r) for s in scores.seats for r in s.rounds if r.bonus)
        bonus = page.locator(f".q-breakdown[data-seat='{rolled[0].seat}'] "
                             f"tr[data-round='{rolled[1].round}'] td").nth(2).inner_text()
        words = {"vp1": "1 VP", "vp2": "2 VP", "ruby": "1 ruby", "droplet": "droplet +1",
                 "orange": "a pumpkin into the bag"}
        assert words[rolled[1].bonus[0]] in bonus
        screenshot(page, "quacks-scores-1280")
        # Printable: on paper width, the shell's header, banners and buttons go, the tables
        # fit the page; Chromium prints it to PDF.
        page.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
        page.emulate_media(media="print")
        assert not page.is_visible("header.top") and not page.is_visible("#print")
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        pdf = page.pdf(format="A4", print_background=False)
        assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
        (tmp_path / "scores.pdf").write_bytes(pdf)
        assert errors == [], errors
    finally:
        context.close()


def golden_3_published(dash: Dash, browser: Any, game: Game, viewport: dict[str, int]) -> Any:
    """Golden game 3's finished table on the wire (game g3), seen by the dashboard; a page of
    a new browser context (the caller closes it)."""
    publish(dash, QuacksTable(game.config, random.Random(0), game=game), "g3", "over")
    wait_until(lambda: shown_game(dash).get("game_id") == "g3", 10, "the finished game")
    page = browser.new_context(viewport=viewport).new_page()
    page.set_default_timeout(15000)
    return page


def test_Q25_D21_the_score_page_ranks_golden_game_3_and_names_its_tie_break(
        dash: Dash, browser: Any) -> None:
    game = golden_3()
    page = golden_3_published(dash, browser, game, {"width": 1280, "height": 900})
    served = QuacksScores.model_validate(httpx.get(f"{dash.url}/api/scores", timeout=10).json())
    assert served == breakdown(game) and served.tie_break and served.winners == [1]
    try:
        page.goto(f"{dash.url}/scores?lang=en")
        page.wait_for_selector(".q-scores[data-over='1']")
        ranking = page.eval_on_selector_all(
            ".q-ranking-final li", "els => els.map(e => [e.dataset.seat, e.dataset.rank])")
        assert ranking == [["1", "1"], ["0", "2"], ["2", "3"], ["3", "3"]]
        tie = page.inner_text(".q-tie")
        assert "Seat 1, Seat 2 tied on points" in tie and "round 9 wins, Seat 2" in tie
        assert "space 11" in page.inner_text(".q-ranking-final li[data-seat='1']")
        assert "space 10" in page.inner_text(".q-ranking-final li[data-seat='0']")
        assert page.locator(".q-breakdown tbody tr[data-round]").count() == 36
        # The next game runs: the page shows it so far, and the last game stays below.
        publish(dash, QuacksTable(QuacksConfig(players=2), random.Random(1)), "g4", "playing")
        page.wait_for_selector(".q-scores[data-over='0']")
        assert page.locator(".last-game[data-last-game='g3'] .q-tie").count() == 1
        assert QuacksScores.model_validate(
            httpx.get(f"{dash.url}/api/scores", timeout=10).json()) == served
    finally:
        page.context.close()


def test_at_the_end_the_pots_say_each_seats_result_not_brewing(dash: Dash,
                                                                browser: Any) -> None:
    game = golden_3()
    assert all(p.status == "brewing" for p in game.players)  # the core's word, reset at G
    page = golden_3_published(dash, browser, game, {"width": 1920, "height": 1080})
    try:
        page.goto(f"{dash.url}/?lang=en")
        page.wait_for_selector(".q-seat[data-seat='1'] .q-status.winner")
        words = page.eval_on_selector_all(
            ".q-seat h2 .q-status", "els => els.map(e => e.textContent.trim())")
        assert words == ["rank 2", "★ winner", "rank 3", "rank 3"]
        assert "brewing" not in page.inner_text(".q-seats")
        # A game the host ended says so.
        publish(dash, QuacksTable(QuacksConfig(players=2), random.Random(2)), "g5", "ended")
        page.wait_for_selector(".q-status.ended")
        assert page.locator(".q-status.ended").count() == 2
    finally:
        page.context.close()


def test_the_phone_names_its_seat_once(dash: Dash, browser: Any) -> None:
    table = QuacksTable(QuacksConfig(players=3, fortune_cards=False), random.Random(3))
    publish(dash, table, "g6", "playing", seats=(0, 1, 2))
    wait_until(lambda: shown_game(dash).get("game_id") == "g6", 10, "the game")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(15000)
    try:
        join_in_browser(page, dash.url, dash.bridge, 0)
        page.wait_for_selector(".q-phone")
        page.wait_for_selector("#seat-head .q-status")
        assert page.inner_text("main").count("Seat 1") == 1
        assert page.inner_text("#seat-head").startswith("Seat 1")
        assert page.locator(".q-phone h2").count() == 0
    finally:
        context.close()

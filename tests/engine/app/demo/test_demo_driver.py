"""The demo bots' decision at a corner where Declinatio would face only Vanesco/Perluceo
(G7): no lift says it, so the bot presses the virtual table's Declinatio button (the
dashboard's HTTP API is faked; the game is the seed-24 one that reaches that corner)."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest
from people_words import leaks

from engine.app.demo.driver import BotDriver, DriverConfig, DriverError
from engine.rules import Game, GameConfig
from engine.rules.actions import USE_DECLINATIO, Action, Take
from engine.rules.board import cell_name
from engine.service.table_driver import next_decision


def corner_game(seed: int, blocked: bool) -> Game:
    """Random play (as the engine-service tests do) until the active seat may use
    Declinatio and doing so would (`blocked`) or would not end the game."""
    rng = random.Random(seed)
    game = Game.new(GameConfig(colours=("yellow", "red")), rng)
    while not game.is_over():
        if USE_DECLINATIO in game.legal_actions():
            probe = game.copy()
            probe.apply(USE_DECLINATIO)
            if probe.is_over() == blocked:
                return game
        next_decision(game, rng)
    raise AssertionError(f"seed {seed} never reached that corner")


class FakeDashboard:
    """The dashboard's HTTP API as the driver uses it: records each POST; every POST counts
    one engine input, which GET /api/table then shows."""

    def __init__(self, view: dict[str, Any]) -> None:
        self.view = view
        self.inputs = 100
        self.posts: list[tuple[str, bytes]] = []

    def state(self) -> dict[str, Any]:
        view = {**self.view, "table": {"inputs": self.inputs}}
        return {"game": {"game_id": "g", "view": view}}

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.posts.append((request.url.path, request.content))
            self.inputs += 1
            return httpx.Response(200, json={"ok": True})
        return httpx.Response(200, json=self.state())


class NoMqtt:
    def subscribe(self, topic: str, handler: Any) -> None:
        pass


def driver_at(game: Game, *choices: Action) -> tuple[BotDriver, FakeDashboard]:
    """A driver whose shadow is `game` and whose bot makes `choices` in turn."""
    driver = BotDriver(DriverConfig(dashboard="http://dash", pin="1", table="t", pace=0,
                                    confirm_timeout=1), NoMqtt())  # type: ignore[arg-type]
    fake = FakeDashboard(game.view_public())
    driver.http.close()
    driver.http = httpx.Client(base_url="http://dash", transport=httpx.MockTransport(fake.handle))
    driver.shadow.game = game
    driver.shadow.game_id = "g"
    planned = iter(choices)
    driver._choose = lambda g, s: next(planned)  # type: ignore[method-assign]
    return driver, fake


def decide(driver: BotDriver, fake: FakeDashboard, game: Game) -> None:
    state = fake.state()
    assert driver._decide(state, state["game"]["view"], game.seat)
    driver.http.close()


def test_bot_ends_the_game_with_the_declinatio_button_G7() -> None:
    game = corner_game(24, blocked=True)
    driver, fake = driver_at(game, USE_DECLINATIO)
    decide(driver, fake, game)
    assert fake.posts == [("/api/virtual/declinatio", b"")]


def test_bot_at_a_plain_corner_takes_from_the_line_declinatio_reaches() -> None:
    game = corner_game(24, blocked=False)
    probe = game.copy()
    probe.apply(USE_DECLINATIO)
    take = next(a for a in probe.legal_actions() if isinstance(a, Take))
    driver, fake = driver_at(game, USE_DECLINATIO, take)
    decide(driver, fake, game)
    assert [path for path, _ in fake.posts] == ["/api/virtual/gesture"]
    # At pace 0 the whole take is one gesture (lift, lay on the pad, slide on).
    assert json.loads(fake.posts[0][1]) == {"action": "take", "where": cell_name(take.cell),
                                            "seat": game.seat, "as_seat": game.seat}


def test_what_the_driver_tells_the_host_names_seats_and_places_for_people() -> None:
    # The bot's waiting reason (shown on the table screen) and a refused gesture (the host's
    # log) say "Seat 2", "row 3, column 4", never "seat 1", "2,3" or "pad:1" (issue 11).
    view: dict[str, Any] = {}
    held = {"virtual": {"hands": {"1": {"origin": "2,3"}}}}
    why = BotDriver._inconsistent(held, view, 0)
    assert why == "Seat 2's hand holds a card (from row 3, column 4): lay it down first"
    on_pad = {"virtual": {"pads": {"2": {"card": "accio-1"}}}}
    assert BotDriver._inconsistent(on_pad, view, 0) == "a card lies on Seat 3's pad"
    game = corner_game(24, blocked=False)
    driver, _ = driver_at(game)
    driver.http.close()

    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(409, json={"detail": "the square holds no card there"})

    driver.http = httpx.Client(base_url="http://dash", transport=httpx.MockTransport(refuse))
    with pytest.raises(DriverError) as refused:
        driver._gesture({"action": "lay", "where": "pad:1", "as_seat": 1})
    assert str(refused.value) == (
        "Seat 2's bot: lay on Seat 2's pad: refused (the square holds no card there)")
    with pytest.raises(DriverError) as refused:
        driver._gesture({"action": "lift", "where": "0,4", "as_seat": 0})
    assert str(refused.value).startswith("Seat 1's bot: lift on row 1, column 5: refused")
    assert not leaks(why + str(refused.value))
    driver.http.close()

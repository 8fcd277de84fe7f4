"""The demo bots' decision at a corner where Declinatio would face only Vanesco/Perluceo
(G7): no lift says it, so the bot presses the virtual table's Declinatio button (the
dashboard's HTTP API is faked; the game is the seed-24 one that reaches that corner)."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx

from engine.app.demo.driver import BotDriver, DriverConfig
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

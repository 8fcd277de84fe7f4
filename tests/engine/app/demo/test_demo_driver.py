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
from engine.games.glastonbury.bots import PublicGame
from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.rules.actions import USE_DECLINATIO, Action, Take
from engine.games.glastonbury.rules.board import cell_name
from engine.games.glastonbury.table.table_driver import next_decision


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
    driver.shadow.public = PublicGame.of(game)
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
    assert why is not None and why.code == "holds_square_card"  # the pages' words: a code
    assert why.params == {"who": "1", "card": None, "origin": "2,3", "pad": 0}
    assert why.text == ("Seat 2 holds a card (from row 3, column 4): put it back or lay it on "
                   "Seat 1's pad")
    # Hand test M7: the card by name, the way out named (the host lifted it on /virtual).
    host = {"virtual": {"hands": {"host": {"card": "orange-b-4", "origin": "0,1"}}}}
    assert getattr(BotDriver._inconsistent(host, view, 2), "text", None) == (
        "the host holds Bottles 4 (orange) (from row 1, column 2): put it back or lay it on "
        "Seat 3's pad")
    drawn = {"virtual": {"hands": {"host": {"card": "orange-b-4", "origin": "pile"}}}}
    assert getattr(BotDriver._inconsistent(drawn, view, 2), "text", None) == (
        "the host holds Bottles 4 (orange) (from the draw pile): lay it down first")
    on_pad = {"virtual": {"pads": {"2": {"card": "accio-1"}}}}
    assert getattr(BotDriver._inconsistent(on_pad, view, 0), "text", None) == (
        "a card lies on Seat 3's pad")
    game = corner_game(24, blocked=False)
    driver, _ = driver_at(game)
    driver.http.close()

    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(409, json={"detail": "the square holds no card there"})

    driver.http = httpx.Client(base_url="http://dash", transport=httpx.MockTransport(refuse))
    with pytest.raises(DriverError) as refused:
        driver._gesture({"action": "lay", "where": "pad:1", "as_seat": 1})
    assert str(refused.value) == (
        "Seat 2's bot: lay the card in hand on Seat 2's pad: refused (the square holds no "
        "card there)")
    with pytest.raises(DriverError) as refused:
        driver._gesture({"action": "lift", "where": "0,4", "as_seat": 0})
    assert str(refused.value).startswith("Seat 1's bot: lift the card on row 1, column 5: "
                                         "refused")
    assert not leaks(why.text + str(refused.value))
    # The gesture is named, never the request's dict ({'action': 'drop', 'as_seat': 0}).
    with pytest.raises(DriverError) as refused:
        driver._gesture({"action": "drop", "as_seat": 0})
    assert str(refused.value).startswith("Seat 1's bot: put away the card in hand: refused")
    with pytest.raises(DriverError) as refused:
        driver._gesture({"action": "slide", "seat": 2, "as_seat": 2})
    assert str(refused.value).startswith(
        "Seat 3's bot: slide the card on Seat 3's pad into the cauldron: refused")
    assert "{" not in str(refused.value) and "as_seat" not in str(refused.value)
    driver.http.close()


class FakeTable:
    """GET /api/table shows `game_id` in `phase`; POST /api/host/new_game starts g2, g3..."""

    def __init__(self) -> None:
        self.game_id, self.phase = "g1", "over"
        self.started: list[str] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == "/api/host/new_game":
            self.started.append(f"g{len(self.started) + 2}")
            return httpx.Response(200, json={"status": "ok",
                                             "data": {"game_id": self.started[-1]}})
        if request.method == "POST":
            return httpx.Response(200, json={"status": "ok"})
        end = {"reason": "line_emptied", "scores": {
            "seats": [{"seat": 0, "colour": "yellow", "total": 7},
                      {"seat": 1, "colour": "red", "total": 3}], "winners": [0]}}
        view = {"table": {"status": self.phase, "inputs": 1}, "over": self.phase == "over",
                "end": end if self.phase == "over" else None}
        return httpx.Response(200, json={
            "status": {"broker": True, "engine": "online", "hub": "online"},
            "game": {"game_id": self.game_id, "view": view}, "virtual": {}})


def test_the_demos_own_next_game_is_reported_once_as_the_demos() -> None:
    # The table shows the ended game for a moment after the demo starts the next one: that
    # is neither a second end of it ("... over ... (0 bot decisions)") nor a game "started
    # from the host page" (the demo's log repeated both after each game).
    said: list[str] = []
    driver = BotDriver(DriverConfig(dashboard="http://dash", pin="1", table="t", pace=0,
                                    linger=0, players=2), NoMqtt(),  # type: ignore[arg-type]
                       say=said.append)
    table = FakeTable()
    driver.http.close()
    driver.http = httpx.Client(base_url="http://dash",
                               transport=httpx.MockTransport(table.handle))
    driver._game_id = "g1"  # the demo started g1, which has just ended
    try:
        driver.tick()
        assert table.started == ["g2"]
        for _ in range(3):  # the table still shows g1 over
            driver.tick()
        table.game_id, table.phase = "g2", "dealing"
        driver.tick()
        table.phase = "playing"
        driver.tick()
    finally:
        driver.http.close()
    assert table.started == ["g2"], "one new game only"
    assert [s for s in said if "over" in s] == [
        "game g1 over: won by Seat 1 (yellow); scores: Seat 1 (yellow) 7, Seat 2 (red) 3 "
        "(0 bot decisions)"], said
    assert any(s.startswith("the demo started a new game, g2: 2 players") for s in said), said
    assert not any("host page" in s for s in said), said


def last_take_game(seed: int) -> tuple[Game, Take]:
    """Random play until the active seat can take the game's last card (G10a)."""
    from engine.games.glastonbury.rules.game import Phase

    rng = random.Random(seed)
    game = Game.new(GameConfig(colours=("yellow", "red")), rng)
    while not game.is_over():
        if game.phase is Phase.TAKE:
            for action in game.legal_actions():
                if isinstance(action, Take) and BotDriver._ends_game(game, action):
                    return game, action
        next_decision(game, rng)
    raise AssertionError(f"seed {seed} never reached a last card")


@pytest.mark.parametrize("still_held", [False, True])
def test_a_discarded_last_card_is_put_away_only_if_still_in_hand(still_held: bool) -> None:
    # After the discard button the table may already have put the card away: a "drop" then
    # was refused ("Seat 1's hand is empty") and warned in the demo's log.
    from engine.games.glastonbury.rules.actions import Discard

    game, take = last_take_game(3)
    seat = game.seat
    driver, fake = driver_at(game, Discard())
    plain = fake.state
    hands = {str(seat): {"card": "x", "origin": cell_name(take.cell)}} if still_held else {}
    fake.state = lambda: {**plain(), "virtual": {"hands": hands}}  # type: ignore[method-assign]
    try:
        assert driver._last_card(fake.state(), seat, cell_name(take.cell))
    finally:
        driver.http.close()
    paths = [path for path, _ in fake.posts]
    drops = [json.loads(body) for path, body in fake.posts if path == "/api/virtual/gesture"]
    assert paths[0] == "/api/virtual/discard"
    assert drops == ([{"action": "drop", "as_seat": seat}] if still_held else [])


def test_the_demos_next_game_keeps_the_options_the_host_chose() -> None:
    """A host at an event starts a 3-player game with recipes and the memory aid: the games
    the demo then starts by itself keep them (a new first seat and shuffle each time)."""
    driver, fake = driver_at(Game.new(GameConfig(colours=("yellow", "red")), random.Random(1)))
    config = {"colours": ["green", "blue", "red"], "first_seat": 2, "start_positions": [0, 5, 10],
              "removed_colour": None, "recipes": True, "second_player_bonus": False,
              "memory_aid": True}
    driver._host_options = driver._options_of(config)
    driver._new_game()
    body = json.loads(fake.posts[-1][1])
    assert fake.posts[-1][0] == "/api/host/new_game"
    assert body["colours"] == ["green", "blue", "red"] and body["recipes"] is True
    assert body["memory_aid"] is True and body["second_player_bonus"] is False
    assert "start_positions" not in body and 0 <= body["first_seat"] < 3
    two = driver._options_of({"colours": ["yellow", "red"], "removed_colour": "blue"})
    assert two is not None and two["removed_colour"] == "blue"
    assert driver._options_of({}) is None
    driver.http.close()


def test_a_waiting_bot_tries_again_on_a_still_table() -> None:
    """A bot that lost track of the game (the engine's history unread on a busy machine)
    waits for the table to change, but a table where only that bot can move never changes:
    after `RETRY_AFTER` it tries again (a game of bots only stood still for good)."""
    from engine.app.demo.driver import RETRY_AFTER, Waiting

    game = Game.new(GameConfig(colours=("yellow", "red")), random.Random(1))
    driver, fake = driver_at(game)
    state = fake.state()
    driver._post_waiting = lambda body: None  # type: ignore[method-assign]
    try:
        driver._wait_for(game.seat, Waiting("it lost track of the game", "lost_track"), state)
        assert driver._blocked(state)  # the same table: it waits ...
        assert not driver._blocked({**state, "alerts": [{"alert_id": "a"}]})  # ... or not
        driver._wait_for(game.seat, Waiting("it lost track of the game", "lost_track"), state)
        driver._stuck_since -= RETRY_AFTER  # ... and not for ever
        assert not driver._blocked(state)
    finally:
        driver.http.close()

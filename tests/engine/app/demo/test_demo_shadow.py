"""The bots' shadow game, fed only by the engine's public ``game/events`` stream, equals the
engine's own game; the stream never carries a private event or a covered card."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from glastonbury_table import glastonbury
from hub_events import hub_event

from engine.app.demo.shadow import ShadowGame
from engine.games.glastonbury.rules.cards import CARDS
from engine.games.glastonbury.table.table_driver import ScriptedGame, scripted_game
from engine.service.service import EngineService, ServiceConfig
from engine.wire.api import GameAnswer, HistoryAnswer
from engine.wire.contract import GameEvents, Topics, WireModel, parse_payload
from engine.wire.mqtt import WireClient


class Stream:
    """Records every raw ``game/events`` payload of one table, in arrival order."""

    def __init__(self, url: str, table: str) -> None:
        self.topic = Topics(table).game_events
        self.raw: list[bytes] = []
        self.lock = threading.Lock()
        self.client = WireClient(url, client_id=f"test-stream-{table}")
        self.client.subscribe(self.topic, self._on)
        self.client.start(wait=10)
        self.client.wait_ready(10)

    def _on(self, topic: str, model: WireModel) -> None:
        assert isinstance(model, GameEvents)
        with self.lock:
            self.raw.append(model.model_dump_json().encode())

    def wait_count(self, count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.raw) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(self.raw) >= count, f"{len(self.raw)} of {count} game/events messages came"

    def follow(self, shadow: ShadowGame, done: Callable[[], bool],
               check: Callable[[bytes, GameEvents, dict[str, Any] | None], None] | None = None,
               timeout: float = 10.0) -> None:
        """Feed `shadow` every message as it comes (`check(raw, model, view before)` sees
        each one) until `done()` or `timeout`."""
        deadline = time.monotonic() + timeout
        fed = 0
        while time.monotonic() < deadline:
            with self.lock:
                batch = self.raw[fed:]
            for raw in batch:
                model = parse_payload(self.topic, raw)
                assert isinstance(model, GameEvents)
                before = shadow.game.view_public() if shadow.game is not None else None
                shadow.feed(model)
                if check is not None:
                    check(raw, model, before)
            fed += len(batch)
            if done():
                return
            time.sleep(0.05)


def start_engine(mqtt_broker: str, table_id: str, tmp_path: Path) -> EngineService:
    """A real engine service serving `table_id` (no hub: the test feeds it hub events)."""
    engine = EngineService(ServiceConfig(mqtt=mqtt_broker, data_dir=tmp_path / "engine",
                                         tables=frozenset({table_id}), hub_io=False,
                                         name=f"engine-{table_id}"))
    return engine.start(wait=10)


def play_script(engine: EngineService, table_id: str, script: ScriptedGame) -> str:
    """Start the script's game on the engine and feed it every gesture; the game id."""
    args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
    game_id = GameAnswer.model_validate(engine.command(table_id, "new_game", args)).game_id
    assert game_id is not None
    inputs = [*script.deal, *(i for turn in script.turns for i in turn)]
    for seq, inp in enumerate(inputs, start=1):
        engine.receive(table_id, hub_event(inp, seq, hub_id="hub-demo-test"))
    return game_id


def _visible_cards(view: dict[str, Any]) -> set[str]:
    """Every card a person can see face up in a public view."""
    cards = {c for row in view["grid"] for c in row if c}
    for seat in view["seats"]:
        if seat["top"]:
            cards.add(seat["top"])
        cards.update(s["card"] for s in seat["spells"])
    cards.update(view["discarded"])
    cards.update(view["out_of_game"])
    return cards


def _cards_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if value in CARDS else set()
    if isinstance(value, dict):
        return set().union(*(_cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list | tuple):
        return set().union(*(_cards_in(v) for v in value)) if value else set()
    return set()


@pytest.mark.parametrize(("players", "seed"), [(2, 3), (3, 11), (4, 5)])
def test_shadow_from_the_public_stream_equals_the_engine(
    mqtt_broker: str, table_id: str, tmp_path: Path, players: int, seed: int
) -> None:
    engine = start_engine(mqtt_broker, table_id, tmp_path)
    stream = Stream(mqtt_broker, table_id)
    try:
        play_script(engine, table_id, scripted_game(players, seed))
        interp = glastonbury(engine.tables[table_id].interp)
        real = interp.game
        assert real is not None and real.is_over()
        stream.wait_count(1)
        seen_types: set[str] = set()
        shadow = ShadowGame()

        def check(raw: bytes, model: GameEvents, before: dict[str, Any] | None) -> None:
            assert shadow.game is not None
            after = shadow.game.view_public()
            # The stream mentions only cards a person at the table sees face up.
            assert "perluceo_reveal" not in raw.decode()
            assert all(not e.get("private") and e["type"] != "perluceo_reveal"
                       for e in model.events)
            visible = _visible_cards(after) | (_visible_cards(before) if before else set())
            mentioned = _cards_in(model.actions) | _cards_in(model.events) | _cards_in(
                model.grid or [])
            assert mentioned <= visible, f"covered cards on the wire: {mentioned - visible}"
            seen_types.update(str(e["type"]) for e in model.events)

        stream.follow(shadow, lambda: shadow.game is not None
                      and len(shadow.actions) == len(real.actions), check)
        # The game had a Perluceo (whose private reveal stayed off the stream) and a Vanesco.
        assert {"perluceo_used", "vanesco_resolved", "game_ended"} <= seen_types
        assert shadow.game is not None
        assert shadow.game.state_key() == real.state_key()
        assert shadow.game.view_public() == real.view_public()
        assert shadow.mismatches == 0
        # The shadow knows no pile order: it is the engine's real-table mode.
        known, *_ = shadow.game.pile.state()
        assert not known
    finally:
        stream.client.stop()
        engine.stop()


def test_undo_on_the_stream_rewinds_the_shadow(
    mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    engine = start_engine(mqtt_broker, table_id, tmp_path)
    stream = Stream(mqtt_broker, table_id)
    try:
        play_script(engine, table_id, scripted_game(2, 7, max_decisions=6))
        engine.command(table_id, "undo", {})
        real = glastonbury(engine.tables[table_id].interp).game
        assert real is not None
        shadow = ShadowGame()
        # The shadow passes through the undone-to state before the undo arrives, so only
        # stop once the undo's reset has been seen too.
        stream.follow(shadow, lambda: shadow.resets >= 2 and shadow.game is not None
                      and shadow.game.state_key() == real.state_key())
        assert shadow.resets >= 2  # the start, then the undo
        assert shadow.game is not None and shadow.game.state_key() == real.state_key()
    finally:
        stream.client.stop()
        engine.stop()


def test_a_lost_message_is_noticed_and_the_shadow_waits_for_the_next_game() -> None:
    import random

    from engine.app.demo.shadow import ShadowError
    from engine.games.glastonbury.rules import Game, GameConfig

    config = GameConfig(colours=("yellow", "red"))
    real = Game.from_deal(config, list(Game.new(config, random.Random(4)).deal.grid), None)
    shadow = ShadowGame()
    shadow.feed(GameEvents(game_id="g1", status="playing", index=0, config=config.to_wire(),
                           grid=list(real.deal.grid)))
    first = real.legal_actions()[0]
    real.apply(first)
    second = real.legal_actions()[0]
    with pytest.raises(ShadowError, match="lost"):
        shadow.feed(GameEvents(game_id="g1", status="playing", index=1,
                               actions=[second.to_wire()]))
    assert shadow.game is None
    # Later messages of that game are ignored; the next game start is followed again.
    assert shadow.feed(GameEvents(game_id="g1", status="playing", index=2)) == []
    shadow.feed(GameEvents(game_id="g2", status="playing", index=0, config=config.to_wire(),
                           grid=list(real.deal.grid)))
    assert shadow.game is not None and shadow.game_id == "g2"


def test_history_lets_a_late_follower_catch_up_exactly(
    mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    """A bot restarted mid-game asks ``history``: the same actions and public events as the
    live stream, in messages within the model's limits, and a shadow equal to the engine."""
    engine = start_engine(mqtt_broker, table_id, tmp_path)
    stream = Stream(mqtt_broker, table_id)
    try:
        play_script(engine, table_id, scripted_game(3, 11))
        real = glastonbury(engine.tables[table_id].interp).game
        assert real is not None and real.is_over() and len(real.actions) > 64
        answer = engine.command(table_id, "history", {})
        history = [GameEvents.model_validate(m)
                   for m in HistoryAnswer.model_validate(answer).messages]
        assert len(history) >= 2  # a whole game needs more than one message
        assert "perluceo_reveal" not in str(answer)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with stream.lock:
                live = [GameEvents.model_validate_json(r) for r in stream.raw]
            if sum(len(m.actions) for m in live) == len(real.actions):
                break
            time.sleep(0.05)
        for field in ("actions", "events"):
            assert [x for m in history for x in getattr(m, field)] == [
                x for m in live for x in getattr(m, field)]
        shadow = ShadowGame()
        for message in history:
            shadow.feed(message)
        assert shadow.game is not None and shadow.mismatches == 0
        assert shadow.game.state_key() == real.state_key()
        # Read-only: nothing was stored or published by asking.
        assert engine.command(table_id, "history", {}) == answer
    finally:
        stream.client.stop()
        engine.stop()


def test_a_restarted_bot_driver_catches_up_from_the_history(
    mqtt_broker: str, table_id: str, tmp_path: Path
) -> None:
    """The demo restarted mid-game: the bots' shadow saw no start, so the driver asks the
    engine's history and follows the game on (instead of dealing a new one)."""
    from engine.app.demo.driver import BotDriver, DriverConfig

    engine = start_engine(mqtt_broker, table_id, tmp_path)
    client = WireClient(mqtt_broker, client_id=f"test-bots-{table_id}").start(wait=10)
    driver = BotDriver(DriverConfig(dashboard="http://127.0.0.1:9", pin="1", table=table_id,
                                    pace=0, confirm_timeout=5), client)
    try:
        game_id = play_script(engine, table_id, scripted_game(2, 7, max_decisions=30))
        real = glastonbury(engine.tables[table_id].interp).game
        assert real is not None and not real.is_over()
        driver.shadow = ShadowGame()  # what a restart leaves: no game seen
        assert driver._catch_up(game_id)
        assert driver.shadow.game is not None and driver.shadow.mismatches == 0
        assert driver.shadow.game.state_key() == real.state_key()
        assert not driver._catch_up(game_id)  # already following: nothing asked
        assert not driver._catch_up("another-game")  # the engine's game is not that one
        # Left behind (the messages of the last actions never came): read again, in full.
        behind = ShadowGame()
        again = HistoryAnswer.model_validate(engine.command(table_id, "history", {}))
        for message in [GameEvents.model_validate(m) for m in again.messages]:
            if message.config is not None:  # the start only, none of the actions
                behind.feed(message.model_copy(update={"actions": [], "events": []}))
        assert behind.game is not None and behind.game.state_key() != real.state_key()
        driver.shadow = behind
        assert driver._catch_up(game_id, behind=True)
        assert driver.shadow.game is not None and driver.shadow.mismatches == 0
        assert driver.shadow.game.state_key() == real.state_key()
    finally:
        driver.http.close()
        client.stop()
        engine.stop()


# Games whose winners differ between the real recipes and the shadow's stand-ins.
@pytest.mark.parametrize(("players", "seed"), [(2, 3), (2, 5), (3, 1), (3, 4), (4, 0), (4, 1)])
@pytest.mark.parametrize("known", [False, True], ids=["stand-ins", "recipes-known"])
def test_G11_recipe_games_followed_to_the_end_without_divergence(
    players: int, seed: int, known: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Recipes are secret (G11), so the shadow plays with stand-ins; the only public fact that
    depends on them is who won (the demo warned at the end of every such game). Played to
    the end, the shadow's events are the engine's; knowing the recipes, its winners too."""
    import random

    from engine.games.glastonbury.rules import Game, GameConfig
    from engine.games.glastonbury.rules.cards import PLAYER_COLOURS, RECIPE_A, RECIPE_B

    config = GameConfig(colours=PLAYER_COLOURS[:players], recipes=True)
    rng = random.Random(seed)
    grid = list(Game.new(config, random.Random(seed)).deal.grid)
    # Real recipes that are not the shadow's stand-ins (A/B of seat s: index s).
    recipes = tuple((RECIPE_A[(s + 1) % len(RECIPE_A)], RECIPE_B[(s + 2) % len(RECIPE_B)])
                    for s in range(players))
    real = Game.from_deal(config, grid, None, recipes)
    shadow = ShadowGame(recipes=dict(enumerate(recipes)) if known else {})
    opening = [e.to_wire() for e in real.opening_events if not e.private]
    shadow.feed(GameEvents(game_id="g1", status="playing", index=0, config=config.to_wire(),
                           grid=grid, events=opening))
    while not real.is_over():
        action = rng.choice(real.legal_actions())
        index = len(real.actions)
        events = [e.to_wire() for e in real.apply(action) if not e.private]
        shadow.feed(GameEvents(game_id="g1", status="over" if real.is_over() else "playing",
                               index=index, actions=[action.to_wire()], events=events))
    assert real.end_reason is not None and shadow.game is not None
    assert shadow.game.is_over() and len(shadow.actions) == len(real.actions)
    assert shadow.mismatches == 0, "shadow events differ from the engine's"
    assert "differ" not in caplog.text
    if known:
        assert shadow.game.scores().winners == real.scores().winners

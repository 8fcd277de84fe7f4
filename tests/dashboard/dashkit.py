"""Helpers for the dashboard tests (fixtures are in conftest.py).

- ``dash``: the dashboard app served by uvicorn on a free port (a background thread),
  following a fresh table on the session broker; ``dash.publish_game(game)`` etc. publish
  real rules-engine views over the real broker, as the engine service does.
- ``table_stack``: the same plus the real engine service and a real simulated hub
  (in-process objects on the same broker) for whole games through the virtual table.
- ``browser``: headless system Chromium through Playwright (skipped when it is missing,
  except with CI=true where a missing Chromium fails).
- ``drive_engine(engine, table, seed, until)``: a real engine service (no hub) fed the hub
  events of a seeded random game until its table prompt says ``until`` (e.g. seed 24 reaches
  ``corner_blocked``: Declinatio would face only Vanesco/Perluceo, G7).
- A situation on the demo with bots (a Perluceo or Vanesco taken, a refill, an Accio, a
  Declinatio at a corner, the last card): ``scenarios.py`` plans it on a seeded deal and
  plays it with the seats' hands, never waiting for what random bots happen to do.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from browser import CHROMIUM as CHROMIUM  # re-exported: the dashboard tests' browser
from browser import CHROMIUM_ARGS as CHROMIUM_ARGS
from hub_events import hub_event
from waiting import wait_until as wait_until  # re-exported: the dashboard tests' one wait

from dashboard.bridge import Bridge
from dashboard.config import Settings
from dashboard.deps import SEAT_HEADER
from dashboard.main import create_app
from engine.games.glastonbury.rules import Game, GameConfig
from engine.wire.broker import free_port
from engine.wire.contract import (
    CommandRequest,
    GameAlert,
    GamePublic,
    GameSeat,
    ServiceState,
    TopicInfo,
    Topics,
)
from engine.wire.mqtt import CommandRefused, WireClient

PIN = "246813"


def wait_page_events(page: Any, check: Callable[[], object], timeout: float,
                     what: str) -> None:
    """`wait_until` `check` on what a page's handlers (``page.route``, ``page.on``) collect:
    Playwright's sync API runs them only inside one of its calls, so each look makes one."""

    def look() -> object:
        page.evaluate("0")
        return check()

    wait_until(look, timeout, what)


def seat_auth(secret: str) -> dict[str, str]:
    """A non-browser client's seat credential: a header (a phone's is its cookie from /join;
    no route reads one from a URL)."""
    return {SEAT_HEADER: secret}


def join_in_browser(page: Any, url: str, bridge: Bridge, seat: int, lang: str = "en") -> None:
    """The phone's scan: the seat's one-time code opens /join, which gives this browser the
    seat's cookie and leads to the seat page."""
    token = bridge.secrets.join_token(bridge.game_id or "", seat)
    page.goto(f"{url}/join/{seat}?token={token}&lang={lang}")
    wait_until(lambda: page.url.startswith(f"{url}/seat/{seat}"), 20, "the seat's page")


def hold_seat_cookie(page: Any, url: str, seat: int, secret: str) -> None:
    """A browser holding `secret` as `seat`'s cookie, as /join leaves it (several pages of one
    test can share a seat without spending its one-time code twice)."""
    from dashboard.deps import seat_cookie, seat_cookie_paths

    page.context.add_cookies([{"name": seat_cookie(seat), "value": secret, "url": url + path}
                              for path in seat_cookie_paths(seat)])


def wrong_seat_cookie(page: Any, url: str, seat: int, secret: str) -> None:
    """A browser holding `secret` (another seat's, or a freed one) as `seat`'s cookie."""
    hold_seat_cookie(page, url, seat, secret)


SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


class Server:
    """uvicorn serving an app in a background thread on 127.0.0.1:<free port>."""

    def __init__(self, app: Any, port: int | None = None, limits: Any = None) -> None:
        import uvicorn

        from dashboard.serving import uvicorn_config

        self.port = port or free_port()  # served as the commands serve it
        config = uvicorn_config(app, "127.0.0.1", self.port, limits=limits,
                                timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        self.thread.start()
        wait_until(lambda: self.server.started, 10, "uvicorn to start")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@dataclass
class Dash:
    """A running dashboard and a publisher playing the engine/hub side of the wire."""

    table: str
    settings: Settings
    bridge: Bridge
    app: Any
    publisher: WireClient
    server: Server | None = None
    requests: list[tuple[str, CommandRequest]] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)

    @property
    def topics(self) -> Topics:
        return Topics(self.table)

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def publish_game(self, game: Game, game_id: str = "g1", ts: float | None = None) -> None:
        view = game.view_public()
        self.publisher.publish(
            self.topics.game_public,
            GamePublic.model_validate({"table": self.table, "game_id": game_id,
                                       "turn": view["expected"]["seat"],
                                       "ts": time.time() if ts is None else ts, "view": view}),
            retain=True,
        )

    def publish_seat(self, game: Game, seat: int, game_id: str = "g1",
                     extra: dict[str, Any] | None = None) -> None:
        view = {**game.view(seat)["you"], **(extra or {})}
        self.publisher.publish(
            self.topics.game_seat(seat),
            GameSeat.model_validate({"seat": seat, "game_id": game_id, "ts": time.time(),
                                     "view": view}),
        )

    def publish_alert(self, alert_id: str, active: bool = True, rule: str = "G4",
                      message: str = "Card 2,3 was laid on the wrong cell.",
                      instruction: str = "Put it back on 1,2.", game_id: str = "g1") -> None:
        self.publisher.publish(
            self.topics.game_alert,
            GameAlert(alert_id=alert_id, rule=rule, message=message, instruction=instruction,
                      active=active, game_id=game_id, ts=time.time()),
        )

    def publish_state(self, who: str, state: str) -> None:
        topic = self.topics.hub_state if who == "hub" else self.topics.engine_state
        self.publisher.publish(topic, ServiceState(state=state, ts=time.time()),  # type: ignore[arg-type]
                               retain=True)

    def answer_commands(self) -> None:
        """Answer cmd/<verb> like an engine would, recording each request (API tests)."""

        def handler(info: TopicInfo, request: CommandRequest) -> Any:
            assert info.verb is not None
            self.requests.append((info.verb, request))
            if info.verb in self.refuse:
                raise CommandRefused(self.refuse[info.verb])
            return {"verb": info.verb, "args": request.args}

        self.publisher.serve(self.topics.cmd("+"), handler, wait=10)  # the broker has it


def new_game(players: int = 3, seed: int = 1, memory_aid: bool = False) -> Game:
    colours = ("yellow", "red", "green", "blue")[:players]
    return Game.new(GameConfig(colours=colours, memory_aid=memory_aid), random.Random(seed))


def play(game: Game, actions: int, rng: random.Random | None = None) -> Game:
    rng = rng or random.Random(0)
    for _ in range(actions):
        if game.is_over():
            break
        game.apply(rng.choice(game.legal_actions()))
    return game


def make_dash(mqtt_broker: str, table_id: str, tmp_path: Path, serve: bool,
               **settings: Any) -> Iterator[Dash]:
    config = Settings(mqtt=mqtt_broker, table=table_id, pin=PIN, data_dir=tmp_path / "dash",
                      **settings)
    bridge = Bridge(config)
    app = create_app(config, bridge)
    publisher = WireClient(mqtt_broker, client_id=f"test-pub-{table_id}")
    publisher.start(wait=10)
    dash = Dash(table=table_id, settings=config, bridge=bridge, app=app, publisher=publisher)
    if serve:
        dash.server = Server(app).start()
        wait_until(lambda: bridge.connected, 10, "the dashboard to reach the broker")
    try:
        yield dash
    finally:
        if dash.server is not None:
            dash.server.stop()
        publisher.stop()


def drive_engine(engine: Any, table: str, seed: int, until: str | Callable[[Any], bool],
                 players: int = 2) -> Any:
    """Start a game on a real `EngineService` (in-process, no hub) and feed it the hub events
    of random play (`engine.games.glastonbury.table.table_driver`, the reference game's pile known
    from
    `seed`) until the table prompt's code is `until` (or `until(interpreter)` holds); returns
    the table's interpreter.
    Seed 24 (2 players) reaches ``corner_blocked`` (as the engine-service tests find)."""
    from engine.games.glastonbury.table.table_driver import (
        deal_inputs,
        inputs_for,
        next_decision,
        refill_of,
    )

    rng = random.Random(seed)
    colours = ("yellow", "red", "green", "blue")[:players]
    ref = Game.new(GameConfig(colours=colours), rng)
    engine.command(table, "new_game", {"colours": list(colours)})
    seq = 0

    def feed(steps: Any) -> None:
        nonlocal seq
        for inp in steps:
            seq += 1
            engine.receive(table, hub_event(inp, seq, hub_id="hub-dash-test"))

    feed(deal_inputs(ref.deal.grid))
    done = until if callable(until) else (lambda interp: interp.prompt()["code"] == until)
    while not done(engine.tables[table].interp):
        assert not ref.is_over(), f"seed {seed}: the game ended before the prompt {until!r}"
        decision = next_decision(ref, rng)
        feed(inputs_for(engine.tables[table].interp, decision, refill_of(ref, decision)))
    return engine.tables[table].interp


@dataclass
class Stack:
    dash: Dash
    engine: Any
    hub: Any


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path

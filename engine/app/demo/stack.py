"""The whole demo table in one process: broker, simulated hub, engine service, dashboard and
the bot driver, each on its own thread(s), started in order and stopped in reverse."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.datadir import data_dir
from engine.games import DEFAULT_GAME

log = logging.getLogger("cauldron.demo")

ENGINE_ACCOUNT = "cauldron.engine"  # the shipped ACL's names (hardware/deploy/mosquitto/acl)
DASHBOARD_ACCOUNT = "cauldron.dashboard"
BOTS_ACCOUNT = "cauldron.bots"
# What only the demo needs on top of the shipped ACL: the simulated hub's virtual table,
# and the bots, which read the events and ask for the history.
DEMO_ACL = """
# --- the demo only (engine/app/demo/stack.py) ---------------------------------------------
pattern write cauldron/%u/hub/sim
user cauldron.dashboard
topic read cauldron/+/hub/sim
user cauldron.bots
topic read cauldron/+/game/events
topic write cauldron/+/cmd/hint
topic read cauldron/+/cmd/hint/response
topic write cauldron/+/cmd/history
topic read cauldron/+/cmd/history/response
"""


class StackError(Exception):
    """A part of the demo could not start; the message says what to do."""


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except socket.gaierror:
            raise StackError(f"--host {host!r} is not an address of this machine "
                             "(use 127.0.0.1)") from None
        except OSError:
            return False
    return True


DEFAULT_BOTS = {"glastonbury": "greedy", "quacks": "push"}  # the liveliest of each game's bots


def seats_option(game_id: str, players: int) -> dict[str, object]:
    """``--players`` as the game's options say it: its ``players``, or its first player
    colours (``colours``, one per seat)."""
    from engine import games

    props = games.get(game_id).options.model_json_schema().get("properties", {})
    if "players" in props:
        return {"players": players}
    if "colours" in props:
        return {"colours": list(props["colours"]["items"]["enum"][:players])}
    return {}


def bots_can_play(game_id: str) -> bool:
    """Whether the demo's bots play this game: Glastonbury's by gestures on the virtual
    table (`driver.BotDriver`), a game with phone moves by those (`moves.MoveDriver`)."""
    from engine import games

    return game_id == "glastonbury" or bool(games.get(game_id).moves)


@dataclass
class DemoOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    mqtt: str | None = None  # None: the embedded amqtt broker on a free port
    table: str = "demo"
    bot: str = "greedy"
    game: str = DEFAULT_GAME  # the game the demo's own games play (engine.games id)
    options: dict[str, Any] = field(default_factory=dict)  # its set-up (`--option`)
    players: int = 4
    pace: float = 0.6
    linger: float = 20.0
    games: int | None = None
    seed: int | None = None
    pin: str | None = None
    lang: str = "en"
    data_dir: Path | None = None
    pawns: bool = False  # the simulated table has pawn sensors (hardware issue 13)


class DemoStack:
    """Start with `start()`, stop with `stop()` (safe to call after a failed start)."""

    def __init__(self, options: DemoOptions, say: Callable[[str], None] = print) -> None:
        self.options = options
        self.say = say
        self.data_dir = options.data_dir or data_dir("demo")
        self.broker: Any = None
        self.mqtt_url = options.mqtt or ""  # never with a password: the demo prints it
        # service -> its broker URL; with the embedded broker each has its own account,
        # a fresh random password every run, kept only in this process's memory.
        self._urls: dict[str, str] = {}
        self.hub: Any = None
        self.engine: Any = None
        self.server: Any = None
        self.server_thread: threading.Thread | None = None
        self.driver: Any = None  # the bots of the demo's own game
        self.other_drivers: list[Any] = []  # the bots of the other games, for the host's
        self.driver_client: Any = None
        self.settings: Any = None
        self.port = options.port

    @property
    def url(self) -> str:
        return f"http://{self.options.host}:{self.port}/"

    def start(self) -> DemoStack:
        opts = self.options
        if self.port == 0:
            from engine.wire.broker import free_port

            self.port = free_port()
        elif not port_free(opts.host, self.port):
            raise StackError(f"port {self.port} on {opts.host} is taken (another dashboard or "
                             f"demo?); stop it, or use --port {self.port + 1}, or --port 0 "
                             "for any free port")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._start_broker()
        self._start_hub()
        self._start_engine()
        self._start_dashboard()
        self._start_driver()
        return self

    def url_for(self, service: str) -> str:
        """The broker URL of ``service`` (hub, engine, dashboard, bots), with its account
        on the embedded broker; the one given with --mqtt otherwise."""
        return self._urls.get(service, self.mqtt_url)

    # ------------------------------------------------------------ parts

    def _start_broker(self) -> None:
        from engine.wire.mqtt import BrokerUrl, MqttError, WireClient

        if self.options.mqtt is None:
            self._start_embedded_broker()
            return
        try:
            broker = BrokerUrl.parse(self.mqtt_url)
            try:  # nothing listening there: say so at once, not after the probe's wait
                socket.create_connection((broker.host, broker.port), timeout=3).close()
            except ConnectionRefusedError:
                raise StackError(f"no MQTT broker listens at {broker.redacted()} (connection "
                                 "refused); start it, or leave --mqtt out: the demo then runs "
                                 "its own broker") from None
            except OSError:
                pass  # unknown host, a slow network: the probe's wait tells
            probe = WireClient(self.mqtt_url, client_id=f"cauldron-demo-probe-{os.getpid()}",
                               reconnect_max=1.0)
            probe.start(wait=5)
            probe.stop()
        except MqttError as exc:
            raise StackError(f"{exc} (or leave --mqtt out: the demo then runs its own "
                             "broker)") from None

    def _start_embedded_broker(self) -> None:
        """amqtt with one account per service and the shipped ACL: a local user can neither
        log in anonymously nor forge the hub's health or the big screen, nor read a seat."""
        import secrets
        from urllib.parse import quote

        from engine.hosting.setup import DEPLOY
        from engine.wire.broker import BrokerStartError, LocalBroker

        try:
            acl = (DEPLOY / "mosquitto" / "acl").read_text(encoding="utf-8") + DEMO_ACL
        except OSError as exc:
            raise StackError(f"cannot read the shipped MQTT ACL ({exc}); reinstall, or give "
                             "a broker with --mqtt") from None
        accounts = {"hub": self.options.table, "engine": ENGINE_ACCOUNT,
                    "dashboard": DASHBOARD_ACCOUNT, "bots": BOTS_ACCOUNT}
        passwords = {user: secrets.token_urlsafe(24) for user in accounts.values()}
        self.broker = LocalBroker(kind="amqtt", accounts=passwords, acl=acl)
        try:
            self.broker.start()
        except BrokerStartError as exc:
            raise StackError(f"the embedded MQTT broker did not start ({exc}); give a "
                             "broker with --mqtt mqtt://127.0.0.1:1883") from None
        self.mqtt_url = self.broker.url
        host = self.mqtt_url.removeprefix("mqtt://")
        self._urls = {service: f"mqtt://{quote(user, safe='')}:{passwords[user]}@{host}"
                      for service, user in accounts.items()}

    def _start_hub(self) -> None:
        from engine.wire.contract import Topics
        from engine.wire.mqtt import WireClient
        from hub.backends import make_backend
        from hub.backends.sim import virtual_box_tagmap
        from hub.config import HubConfig
        from hub.outbox import Outbox
        from hub.service import Hub

        table = self.options.table
        config = HubConfig(table=table, mqtt=self.url_for("hub"), backend="sim",
                           data_dir=self.data_dir / "hub", perimeter=self.options.pawns)
        tagmap = virtual_box_tagmap()
        backend = make_backend(config, tagmap)
        client = WireClient(self.url_for("hub"),
                            client_id=f"{config.hub_name}-demo-{os.getpid()}",
                            state_topic=Topics(table).hub_state)
        # The virtual table holds a tapped card ~15 ms: the hub's usual 5 ms sweeps see it
        # on the two polls a change needs.
        self.hub = Hub(table=table, backend=backend, client=client,
                       outbox=Outbox(config.outbox_path), tagmap=tagmap,
                       hub_id=config.hub_name, io=None, poll_interval=config.poll_interval)
        self.hub.start()

    def _start_engine(self) -> None:
        from engine.service.service import EngineService, ServiceConfig
        from engine.wire.mqtt import MqttError

        table = self.options.table
        self.engine = EngineService(ServiceConfig(
            mqtt=self.url_for("engine"), data_dir=self.data_dir / "engine",
            tables=frozenset({table}),
            name=f"engine-demo-{table}", hub_io=False,  # the simulated hub has no LEDs
        ))
        try:
            self.engine.start(wait=10)
        except MqttError as exc:
            raise StackError(f"the engine service cannot reach the broker: {exc}") from None

    def _start_dashboard(self) -> None:
        import uvicorn

        from dashboard.config import Settings
        from dashboard.main import create_app
        from dashboard.serving import uvicorn_config

        opts = self.options
        fields: dict[str, Any] = {
            "host": opts.host, "port": self.port, "mqtt": self.url_for("dashboard"),
            "table": opts.table, "game": opts.game,
            "data_dir": self.data_dir / "dashboard", "default_lang": opts.lang, "virtual": True,
        }
        if opts.pin:
            fields["pin"] = opts.pin
        self.settings = Settings(**fields)
        app = create_app(self.settings)
        config = uvicorn_config(app, opts.host, self.port, timeout_graceful_shutdown=2,
                                lifespan="on")
        self.server = uvicorn.Server(config)
        self.server_thread = threading.Thread(target=self.server.run, name="dashboard",
                                              daemon=True)
        self.server_thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.server_thread.is_alive():
                raise StackError(f"the dashboard could not listen on {opts.host}:{self.port}; "
                                 "try another --port (or --port 0)")
            if time.monotonic() > deadline:
                raise StackError("the dashboard did not start within 20 s")
            time.sleep(0.02)

    def _start_driver(self) -> None:
        from engine import games
        from engine.app.demo.driver import TableGame
        from engine.wire.mqtt import WireClient

        opts = self.options
        self.driver_client = WireClient(self.url_for("bots"),
                                        client_id=f"cauldron-demo-bots-{os.getpid()}")
        # One driver per game the bots can play, all following the table's game: the host
        # may start another game from the host page, and that game's bots play it.
        turn = TableGame(opts.game)
        self.driver = self._driver(opts.game, opts.bot, dict(opts.options), turn)
        self.other_drivers = [
            self._driver(g, DEFAULT_BOTS.get(g, games.get(g).bot_names()[0]),
                         seats_option(g, opts.players), turn)
            for g in games.game_ids() if g != opts.game and bots_can_play(g)]
        self.driver_client.start(wait=10)
        self.driver_client.wait_ready(10)
        for driver in (self.driver, *self.other_drivers):
            driver.start()

    def _driver(self, game: str, bot: str, options: dict[str, Any], turn: Any) -> Any:
        from engine.app.demo.driver import BotDriver, DriverConfig

        opts = self.options
        config = DriverConfig(
            dashboard=self.url.rstrip("/"), pin=self.settings.pin, table=opts.table,
            bot=bot, game=game, options=options, players=opts.players,
            pace=opts.pace, linger=opts.linger,
            games=opts.games, seed=opts.seed,
        )
        assert self.driver_client is not None
        # Glastonbury's bots make gestures on the virtual table; a game with phone moves
        # (Quacks) has its bots make those (engine/app/demo/moves.py).
        if game == "glastonbury":
            return BotDriver(config, self.driver_client, say=self.say, turn=turn)
        from engine.app.demo.moves import MoveDriver

        return MoveDriver(config, self.driver_client, say=self.say, turn=turn)

    # ------------------------------------------------------------ stop

    def stop(self) -> None:
        """Stop everything started, newest first; never raises."""
        steps: list[tuple[str, Callable[[], None]]] = []
        for driver in (*self.other_drivers, self.driver):
            if driver is not None:
                steps.append(("bots", driver.stop))
        if self.driver_client is not None:
            steps.append(("bots' MQTT client", self.driver_client.stop))
        if self.server is not None:
            steps.append(("dashboard", self._stop_server))
        if self.engine is not None:
            steps.append(("engine", self.engine.stop))
        if self.hub is not None:
            steps.append(("hub", self.hub.stop))
        if self.broker is not None:
            steps.append(("broker", self.broker.close))
        for name, step in steps:
            try:
                step()
            except Exception as exc:  # one part failing to stop must not keep the others up
                log.warning("stopping the %s: %s", name, exc)
        self.driver = self.driver_client = self.server = self.engine = None
        self.other_drivers = []
        self.hub = self.broker = None
        self._urls = {}

    def _stop_server(self) -> None:
        self.server.should_exit = True
        if self.server_thread is not None:
            self.server_thread.join(10)

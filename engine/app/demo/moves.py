"""The demo's bots for a game played with phone moves (Quacks): for each seat nobody joined,
the engine's ``cmd/hint`` asks the game's own bot (`GameDefinition.hint`: it sees only that
seat's view), and the move is made as the seat's phone makes it (``POST
/api/seats/<n>/move``, with the host PIN). The bots' account never reads a seat's view
(``game/seat/<n>`` is the engine's and the dashboard's only). The driver starts each game
from the host API (the demo's options, `--option`), and the next one once the score screen
has shown for ``linger`` seconds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from engine import games
from engine.app.demo.driver import DriverConfig, DriverError, TableDriver, TableGame
from engine.wire.contract import Topics
from engine.wire.mqtt import MqttError, WireClient

log = logging.getLogger("cauldron.demo")


def move_of(action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A rules action (its wire form) as the phone's move: ``cmd/play``'s verb and args
    (a game's moves are named as its actions' ``type``: `GameDefinition.moves`)."""
    return str(action["type"]), {k: v for k, v in action.items()
                                 if k not in ("type", "seat") and v is not None}


class MoveDriver(TableDriver):
    """Runs games of a game with phone moves on the demo table (see the module docstring)."""

    def __init__(self, config: DriverConfig, mqtt: WireClient,
                 say: Callable[[str], None] = print, turn: TableGame | None = None) -> None:
        super().__init__(config, mqtt, say, turn)
        self.game = games.get(config.game)
        self.game.bot(config.bot)  # (checked: `cauldron demo --bot`)
        self.level = config.bot  # ``cmd/hint``'s level: one of the game's bots
        self.topics = Topics(config.table)
        self.moves = 0
        self._ended: str | None = None  # the game whose end shows now

    def tick(self) -> None:
        state = self.state()
        status = state["status"]
        if not (status["broker"] and status["engine"] == "online"):
            self._sleep(0.1)
            return
        if self.turn.follow(state) != self.game.id:
            self._sleep(0.2)  # another game's table (the host's choice): its bots
            return
        game = state.get("game")
        view = game["view"] if game else {}
        phase = (view.get("table") or {}).get("status") or ("over" if view.get("phase")
                                                            == "over" else "idle")
        if game is None or phase in ("idle", "over", "ended"):
            self._between_games(game, phase)
            return
        self._game_id = game["game_id"]
        self._over_at = None
        joined = state.get("joined") or []
        if not self._play(len(view.get("seats") or []), joined):
            self._sleep(0.2)  # no bot seat has a decision: look again soon

    def _play(self, seats: int, joined: list[bool]) -> bool:
        """One move of a bot seat that has one to make; False when none has."""
        for seat in sorted(range(seats), key=lambda _: self.rng.random()):
            if seat < len(joined) and joined[seat]:
                continue  # a person plays it
            try:
                answer = self.mqtt.request(self.topics.cmd("hint"),
                                           {"level": self.level, "lang": "en"}, seat=seat)
            except MqttError as exc:
                raise DriverError(f"no hint from the engine: {exc}") from None
            if answer.status != "ok" or not isinstance(answer.data, dict):
                continue  # nothing to decide for it now (no_choice_now)
            action = answer.data.get("action")
            if not isinstance(action, dict):
                continue
            verb, args = move_of(action)
            if self.config.pace:
                self._sleep(self.config.pace)
            reply = self.http.post(f"/api/seats/{seat}/move", json={"verb": verb, "args": args})
            if reply.status_code >= 400:
                log.info("demo bot of seat %d: %s %s refused: %s", seat + 1, verb, args,
                         reply.text[:200])
            else:
                self.moves += 1
            return True
        return False

    def _between_games(self, game: dict[str, Any] | None, phase: str) -> None:
        if game is not None and phase in ("over", "ended"):
            # A game over, or ended by the host: its end shows for ``linger`` seconds before
            # the next (so the host's "End and start" is not beaten to the next game).
            if self._over_at is None or self._ended != game["game_id"]:
                self._over_at, self._ended = time.monotonic(), game["game_id"]
                if phase == "over" and game["game_id"] == self._game_id:
                    self._count_over(game)
                    if self.finished.is_set():
                        return
            if time.monotonic() - self._over_at < self.config.linger:
                self._sleep(0.2)
                return
        if self.finished.is_set():
            return
        self._new_game()

    def _count_over(self, game: dict[str, Any]) -> None:
        self.games_over += 1
        view = game["view"]
        self.results.append({"game_id": game["game_id"], "winners": view.get("winners"),
                             "vp": [s.get("vp") for s in view.get("seats", [])]})
        self.say(f"game {game['game_id']} is over: winners "
                 f"{', '.join(f'Seat {w + 1}' for w in view.get('winners') or [])}")
        if self.config.games is not None and self.games_over >= self.config.games:
            self.finished.set()
            self.stop_event.set()

    def _new_game(self) -> None:
        body = {**self.config.options, "game": self.game.id, "deal": "table",
                "seed": self.rng.randrange(2**31)}
        response = self.http.post("/api/host/new_game", json=body)
        if response.status_code >= 400:
            raise DriverError(f"new game: HTTP {response.status_code}: {response.text[:300]}")
        data = response.json().get("data") or {}
        self._game_id = data.get("game_id")
        self._over_at = None
        self.games_started += 1
        self.say(f"the demo started a new game of {self.game.titles['en']}, {self._game_id}; "
                 f"bots ({self.config.bot}) play the seats nobody joins")
        deadline = time.monotonic() + self.config.start_timeout
        while not self.stop_event.is_set() and time.monotonic() < deadline:
            state = self.state()
            if (state.get("game") or {}).get("game_id") == self._game_id:
                return
            self._sleep(0.1)

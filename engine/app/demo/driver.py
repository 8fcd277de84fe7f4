"""The demo's bots: they sit at the seats nobody joined and play with gestures on the
virtual table, as a person following the table screen would.

What a bot knows comes from the engine's public ``game/events`` stream (`ShadowGame`: the
rules engine in real-table mode, the pile unordered), never from the engine's or the
virtual table's hidden state. Its hands are the dashboard's public HTTP API: the virtual
table's gestures (lift, lay, slide, draw, tap, drop) and the seat buttons (pass, keep,
discard, and Declinatio where it ends the game, G7); which seats a person joined comes from
``GET /api/table``. The same driver starts each game (host API, PIN) and, after the score
screen has shown for ``linger`` seconds, the next one.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import httpx
from pydantic import ValidationError

from engine import games
from engine.app.demo.shadow import ShadowError, ShadowGame
from engine.games.glastonbury.bots import Bot, decide, make_bot, observe_public
from engine.games.glastonbury.rules import Game
from engine.games.glastonbury.rules.actions import (
    USE_DECLINATIO,
    Action,
    Discard,
    Pass,
    Take,
    UseDeclinatio,
)
from engine.games.glastonbury.rules.board import PERIMETER, cell_name, parse_cell
from engine.games.glastonbury.rules.cards import CARDS, PLAYER_COLOURS
from engine.games.glastonbury.rules.game import Phase
from engine.games.glastonbury.rules.names import (
    action_label,
    card_name,
    pad_label,
    place_label,
    position_label,
    seat_name,
)
from engine.wire.api import HistoryAnswer
from engine.wire.contract import GameEvents, Topics, WireModel
from engine.wire.mqtt import MqttError, WireClient
from hub.backends.sim import GESTURE_INPUTS

log = logging.getLogger("cauldron.demo")

MAX_REFUSED = 3  # refused gestures in a row before a bot waits for the table to change
# ... or for this many seconds: what it waits for may not change the table (the engine's
# history it could not read, a hub too busy to answer), and a still table must not stop it.
RETRY_AFTER = 5.0
PIN_HEADER = "X-Host-Pin"


def bot_decision(bot: Bot, game: Game, seat: int, seed: int,
                 reveals: tuple[tuple[str, ...], ...] = ()) -> Action:
    """`seat`'s bot decides on the shadow `game` (public information only), read as it is:
    no replay. `reveals`: the seat's Perluceo reveals (`ShadowGame.reveals`)."""
    observation = observe_public(game, seat, reveals=reveals)
    return decide(bot, observation, random.Random(seed * 7919 + seat))


class DriverError(Exception):
    """The dashboard did not do what the driver asked (named in the message)."""


# A gesture in words for the host's log ({place}: where it is made, {seat}: whose pad).
_GESTURE_WORDS = {
    "lift": "lift the card on {place}",
    "lay": "lay the card in hand on {place}",
    "take": "take the card on {place}",
    "refill": "refill {place} from the draw pile",
    "slide": "slide the card on {seat}'s pad into the cauldron",
    "tap": "tap the top card of {seat}'s cauldron",
    "vanesco": "tap the top card of {seat}'s cauldron",
    "draw": "draw a card from the draw pile",
    "drop": "put away the card in hand",
}


def _gesture_label(body: dict[str, Any]) -> str:
    """A virtual-table gesture for the host's log: "Seat 2's bot: lay the card in hand on
    row 3, column 4" (never the request's dict or a 0-based seat)."""
    seat = body.get("as_seat", body.get("seat"))
    who = f"{seat_name(int(seat))}'s bot" if seat is not None else "a bot"
    where = body.get("where")
    place = place_label(str(where)) if where else "the table"
    pad = body.get("seat", seat)
    words = _GESTURE_WORDS.get(str(body.get("action")), "an unknown gesture on {place}")
    return f"{who}: " + words.format(place=place,
                                     seat=seat_name(int(pad)) if pad is not None else "its")


@dataclass(frozen=True)
class Waiting:
    """Why a bot waits: `text` in English (the log), `code` and `params` (ids: cards, cells,
    seats) for the screens to say it in their language (dashboard/i18n: wait_<code>)."""

    text: str
    code: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DriverConfig:
    dashboard: str  # http://127.0.0.1:<port>
    pin: str
    table: str
    bot: str = "greedy"
    game: str = games.DEFAULT_GAME
    options: dict[str, Any] = field(default_factory=dict)  # the set-up of the demo's games
    players: int = 4
    pace: float = 0.6  # seconds per gesture; 0: as fast as the table confirms
    linger: float = 20.0  # seconds the score screen shows before the next game
    games: int | None = None  # stop after this many games (None: endless)
    seed: int | None = None
    confirm_timeout: float = 5.0
    start_timeout: float = 30.0  # seconds a game the demo starts may take to reach the table


class TableGame:
    """Which game's bots drive the demo table: the game the table shows (the host may start
    another from the host page), else the demo's own. The demo's drivers, one per game,
    share one; each plays, and starts the next game, only while the table is its game's."""

    def __init__(self, game: str) -> None:
        self._game = game
        self._lock = threading.Lock()

    def follow(self, state: dict[str, Any]) -> str:
        """The game whose bots drive the table now, after the table's state ``state``
        (``/api/table``)."""
        shown = state.get("table_game")
        with self._lock:
            if isinstance(shown, str):
                self._game = shown
            return self._game


class TableDriver:
    """What every game's demo bots share: the dashboard's API with the host PIN, the broker
    client, and a thread that calls `tick` until stopped, logging (never raising) what goes
    wrong so that a bug cannot freeze the demo table. Each game's driver writes `tick`."""

    def __init__(self, config: DriverConfig, mqtt: WireClient,
                 say: Callable[[str], None] = print, turn: TableGame | None = None) -> None:
        self.config = config
        self.say = say
        self.turn = turn or TableGame(config.game)
        self.rng = random.Random(config.seed)
        self.mqtt = mqtt
        self.http = httpx.Client(base_url=config.dashboard, timeout=10.0,
                                 headers={PIN_HEADER: config.pin})
        self.stop_event = threading.Event()
        self.finished = threading.Event()  # `games` games played and shown
        self.games_started = 0
        self.games_over = 0
        self.results: list[dict[str, Any]] = []
        self._thread: threading.Thread | None = None
        self._game_id: str | None = None  # the game this driver started
        self._over_at: float | None = None

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name="demo-bots", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        if self._thread is not None:
            self._thread.join(15)
        self.http.close()

    def _sleep(self, seconds: float) -> bool:
        """Wait; True when asked to stop meanwhile."""
        return self.stop_event.wait(seconds) if seconds > 0 else self.stop_event.is_set()

    def _held(self) -> bool:
        """True while the bots are held (and this tick is skipped)."""
        return False

    def _run(self) -> None:
        while not self.stop_event.is_set():
            if self._held():
                continue
            try:
                self.tick()
            except (httpx.HTTPError, DriverError) as exc:
                log.warning("demo bots: %s", exc)
                self._sleep(0.5)
            except Exception:  # a bug must not freeze the demo table: log, go on
                log.exception("demo bots: unexpected error")
                self._sleep(1.0)

    def state(self) -> dict[str, Any]:
        """The table as the dashboard shows it (``/api/table``)."""
        response = self.http.get("/api/table")
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    def tick(self) -> None:
        raise NotImplementedError


class BotDriver(TableDriver):
    """Runs games on the demo table: starts them, plays the bots' seats, reports results."""

    def __init__(self, config: DriverConfig, mqtt: WireClient,
                 say: Callable[[str], None] = print, turn: TableGame | None = None) -> None:
        super().__init__(config, mqtt, say, turn)
        self.bot = make_bot(config.bot)
        self.shadow = ShadowGame()
        self._shadow_lock = threading.Lock()
        self.resumed = threading.Event()
        self.resumed.set()
        self.idle = threading.Event()  # paused and between two gestures
        # A game this driver started that the table does not show yet (it still shows the
        # previous one for a moment), and since when: meanwhile nothing is reported twice.
        self._awaiting: str | None = None
        self._awaiting_since = 0.0
        self._decisions = 0
        self._refused = 0  # refused gestures in a row
        self._stuck_at: str | None = None  # the table as it was when the bot gave up
        self._stuck_since = 0.0
        self._waiting_seat: int | None = None
        self._waiting_why: Waiting | None = None
        self._laid: set[int] = set()  # seats whose pad holds a card a bot laid, not slid on
        # The table as `_confirmed` last read it, the engine having seen the gesture: the next
        # tick starts from it instead of asking again (pace 0: one request less per gesture).
        self._fresh: dict[str, Any] | None = None
        # The options of the last game the host started (players, colours, variants): the
        # demo's own next games keep them, as a host at an event expects.
        self._host_options: dict[str, Any] | None = None
        mqtt.subscribe(Topics(config.table).game_events, self._on_events)

    # ------------------------------------------------------------ the public stream

    def _on_events(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, GameEvents):
            return
        with self._shadow_lock:
            try:
                self.shadow.feed(model)
            except ShadowError as exc:
                log.warning("%s", exc)

    # ------------------------------------------------------------ the loop

    def pause(self, paused: bool = True) -> None:
        """Hold the bots between two gestures (the host's hand, a test); `idle` is set once
        they are held."""
        if paused:
            self.resumed.clear()
        else:
            self.idle.clear()
            self.resumed.set()

    def _held(self) -> bool:
        if self.resumed.is_set():
            return False
        self._fresh = None  # the host (a test) may change the table while held
        self.idle.set()
        self.resumed.wait(0.1)
        return True

    def tick(self) -> None:
        state, self._fresh = self._fresh or self.state(), None
        status = state["status"]
        if not (status["broker"] and status["engine"] == "online"
                and status["hub"] == "online"):
            self._sleep(0.1)  # the table is still coming up
            return
        if self.turn.follow(state) != self.config.game:
            self._sleep(0.2)  # another game's table (the host's choice): its bots play it
            return
        game = state.get("game")
        view = game["view"] if game else None
        table = (view or {}).get("table") or {}
        phase = table.get("status", "idle")
        if game is not None and game["game_id"] == self._awaiting:
            self._awaiting = None  # the game the demo started is on the table
        if game is None or phase in ("idle", "over", "ended") or game["game_id"] != self._game_id:
            self._between_games(state, phase)
            return
        if phase == "dealing":
            self._sleep(0.05)
            return
        if view is not None and not self._play(state, view):
            self._sleep(0.02)

    # ------------------------------------------------------------ between games

    def _between_games(self, state: dict[str, Any], phase: str) -> None:
        game = state.get("game")
        if self._awaiting is not None:
            if time.monotonic() - self._awaiting_since < self.config.start_timeout:
                # The table still shows the game before the one the demo just started: that
                # one is neither over again nor the host's.
                self._sleep(0.1)
                return
            log.warning("demo bots: game %s, which the demo started, has not reached the "
                        "table in %.0f s; going on with what the table shows",
                        self._awaiting, self.config.start_timeout)
            self._awaiting = None
        if game is not None and game["game_id"] == self._game_id and phase in ("over", "ended"):
            if self._over_at is None:
                self._over_at = time.monotonic()
                self.games_over += 1
                self._report_end(game)
                self._tidy(state)
            if self.config.games is not None and self.games_over >= self.config.games:
                if time.monotonic() - self._over_at >= self.config.linger:
                    self.finished.set()
                self._sleep(0.2)
                return
            if time.monotonic() - self._over_at < self.config.linger:
                self._sleep(0.2)
                return
        elif phase in ("playing", "dealing") and game is not None:
            if phase == "playing":
                # A game started from the host page (or before a restart): the simulated
                # table holds its cards, so play it; never replace it.
                resumed = self._game_id is None and self.games_started == 0
                self._game_id = game["game_id"]
                self._over_at = None
                self.games_started += 1
                self._host_options = self._options_of(game["view"].get("config") or {})
                if resumed:  # found at start: the game in progress before a restart
                    self.say(f"going on with game {self._game_id}, in progress before the "
                             "restart: the bots play the seats nobody joins")
                else:
                    self.say(f"game {self._game_id} started from the host page: the bots "
                             "play the seats nobody joins; the demo's next games keep its "
                             "options")
            else:
                self._sleep(0.1)  # the host is dealing: the game starts once it is dealt
            return
        elif game is not None and phase in ("over", "ended"):
            # Someone else's game ended (the host's): show its end as long as our own.
            if self._over_at is None or self._game_id != game["game_id"]:
                self._game_id = game["game_id"]
                self._over_at = time.monotonic()
                self._report_end(game)
                return
            if time.monotonic() - self._over_at < self.config.linger:
                self._sleep(0.2)
                return
        self._new_game()

    @staticmethod
    def _options_of(config: dict[str, Any]) -> dict[str, Any] | None:
        """A game's options as the host's form sends them: every field of the game's
        options model the view's config holds, but those that change from game to game
        (who begins, where the pawns start: `GameOptions.PER_GAME`)."""
        options = games.get().options
        kept = {k: v for k, v in config.items()
                if k in options.model_fields and k not in options.PER_GAME}
        try:
            return options.model_validate(kept).model_dump(
                mode="json", exclude=set(options.PER_GAME))
        except ValidationError:
            return None

    def _new_game(self) -> None:
        options = self._host_options or self.config.options or {
            "colours": list(PLAYER_COLOURS[:self.config.players])}
        colour_list = list(options["colours"])
        players = len(colour_list)
        first = self.rng.randrange(players)
        body: dict[str, Any] = {
            **options,
            "first_seat": first,
            "deal": "virtual",
            "seed": self.rng.randrange(2**31),
        }
        data = self._host("/api/host/new_game", body)
        self._game_id = (data.get("data") or {}).get("game_id")
        self._over_at = None
        self._awaiting, self._awaiting_since = self._game_id, time.monotonic()
        self.games_started += 1
        colours = ", ".join(colour_list)
        self.say(f"the demo started a new game, {self._game_id}: {players} players ({colours}), "
                 f"{seat_name(first, colour_list[first])} begins; bots "
                 f"({self.config.bot}) play the seats nobody joins")

    def _host(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.http.post(path, json=body)
        if response.status_code >= 400:
            raise DriverError(f"{path}: HTTP {response.status_code}: {response.text[:300]}")
        data: dict[str, Any] = response.json() if response.content else {}
        return data

    def _report_end(self, game: dict[str, Any]) -> None:
        view = game["view"]
        end = view.get("end") or {}
        scores = end.get("scores") or {}
        seats = scores.get("seats") or []
        totals = {s["seat"]: (s["colour"], s["total"]) for s in seats}
        winners = scores.get("winners") or []
        self.results.append({"game_id": game["game_id"], "totals": totals, "winners": winners})
        if not totals:
            self.say(f"game {game['game_id']} ended without scores")
            return
        table = ", ".join(f"{seat_name(s, c)} {t}" for s, (c, t) in sorted(totals.items()))
        won = " and ".join(seat_name(w, totals[w][0]) for w in winners if w in totals)
        self.say(f"game {game['game_id']} over: won by {won}; scores: {table} "
                 f"({self._decisions} bot decisions)")
        self._decisions = 0

    def _tidy(self, state: dict[str, Any]) -> None:
        """A card left on a pad or in hand at the end goes where it belongs (cosmetic)."""
        virtual = state.get("virtual") or {}
        try:
            for owner in list(virtual.get("hands") or {}):
                if owner.isdigit():  # the bots' own hands; a person's is theirs
                    self._gesture({"action": "drop", "as_seat": int(owner)}, wait=False)
            for seat in list(virtual.get("pads") or {}):
                self._gesture({"action": "slide", "seat": int(seat), "as_seat": int(seat)},
                              wait=False)
        except DriverError as exc:
            log.info("tidying the table: %s", exc)

    # ------------------------------------------------------------ playing

    def _play(self, state: dict[str, Any], view: dict[str, Any]) -> bool:
        """One gesture for a bot seat, if one is due; False when there is nothing to do."""
        if view.get("over"):
            return False
        joined: list[bool] = state.get("joined") or []
        virtual = state.get("virtual") or {}
        table = view.get("table") or {}
        expected = view.get("expected") or {}
        seat = view.get("turn")
        if seat is None:
            return False

        def is_bot(s: int) -> bool:
            return not (s < len(joined) and joined[s])

        if self._blocked(state):
            return False
        hands: dict[str, Any] = virtual.get("hands") or {}
        self._laid &= {int(p) for p in virtual.get("pads") or {}}  # gone: slid, undone
        for pad in sorted(virtual.get("pads") or {}):
            # A bot's taken card still on its pad (the turn moved on when it was laid); also
            # when a person joined the seat since: the bot ends its own gesture.
            if (is_bot(int(pad)) or int(pad) in self._laid) and not table.get("vanesco_wait"):
                return self._gesture({"action": "slide", "seat": int(pad),
                                      "as_seat": int(pad)}, state)
        for wait in table.get("vanesco_wait") or []:
            if is_bot(wait["seat"]):  # a person taps their own card
                return self._gesture({"action": "tap", "seat": wait["seat"],
                                      "as_seat": wait["seat"]}, state)
            return False
        if not is_bot(seat):
            # A card the bot lifted stays in the seat's hand: the person's one tap ("lay it
            # on your pad") finishes that take.
            self._waiting(None)
            return False
        mine = hands.get(str(seat))
        pads = virtual.get("pads") or {}
        if mine is not None:
            origin = mine.get("origin")
            if origin == "pile":
                return self._gesture({"action": "lay", "where": expected["refill_cell"],
                                      "as_seat": seat}, state)
            if view.get("phase") == "last_card" and origin and "," in origin:
                return self._last_card(state, seat, origin)
            return self._gesture({"action": "lay", "where": f"pad:{seat}", "as_seat": seat},
                                 state)
        if str(seat) in pads:
            return self._gesture({"action": "slide", "seat": seat, "as_seat": seat}, state)
        why = self._inconsistent(state, view, seat)
        if why is not None:
            self._waiting(seat, why)
            return False
        self._waiting(None)
        if expected.get("phase") == "refill":
            return self._gesture({"action": "refill", "where": expected["refill_cell"],
                                  "as_seat": seat}, state)
        if expected.get("phase") in ("take", "declinatio"):
            return self._move_pawn(state, view, seat) or self._decide(state, view, seat)
        return False

    def _move_pawn(self, state: dict[str, Any], view: dict[str, Any], seat: int) -> bool:
        """On a table with pawn sensors a bot first moves its pawn (G4), as a person does:
        from where its turn started to where the move puts it. False when there is nothing
        to move (no sensors, or moved already)."""
        sensed = (view.get("table") or {}).get("pawns_sensed")
        seats = view.get("seats") or []
        if sensed is None or seat >= len(seats):
            return False
        target = int(seats[seat]["pawn"])
        start = (target - int(view.get("move_value") or 0)) % PERIMETER
        others = {int(s["pawn"]) for s in seats if s["seat"] != seat}
        now, after = set(sensed), others | {target}
        if start == target or now != others | {start} or now == after:
            return False
        before = self._inputs(state)
        response = self.http.post("/api/virtual/pawn", json={"from": start, "to": target})
        if response.status_code >= 400:
            raise DriverError(f"{seat_name(seat)}'s pawn from {position_label(start)} to "
                              f"{position_label(target)}: HTTP {response.status_code}: "
                              f"{response.text[:300]}")
        self._confirmed(before, len(now ^ after))  # one sensor event per switch that changed
        return True

    @staticmethod
    def _inconsistent(state: dict[str, Any], view: dict[str, Any], seat: int) -> Waiting | None:
        """Why the table is not as the game expects (a bot then waits), or None: English
        words for the log, a code and its parameters for the screens' languages."""
        virtual = state.get("virtual") or {}
        hands: dict[str, Any] = virtual.get("hands") or {}
        others = {o: h for o, h in hands.items() if o != str(seat)}
        if others:
            owner, held = next(iter(sorted(others.items())))
            who = "the host" if owner == "host" else seat_name(int(owner))
            card = str(held.get("card") or "")
            what = card_name(card) if card in CARDS else "a card"
            origin = str(held.get("origin") or "")
            params = {"who": owner, "card": card if card in CARDS else None,
                      "origin": origin or None, "pad": seat}
            if "," in origin:  # lifted from the square: back, or taken for the bot's seat
                return Waiting(f"{who} holds {what} (from {place_label(origin)}): put it back "
                               f"or lay it on {pad_label(seat)}", "holds_square_card", params)
            came = f" (from {place_label(origin)})" if origin else ""
            return Waiting(f"{who} holds {what}{came}: lay it down first", "holds_card", params)
        pads = {k: v for k, v in (virtual.get("pads") or {}).items() if k != str(seat)}
        if pads:
            pad = next(iter(sorted(pads)))
            return Waiting(f"a card lies on {place_label(f'pad:{pad}')}", "card_on_pad",
                           {"pad": int(pad)})
        for alert in state.get("alerts") or []:
            if alert.get("severity") in ("error", "warning"):
                return Waiting(f"the table does not match the game: {alert.get('message')}",
                               "table_mismatch", {"rule": alert.get("rule")})
        return None

    # ------------------------------------------------------------ waiting

    def _fingerprint(self, state: dict[str, Any]) -> str:
        game = state.get("game") or {}
        table = (game.get("view") or {}).get("table") or {}
        virtual = state.get("virtual") or {}
        return repr((game.get("game_id"), table.get("inputs"), virtual.get("hands"),
                     virtual.get("pads"), sorted((virtual.get("cells") or {}).items()),
                     [a.get("alert_id") for a in state.get("alerts") or []]))

    def _blocked(self, state: dict[str, Any]) -> bool:
        """After a few refused tries a bot waits until the table changes (or `RETRY_AFTER`)."""
        if self._refused < MAX_REFUSED:
            return False
        if (self._fingerprint(state) == self._stuck_at
                and time.monotonic() - self._stuck_since < RETRY_AFTER):
            self._sleep(0.1)
            return True
        self._refused = 0
        self._stuck_at = None
        return False

    def _waiting(self, seat: int | None, reason: Waiting | None = None) -> None:
        """Tell the table screen that `seat`'s bot waits (None: no bot waits any more)."""
        if seat is None and self._waiting_seat is None:
            return
        if seat is not None and (seat, reason) == (self._waiting_seat, self._waiting_why):
            return
        if seat is None:
            body: dict[str, Any] = {"seat": self._waiting_seat, "reason": None}
        else:
            if self._waiting_seat is not None and self._waiting_seat != seat:
                self._post_waiting({"seat": self._waiting_seat, "reason": None})
            assert reason is not None
            body = {"seat": seat, "reason": reason.text[:300], "code": reason.code,
                    "params": reason.params}
            log.info("demo bots: Seat %d's bot is waiting: %s", seat + 1, reason.text)
        self._waiting_seat, self._waiting_why = seat, reason
        self._post_waiting(body)

    def _post_waiting(self, body: dict[str, Any]) -> None:
        try:
            self.http.post("/api/virtual/waiting", json=body)
        except httpx.HTTPError as exc:
            log.info("demo bots: cannot show the waiting bot: %s", exc)

    def _wait_for(self, seat: int, reason: Waiting, state: dict[str, Any]) -> None:
        self._waiting(seat, reason)
        self._refused = MAX_REFUSED
        self._stuck_at = self._fingerprint(state)
        self._stuck_since = time.monotonic()

    def _synced_game(self, view: dict[str, Any], game_id: str | None) -> Game | None:
        """A copy of the shadow once it has caught up with the public view, else None."""
        with self._shadow_lock:
            game = self.shadow.game
            if game is None or self.shadow.game_id != game_id:
                return None
            public = game.view_public()
            if any(public[k] != view.get(k) for k in ("turns", "turn", "phase", "grid")):
                return None
            return game.copy()

    def _wait_shadow(self, view: dict[str, Any], game_id: str | None) -> Game | None:
        deadline = time.monotonic() + self.config.confirm_timeout
        while not self.stop_event.is_set():
            game = self._synced_game(view, game_id)
            if game is not None or time.monotonic() > deadline:
                return game
            time.sleep(0.01)
        return None

    def _catch_up(self, game_id: str | None, behind: bool = False) -> bool:
        """A game whose start the shadow missed (the demo restarted mid-game, a message
        lost), or (`behind`) one it still follows but whose last actions never came: read
        the engine's public history of it. True when the shadow follows it."""
        with self._shadow_lock:
            if game_id is None:
                return False
            if self.shadow.game is not None and self.shadow.game_id == game_id:
                if not behind:
                    return False
                self.shadow = ShadowGame()  # rebuilt from the whole history below
        try:
            answer = self.mqtt.request(Topics(self.config.table).cmd("history"), {},
                                       timeout=self.config.confirm_timeout)
        except MqttError as exc:
            log.warning("demo bots: no history from the engine: %s", exc)
            return False
        if answer.status != "ok" or not isinstance(answer.data, dict):
            log.warning("demo bots: the engine refused its history: %s", answer.error)
            return False
        with self._shadow_lock:
            try:
                for raw in HistoryAnswer.model_validate(answer.data).messages:
                    self.shadow.feed(GameEvents.model_validate(raw))
            except (ShadowError, ValueError) as exc:
                log.warning("demo bots: the history does not rebuild the game: %s", exc)
                return False
            caught = self.shadow.game is not None and self.shadow.game_id == game_id
        if caught:
            log.info("demo bots: caught up with game %s from the engine's history", game_id)
        return caught

    def _choose(self, game: Game, seat: int) -> Action:
        self._decisions += 1
        with self._shadow_lock:
            reveals = self.shadow.reveals(seat)
        return bot_decision(self.bot, game, seat, self.rng.randrange(2**31), reveals)

    def _decide(self, state: dict[str, Any], view: dict[str, Any], seat: int) -> bool:
        game_id = (state.get("game") or {}).get("game_id")
        game = self._wait_shadow(view, game_id)
        if game is None and self._catch_up(game_id):
            game = self._wait_shadow(view, game_id)
        if game is None and not self.stop_event.is_set() and self._catch_up(game_id, True):
            # Still behind the table after the wait: an action's message never came.
            log.info("demo bots: the public action stream stayed behind the table; read the "
                     "engine's history again")
            game = self._wait_shadow(view, game_id)
        if game is None:
            with self._shadow_lock:
                lost = self.shadow.game is None or self.shadow.game_id != game_id
            if lost and not self.stop_event.is_set():
                # Not even the engine's history brought the shadow back (an old engine, a
                # broker outage): wait and try again; never replace the host's game.
                self._wait_for(seat, Waiting(
                    "it lost track of the game (a message was lost); it reads the engine's "
                    "history again in a moment", "lost_track"), state)
                return False
            log.info("demo bots: the public action stream is behind the table view; waiting")
            return False
        if game.seat != seat or game.phase is not Phase.TAKE:
            return False
        if self.config.pace:
            self._sleep(self.config.pace)  # a person looks before taking
        action = self._choose(game, seat)
        if isinstance(action, UseDeclinatio):
            probe = game.copy()
            probe.apply(action)
            if probe.is_over():
                # Declinatio onto a line of Vanesco/Perluceo only ends the game (G7): no lift
                # says so; at a real table the seat taps the card, here the table's button.
                return self._button("/api/virtual/declinatio", state)
            game = probe
            action = self._choose(probe, seat)  # the card from the newly faced line
        if isinstance(action, Pass):
            return self._button("/api/virtual/pass", state)
        if isinstance(action, Take):
            where = cell_name(action.cell)
            if not self.config.pace and not self._ends_game(game, action):
                # As fast as the table confirms: the whole take in one gesture (the phone's
                # one tap); at a visible pace each step shows on the big screen.
                return self._gesture({"action": "take", "where": where, "seat": seat,
                                      "as_seat": seat}, state)
            return self._gesture({"action": "lift", "where": where, "as_seat": seat}, state)
        raise DriverError(f"{seat_name(seat)}'s bot chose to {action_label(action)}, which no "
                          "gesture expresses now; it tries again at the next change")

    @staticmethod
    def _ends_game(game: Game, take: Take) -> bool:
        """The take is the game's last card (keep or discard: decided once in hand)."""
        probe = game.copy()
        probe.apply(take)
        return probe.phase is Phase.LAST_CARD

    def _last_card(self, state: dict[str, Any], seat: int, cell: str) -> bool:
        """The last card is in the bot's hand: keep it (lay it on the pad) or discard it."""
        view = state["game"]["view"]
        # The shadow has not applied the take yet (it comes with the decision).
        shown = {**view, "phase": "take"}
        game = self._wait_shadow(shown, state["game"]["game_id"])
        if game is None:
            return False
        take = next((a for a in game.legal_actions()
                     if isinstance(a, Take) and cell_name(a.cell) == cell), None)
        if take is None:
            game.apply(USE_DECLINATIO)
            take = Take(parse_cell(cell))
        game.apply(take)
        choice = self._choose(game, seat) if game.phase is Phase.LAST_CARD else None
        if isinstance(choice, Discard):
            if not self._button("/api/virtual/discard", state):
                return False
            # Once the game is over the table may have put the card away already (a warning
            # "hand is empty" at the end of games): only a card still in hand is put away.
            hands = (self.state().get("virtual") or {}).get("hands") or {}
            if str(seat) not in hands:
                return True
            return self._gesture({"action": "drop", "as_seat": seat}, wait=False)
        return self._gesture({"action": "lay", "where": f"pad:{seat}", "as_seat": seat}, state)

    # ------------------------------------------------------------ hands

    def _inputs(self, state: dict[str, Any] | None) -> int | None:
        game = (state or {}).get("game")
        table = (game or {}).get("view", {}).get("table") if game else None
        return int(table["inputs"]) if table else None

    def _gesture(self, body: dict[str, Any], state: dict[str, Any] | None = None,
                 wait: bool = True) -> bool:
        before = self._inputs(state)
        response = self.http.post("/api/virtual/gesture", json=body)
        if response.status_code == 409:
            reason = str(response.json().get("detail"))
            self._refused += 1
            if self._refused >= MAX_REFUSED and state is not None:
                seat = body.get("as_seat", body.get("seat"))
                self._wait_for(int(seat) if seat is not None else 0,
                               Waiting(reason, "refused"), state)
            raise DriverError(f"{_gesture_label(body)}: refused ({reason})")
        response.raise_for_status()
        self._refused = 0
        if body["action"] == "lay" and str(body.get("where")).startswith("pad:"):
            self._laid.add(int(body["as_seat"]))
        elif body["action"] == "slide":
            self._laid.discard(int(body["seat"]))
        if wait:
            self._confirmed(before, GESTURE_INPUTS[body["action"]])
        return True

    def _button(self, path: str, state: dict[str, Any]) -> bool:
        before = self._inputs(state)
        response = self.http.post(path)
        if response.status_code >= 400:
            raise DriverError(f"{path}: HTTP {response.status_code}: {response.text[:300]}")
        self._confirmed(before, 1)
        return True

    def _confirmed(self, before: int | None, inputs: int) -> None:
        """Wait until the engine has seen the gesture (the table confirms the card), then
        the pace; so the big screen shows every move."""
        if before is not None and inputs:
            deadline = time.monotonic() + self.config.confirm_timeout
            while not self.stop_event.is_set() and time.monotonic() < deadline:
                state = self.state()
                now = self._inputs(state)
                if now is None or now >= before + inputs:
                    self._fresh = None if self.config.pace else state
                    break
                time.sleep(0.01)
        self._sleep(self.config.pace)

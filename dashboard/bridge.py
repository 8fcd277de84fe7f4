"""The MQTT <-> WebSocket bridge.

One `WireClient` follows the table's retained and live topics (``game/public``,
``game/alert``, ``game/seat/<n>``, ``hub/state``, ``engine/state``, ``hub/health``) and
keeps the latest of each. It never reads ``hub/event`` or ``hub/snapshot``, which name the
cards laid on pads (the broker's ACL denies them). An engine serving many tables names the
topic of its one last will in ``engine/state`` (``liveness_topic``); that topic is followed
too, and the engine counts as online only while both say so.

Every change is turned into whole-state messages and handed to the WebSocket subscribers:
the table channel gets a `TableState` (whitelisted public data only, never a seat view),
each seat channel that seat's `SeatState`. Each message is serialised once per channel and
the same text goes to every socket of that channel (500 phones at an event cost one
serialisation, not 500). A subscriber keeps only the latest message (a slow browser skips
stale states instead of queueing them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, JsonValue, ValidationError

from dashboard.config import Settings
from dashboard.models import (
    AlertPublic,
    CommandResult,
    GameOtherOut,
    GamePublicOut,
    HubChangePublic,
    JoinInfo,
    SeatState,
    ServiceStatus,
    TableState,
    VirtualPublic,
)
from dashboard.seats import SeatSecrets
from dashboard.serving import FRAME, shared_message
from engine import games
from engine.games.base import GameDefinition
from engine.wire.api import Command, dump
from engine.wire.contract import (
    N_SEATS,
    GameAlert,
    GamePublic,
    GameSeat,
    HubHealth,
    PayloadError,
    ServiceState,
    Topics,
    WireError,
    WireModel,
    parse_payload,
)
from engine.wire.mqtt import MqttError, RequestTimeout, WireClient
from engine.wire.ratelog import RateLimitedLog

A = TypeVar("A", bound=BaseModel)
log = logging.getLogger("cauldron.dashboard")
refusals = RateLimitedLog(log)  # malformed or refused input: a flood writes a few lines

Channel = int | Literal["table"]
MAX_ALERTS = 20
EXPIRED = json.dumps({"type": "expired", "reason": "a new game started: scan the new QR code"})
Message = dict[str, Any]  # an ASGI websocket.send message (dashboard.serving.shared_message)
EXPIRED_MESSAGE = shared_message(EXPIRED)
# The host freed the seat (or gave it a new code): the old secret's sockets are closed.
REVOKED = json.dumps({"type": "expired", "reason": "the host freed this seat: scan its new "
                      "QR code", "code": "seat_freed"})
REVOKED_MESSAGE = shared_message(REVOKED)
FINAL_MESSAGES = (EXPIRED_MESSAGE, REVOKED_MESSAGE)  # the socket closes after sending one


@dataclass(eq=False)
class Subscriber:
    """One WebSocket: the latest message not yet sent, and an event to wake its sender.

    Its send queue holds one message: while its socket is busy (a phone on a poor link; the
    server's socket buffer full), a newer message replaces the unsent one. Every message is
    a whole state, so skipping a stale one loses nothing, and a slow socket never holds up
    the others (each has its own sender task) nor makes the server queue without bound."""

    channel: Channel
    loop: asyncio.AbstractEventLoop
    game_id: str | None = None  # a seat channel serves one game only ...
    secret: str | None = None  # ... while the secret it was opened with is the seat's
    latest: Message | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    skipped: int = 0  # stale states replaced before the socket took them
    # Writes a ready-made frame at once if the socket takes it (dashboard.serving.WRITER);
    # only while its sender task is idle, so that states never overtake each other.
    write_now: Callable[[bytes], bool] | None = None
    busy: bool = True  # the sender task has a message in hand (the first one, to begin)

    def offer(self, message: Message) -> None:  # on the event loop
        if (not self.busy and self.write_now is not None and message not in FINAL_MESSAGES
                and self.write_now(message[FRAME])):
            return
        if self.latest is not None:
            self.skipped += 1
        self.latest = message
        self.busy = True
        self.wake.set()

    async def next(self) -> Message:
        """The next message to send the slow way (awaiting the socket)."""
        while self.latest is None:
            self.busy = False
            await self.wake.wait()
            self.wake.clear()
        message, self.latest = self.latest, None
        return message


def _offer_all(batch: list[tuple[Subscriber, Message]]) -> None:  # on the event loop
    for sub, message in batch:
        sub.offer(message)


def public_game(model: GamePublic | None) -> GamePublicOut | None:
    """The whitelisted public game, or None when the engine's view does not fit."""
    if model is None:
        return None
    try:
        return GamePublicOut.model_validate(model.model_dump())
    except ValidationError as exc:
        refusals.warning("bad_public", "game/public view does not match the dashboard's "
                         "model: %s", str(exc)[:500])
        return None


def corner_blocked(game: GamePublicOut | None) -> int | None:
    """The seat whose pawn stands at a corner where Declinatio would face only
    Vanesco/Perluceo (the table's prompt ``corner_blocked``): using it ends the game (G7),
    which no card lift can say. None when the table is not in that situation."""
    if game is None or game.view.over or game.view.table is None:
        return None
    prompt = game.view.table.prompt
    if prompt is None or prompt.code != "corner_blocked":
        return None
    return prompt.seat


class Bridge:
    """Latest table state from MQTT, fanned out to WebSocket subscribers."""

    def __init__(self, settings: Settings, client: WireClient | None = None) -> None:
        self.settings = settings
        self.topics = Topics(settings.table, settings.base_topic)
        self.client = client or WireClient(
            settings.mqtt,
            client_id=f"dashboard-{settings.table}-{uuid.uuid4().hex[:6]}",
            base=settings.base_topic,
        )
        self.secrets = SeatSecrets(
            settings.data_dir / f"seat-secrets-{settings.table}.json" if settings.data_dir else None
        )
        self._lock = threading.RLock()
        # One broadcast at a time, from reading the state to handing it to the sockets'
        # loops (FIFO): two threads broadcasting at once could otherwise hand the older
        # state over last, and a page would show it until the next change.
        self._broadcast_lock = threading.Lock()
        self._phones = [0] * N_SEATS  # open seat pages (sockets) per seat
        self.secrets.staying = lambda: {s for s, n in enumerate(self._phones) if n > 0}
        self.public: GamePublic | None = None
        self.public_out: GamePublicOut | None = None
        # A table of another game than the wire's typed views (Quacks): its public game and
        # each seat's own view, as the engine published them (`_on_other`).
        self.other: GameOtherOut | None = None
        self.other_seats: dict[int, tuple[str | None, dict[str, Any]]] = {}
        # The last game that ended by its rules: kept for /scores while the next one runs.
        self.last_finished: GamePublicOut | GameOtherOut | None = None
        self.seat_views: dict[int, GameSeat] = {}
        self._fence = 0  # the newest engine claim of the table heard (a venue's epoch)
        self.alerts: dict[str, GameAlert] = {}
        self.hub_state: Literal["online", "offline", "unknown"] = "unknown"
        self._engine_table_state: Literal["online", "offline", "unknown"] = "unknown"
        self.engine_degraded: str | None = None  # the engine says why it cannot follow
        self.hub_change: HubChangePublic | None = None  # a new hub waits for the host
        self._engine_liveness: tuple[str, Literal["online", "offline"]] | None = None
        self.health: HubHealth | None = None
        # Perluceo reveals (seat -> (game id, cards, the game's turn count then)): sent once by
        # the engine, kept here until the seat hides it or its next turn begins.
        self.reveals: dict[int, tuple[str | None, list[str], int]] = {}
        self._subscribers: set[Subscriber] = set()
        self._was_connected = False
        self.virtual_public: Callable[[], VirtualPublic | None] = lambda: None
        self.listeners: list[Callable[[str, WireModel], None]] = []
        self._started = False

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Subscribe and connect in the background (the page shows the broker as offline
        until the connection comes)."""
        t = self.topics
        client = self.client
        # The game's views: the default game's typed (`GamePublic`, `GameSeat`), another
        # game's as its engine made them (their ``game`` says whose).
        client.subscribe(t.game_public, raw=self._on_public_raw)
        client.subscribe(t.game_alert, self._on_alert)
        client.subscribe(t.game_seat("+"), raw=self._on_seat_raw)
        client.subscribe(t.hub_state, self._on_hub_state)
        client.subscribe(t.engine_state, self._on_engine_state)
        client.subscribe(t.hub_health, self._on_health)
        client.add_connect_hook(self.broadcast)
        client.start()
        self._started = True

    def stop(self) -> None:
        if self._started:
            self.client.stop()
            self._started = False

    @property
    def connected(self) -> bool:
        return self.client.connected

    def check_connection(self) -> None:
        """Broadcast when the broker link is not what the pages were last told (called
        periodically: the MQTT client has no disconnect hook)."""
        if self.connected != self._was_connected:
            self.broadcast()

    # ------------------------------------------------------------ MQTT handlers

    def _notify(self, topic: str, model: WireModel) -> None:
        for listener in list(self.listeners):
            listener(topic, model)

    def _stale(self, model: WireModel) -> bool:
        """A word from an engine whose claim of the table is older than one already heard
        (a stopped or cut-off engine that woke up): ignored."""
        return self._stale_fence(getattr(model, "fence", None))

    def _stale_fence(self, fence: object) -> bool:
        """`_stale` for a payload read untyped (another game's view): its ``fence``."""
        if not isinstance(fence, int):
            return False
        with self._lock:
            if fence < self._fence:
                return True
            self._fence = fence
        return False

    def _game_of(self, topic: str, payload: bytes) -> tuple[str, dict[str, Any] | None]:
        """Whose view a payload holds (its ``game``), and for another game than the typed
        one its data (None: the typed model reads it, and refuses what does not fit)."""
        try:
            data = json.loads(payload)
        except ValueError:
            return games.DEFAULT_GAME, None
        game = data.get("game", games.DEFAULT_GAME) if isinstance(data, dict) else None
        if game == games.DEFAULT_GAME or not isinstance(game, str):
            return games.DEFAULT_GAME, None
        if game not in games.game_ids():
            self.client.reject(topic, payload, PayloadError(f"unknown game {game[:32]!r}"))
            return game, None
        return game, data

    def _typed(self, topic: str, payload: bytes) -> WireModel | None:
        try:
            return parse_payload(topic, payload, base=self.settings.base_topic)
        except WireError as exc:
            self.client.reject(topic, payload, exc)
            return None

    def _on_public_raw(self, topic: str, payload: bytes) -> None:
        game, data = self._game_of(topic, payload)
        if data is not None:
            self._on_other(topic, data)
        elif game == games.DEFAULT_GAME:
            model = self._typed(topic, payload)
            if model is not None:
                self._on_public(topic, model)

    def _on_seat_raw(self, topic: str, payload: bytes) -> None:
        game, data = self._game_of(topic, payload)
        if data is not None:
            if self._stale_fence(data.get("fence")):
                return
            seat, view = data.get("seat"), data.get("view")
            if isinstance(seat, int) and 0 <= seat < N_SEATS and isinstance(view, dict) \
                    and (view.get("me", seat) == seat):
                with self._lock:
                    self.other_seats[seat] = (data.get("game_id"), view)
                self.broadcast(seats_only=seat)
        elif game == games.DEFAULT_GAME:
            model = self._typed(topic, payload)
            if model is not None:
                self._on_seat(topic, model)

    def _on_other(self, topic: str, data: dict[str, Any]) -> None:
        """The public view of another game: kept as its engine made it (`GameOtherOut`);
        the table's typed game is gone (the table plays this one now)."""
        if self._stale_fence(data.get("fence")):
            return
        try:
            out = GameOtherOut.model_validate(data)
        except ValidationError as exc:
            refusals.warning("bad_public", "game/public of %s does not fit: %s",
                             str(data.get("game"))[:32], str(exc)[:300])
            return
        with self._lock:
            new_game = self.game_id != out.game_id
            self.other = out
            self.public = None
            self.public_out = None
            if out.view.get("over") is True:
                self.last_finished = out
            if new_game:
                self.alerts = {k: a for k, a in self.alerts.items()
                               if a.game_id in (None, out.game_id)}  # fmt: skip
                self.other_seats = {s: v for s, v in self.other_seats.items()
                                    if v[0] == out.game_id}  # fmt: skip
        if out.game_id:
            self.secrets.ensure(out.game_id)
        self.broadcast()

    def _on_public(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, GamePublic) or self._stale(model):
            return
        out = public_game(model)
        with self._lock:
            new_game = self.public is None or self.public.game_id != model.game_id
            self.other = None  # the table plays the typed game now
            self.public = model
            self.public_out = out
            if out is not None and out.view.over and out.view.end and out.view.end.scores:
                self.last_finished = out
            if new_game:
                self.alerts = {
                    k: a for k, a in self.alerts.items() if a.game_id in (None, model.game_id)
                }
                self.seat_views = {
                    s: v for s, v in self.seat_views.items() if v.game_id == model.game_id
                }
                self.reveals = {
                    s: r for s, r in self.reveals.items() if r[0] == model.game_id
                }
            self._standing_from(model)
        if model.game_id:
            self.secrets.ensure(model.game_id)
        self.broadcast()
        self._notify(topic, model)

    def _standing_from(self, model: GamePublic) -> None:
        """The engine's (retained) view lists every alert standing now: the truth after any
        restart (a whole demo started again: its engine announced them before this dashboard
        listened). Called with the lock held."""
        table = model.view.table
        if table is None or model.game_id is None:
            return
        listed = {a.alert_id: a for a in table.alerts}
        for key in [k for k, a in self.alerts.items()
                    if a.game_id == model.game_id and k not in listed]:
            del self.alerts[key]
        for key, a in listed.items():
            if key not in self.alerts:
                self.alerts[key] = GameAlert(**a.model_dump(), game_id=model.game_id)

    def _on_alert(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, GameAlert) or self._stale(model):
            return
        with self._lock:
            if model.active:
                self.alerts.pop(model.alert_id, None)
                self.alerts[model.alert_id] = model
                while len(self.alerts) > MAX_ALERTS:
                    self.alerts.pop(next(iter(self.alerts)))
            else:
                self.alerts.pop(model.alert_id, None)
        self.broadcast()
        self._notify(topic, model)

    def _on_seat(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, GameSeat) or self._stale(model):
            return
        reveal = list(model.view.reveal) if model.view.reveal is not None else None
        with self._lock:
            if reveal is not None:
                turns = self.public.view.turns if self.public is not None else 0
                self.reveals[model.seat] = (model.game_id, reveal, turns)
            self.seat_views[model.seat] = model
        self.broadcast(seats_only=model.seat)
        self._notify(topic, model)

    def _on_hub_state(self, topic: str, model: WireModel) -> None:
        if isinstance(model, ServiceState):
            self.hub_state = model.state
            self.broadcast()

    def _on_engine_state(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, ServiceState) or self._stale(model):
            return
        follow = model.liveness_topic
        with self._lock:
            self._engine_table_state = model.state
            self.engine_degraded = model.degraded if model.state == "online" else None
            self.hub_change = (HubChangePublic(old_hub=model.registered_hub,
                                               new_hub=model.pending_hub)
                               if model.state == "online" and model.pending_hub else None)
            followed = self._engine_liveness[0] if self._engine_liveness else None
            if follow != followed:
                self._engine_liveness = None
        if follow != followed:
            if followed is not None:
                self.client.unsubscribe(followed)
            if follow is not None:  # retained: its current state comes at once
                self.client.subscribe(follow, self._on_engine_liveness)
        self.broadcast()

    def _on_engine_liveness(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, ServiceState):
            return
        with self._lock:
            if self._engine_liveness is not None and self._engine_liveness[0] != topic:
                return
            self._engine_liveness = (topic, model.state)
        self.broadcast()

    @property
    def engine_state(self) -> Literal["online", "offline", "unknown"]:
        """The table's ``engine/state``, unless the engine process's own topic (its last
        will) says offline: a crashed many-table engine cannot update every table."""
        with self._lock:
            if self._engine_liveness is not None and self._engine_liveness[1] == "offline":
                return "offline"
            return self._engine_table_state

    def _on_health(self, topic: str, model: WireModel) -> None:
        if isinstance(model, HubHealth):
            with self._lock:
                old = self.health
                self.health = model
            if old is None or ((old.backend, old.degraded, old.game)
                               != (model.backend, model.degraded, model.game)):
                self.broadcast()  # the status shows them
            self._notify(topic, model)

    # ------------------------------------------------------------ state for the pages

    @property
    def game_id(self) -> str | None:
        with self._lock:
            if self.other is not None:
                return self.other.game_id
            return self.public.game_id if self.public else None

    def status(self) -> ServiceStatus:
        return ServiceStatus(
            broker=self.connected,
            hub=self.hub_state,
            engine=self.engine_state,
            hub_backend=self.health.backend if self.health else None,
            engine_degraded=self.engine_degraded,
            hub_degraded=(self.health.degraded.reason
                          if self.health and self.health.degraded else None),
            hub_other_game=self.hub_other_game(),
            hub_change=self.hub_change,
        )

    def hub_other_game(self) -> str | None:
        """The game the hub serves when it is not the table's (None: the same, or a hub
        that does not say): its readers cannot sense the table's game."""
        health = self.health
        served = health.game if health is not None else None
        return served if served is not None and served != self.table_game().id else None

    def game_in_progress(self) -> str | None:
        """The id of the game the engine has in progress (being dealt or played), of
        whichever game the table plays, else None."""
        with self._lock:
            public, other = self.public, self.other
        if other is not None:
            table = other.view.get("table")
            status = table.get("status") if isinstance(table, dict) else None
            return other.game_id if status in ("dealing", "playing") else None
        if public is None or public.game_id is None or public.view.over:
            return None
        info = public.view.table
        if info is not None and info.status not in ("dealing", "playing"):
            return None
        return public.game_id

    def table_game(self) -> GameDefinition:
        """The game the table plays: its game's (the view of a table that has had no game
        yet names none: an engine's empty table is the default game's), else the configured
        one."""
        with self._lock:
            view = self.other if self.other is not None else self.public
            named = view.game if view is not None and view.game_id else None
        return games.get(named if named in games.game_ids() else self.settings.game)

    def table_state(self) -> TableState:
        with self._lock:
            game: GamePublicOut | GameOtherOut | None = self.public_out or self.other
            alerts = [AlertPublic.model_validate(a.model_dump()) for a in self.alerts.values()]
            game_id = self.game_id
            last = self.last_finished
        if last is not None and game is not None and last.game_id == game.game_id:
            last = None  # the finished game is the current one
        return TableState(
            table=self.settings.table,
            table_game=self.table_game().id,
            game=game,
            alerts=alerts,
            status=self.status(),
            joined=self.secrets.joined(game_id),
            phones=self.phones(),
            virtual=self.virtual_public(),
            last_game=last,
        )

    def phone(self, seat: int, opened: bool) -> None:
        """A seat's page opened (or closed) its live socket: the table view says when the
        seat whose move it is has no phone connected (M5)."""
        with self._lock:
            before = self._phones[seat] > 0
            self._phones[seat] = max(0, self._phones[seat] + (1 if opened else -1))
            changed = before != (self._phones[seat] > 0)
        if changed:
            self.broadcast()

    def phones(self) -> list[bool]:
        with self._lock:
            return [n > 0 for n in self._phones]

    def seat_state(self, seat: int) -> SeatState:
        with self._lock:
            other = self.other
            own = self.other_seats.get(seat)
        if other is not None:  # another game: its seat view, only on this seat's socket
            with self._lock:
                alerts = [AlertPublic.model_validate(a.model_dump())
                          for a in self.alerts.values() if a.seat in (None, seat)]  # fmt: skip
            return SeatState(
                seat=seat, table_game=other.game, game_id=other.game_id, game=other,
                seat_view=own[1] if own is not None and own[0] == other.game_id else None,
                alerts=alerts, play=self.settings.virtual)
        with self._lock:
            game = self.public_out
            game_id = self.public.game_id if self.public else None
            model = self.seat_views.get(seat)
            kept = self.reveals.get(seat)
            alerts = [
                AlertPublic.model_validate(a.model_dump())
                for a in self.alerts.values()
                if a.seat in (None, seat)
            ]
        view = model.view if model and model.game_id == game_id else None
        stack = view.stack if view is not None else None
        reveal = kept[1] if kept is not None and kept[0] == game_id else None
        now = self.public.view if self.public is not None else None
        if kept is not None and now is not None and now.turns > kept[2] and now.turn == seat:
            reveal = None  # a look for one moment (G9): gone at the seat's next turn
        colour = None
        expected_seat = None
        phase = None
        last_card = None
        memory_aid = False
        blocked = False
        if game is not None:
            seats = game.view.seats
            colour = seats[seat].colour if seat < len(seats) else None
            expected_seat = game.view.expected.seat
            phase = game.view.phase
            last_card = game.view.expected.last_card
            memory_aid = game.view.config.memory_aid if game.view.config else False
            blocked = corner_blocked(game) == seat
        return SeatState(
            seat=seat,
            table_game=self.table_game().id,
            game_id=game_id,
            colour=colour,
            memory_aid=memory_aid,
            stack=list(stack) if stack is not None and memory_aid else None,
            reveal=reveal,
            recipes=list(view.recipes) if view is not None else [],
            can_keep=phase == "last_card" and expected_seat == seat,
            last_card=last_card if expected_seat == seat else None,
            can_declinatio=blocked,
            game=game,
            alerts=alerts,
            play=self.settings.virtual and self.status().hub_backend == "sim",
        )

    def dismiss_reveal(self, seat: int) -> bool:
        """Hide a seat's Perluceo reveal for good (it is shown once)."""
        with self._lock:
            found = self.reveals.pop(seat, None) is not None
        if found:
            self.broadcast(seats_only=seat)
        return found

    def join_info(self, seat: int, base_url: str) -> JoinInfo | None:
        game_id = self.game_id
        if game_id is None:
            return None
        # A one-time code, not the secret (dashboard.seats): it is traded once, at /join.
        token = self.secrets.join_token(game_id, seat)
        # The table's public address (a phone can open it), not the one this browser used.
        base = self.settings.public_base() or base_url
        url = f"{base.rstrip('/')}/join/{seat}?token={token}"
        return JoinInfo(seat=seat, url=url, joined=self.secrets.joined(game_id)[seat])

    # ------------------------------------------------------------ fan-out

    def add_subscriber(self, channel: Channel, secret: str | None = None) -> Subscriber:
        sub = Subscriber(channel=channel, loop=asyncio.get_running_loop(), game_id=self.game_id,
                         secret=secret)
        with self._lock:
            self._subscribers.add(sub)
        return sub

    def remove_subscriber(self, sub: Subscriber) -> None:
        with self._lock:
            self._subscribers.discard(sub)

    def broadcast(self, seats_only: int | None = None) -> None:
        """Send the current state to every subscriber (thread-safe, in the order the states
        were read). Never called while holding `_lock`."""
        with self._broadcast_lock:
            self._broadcast(seats_only)

    def _broadcast(self, seats_only: int | None) -> None:
        with self._lock:
            subs = list(self._subscribers)
        # What the pages are told about the broker link, whoever broadcasts (the connect
        # hook or check_connection), so a flip in between is never missed.
        self._was_connected = self.connected
        if not subs:
            return
        table_message: Message | None = None
        seat_messages: dict[int, Message] = {}
        game_id = self.game_id
        current = {seat: self.secrets.current(game_id, seat) for seat in range(N_SEATS)}
        # Each update is serialised and framed once (per channel), then handed to every
        # subscriber's event loop in one call: no per-viewer work in this thread.
        batches: dict[asyncio.AbstractEventLoop, list[tuple[Subscriber, Message]]] = {}
        for sub in subs:
            if sub.channel == "table":
                if seats_only is not None:
                    continue
                if table_message is None:
                    state = self.table_state()
                    self._was_connected = state.status.broker  # exactly what is sent
                    table_message = shared_message(state.model_dump_json(by_alias=True))
                message = table_message
            else:
                seat = int(sub.channel)
                if seats_only is not None and seat != seats_only:
                    continue
                if sub.secret != current[seat]:
                    # A new game this phone has no seat in, or the host freed the seat: its
                    # secret opens nothing now, and its socket is closed.
                    message = EXPIRED_MESSAGE if sub.game_id != game_id else REVOKED_MESSAGE
                else:
                    sub.game_id = game_id  # a phone keeps its seat in the next game
                    if seat not in seat_messages:
                        seat_messages[seat] = shared_message(
                            self.seat_state(seat).model_dump_json(by_alias=True))
                    message = seat_messages[seat]
            batches.setdefault(sub.loop, []).append((sub, message))
        for loop, batch in batches.items():
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(_offer_all, batch)

    # ------------------------------------------------------------ commands

    def command(
        self, command: Command[A, Any], args: A | None = None, *, seat: int | None = None,
        source: str = "dashboard",
    ) -> CommandResult:
        """Ask the engine (``cmd/<verb>``, `engine.wire.api.GAME_API`) and wait for its
        answer; no args: the verb's defaults."""
        return self._request(self.topics.cmd(command.verb), dump(command.parse(args)),
                             seat=seat, source=source)

    def hub_command(self, command: Command[A, Any], args: A | None = None,
                    timeout: float | None = None) -> CommandResult:
        """Ask the hub (``hub/cmd/<verb>``, `engine.wire.api.HUB_API`) and wait for its
        answer (`timeout`: longer than the usual command's, for a slow one)."""
        return self._request(self.topics.hub_cmd(command.verb), dump(command.parse(args)),
                             seat=None, source="dashboard", timeout=timeout)

    def _request(
        self, topic: str, args: dict[str, JsonValue], *, seat: int | None, source: str,
        timeout: float | None = None,
    ) -> CommandResult:
        if not self.connected:
            return CommandResult(
                ok=False,
                unavailable=True,
                error=f"the dashboard is not connected to the MQTT broker "
                f"({self.client.broker.redacted()}); check that it is running",
                code="not_connected",
            )
        try:
            reply = self.client.request(
                topic, args, timeout=timeout or self.settings.command_timeout, seat=seat,
                source=source,
            )
        except RequestTimeout as exc:
            return CommandResult(ok=False, unavailable=True, error=str(exc), code="no_answer")
        except (MqttError, WireError) as exc:
            return CommandResult(ok=False, unavailable=True, error=str(exc), code="unavailable")
        if reply.status == "ok":
            return CommandResult(ok=True, data=reply.data)
        return CommandResult(ok=False, error=reply.error, code=reply.code, rule=reply.rule)

    def seats(self) -> int:
        """How many seats the current game has (4 before any game)."""
        with self._lock:
            game = self.public_out
            other = self.other
        if other is not None:
            seats = other.view.get("seats")
            return len(seats) if isinstance(seats, list) and seats else N_SEATS
        if game is None:
            return N_SEATS
        if game.view.players:
            return game.view.players
        config = game.view.config
        return len(config.colours) if config and config.colours else N_SEATS

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Poll `predicate` until true or `timeout` (used by tests and the virtual deal)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.01)
        return predicate()

"""`cauldron engine`: many tables' games from their hubs' events, over MQTT, nothing lost.

Per table (``cauldron/<table>/…``) it subscribes to ``hub/event`` (QoS 1), drops duplicates
by ``(epoch, seq)`` and puts reordered events back in order (a gap is asked again from the
hub with ``hub/cmd/replay``, and skipped after ``gap_timeout`` s), feeds the table's
`TableInterpreter`, writes the input and its actions to the table's log (`engine.service.store`)
*before* publishing anything, then publishes:

- ``game/public`` (retained): `GamePublic`, the public view plus the table state;
- ``game/seat/<n>`` (retained): `GameSeat`, what only that seat may see (its colour,
  recipes, own stack with the memory aid), published when it changes; a Perluceo reveal goes
  once, not retained, as the view's ``reveal``;
- ``game/alert``: `GameAlert` raised (``active``) and cleared (same ``alert_id``);
- ``game/events`` (QoS 1, not retained): `GameEvents`, the actions just applied and their
  public events (config and dealt grid when a game starts): what a person at the table
  sees happen, for bots and audit; published before the views it leads to;
- ``hub/cmd/turn`` ``{"seat"}`` when the turn changes, ``hub/cmd/buzz`` ``{"ms"}`` on an error
  alert (the hub's LEDs and buzzer);
- ``engine/state`` (retained) ``online``; the MQTT last will says ``offline`` (on the one
  table's topic, or on ``cauldron/<name>/engine/state`` when serving several tables, which
  each table's ``engine/state`` then names as its ``liveness_topic``).

Commands ``cmd/<verb>`` (`GAME_VERBS`): ``new_game`` (args: colours, first_seat,
start_positions, removed_colour, recipes, recipe_cards, second_player_bonus, memory_aid),
``confirm``, ``undo``, ``keep``, ``discard``, ``declinatio``, ``end``. The answer is
``{transaction, status, data, error}``; a command that does not fit the moment is refused
with a reason and changes nothing. An engine that does not serve the table (another shard,
another engine's table at a venue, an id not in the venue's list) sends no answer at all, so
each command gets exactly one. Every table is handled on the MQTT client's single
dispatcher thread; with a PostgreSQL store, tables come and go as this engine claims and
hands them over (`engine.service.ownership`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.rules import GameLog, replay
from engine.rules.errors import RulesError
from engine.rules.events import Event, PerluceoReveal
from engine.service.errors import Refused, ServiceError, StoreError
from engine.service.interpreter import Outcome, Status, TableInterpreter
from engine.service.store import (
    Store,
    TableLog,
    default_data_dir,
    open_store,
    sensor_input,
    snapshot_state,
)
from engine.wire.contract import (
    CommandRequest,
    GameAlert,
    GameEvents,
    GamePublic,
    GameSeat,
    HubEvent,
    HubSnapshot,
    ServiceState,
    TopicInfo,
    Topics,
    WireModel,
    encode,
)
from engine.wire.mqtt import CommandRefused, NoAnswer, WireClient
from engine.wire.sequence import HubCursor

if TYPE_CHECKING:
    from engine.service.ownership import Ownership

log = logging.getLogger("cauldron.engine")
VERSION = "1"
VIEW_QOS = 0
# `history` answers in messages within `GameEvents`' limits (64 actions, 256 events).
HISTORY_ACTIONS = 64
HISTORY_EVENTS = 256


@dataclass
class ServiceConfig:
    mqtt: str = "mqtt://127.0.0.1:1883"
    data_dir: Path = field(default_factory=default_data_dir)
    tables: frozenset[str] | None = None  # None: every table (subject to the shard)
    shard: tuple[int, int] | None = None  # (i, n): tables whose crc32 % n == i
    name: str = "engine"
    base: str = "cauldron"
    buzz_ms: int = 300
    hub_io: bool = True  # send hub/cmd/turn and hub/cmd/buzz
    gap_timeout: float = 3.0
    # Where games are kept: None (SQLite in data_dir) or a URL (`open_store`); with
    # postgresql://, tables are claimed by the venue's engines (`engine.service.ownership`).
    store: str | None = None
    claim_interval: float = 1.0

    def serves(self, table: str) -> bool:
        if self.tables is not None and table not in self.tables:
            return False
        if self.shard is not None:
            index, count = self.shard
            return zlib.crc32(table.encode()) % count == index
        return True


class TableRuntime:
    def __init__(self, name: str, store: TableLog) -> None:
        self.name = name
        self.topics: Topics = Topics(name)
        self.store = store
        self.interp = store.rebuild()
        self.cursors: dict[str, HubCursor] = {
            hub: HubCursor(epoch, seq) for hub, (epoch, seq) in store.hub_positions().items()
        }
        self.turn: int | None = None
        self.sent_seats: dict[int, bytes] = {}


class EngineService:
    """The engine service for every table this process serves."""

    def __init__(self, config: ServiceConfig, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.tables: dict[str, TableRuntime] = {}
        self.broken: dict[str, str] = {}  # tables whose log could not be replayed
        self.stats: dict[str, int] = {
            "events": 0, "duplicates": 0, "reordered": 0, "gaps_skipped": 0, "commands": 0,
            "refused": 0, "ignored_tables": 0, "errors": 0,
        }
        self.store: Store = open_store(config.store or config.data_dir)
        self.engine_id = engine_id(config.name)
        # The venue's table list (SQLite: venue.toml in the data dir; PostgreSQL: in the
        # database, followed by the ownership): other table ids are refused.
        self.venue = None if self.store.claims else self.store.venue_tables()
        self.ownership: Ownership | None = None
        self._snapshots: dict[str, HubSnapshot] = {}  # latest per table, for a claim
        single = sorted(config.tables)[0] if config.tables and len(config.tables) == 1 else None
        if self.store.claims:  # many engines, each its own liveness topic
            state_table = self.engine_id
        else:
            state_table = single or (config.name if config.shard is None
                                     else f"{config.name}-{config.shard[0]}-of-{config.shard[1]}")
        self.state_topic = Topics(state_table, config.base).engine_state
        self.client = WireClient(
            config.mqtt,
            # Unique per process: two engines under one client id would kick each other off.
            # So the broker keeps no session for us: what a restart missed comes from the
            # hub's outbox (its retained snapshot tells us to ask for a replay).
            client_id=f"cauldron-{self.engine_id}",
            state_topic=self.state_topic,
            clean_session=True,
            base=config.base,
        )
        self._stopped = threading.Event()
        # Handlers run on the MQTT dispatcher thread; the lock lets `command` be called
        # directly too (tests, an embedding program).
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ lifecycle

    def load(self) -> None:
        """Rebuild every open game of the tables this process serves, from their logs
        (with a shared store, tables come as they are claimed instead)."""
        if self.store.claims:
            return
        for table in self.store.tables():
            if not self.serves(table):
                continue
            try:
                self.table(table)
            except (ServiceError, RulesError) as exc:  # one damaged log must not stop a venue
                self.stats["errors"] += 1
                self.broken[table] = str(exc)
                log.error("table %s is not served: its log does not replay: %s", table, exc)

    def start(self, wait: float | None = 10.0) -> EngineService:
        self.load()
        any_table = Topics("+", self.config.base)
        self.client.subscribe(any_table.hub_event, self._on_hub_event)
        self.client.subscribe(any_table.hub_snapshot, self._on_snapshot)
        self.client.serve(any_table.cmd("+"), self._on_command)
        self.client.add_connect_hook(lambda: set_no_delay(self.client))
        self.client.add_connect_hook(self._republish_all)
        self.client.add_connect_hook(self._forget_requests)
        self.client.start(wait=wait)
        if wait is not None:  # hub events and commands are heard from here on
            self.client.wait_ready(wait)
        self._start_ownership()
        return self

    def stop(self) -> None:
        if self.ownership is not None:  # hand every table over before going
            self.ownership.stop()
        if self.client.connected:
            for runtime in self.tables.values():
                self._publish(runtime.topics.engine_state,
                              self._state("offline", runtime.topics), retain=True)
        self.client.stop()
        for runtime in self.tables.values():
            runtime.store.close()
        self.store.close()
        self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._stopped.wait(timeout)

    def table(self, name: str) -> TableRuntime:
        runtime = self.tables.get(name)
        if runtime is None:
            runtime = TableRuntime(name, self.store.table(name))
            runtime.topics = Topics(name, self.config.base)
            runtime.turn = runtime.interp.turn
            self.tables[name] = runtime
            if self.client.connected:
                self._publish(runtime.topics.engine_state,
                              self._state("online", runtime.topics), retain=True)
        return runtime

    def _state(self, state: str, topics: Topics | None = None) -> ServiceState:
        """A table's ``engine/state`` (`topics`) or the process's own (the last will's)."""
        liveness = (self.state_topic if topics is not None
                    and topics.engine_state != self.state_topic else None)
        return ServiceState(state=state, client_id=self.client.client_id,  # type: ignore[arg-type]
                            ts=self.clock(), version=VERSION, liveness_topic=liveness)

    def _forget_requests(self) -> None:
        """A replay asked before this (re)connection may have been lost with the broker:
        let the hub's next snapshot (retained, so it comes now) ask for it again."""
        with self._lock:
            for runtime in self.tables.values():
                for cursor in runtime.cursors.values():
                    cursor.asked = min(cursor.asked, cursor.last)

    def _republish_all(self) -> None:
        with self._lock:
            for runtime in list(self.tables.values()):
                self._republish(runtime)

    def _republish(self, runtime: TableRuntime) -> None:
        self._publish(runtime.topics.engine_state, self._state("online", runtime.topics),
                      retain=True)
        runtime.sent_seats.clear()
        self.publish_views(runtime, Outcome(changed=True))

    # ------------------------------------------------------------------ hub events

    def _on_hub_event(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, HubEvent):
            return
        table = topic.split("/")[-3]  # <base>/<table>/hub/{event,snapshot}: checked already
        if not self.serves(table) or table in self.broken:
            self.stats["ignored_tables"] += 1
            return
        self.receive(table, model)

    def receive(self, table: str, event: HubEvent) -> list[Outcome]:
        """One received hub event: dedup, reorder, handle what is now in order."""
        with self._lock:
            return self._receive(table, event)

    def _receive(self, table: str, event: HubEvent) -> list[Outcome]:
        runtime = self.table(table)
        # First sight of this hub, or its outbox started a new epoch: begin here.
        cursor = HubCursor.of(runtime.cursors, event)
        if not cursor.offer(event):
            self.stats["duplicates"] += 1
            log.info("table %s: dropped duplicate event %s/%s", table, event.epoch, event.seq)
            return []
        if event.seq != cursor.last + 1:
            self.stats["reordered"] += 1
        return self._drain(runtime, event.hub_id, cursor)

    def _drain(self, runtime: TableRuntime, hub_id: str, cursor: HubCursor) -> list[Outcome]:
        outcomes = []
        while True:
            while (ready := cursor.pop_next()) is not None:
                outcome = self._process(runtime, ready)
                if outcome is not None:
                    outcomes.append(outcome)
            if not cursor.pending:
                cursor.gap_since = None
                cursor.retried = False
                return outcomes
            now = time.monotonic()
            if cursor.gap_since is None:
                cursor.gap_since = now
            first_pending = min(cursor.pending)
            if cursor.asked < first_pending - 1:
                cursor.asked = first_pending - 1
                self._ask_replay(runtime, cursor, cursor.last + 1, first_pending - 1)
            if now - cursor.gap_since < self.config.gap_timeout:
                return outcomes
            if not cursor.retried:  # the request or its answer may have been lost: once more
                cursor.retried = True
                cursor.gap_since = now
                self._ask_replay(runtime, cursor, cursor.last + 1, first_pending - 1)
                return outcomes
            log.warning("table %s: events %s..%s of hub %s never came; skipping them",
                        runtime.name, cursor.last + 1, first_pending - 1, hub_id)
            self.stats["gaps_skipped"] += 1
            cursor.skip_gap()
            cursor.gap_since = None
            cursor.retried = False

    def _ask_replay(self, runtime: TableRuntime, cursor: HubCursor, first: int,
                    last: int | None) -> None:
        request = CommandRequest(
            transaction=f"engine-replay-{first}-{last}",
            args={"epoch": cursor.epoch, "from_seq": first, "to_seq": last},
            source="engine",
        )
        self._publish(runtime.topics.hub_cmd("replay"), request)

    def _on_snapshot(self, topic: str, model: WireModel) -> None:
        if not isinstance(model, HubSnapshot):
            return
        table = topic.split("/")[-3]  # <base>/<table>/hub/{event,snapshot}: checked already
        if self.ownership is not None and len(self._snapshots) < 100_000:
            self._snapshots[table] = model  # what to resume from if we claim it later
        if not self.serves(table) or table in self.broken:
            return
        with self._lock:
            self._snapshot(table, model)

    def _snapshot(self, table: str, model: HubSnapshot) -> None:
        runtime = self.table(table)
        cursor = runtime.cursors.get(model.hub_id)
        if cursor is None or cursor.epoch != model.epoch:
            # A hub not followed from its start (a new engine, a reset outbox): take what
            # its readers see now, then follow its events from there.
            interp = runtime.interp
            outcome = interp.resync(*snapshot_state(model), ts=model.ts)
            runtime.store.append_snapshot(model, interp)
            runtime.cursors[model.hub_id] = HubCursor(model.epoch, model.last_seq)
            self.stats["resyncs"] = self.stats.get("resyncs", 0) + 1
            self.publish_views(runtime, outcome)
            return
        if model.last_seq > max(cursor.last, cursor.asked, max(cursor.pending, default=0)):
            cursor.asked = model.last_seq
            self._ask_replay(runtime, cursor, cursor.last + 1, model.last_seq)

    def _process(self, runtime: TableRuntime, event: HubEvent) -> Outcome | None:
        inp = sensor_input(event)
        interp = runtime.interp
        try:
            outcome = interp.handle(inp) if inp is not None else Outcome()
            written = runtime.store.append(ts=event.ts, interp=interp, actions=outcome.actions,
                                           hub_event=event, undone=outcome.undone)
        except StoreError:
            # Not written: forget it here too (the log is the truth), and let a resend or a
            # replay from the hub bring it again.
            self.stats["errors"] += 1
            log.exception("table %s: event %s/%s not stored", runtime.name, event.epoch,
                          event.seq)
            runtime.interp = runtime.store.rebuild()
            cursor = runtime.cursors.get(event.hub_id)
            if cursor is not None and cursor.epoch == event.epoch:
                cursor.last = min(cursor.last, event.seq - 1)
            return None
        except Exception:
            self.stats["errors"] += 1
            log.exception("table %s: event %s/%s failed; state rebuilt from the log",
                          runtime.name, event.epoch, event.seq)
            runtime.interp = runtime.store.rebuild()
            return None
        if not written:  # stored before (a copy that outlived a restart)
            self.stats["duplicates"] += 1
            runtime.interp = runtime.store.rebuild()
            return None
        self.stats["events"] += 1
        if inp is not None:
            self.publish_views(runtime, outcome)
        return outcome

    # ------------------------------------------------------------------ commands

    def _on_command(self, info: TopicInfo, request: CommandRequest) -> Any:
        if not self.serves(info.table):  # another engine answers: one answer per command
            self.stats["ignored_tables"] += 1
            raise NoAnswer
        if info.table in self.broken:
            raise CommandRefused(f"table {info.table}'s log does not replay "
                                 f"({self.broken[info.table]}); see the engine's log")
        assert info.verb is not None
        try:
            return self.command(info.table, info.verb, dict(request.args), seat=request.seat)
        except Refused as exc:
            self.stats["refused"] += 1
            raise CommandRefused(str(exc)) from None

    def command(self, table: str, verb: str, args: dict[str, Any],
                seat: int | None = None) -> dict[str, Any]:
        """Run one command for `table`; raises `Refused` (nothing changed) when it does not fit."""
        with self._lock:
            return self._command(table, verb, args, seat)

    def _command(self, table: str, verb: str, args: dict[str, Any],
                 seat: int | None) -> dict[str, Any]:
        runtime = self.table(table)
        interp = runtime.interp
        if verb == "hint":  # read-only: nothing is stored or published
            return self._hint(interp, args, seat)
        if verb == "history":  # read-only: the game's public action stream so far
            return {"messages": [m.model_dump(exclude_none=True)
                                 for m in self._history(runtime)]}
        ts = self.clock()
        observed = None
        if verb == "new_game":
            if "game_id" in args:
                raise Refused("new_game: the engine names the game; do not send game_id",
                              code="bad_args")
            args["game_id"] = time.strftime("%Y%m%d-%H%M%S", time.gmtime(ts)) + (
                f"-{len(runtime.store.games()) + 1}")
            observed = interp.observed()
        outcome = interp.command(verb, args, seat=seat, ts=ts)
        self._store_command(runtime, ts, outcome, verb, args, seat, observed)
        self.stats["commands"] += 1
        self.publish_views(runtime, outcome)
        return {
            "table": table,
            "game_id": interp.game_id,
            "status": interp.status.value,
            "actions": [a.to_wire() for a in outcome.actions],
            "instructions": outcome.instructions,
            "prompt": interp.prompt(),
        }

    def _store_command(self, runtime: TableRuntime, ts: float, outcome: Outcome, verb: str,
                       args: dict[str, Any], seat: int | None,
                       observed: dict[str, Any] | None) -> None:
        """Write a command before anything is published; not written, it did not happen:
        the game goes back to what the log says."""
        try:
            runtime.store.append(ts=ts, interp=runtime.interp, actions=outcome.actions,
                                 verb=verb, args=args, seat=seat, observed=observed,
                                 undone=outcome.undone)
        except StoreError as exc:
            self.stats["errors"] += 1
            log.error("table %s: %s not stored: %s", runtime.name, verb, exc)
            runtime.interp = runtime.store.rebuild()
            raise Refused(f"{verb}: not stored, so nothing changed ({exc}); try again",
                          code="storage") from None

    @staticmethod
    def _hint(interp: TableInterpreter, args: dict[str, Any], seat: int | None) -> dict[str, Any]:
        """What a bot suggests to `seat`, seeing only what that seat sees (engine.bots)."""
        from engine.bots import BotError, hint

        game = interp.game
        if game is None or interp.status is not Status.PLAYING:
            raise Refused("no game is in progress: there is nothing to hint", code="no_game")
        if seat is None:
            raise Refused("hint: say which seat asks (the request's seat)", code="bad_args")
        level = args.get("level", "greedy")
        lang = args.get("lang", "en")
        if level not in ("greedy", "search") or lang not in ("fr", "en", "de"):
            raise Refused("hint: level is greedy or search, lang is fr, en or de",
                          code="bad_args")
        try:
            suggestion = hint(game, seat, level=level, lang=lang)
        except BotError as exc:
            raise Refused(f"hint: {exc}", code="not_your_turn") from None
        return dict(suggestion.to_json())

    @staticmethod
    def _history(runtime: TableRuntime) -> list[GameEvents]:
        """The current game's `GameEvents` from its start, as a follower that missed them
        (a restarted bot, an audit) would have received them: public events only, in
        messages within the model's size limits."""
        interp = runtime.interp
        game = interp.game
        if game is None:
            raise Refused("history: no game on this table yet", code="no_game")
        replayed = replay(GameLog.of(game).without_last(len(game.actions)))
        messages: list[GameEvents] = []
        actions: list[dict[str, Any]] = []
        events = [e.to_wire() for e in replayed.opening_events if not e.private]

        def flush(index: int) -> None:
            start = not messages
            messages.append(GameEvents(
                table=runtime.name, game_id=interp.game_id, status=interp.status.value,
                index=index, actions=list(actions), events=list(events),
                config=game.config.to_wire() if start else None,
                grid=list(game.deal.grid) if start else None))
            actions.clear()
            events.clear()

        index = 0
        for number, action in enumerate(game.actions):
            public = [e.to_wire() for e in replayed.apply(action) if not e.private]
            if actions and (len(actions) >= HISTORY_ACTIONS
                            or len(events) + len(public) > HISTORY_EVENTS):
                flush(index)
                index = number
            actions.append(action.to_wire())
            events.extend(public)
        flush(index)
        return messages

    # ------------------------------------------------------------------ publishing

    def _publish(self, topic: str, model: WireModel, retain: bool = False, qos: int = 1) -> None:
        self.client.publish(topic, model, retain=retain, qos=qos)

    def publish_views(self, runtime: TableRuntime, outcome: Outcome) -> None:
        interp = runtime.interp
        topics = runtime.topics
        now = self.clock()
        game_id = interp.game_id
        for alert in outcome.cleared:
            self._publish(topics.game_alert, self._alert(alert.to_wire(), False, game_id, now))
        for alert in outcome.raised:
            self._publish(topics.game_alert, self._alert(alert.to_wire(), True, game_id, now))
        if outcome.actions or outcome.started or outcome.undone or outcome.ended:
            self._publish_game_events(runtime, outcome, now)
        if outcome.changed:
            turn = interp.turn
            public = GamePublic(table=runtime.name, game_id=game_id, turn=turn, ts=now,
                                view=interp.public_view())
            # Views are state, each superseding the last: QoS 0 (no PUBACK traffic); after a
            # reconnect every view is published again (`_republish_all`).
            self._publish(topics.game_public, public, retain=True, qos=VIEW_QOS)
            if turn != runtime.turn:
                runtime.turn = turn
                if self.config.hub_io:
                    self._hub_command(runtime, "turn", {"seat": turn})
            if (outcome.actions or outcome.started or outcome.ended or outcome.undone
                    or not runtime.sent_seats):  # a seat's own view changes with the game
                self._publish_seats(runtime, outcome.private_events, game_id, now)
        if self.config.hub_io and any(a.severity == "error" for a in outcome.raised):
            self._hub_command(runtime, "buzz", {"ms": self.config.buzz_ms})

    def _publish_game_events(self, runtime: TableRuntime, outcome: Outcome, now: float) -> None:
        interp = runtime.interp
        game = interp.game
        if game is None:
            return
        started = outcome.started
        model = GameEvents(
            table=runtime.name, game_id=interp.game_id, status=interp.status.value,
            index=len(game.actions) - len(outcome.actions),
            actions=[a.to_wire() for a in outcome.actions],
            events=[e.to_wire() for e in outcome.events if not e.private],  # public only
            undone=outcome.undone,
            config=game.config.to_wire() if started else None,
            grid=list(game.deal.grid) if started else None,
            ts=now,
        )
        self._publish(runtime.topics.game_events, model)

    def _publish_seats(self, runtime: TableRuntime, private: list[Event], game_id: str | None,
                       now: float) -> None:
        interp = runtime.interp
        players = interp.game.players if interp.game is not None else 0
        for seat in range(players):
            view = interp.seat_view(seat)
            if view is None:
                continue
            model = GameSeat(seat=seat, game_id=game_id, ts=None, view=view)
            payload = encode(model)
            if runtime.sent_seats.get(seat) != payload:  # only what changed for that seat
                runtime.sent_seats[seat] = payload
                self.client.publish_raw(runtime.topics.game_seat(seat), payload, retain=True,
                                        qos=VIEW_QOS)
            reveals = [e.cauldron for e in private
                       if isinstance(e, PerluceoReveal) and e.seat == seat]
            if reveals:  # once, not retained: a one-time look (G9)
                once = GameSeat(seat=seat, game_id=game_id, ts=now,
                                view=dataclasses.replace(view, reveal=reveals[-1]))
                self._publish(runtime.topics.game_seat(seat), once)

    @staticmethod
    def _alert(wire: dict[str, Any], active: bool, game_id: str | None, now: float) -> GameAlert:
        rule = wire["rule"]
        params = dict(wire["params"])
        return GameAlert(
            alert_id=wire["alert_id"], rule=rule, kind=wire.get("kind", "breach"),
            message=wire["message"][:500],
            instruction=wire["instruction"][:500], severity=wire["severity"], seat=wire["seat"],
            active=active, game_id=game_id, ts=now, params=params,
        )

    def _hub_command(self, runtime: TableRuntime, verb: str, args: dict[str, Any]) -> None:
        self.stats[f"hub_{verb}"] = self.stats.get(f"hub_{verb}", 0) + 1
        request = CommandRequest(transaction=f"engine-{verb}-{self.stats[f'hub_{verb}']}",
                                 args=args, source="engine")
        self._publish(runtime.topics.hub_cmd(verb), request)

    # ------------------------------------------------------------------ ownership

    def serves(self, table: str) -> bool:
        """Whether this process serves `table` now: its settings allow it (tables, shard)
        and, with a shared store, it holds the table's lock."""
        if not self.config.serves(table):
            return False
        if self.venue is not None and table not in self.venue:
            return False
        return self.ownership is None or self.ownership.owns(table)

    def _start_ownership(self) -> None:
        from engine.service.ownership import Ownership
        from engine.service.store.postgres import PostgresStore

        if not isinstance(self.store, PostgresStore) or self.ownership is not None:
            return
        self.ownership = Ownership(self.store, self.engine_id, on_claim=self._claimed,
                                   on_release=self._released, allowed=self.config.serves,
                                   interval=self.config.claim_interval).start()

    def _claimed(self, table: str) -> None:
        """A table just became ours: its game from the log, what the hubs hold beyond it,
        and its state for everyone watching."""
        with self._lock:
            self.broken.pop(table, None)
            self.tables.pop(table, None)
            try:
                runtime = self.table(table)
            except (ServiceError, RulesError) as exc:  # kept (and reported), not bounced
                self.stats["errors"] += 1
                self.broken[table] = str(exc)
                log.error("table %s is not served: its log does not replay: %s", table, exc)
                return
            runtime.turn = None  # tell the hub whose turn it is
            self._republish(runtime)
            for cursor in runtime.cursors.values():  # events the last owner never stored
                self._ask_replay(runtime, cursor, cursor.last + 1, None)
            snapshot = self._snapshots.get(table)
            if snapshot is not None:
                self._snapshot(table, snapshot)
            self.stats["claims"] = self.stats.get("claims", 0) + 1
        log.info("table %s: claimed (%s)", table, runtime.interp.status.value)

    def _released(self, table: str) -> None:
        """A table goes to another engine: stop serving it (before its lock goes)."""
        with self._lock:
            runtime = self.tables.pop(table, None)
            self.broken.pop(table, None)
            if runtime is not None:
                runtime.store.close()
        log.info("table %s: handed over", table)

    # ------------------------------------------------------------------ queries

    def status(self) -> dict[str, Any]:
        return {
            "tables": {
                name: {"status": rt.interp.status.value, "game_id": rt.interp.game_id,
                       "inputs": rt.interp.inputs}
                for name, rt in self.tables.items()
            },
            "stats": dict(self.stats),
        }


def set_no_delay(client: WireClient) -> None:
    """Turn Nagle's algorithm off on the client's socket: small MQTT packets otherwise wait
    for the peer's delayed ACK (~40 ms per hop). WireClient does not do it (yet)."""
    try:
        sock: Any = client._client.socket()
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (AttributeError, OSError) as exc:  # TLS wrappers, a socket already closed
        log.debug("TCP_NODELAY not set: %s", exc)


def engine_id(name: str) -> str:
    """This engine's id: its name, host, pid and a random tag (unique on a venue's network,
    even for two services in one process)."""
    host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname().split(".")[0])[:20]
    return f"{name[:24]}-{host}-{os.getpid()}-{uuid.uuid4().hex[:4]}"


def open_games(service: EngineService) -> list[str]:
    return [name for name, rt in service.tables.items()
            if rt.interp.status in (Status.DEALING, Status.PLAYING)]

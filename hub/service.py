"""The running hub: reader changes -> `HubEvent`s on MQTT, with nothing lost.

Each poll of the back-end gives confirmed changes; each becomes a `HubEvent` (the tag map
turns the UID into a card id; a UID not in the map gives an ``unknown_tag`` event), is
written to the outbox under the next sequence number, then published with QoS 1, and is
marked delivered when the broker acknowledges it. Undelivered events are published again
after a restart. With each placed/removed event the outbox also stores, in the same
transaction, what it leaves on the reader; on start the back-end is seeded with that before
the first poll, so a card lifted while the hub was down (crash, kill -9, reboot) is reported
``removed`` and a card still lying there is not reported again.

A retained ``hub/snapshot`` says what every reader sees and the last seq; a retained
``hub/health`` says only each reader's health (no card: for the dashboard).

The hub answers ``hub/cmd/<verb>`` (see `engine.wire.contract.HUB_VERBS`): the engine drives
the table I/O with ``turn`` (the turn LEDs) and ``buzz`` (an illegal move); the hub reads no
``game/*`` topic (the broker's ACL gives it none). Button presses go out as ``button`` events.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from engine.wire.auth import ensure_key, keys_dir, sign_hub
from engine.wire.contract import (
    CommandRequest,
    HubEvent,
    HubHealth,
    HubSnapshot,
    ReaderSeen,
    TopicInfo,
    Topics,
    encode,
)
from engine.wire.mqtt import CommandRefused, WireClient
from hub.backends.base import Change, PollResult, ReaderBackend
from hub.errors import BackendError, HubError
from hub.outbox import Outbox
from hub.tagmap import TagMap

log = logging.getLogger("cauldron.hub")


class Hub:
    """Glue between one back-end, the tag map, the outbox, the MQTT client and table I/O."""

    def __init__(
        self,
        *,
        table: str,
        backend: ReaderBackend,
        client: WireClient,
        outbox: Outbox,
        tagmap: TagMap,
        hub_id: str | None = None,
        io: Any = None,
        poll_interval: float = 0.005,
        snapshot_interval: float = 0.5,
        health_hold: float = 1.0,
        resend_after: float = 10.0,
        clock: Callable[[], float] = time.time,
        key: bytes | None = None,
    ) -> None:
        self.table = table
        self.topics = Topics(table, client.base)
        self.backend = backend
        self.client = client
        self.outbox = outbox
        self.tagmap = tagmap
        self.hub_id = hub_id or f"hub-{table}"
        # Events and snapshots are signed with the hub's key for this table (made at the
        # first start, its enrolment, and shared with the engine): engine.wire.auth.
        self.key = key if key is not None else ensure_key(keys_dir(), table, "hub",
                                                          self.hub_id).key
        self.io = io
        self.poll_interval = poll_interval
        self.snapshot_interval = snapshot_interval
        self.clock = clock
        self.health_hold = health_hold
        self.resend_after = resend_after
        self._last_resend_check = time.monotonic()
        self._connected_since: float | None = None
        self._health_reported: dict[int, str] = {}
        self._health_candidate: dict[int, tuple[str, float]] = {}
        self.counts: dict[str, int] = {"events": 0, "unknown_tags": 0, "polls": 0, "errors": 0}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._snapshot_due = True
        self._last_snapshot = 0.0
        self._last_health: HubHealth | None = None
        self._emit_lock = threading.Lock()
        self.listeners: list[Callable[[HubEvent], None]] = []

    # ------------------------------------------------------------ lifecycle

    def start(self, poll: bool = True) -> Hub:
        """Seed and open the back-end, wire MQTT, replay undelivered events, start polling."""
        self.seed_backend()
        self.backend.open()
        client = self.client
        client.add_connect_hook(self._on_connected)
        client.serve(self.topics.hub_cmd("+"), self._on_command)
        if self.io is not None:
            self.io.on_button = self.button_pressed
        for row in self.outbox.undelivered():
            client.publish_raw(row.topic, row.payload, on_ack=self._acker(row.seq))
        client.start()
        if poll:
            self._thread = threading.Thread(target=self._run, name="hub-poll", daemon=True)
            self._thread.start()
        return self

    def seed_backend(self) -> dict[int, str]:
        """Give the back-end what the stored events say lies on each reader (before its first
        poll); returns that state."""
        stored = self.outbox.reader_state()
        state = {r: uid for r, uid in stored.items() if r < self.backend.n_readers}
        if len(state) < len(stored):
            log.warning("outbox knows readers %s beyond this layout's %d readers; ignored",
                        sorted(set(stored) - set(state)), self.backend.n_readers)
        self.backend.seed_state(state)
        if state:
            log.info("back-end seeded: %d reader(s) held a tag at the last event", len(state))
        return state

    def _on_connected(self) -> None:
        self._connected_since = time.monotonic()
        self._last_health = None  # a new session: publish the health again too
        self.publish_snapshot()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.client.stop()
        self.backend.close()
        if self.io is not None:
            self.io.close()
        self.outbox.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until `stop` (or ``timeout``); True when stopped."""
        return self._stop.wait(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except BackendError as exc:
                self.counts["errors"] += 1
                log.warning("reader back-end: %s", exc)
                self._stop.wait(1.0)
            except Exception:
                self.counts["errors"] += 1
                log.exception("hub poll failed")
                self._stop.wait(1.0)
            if self.poll_interval:
                self._stop.wait(self.poll_interval)

    # ------------------------------------------------------------ readers -> events

    def step(self) -> list[HubEvent]:
        """Poll the back-end once and publish what changed."""
        result = self.backend.poll()
        self.counts["polls"] += 1
        events = self.handle(result)
        now = time.monotonic()
        if self._snapshot_due and now - self._last_snapshot >= self.snapshot_interval:
            self.publish_snapshot()
        if now - self._last_resend_check >= self.resend_after / 2:
            self._last_resend_check = now
            self.resend_stale()
        return events

    def resend_stale(self) -> int:
        """Publish again events still unacknowledged ``resend_after`` seconds after they were
        stored while the link is up: a safety net that does not rely on the MQTT client's
        own resend (consumers drop the copies by seq)."""
        if not self.client.connected or self._connected_since is None:
            return 0
        if time.monotonic() - self._connected_since < self.resend_after:
            return 0  # just reconnected: the client is resending its own queue
        rows = self.outbox.undelivered_before(time.time() - self.resend_after)
        with self._emit_lock:
            for row in rows:
                self.client.publish_raw(row.topic, row.payload, on_ack=self._acker(row.seq))
        if rows:
            self.counts["resent"] = self.counts.get("resent", 0) + len(rows)
            log.warning("resent %d event(s) unacknowledged for %g s", len(rows),
                        self.resend_after)
        return len(rows)

    def handle(self, result: PollResult) -> list[HubEvent]:
        events = [self._change_event(change) for change in result.changes]
        events += self._health_events()
        if events or result.resynced:
            self._snapshot_due = True
        return events

    def _health_events(self) -> list[HubEvent]:
        """A reader's health is reported once it has held for ``health_hold`` seconds, so a
        noisy reader gives one event, not a stream of ok/flicker flips."""
        now = time.monotonic()
        events = []
        for reader, health in self.backend.health().items():
            if health == self._health_reported.get(reader, "ok"):
                self._health_candidate.pop(reader, None)
                continue
            candidate = self._health_candidate.get(reader)
            if candidate is None or candidate[0] != health:
                self._health_candidate[reader] = (health, now)
                continue
            if now - candidate[1] >= self.health_hold:
                del self._health_candidate[reader]
                self._health_reported[reader] = health
                events.append(self.emit(kind="reader_health", reader=reader, health=health,
                                        **self._place_fields(reader)))
        return events

    def _place_fields(self, reader: int) -> dict[str, Any]:
        place = self.backend.layout.place(reader)
        if place.kind == "cell":
            return {"cell": place.cell_key}
        if place.kind == "pad":
            return {"seat": place.seat}
        return {"position": place.position}

    def _change_event(self, change: Change) -> HubEvent:
        place = self.backend.layout.place(change.reader)
        where = self._place_fields(change.reader)
        card_id = self.tagmap.card_for(change.uid)
        common: dict[str, Any] = {"action": change.kind, "reader": change.reader, "uid": change.uid}
        readers = {change.reader: change.uid if change.kind == "placed" else None}
        if card_id is None:
            self.counts["unknown_tags"] += 1
            return self._emit(dict(kind="unknown_tag", **common, **where), readers)
        if place.kind == "perimeter":
            pawn = int(card_id[5:]) if card_id.startswith("pawn-") else None
            return self._emit(dict(kind="pawn", card_id=card_id, pawn_seat=pawn, **common,
                                   **where), readers)
        if card_id.startswith("pawn-"):
            # A pawn laid on a cell or pad is not a card: report it as unknown there.
            return self._emit(dict(kind="unknown_tag", **common, **where), readers)
        kind = "cell" if place.kind == "cell" else "pad"
        return self._emit(dict(kind=kind, card_id=card_id, **common, **where), readers)

    def emit(self, **fields: Any) -> HubEvent:
        """Store then publish one event; returns it (seq assigned by the outbox)."""
        return self._emit(fields)

    def _emit(self, fields: dict[str, Any],
              readers: dict[int, str | None] | None = None) -> HubEvent:
        """`emit`, storing ``readers`` (what now lies on the event's reader) with the event."""
        topic = self.topics.hub_event
        built: list[HubEvent] = []

        def make(seq: int) -> bytes:
            event = sign_hub(HubEvent(
                hub_id=self.hub_id, epoch=self.outbox.epoch, seq=seq, ts=self.clock(), **fields
            ), self.table, self.key)
            assert isinstance(event, HubEvent)
            built.append(event)
            return encode(event)

        with self._emit_lock:  # seq order == publish order
            seq, payload = self.outbox.append(topic, make, readers)
            self.client.publish_raw(topic, payload, on_ack=self._acker(seq))
        self.counts["events"] += 1
        event = built[0]
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:  # a display problem must never cost an event
                log.exception("event listener failed")
        return event

    def _acker(self, seq: int) -> Callable[[], None]:
        return lambda: self.outbox.mark_delivered(seq)

    def button_pressed(self, button: str, seat: int | None) -> None:
        if button == "confirm":
            self.emit(kind="button", action="pressed", button="confirm", seat=seat)
        else:
            self.emit(kind="button", action="pressed", button="undo")

    # ------------------------------------------------------------ snapshot

    def snapshot(self) -> HubSnapshot:
        state = self.backend.state()
        health = self.backend.health()
        readers = []
        for reader in range(self.backend.n_readers):
            uid = state.get(reader)
            readers.append(
                ReaderSeen(
                    reader=reader,
                    uid=uid,
                    card_id=self.tagmap.card_for(uid) if uid else None,
                    health=health.get(reader, "ok"),
                    **self._place_fields(reader),
                )
            )
        snapshot = sign_hub(HubSnapshot(
            hub_id=self.hub_id,
            epoch=self.outbox.epoch,
            last_seq=self.outbox.last_seq,
            ts=self.clock(),
            backend=self.backend.name,
            readers=readers,
        ), self.table, self.key)
        assert isinstance(snapshot, HubSnapshot)
        return snapshot

    def publish_snapshot(self) -> None:
        self._snapshot_due = False
        self._last_snapshot = time.monotonic()
        snapshot = self.snapshot()
        self.client.publish(self.topics.hub_snapshot, snapshot, retain=True)
        health = HubHealth.of(snapshot)
        if not health.same_as(self._last_health):  # the card-free part changes seldom
            self.client.publish(self.topics.hub_health, health, retain=True)
            self._last_health = health

    # ------------------------------------------------------------ engine -> table I/O

    def _on_command(self, info: TopicInfo, request: CommandRequest) -> Any:
        if info.table != self.table:
            raise CommandRefused(f"this hub serves table {self.table}, not {info.table}")
        args = request.args
        verb = info.verb
        if verb == "snapshot":
            self.publish_snapshot()
            return {"last_seq": self.outbox.last_seq}
        if verb == "replay":
            return self._replay(args)
        if verb in ("turn", "buzz"):
            if self.io is None:
                raise CommandRefused("this hub has no table I/O configured ([io] in the config)")
            if verb == "turn":
                seat = args.get("seat")
                if seat is not None and (not isinstance(seat, int) or not 0 <= seat < 4):
                    raise CommandRefused(f"turn: seat {seat!r} is not 0..3 or null")
                self.io.set_turn(seat)
                return {"seat": seat}
            ms = args.get("ms", 300)
            if not isinstance(ms, int) or not 0 < ms <= 5000:
                raise CommandRefused(f"buzz: ms {ms!r} is not 1..5000")
            self.io.buzz(ms / 1000)
            return {"ms": ms}
        if verb == "sim":
            return self._sim(args)
        raise CommandRefused(f"unknown hub command {verb!r}")

    def _replay(self, args: dict[str, Any]) -> dict[str, Any]:
        epoch, first, last = args.get("epoch"), args.get("from_seq"), args.get("to_seq")
        if epoch != self.outbox.epoch:
            raise CommandRefused(
                f"replay: epoch {epoch!r} is not this hub's ({self.outbox.epoch}); "
                "start afresh from hub/snapshot"
            )
        bad_last = last is not None and not isinstance(last, int)
        if not isinstance(first, int) or first < 1 or bad_last:
            raise CommandRefused("replay: from_seq must be an integer >= 1, to_seq an integer")
        rows = self.outbox.rows(first, last)
        with self._emit_lock:
            for row in rows:
                self.client.publish_raw(row.topic, row.payload, on_ack=self._acker(row.seq))
        kept_from = rows[0].seq if rows else None
        return {"replayed": len(rows), "first_kept": kept_from, "last_seq": self.outbox.last_seq}

    def _sim(self, args: dict[str, Any]) -> dict[str, Any]:
        from hub.backends.sim import SimulatedTable

        sim = self.backend
        if not isinstance(sim, SimulatedTable):
            raise CommandRefused(f"sim: this hub reads real cards ({sim.name} back-end)")
        action, where = args.get("action"), args.get("where")
        for key in ("where", "card_id", "uid"):
            value = args.get(key)
            if value is not None and not isinstance(value, str):
                raise CommandRefused(f"sim {action}: {key} {value!r} is not a string")
        try:
            if action == "place":
                uid = sim.place(str(where), card_id=args.get("card_id"), uid=args.get("uid"))
                return {"uid": uid}
            if action == "remove":
                return {"uid": sim.remove(str(where))}
            if action == "clear":
                sim.clear()
                return {}
            if action == "state":  # what really lies where (the virtual table resyncs)
                return {"lying": self._sim_lying(sim)}
        except (HubError, ValueError) as exc:
            raise CommandRefused(f"sim {action}: {exc}") from None
        raise CommandRefused(f"sim: action {action!r} is not place, remove, clear or state")

    def _sim_lying(self, sim: Any) -> dict[str, str]:
        """``{"2,3" | "pad:1" | "pos:7": card id (or "uid:<UID>" for an unknown tag)}``."""
        lying: dict[str, str] = {}
        for reader, uid in sim.truth().items():
            place = sim.layout.place(reader)
            where = (place.cell_key if place.cell is not None
                     else f"pad:{place.seat}" if place.seat is not None
                     else f"pos:{place.position}")
            lying[where] = self.tagmap.card_for(uid) or f"uid:{uid}"
        return lying

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
``hub/health`` says only each reader's health (no card: for the dashboard), and the hub's
own: ``degraded`` with a code when it cannot store its events (a read-only or full disk: it
keeps them in memory, in order, and stores them once it can; its data dir is probed every
``probe_interval`` seconds, so an idle hub finds out too) or its readers' bus fails.

Each stored event keeps what it named on its reader (`hub.outbox.Lying`): a card lifted is
reported under the name it was laid with, and a hub started on a changed tag map says, once
its back-end has settled, the new names of the cards still lying there (``removed`` old,
``placed`` new); events queued before the restart go out as they were stored.

The hub answers ``hub/cmd/<verb>`` (see `engine.wire.contract.HUB_VERBS`): the engine drives
the table I/O with ``turn`` (the turn LEDs) and ``buzz`` (an illegal move); the hub reads no
``game/*`` topic (the broker's ACL gives it none). Button presses go out as ``button`` events.
Every command must be signed with the table's command key (`engine.wire.auth.CommandGuard`);
anything else is refused with a code naming the problem, and nothing is done.

Enrolment is a mode of the running hub (``hub/cmd/enrol``, from the host page or
``cauldron enroll``): while it runs, tags laid on the chosen pad are enrolled instead of
reported, progress goes out in the snapshot's ``enrolment`` field, and a new tag is known at
once. A spare (``enrol`` ``spare``) may be asked at any time, a game running: the next tag
laid on its pad becomes the lost piece's, and that tap is not reported. A retired tag laid
anywhere is reported as an ``unknown_tag`` that says so (``tag="retired"``). The snapshot
names the game the hub serves (``game``). ``hub/cmd/readers`` answers what every reader
sees (``cauldron readers``). The tag map file is read again when another program changes it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from engine.datadir import DiskTrouble, probe_dir
from engine.wire import api
from engine.wire.api import (
    HUB_API,
    BadArgs,
    Bound,
    BuzzArgs,
    BuzzResult,
    Clear,
    EnrolArgs,
    EnrolStatus,
    Gesture,
    LayoutArgs,
    MovePawn,
    NoArgs,
    Place,
    ReadersResult,
    Remove,
    ReplayArgs,
    ReplayResult,
    SetPawns,
    SimArgs,
    SimResult,
    SnapshotResult,
    State,
    TurnArgs,
    TurnResult,
    dispatch,
    dump,
    handler_map,
)
from engine.wire.auth import CommandGuard, KeyFile, Unauthorised, ensure_key, keys_dir, sign_hub
from engine.wire.contract import (
    BoardHealth,
    CommandRequest,
    HubDegraded,
    HubEvent,
    HubHealth,
    HubSnapshot,
    ReaderSeen,
    SimTablePublic,
    TopicInfo,
    Topics,
    encode,
)
from engine.wire.mqtt import CommandRefused, WireClient
from engine.wire.ratelog import RateLimitedLog
from hub.backends.base import Change, PollResult, ReaderBackend
from hub.enroll import Enrolment, Said, Spare, SpareError
from hub.enroll import said as enrol_words
from hub.errors import BackendError, HubError, OutboxError, TagMapError
from hub.game import current, is_tagged_piece, piece_noun, seat_name
from hub.outbox import Lying, Outbox
from hub.tagmap import TagMap

if TYPE_CHECKING:
    from hub.backends.sim import SimulatedTable
    from hub.io import TableIO

log = logging.getLogger("cauldron.hub")

MAX_HELD = 100_000  # events kept in memory while the outbox cannot store them
PROBE_BYTES = 4096


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
        io: TableIO | None = None,
        poll_interval: float = 0.005,
        snapshot_interval: float = 0.5,
        health_hold: float = 1.0,
        resend_after: float = 10.0,
        probe_interval: float = 15.0,
        clock: Callable[[], float] = time.time,
        key: bytes | None = None,
        keys: Path | None = None,
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
        folder = keys if keys is not None else keys_dir()
        self.key = key if key is not None else ensure_key(folder, table, "hub", self.hub_id).key
        # Every hub/cmd/<verb> must be signed with the table's command key (the engine's and
        # the dashboard's): read, never made here, so a hub on another machine without a
        # copy says so instead of trusting a key of its own.
        self.cmd_key = KeyFile(folder, table, "cmd")
        self.guard = CommandGuard(hub=True, hint=(
            f" (this hub reads it from {self.cmd_key.path}: a hub on another machine needs a "
            "copy of the engine's file, see hub/README.md)"), ledger=self._claim)
        self._claimed: dict[str, float] = {}  # noted in memory while the outbox takes none
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
        self._wake = threading.Event()  # poll now: set by `stop` and by the back-end's wake
        backend.wake = self._wake.set
        self._thread: threading.Thread | None = None
        self._snapshot_due = True
        self._last_snapshot = 0.0
        self._last_health: HubHealth | None = None
        self._pawns: frozenset[int] = frozenset()  # last pawn positions reported
        self._emit_lock = threading.Lock()
        self.listeners: list[Callable[[HubEvent], None]] = []
        # Enrolment mode: the enrolment, its pad's reader, and what was last said.
        self._enrol_lock = threading.RLock()
        self._enrolment: Enrolment | None = None
        self._enrol_pad: int | None = None
        self._enrol_said: Said | None = None
        self._enrol_held: dict[int, str] = {}  # tags laid on the pad while enrolling
        self._spare: Spare | None = None  # a spare waiting for its tag, on `_spare_pad`
        self._spare_pad: int | None = None
        self._spares = 0  # spares enrolled since the start
        self._tagmap_stamp = self._stamp()
        self._last_tagmap_check = time.monotonic()
        self._refusals = RateLimitedLog(log, burst=1, window=10.0)  # a flood: few lines
        # Degraded: events the outbox could not store yet (fields, reader state, time), and
        # why the hub cannot work now, by source ("store", "readers").
        self._held: list[tuple[dict[str, Any], dict[int, Lying | None] | None, float]] = []
        self._troubles: dict[str, HubDegraded] = {}
        self.probe_interval = probe_interval
        self._last_probe = time.monotonic()
        self._last_flush = 0.0
        # The tag map may have changed while the hub was down: once the back-end has
        # settled (what was lifted meanwhile is reported, under the names it was laid with),
        # the tags still lying there are named again (`_reresolve`).
        self._renamed_since_start = False
        self._handlers = self._bind_handlers()

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
        self.publish_sim()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
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
            self._wake.clear()  # a wake during the step below makes the next one at once
            try:
                self.step()
            except BackendError as exc:
                self.counts["errors"] += 1
                log.warning("reader back-end: %s", exc)
                self._set_trouble("readers", HubDegraded(
                    code="readers_failed", reason=f"the readers fail: {exc}"[:500]))
                self._publish_health_now()
                self._stop.wait(1.0)
            except Exception:
                self.counts["errors"] += 1
                log.exception("hub poll failed")
                self._stop.wait(1.0)
            if self.poll_interval:
                self._wake.wait(self.poll_interval)

    # ------------------------------------------------------------ readers -> events

    def step(self) -> list[HubEvent]:
        """Poll the back-end once and publish what changed."""
        self._store_checks()
        result = self.backend.poll()
        self.counts["polls"] += 1
        self._set_trouble("readers", None)
        events = self.handle(result)
        if not self._renamed_since_start and self.backend.settled():
            self._renamed_since_start = True
            with self._enrol_lock:
                events += self._reresolve(None)
        now = time.monotonic()
        if self._snapshot_due and now - self._last_snapshot >= self.snapshot_interval:
            self.publish_snapshot()
        if now - self._last_resend_check >= self.resend_after / 2:
            self._last_resend_check = now
            self.resend_stale()
        if now - self._last_tagmap_check >= 1.0:
            self._last_tagmap_check = now
            self.reload_tagmap_if_changed()
        return events

    # ------------------------------------------------------------ tag map

    def _stamp(self) -> tuple[int, int] | None:
        path = self.tagmap.path
        try:
            info = path.stat() if path is not None else None
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size) if info is not None else None

    def reload_tagmap_if_changed(self) -> bool:
        """Read the tag map file again when another program changed it (never while this
        hub enrols: then it is the writer). Returns True when reloaded."""
        path = self.tagmap.path
        if path is None or self._enrolment is not None or self._spare is not None:
            return False
        stamp = self._stamp()
        if stamp == self._tagmap_stamp or stamp is None:
            return False
        try:
            fresh = TagMap.load(path)
        except TagMapError as exc:
            log.warning("tag map changed but cannot be used (%s); keeping the one in memory",
                        exc)
            self._tagmap_stamp = stamp
            return False
        with self._enrol_lock:
            before, self.tagmap = self.tagmap, fresh
            if getattr(self.backend, "tagmap", None) is not None:  # the sim lays cards by id
                self.backend.tagmap = fresh  # type: ignore[attr-defined]
            self._tagmap_stamp = stamp
            self._snapshot_due = True
            self._reresolve(before)
        log.warning("tag map %s changed: reloaded (%d tags)", path, len(fresh))
        return True

    def _tagmap_copy(self) -> TagMap:
        """The tag map as it is now (enrolment changes it in place)."""
        return TagMap(tags=dict(self.tagmap.items()))

    def _reresolve(self, before: TagMap | None) -> list[HubEvent]:
        """The tag map changed (while running: ``before`` -> now; or while the hub was down:
        None) while tags lie on the readers: each reader whose tag now names another card
        (or none) says so with a ``removed`` under the name its event gave and a ``placed``
        under the new one, so the engine never keeps a card the readers no longer know.
        Works from what the stored events told (the outbox), not from the back-end: a change
        polled but not yet reported is then reported under the new name after these. Called
        under ``_enrol_lock``, which `handle` holds too."""
        events: list[HubEvent] = []
        names = self.outbox.reader_names()
        for reader, uid in sorted(self.outbox.reader_state().items()):
            if reader >= self.backend.n_readers:
                continue
            said = names.get(reader)
            if said is not None and said.uid == uid:
                old: str | None = said.card_id
            elif before is not None:  # stored with no name (an older outbox)
                old = self._resolve(uid, before)
            else:
                continue
            placed = Change("placed", reader, uid)
            new = self._resolve(uid, self.tagmap)
            if self._named(placed, old) == self._named(placed, new):
                continue
            events += [e for e in (self._event_for(Change("removed", reader, uid), old),
                                   self._event_for(placed, new)) if e is not None]
        if events:
            self._snapshot_due = True
            log.warning("tag map changed under %d lying tag(s): reported again under their "
                        "new names", len(events) // 2)
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
        with self._enrol_lock:  # no tag map change between naming and sending a change
            changes = [c for c in result.changes if not self._enrol_change(c)]
            events = [e for change in changes if (e := self._change_event(change)) is not None]
            self._enrol_pad_check()
        events += self._health_events()
        if result.pawns is not None:
            events += self._pawn_events(result.pawns)
        if events or result.resynced or result.board_changed:
            self._snapshot_due = True
        return events

    def _pawn_events(self, sensed: frozenset[int]) -> list[HubEvent]:
        """Hall-switch pawn sensors (hardware issue 13): one event per position that changed."""
        before, self._pawns = self._pawns, sensed
        return [e for action, positions in (("removed", before - sensed),
                                            ("placed", sensed - before))
                for position in sorted(positions)
                if (e := self.emit(kind="pawn", action=action, position=position)) is not None]

    # ------------------------------------------------------------ enrolment mode

    def _enrol_change(self, change: Change) -> bool:
        """A change on the enrolment pad goes to the enrolment, not out as an event (the
        engine never sees a tag it does not know yet). True when consumed."""
        with self._enrol_lock:
            enrolment = self._enrolment
            if change.kind == "removed" and self._enrol_held.get(change.reader) == change.uid:
                del self._enrol_held[change.reader]  # lifted after the enrolment ended
                return True
            spare = self._spare
            if spare is not None and change.reader == self._spare_pad:
                if change.kind != "placed":
                    return False  # the pad was empty at the start: nothing of the game's
                self._enrol_held[change.reader] = change.uid
                self._spare_seen(spare, change.uid)
                self._snapshot_due = True
                return True
            if enrolment is None or change.reader != self._enrol_pad:
                return False
            if change.kind == "placed":
                self._enrol_held[change.reader] = change.uid
                before = self._tagmap_copy()
                said = enrolment.tag_seen(change.uid)
                self._reresolve(before)
                self._tagmap_stamp = self._stamp()
                if enrolment.current is None:
                    said += self._finish_enrolment()
                self._enrol_said = said
                log.info("enrolment: %s", said)
            self._snapshot_due = True
            return True

    def _spare_seen(self, spare: Spare, uid: str) -> None:
        """A tag laid on the spare's pad: the piece's new tag, or a refusal (wait on). Under
        ``_enrol_lock``."""
        before = self._tagmap_copy()
        said = spare.tag_seen(uid)
        self._tagmap_stamp = self._stamp()
        if spare.done:
            self._spare = self._spare_pad = None
            self._spares += 1
            self._reresolve(before)  # the old tag, lying somewhere, is unknown from now on
        self._enrol_said = said
        log.info("spare: %s", said)

    def _enrol_pad_check(self) -> None:
        """While enrolling: say when the pad's reader goes or comes back, and erase an undone
        tag still lying on the pad (with --write). Under ``_enrol_lock``."""
        enrolment, pad = self._enrolment, self._enrol_pad
        if enrolment is None or pad is None:
            return
        said = enrolment.pad_health(self.backend.health().get(pad, "ok"))
        erased = enrolment.erase_lying(self.backend.state().get(pad))
        for note in (said, erased):
            if note is not None:
                self._enrol_said = note
                self._snapshot_due = True
                log.info("enrolment: %s", note)

    def _finish_enrolment(self) -> Said:
        enrolment = self._enrolment
        assert enrolment is not None
        self._enrolment = None
        return enrolment.ended()

    def enrolment_status(self) -> EnrolStatus | None:
        """What the snapshot says about enrolment (None when none ran since the start)."""
        with self._enrol_lock:
            enrolment, spare, said = self._enrolment, self._spare, self._enrol_said
            common = {"spares": self._spares,
                      "message": said and str(said), "said": said and said.wire()}
            if spare is not None:
                assert self._spare_pad is not None
                pad = self.backend.layout.place(self._spare_pad).seat
                return EnrolStatus.model_validate({"active": True, "pad": pad,
                                                   "spare": spare.card, **common})
            if enrolment is None:
                if said is None:
                    return None
                done = sum(1 for _ in self.tagmap.cards())
                return EnrolStatus.model_validate({"active": False, "enrolled": done, **common})
            assert self._enrol_pad is not None
            pad = self.backend.layout.place(self._enrol_pad).seat
            return EnrolStatus.model_validate({"active": True, "pad": pad, **common,
                                               **enrolment.status()})

    def _enrol(self, _ctx: None, args: EnrolArgs) -> EnrolStatus:
        action = args.action
        with self._enrol_lock:
            enrolment = self._enrolment
            if action == "start":
                if self._spare is not None:
                    raise CommandRefused("enrol start: a spare waits for its tag; stop it "
                                         "first", code="spare_waiting")
                if enrolment is None:
                    self._start_enrolment(args)
            elif action == "status":
                pass
            elif action == "spare":
                if enrolment is not None:
                    raise CommandRefused("enrol spare: an enrolment runs; stop it first (a "
                                         "spare is for a piece already enrolled)",
                                         code="enrolment_running")
                self._start_spare(args)
            elif action == "stop" and self._spare is not None:
                self._enrol_said = self._spare.stopped()
                self._spare = self._spare_pad = None
            elif action in ("undo", "skip", "stop"):
                if enrolment is None:
                    raise CommandRefused(f"enrol {action}: no enrolment is running; start one",
                                         code="enrol_not_running")
                if action == "stop":
                    self._enrolment = None
                    self._enrol_said = enrolment.stopped()
                else:
                    before = self._tagmap_copy()
                    self._enrol_said = enrolment.undo() if action == "undo" else enrolment.skip()
                    self._tagmap_stamp = self._stamp()
                    self._reresolve(before)  # an undone tag may lie on the grid
                    if enrolment.current is None:
                        self._enrol_said += self._finish_enrolment()
            self._snapshot_due = True
            status = self.enrolment_status()
        self.publish_snapshot()
        return status or EnrolStatus(active=False)

    def _start_enrolment(self, args: EnrolArgs) -> None:
        if self.tagmap.path is None:
            raise CommandRefused(
                "enrol: nothing to enrol: this simulated table knows every card already (a "
                "virtual box). To rehearse enrolment, write {\"tags\": {}} into the file its "
                "config's tagmap names and restart the hub", code="nothing_to_enrol")
        reader, write = self._free_pad("start", args.pad), args.write
        try:
            enrolment = Enrolment(self.tagmap, backend=self.backend, reader=reader,
                                  write_tags=write)
        except BackendError as exc:
            raise CommandRefused(f"enrol start: {exc}", code="enrol_unavailable") from None
        if enrolment.current is None:
            raise CommandRefused(f"enrol start: every {piece_noun()} is already enrolled "
                                 f"({enrolment.done}/{enrolment.total})", code="all_enrolled")
        self._enrolment, self._enrol_pad = enrolment, reader
        self._enrol_said = enrol_words("enrolling", seat=args.pad + 1) + enrolment.prompt()

    def _free_pad(self, action: str, pad: int) -> int:
        """The reader of seat ``pad``'s pad, empty (what enrolment or a spare reads)."""
        try:
            reader = self.backend.layout.pad_reader(pad)
        except ValueError:
            raise CommandRefused(f"enrol {action}: this table has no pad for {seat_name(pad)} "
                                 f"(pads: {self.backend.layout.pads})",
                                 code="no_such_pad") from None
        if self.backend.state().get(reader) is not None:
            raise CommandRefused(f"enrol {action}: a piece lies on {seat_name(pad)}'s pad; "
                                 "lift it first", code="pad_occupied")
        return reader

    def _start_spare(self, args: EnrolArgs) -> None:
        """``spare``: the next tag laid on the pad becomes ``piece``'s (a kind: its first
        piece with no tag, else the one not seen the longest: `Spare.of`). A waiting spare
        is replaced."""
        if self.tagmap.path is None:
            raise CommandRefused(
                "enrol spare: this simulated table knows every piece by a made-up tag (a "
                "virtual box) and keeps no tag map file a spare could change",
                code="nothing_to_enrol")
        if args.piece is None:
            raise CommandRefused("enrol spare: name the lost piece, or its kind (piece)",
                                 code="bad_enrol_args")
        reader = self._free_pad("spare", args.pad)
        try:
            spare = Spare.of(self.tagmap, args.piece, seen=self.outbox.last_seen(),
                             lying={uid for uid in self.backend.state().values() if uid})
        except SpareError as exc:
            raise CommandRefused(f"enrol spare: {exc}", code="unknown_piece") from None
        self._spare, self._spare_pad = spare, reader
        self._enrol_said = spare.prompt()

    def readers_answer(self) -> ReadersResult:
        """``hub/cmd/readers``: what every reader sees now (card ids and UIDs: the ACL lets
        only the engine and the hub's own account read this answer)."""
        snapshot = self.snapshot()
        return ReadersResult(hub_id=self.hub_id, backend=self.backend.name,
                             pads=self.backend.layout.pads, tags_known=len(self.tagmap),
                             readers=list(snapshot.readers))

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
                event = self.emit(kind="reader_health", reader=reader, health=health,
                                  **self._place_fields(reader))
                if event is not None:
                    events.append(event)
        return events

    def _place_fields(self, reader: int) -> dict[str, Any]:
        place = self.backend.layout.place(reader)
        if place.kind == "cell":
            return {"cell": place.cell_key}
        if place.kind == "pad":
            return {"seat": place.seat}
        return {"position": place.position}

    def card_for(self, uid: str) -> str | None:
        """The tag map's card for ``uid``, else the card id written in the tag (read by the
        back-end: a box whose tags carry their ids works without its tag map)."""
        return self._resolve(uid, self.tagmap)

    def _resolve(self, uid: str, tagmap: TagMap) -> str | None:
        card = tagmap.card_for(uid)
        if card is None:
            carried = self.backend.tag_memory(uid)
            if carried is not None and is_tagged_piece(carried):
                card = carried
        return card

    def _change_event(self, change: Change) -> HubEvent | None:
        """The event for one change: a tag laid named with the tag map now, a tag lifted
        with the name its placement was reported under (the map may have changed since)."""
        if change.kind == "removed":
            said = self.outbox.reader_names().get(change.reader)
            if said is not None and said.uid == change.uid:
                return self._event_for(change, said.card_id)
        return self._event_for(change, self._resolve(change.uid, self.tagmap))

    def _named(self, change: Change, card_id: str | None) -> tuple[str, str | None]:
        """The event kind and card id a change of a tag named ``card_id`` is reported with."""
        kind = self.backend.layout.place(change.reader).kind
        if card_id is None:
            return "unknown_tag", None
        if kind == "perimeter":
            return "pawn", card_id
        if card_id.startswith("pawn-"):
            # A pawn laid on a cell or pad is not a card: report it as unknown there.
            return "unknown_tag", None
        return ("cell" if kind == "cell" else "pad"), card_id

    def _event_for(self, change: Change, card_id: str | None) -> HubEvent | None:
        """Store and send the event of one change, its tag named ``card_id``; the reader's
        state (with that name) is stored with it. None: held (`_emit`)."""
        kind, named = self._named(change, card_id)
        fields: dict[str, Any] = {"kind": kind, "action": change.kind, "reader": change.reader,
                                  "uid": change.uid, **self._place_fields(change.reader)}
        if named is not None:
            fields["card_id"] = named
        if kind == "pawn":
            fields["pawn_seat"] = int(named[5:]) if named and named.startswith("pawn-") else None
        if kind == "unknown_tag":
            self.counts["unknown_tags"] += 1
            if self.tagmap.retired_for(change.uid) is not None:
                fields["tag"] = "retired"  # the engine says so, not "enrol it"
                if change.kind == "placed":
                    log.warning("refused: %s", self.tagmap.retired_words(change.uid))
        lying = Lying(change.uid, named) if change.kind == "placed" else None
        return self._emit(fields, {change.reader: lying})

    def emit(self, **fields: Any) -> HubEvent | None:
        """Store then publish one event; returns it (seq assigned by the outbox), or None
        when the outbox cannot store it now (held: `_emit`)."""
        return self._emit(fields)

    def _emit(self, fields: dict[str, Any],
              readers: dict[int, Lying | None] | None = None) -> HubEvent | None:
        """`emit`, storing ``readers`` (what now lies on the event's reader) with the event.

        When the outbox cannot store it (a read-only or full disk) the event is held in
        memory, after any held before it, and the hub is degraded until `_flush_held` stores
        them all; None is returned then."""
        ts = self.clock()
        with self._emit_lock:  # seq order == publish order
            if self._held:
                self._hold(fields, readers, ts)
                return None
            try:
                event = self._store(fields, readers, ts)
            except OutboxError as exc:
                self._hold(fields, readers, ts)
                self._store_failed(exc)
                return None
        self._stored(event)
        return event

    def _store(self, fields: dict[str, Any], readers: dict[int, Lying | None] | None,
               ts: float) -> HubEvent:
        """Store then publish one event (under ``_emit_lock``)."""
        topic = self.topics.hub_event
        built: list[HubEvent] = []

        def make(seq: int) -> bytes:
            event = sign_hub(HubEvent(
                hub_id=self.hub_id, epoch=self.outbox.epoch, seq=seq, ts=ts, **fields
            ), self.table, self.key)
            assert isinstance(event, HubEvent)
            built.append(event)
            return encode(event)

        seq, payload = self.outbox.append(topic, make, readers)
        self.client.publish_raw(topic, payload, on_ack=self._acker(seq))
        return built[0]

    def _stored(self, event: HubEvent) -> None:
        self.counts["events"] += 1
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:  # a display problem must never cost an event
                log.exception("event listener failed")

    def _hold(self, fields: dict[str, Any], readers: dict[int, Lying | None] | None,
              ts: float) -> None:
        if len(self._held) >= MAX_HELD:
            self.counts["dropped"] = self.counts.get("dropped", 0) + 1
            if self.counts["dropped"] == 1:
                log.error("%d events wait for the outbox: dropping the newest (the engine "
                          "resyncs from the hub's snapshot once it can store again)", MAX_HELD)
            return
        self._held.append((fields, readers, ts))

    def _flush_held(self) -> int:
        """Store the held events, in order, as far as the outbox takes them; returns how
        many are still held."""
        stored: list[HubEvent] = []
        with self._emit_lock:
            while self._held:
                fields, readers, ts = self._held[0]
                try:
                    stored.append(self._store(fields, readers, ts))
                except OutboxError as exc:
                    self._store_failed(exc)
                    break
                self._held.pop(0)
            left = len(self._held)
        for event in stored:
            self._stored(event)
        if stored:
            log.warning("stored %d held event(s)%s", len(stored),
                        f"; {left} still held" if left else "")
            self._snapshot_due = True
        return left

    def _store_failed(self, exc: OutboxError) -> None:
        self.counts["store_failures"] = self.counts.get("store_failures", 0) + 1
        trouble = exc.trouble
        self._set_trouble("store", HubDegraded(
            code=trouble.code,
            reason=f"the hub cannot store its events in {self.outbox.path} "
                   f"({trouble.words})"[:500]))
        log.debug("outbox: %s", exc)

    def _store_checks(self) -> None:
        """While degraded or holding events: store the held ones (at most once a second);
        every ``probe_interval``: write and sync a probe in the outbox's folder, so an idle
        hub finds a read-only or full disk too."""
        now = time.monotonic()
        if (self._held or "store" in self._troubles) and now - self._last_flush >= 1.0:
            self._last_flush = now
            if self._flush_held() == 0 and self._probe() is None:
                self._set_trouble("store", None)
        if now - self._last_probe >= self.probe_interval:
            self._last_probe = now
            trouble = self._probe()
            if trouble is not None:
                self._set_trouble("store", HubDegraded(
                    code=trouble.code,
                    reason=(f"the hub's data dir {self.outbox.path.parent} cannot be written "
                            f"({trouble.words})")))
            elif not self._held:
                self._set_trouble("store", None)

    def _probe(self) -> DiskTrouble | None:
        if str(self.outbox.path) == ":memory:":
            return None
        return probe_dir(self.outbox.path.parent, PROBE_BYTES)

    def _set_trouble(self, source: str, trouble: HubDegraded | None) -> None:
        before = self._troubles.get(source)
        if trouble == before:
            return
        if trouble is None:
            del self._troubles[source]
            log.warning("degraded no more: %s", before.reason if before else source)
        else:
            self._troubles[source] = trouble
            if before is None or before.code != trouble.code:
                log.error("degraded (%s): %s", trouble.code, trouble.reason)
        self._snapshot_due = True

    @property
    def degraded(self) -> HubDegraded | None:
        """Why the hub cannot do its work now (storing events first, then the readers), or
        None."""
        for source in ("store", "readers"):
            if source in self._troubles:
                return self._troubles[source]
        board = self.backend.board()
        if board is not None and board.state != "ok":
            said = ("hung: it stopped answering and the hub resets it" if board.state == "hung"
                    else "disconnected: check its USB cable (or the SPI wiring)")
            return HubDegraded(code="readers_failed", reason=f"the scan board is {said}")
        return None

    def _claim(self, txid: str, deadline: float, now: float) -> bool:
        """The command guard's replay ledger: the outbox, or, while it takes no write (a
        full or read-only disk), memory; so the turn LEDs and the buzzer keep working and a
        replay is still refused within this run."""
        try:
            claimed = self.outbox.claim_command(txid, deadline, now)
        except OutboxError as exc:
            self._store_failed(exc)
            with self._emit_lock:
                self._claimed = {t: d for t, d in self._claimed.items() if d >= now}
                if txid in self._claimed or self.outbox.command_claimed(txid, now):
                    return False
                self._claimed[txid] = deadline
                return True
        return claimed and txid not in self._claimed

    def _acker(self, seq: int) -> Callable[[], None]:
        def delivered() -> None:
            try:
                self.outbox.mark_delivered(seq)
            except OutboxError as exc:  # left undelivered: sent again later (deduplicated)
                self._store_failed(exc)
        return delivered

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
                    card_id=self.card_for(uid) if uid else None,
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
            capabilities=sorted(self.backend.capabilities),
            readers=readers,
            enrolment=None if (status := self.enrolment_status()) is None else dump(status),
            board=self._board(),
            pawns=None if (pawns := self.backend.pawns()) is None else sorted(pawns),
            game=current().id,
        ), self.table, self.key)
        assert isinstance(snapshot, HubSnapshot)
        return snapshot

    def _board(self) -> BoardHealth | None:
        board = self.backend.board()
        if board is None:
            return None
        return BoardHealth(state=board.state, resets=board.resets, firmware=board.firmware)

    def publish_snapshot(self) -> None:
        self._snapshot_due = False
        self._last_snapshot = time.monotonic()
        snapshot = self.snapshot()
        if not self._held:  # else it would show changes no stored event told yet
            self.client.publish(self.topics.hub_snapshot, snapshot, retain=True)
        health = HubHealth.of(snapshot, self.degraded)
        if not health.same_as(self._last_health):  # the card-free part changes seldom
            self.client.publish(self.topics.hub_health, health, retain=True)
            self._last_health = health

    def _publish_health_now(self) -> None:
        """The health (degraded) when the back-end fails and no poll publishes it."""
        try:
            self.publish_snapshot()
        except Exception:  # the back-end may fail to say its state too
            log.debug("no snapshot while the back-end fails", exc_info=True)

    # ------------------------------------------------------------ engine -> table I/O

    def _on_command(self, info: TopicInfo, request: CommandRequest) -> dict[str, JsonValue]:
        """``hub/cmd/<verb>``: a request signed with the table's command key, then its verb's
        handler (`HUB_API`, bound in `_handlers`), given the typed args.

        Every verb is signed, the read-only ones too: ``sim`` (state, view, seat), ``readers``
        and ``enrol`` status name covered cards, ``replay`` and ``snapshot`` make the hub
        publish (a flood for anyone on an open broker). No public view needs a verb: the
        public table is on the retained ``hub/sim`` and ``hub/health``."""
        if info.table != self.table:
            raise CommandRefused(f"this hub serves table {self.table}, not {info.table}",
                                 code="unknown_table")
        verb = info.verb or ""  # one of HUB_VERBS (parse_topic), each with a handler
        try:
            self.guard.admit(request, self.table, verb, self.cmd_key.get, time.time())
        except Unauthorised as exc:
            self.counts["refused_commands"] = self.counts.get("refused_commands", 0) + 1
            self._refusals.warning("refused_cmd", "refused hub/cmd/%s (%s; %d refused so far): "
                                   "%s", verb, request.transaction[:64],
                                   self.counts["refused_commands"], exc)
            raise CommandRefused(str(exc), code=exc.code) from None
        try:
            return dispatch(self._handlers, verb, None, request.args)
        except BadArgs as exc:
            raise CommandRefused(exc.message, code=exc.code, rule=exc.rule) from None
        except HubError as exc:  # a reader or table I/O failing under a verb: say why
            raise CommandRefused(f"hub/cmd/{verb}: {exc}", code="hub_error") from None

    def _bind_handlers(self) -> dict[str, Bound[None]]:
        """The verb -> handler map of ``hub/cmd/<verb>``, built from `HUB_API`."""
        return handler_map(HUB_API, [
            api.SNAPSHOT.bind(self._snapshot_now),
            api.REPLAY.bind(self._replay),
            api.TURN.bind(self._turn),
            api.BUZZ.bind(self._buzz),
            api.SIM.bind(self._sim),
            api.ENROL.bind(self._enrol),
            api.READERS.bind(lambda _ctx, _args: self.readers_answer()),
            api.LAYOUT.bind(self._layout),
        ])

    def _snapshot_now(self, _ctx: None, _args: NoArgs) -> SnapshotResult:
        self.publish_snapshot()
        return SnapshotResult(last_seq=self.outbox.last_seq)

    def _table_io(self) -> TableIO:
        if self.io is None:
            raise CommandRefused("this hub has no table I/O configured ([io] in the config)",
                                 code="no_table_io")
        return self.io

    def _turn(self, _ctx: None, args: TurnArgs) -> TurnResult:
        self._table_io().set_turn(args.seat)
        return TurnResult(seat=args.seat)

    def _buzz(self, _ctx: None, args: BuzzArgs) -> BuzzResult:
        self._table_io().buzz(args.ms / 1000)
        return BuzzResult(ms=args.ms)

    def _replay(self, _ctx: None, args: ReplayArgs) -> ReplayResult:
        if args.epoch != self.outbox.epoch:
            raise CommandRefused(
                f"replay: epoch {args.epoch!r} is not this hub's ({self.outbox.epoch}); "
                "start afresh from hub/snapshot", code="wrong_epoch"
            )
        rows = self.outbox.rows(args.from_seq, args.to_seq)
        with self._emit_lock:
            for row in rows:
                self.client.publish_raw(row.topic, row.payload, on_ack=self._acker(row.seq))
        kept_from = rows[0].seq if rows else None
        return ReplayResult(replayed=len(rows), first_kept=kept_from,
                            last_seq=self.outbox.last_seq)

    def sim_view(self) -> SimTablePublic | None:
        from hub.backends.sim import SimulatedTable

        sim = self.backend
        if not isinstance(sim, SimulatedTable):
            return None
        return SimTablePublic(hub_id=self.hub_id, ts=self.clock(), **sim.public())

    def publish_sim(self) -> None:
        """``hub/sim`` (retained): the simulated table's public physical view."""
        view = self.sim_view()
        if view is not None:
            self.client.publish(self.topics.hub_sim, view, retain=True)

    def _sim(self, _ctx: None, args: SimArgs) -> SimResult:
        try:
            return self._sim_action(args.gesture)
        finally:
            self.publish_sim()

    def _layout(self, _ctx: None, args: LayoutArgs) -> SimResult:
        """``layout``: the game changed without the readers (an undo, a game's end or start);
        a back-end with the ``lay_out`` capability (the simulated table) lays its table out
        as the game now holds it. The engine asks only a hub that announced it."""
        backend = self.backend
        if "lay_out" not in backend.capabilities:
            raise CommandRefused(f"layout: the {backend.name} back-end cannot lay a table out "
                                 "(people put the cards back)", code="cannot_lay_out")
        try:
            return backend.lay_out(args.layout, args.pawns)
        except (HubError, ValueError) as exc:
            raise CommandRefused(f"layout: {exc}", code="layout_refused") from None
        finally:
            self.publish_sim()

    def _sim_action(self, gesture: Gesture) -> SimResult:
        from hub.backends.sim import SimulatedTable

        sim = self.backend
        if not isinstance(sim, SimulatedTable):
            raise CommandRefused(f"sim: this hub reads real cards ({sim.name} back-end)",
                                 code="not_simulated")
        if not isinstance(gesture, Place | Remove | Clear | State | MovePawn | SetPawns):
            try:
                result = sim.gesture(gesture)
            except (HubError, ValueError) as exc:
                raise CommandRefused(str(exc), code="sim_refused") from None
            view = self.sim_view()
            return result.model_copy(update={"view": view.model_dump() if view else None})
        action = gesture.action
        try:
            if isinstance(gesture, Place):
                return SimResult(uid=sim.place(gesture.place, card_id=gesture.card_id,
                                               uid=gesture.uid))
            if isinstance(gesture, Remove):
                return SimResult(uid=sim.remove(gesture.place))
            if isinstance(gesture, Clear):
                sim.clear()
                return SimResult()
            if isinstance(gesture, State):  # what really lies where (tests, diagnostics)
                pawns = sim.pawns()  # with pawn sensors only
                if pawns is None:
                    return SimResult(lying=self._sim_lying(sim))
                return SimResult(lying=self._sim_lying(sim), pawns=sorted(pawns))
            return self._sim_pawns(sim, gesture)  # pawn sensors (hardware issue 13)
        except (HubError, ValueError) as exc:
            raise CommandRefused(f"sim {action}: {exc}", code="sim_refused") from None

    @staticmethod
    def _sim_pawns(sim: SimulatedTable, gesture: MovePawn | SetPawns) -> SimResult:
        """``pawn`` {"from": 3, "to": 5} moves one pawn; ``pawns`` {"positions": [...]} sets
        them all (a game's start)."""
        if sim.pawn_switches is None:
            raise CommandRefused("sim: this table has no pawn sensors (perimeter = true)",
                                 code="no_pawn_sensors")
        if isinstance(gesture, MovePawn):  # saved with the table, like its cards
            sim.move_pawn(gesture.from_, gesture.to)
        else:
            sim.set_pawns(list(gesture.positions))
        return SimResult(pawns=sorted(sim.pawn_switches.sensed()))

    def _sim_lying(self, sim: SimulatedTable) -> dict[str, str]:
        """``{"2,3" | "pad:1" | "pos:7": card id (or "uid:<UID>" for an unknown tag)}``."""
        lying: dict[str, str] = {}
        for reader, uid in sim.truth().items():
            lying[sim.layout.place(reader).where] = self.card_for(uid) or f"uid:{uid}"
        return lying

"""The wire contract: every MQTT topic and payload of Cauldron Table, defined once.

Topics live under a base topic ``cauldron/<table>/`` (see `Topics`):

==========================  =======================  =====================================
topic (after the base)      model                    notes
==========================  =======================  =====================================
``hub/event``               `HubEvent`               QoS 1, from the hub; dedup by
                                                     ``(epoch, seq)`` (see `HubEvent`)
``hub/state``               `ServiceState`           retained, last will ``offline``
``hub/snapshot``            `HubSnapshot`            retained: what every reader sees now
``hub/health``              `HubHealth`              retained: reader health, no card
``hub/sim``                 `SimTablePublic`         retained: the simulated table's
                                                     public physical view (sim hub only)
``hub/cmd/<verb>``          `CommandRequest`         verbs in `HUB_VERBS`; each verb's args
                                                     and result: `engine.wire.api.HUB_API`
``hub/cmd/<verb>/response`` `CommandResponse`
``engine/state``            `ServiceState`           retained, last will ``offline``
``game/public``             `GamePublic`             retained; never a covered card
``game/seat/<n>``           `GameSeat`               one seat's private view
``game/alert``              `GameAlert`              rule id ``G…``, message, instruction
``game/events``             `GameEvents`             QoS 1, not retained: the public
                                                     action stream (bots, audit)
``cmd/<verb>``              `CommandRequest`         verbs in `GAME_VERBS`; each verb's args
                                                     and result: `engine.wire.api.GAME_API`
``cmd/<verb>/response``     `CommandResponse`        ``{transaction, status, data, error}``
==========================  =======================  =====================================

Every payload is a JSON object with ``schema_version`` (`SCHEMA_VERSION`). `parse_payload`
turns ``(topic, bytes)`` into the right model or raises a `WireError` subclass whose message
names the problem; it never raises anything else. `encode` turns a model into bytes.
`write_schemas` (``cauldron schema``) exports every model as JSON Schema.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    TypeAdapter,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic.dataclasses import dataclass as view_dataclass

from engine import games
from engine.games import DEFAULT_GAME
from engine.games.glastonbury.rules.observer import PublicView, SeatView

SCHEMA_VERSION: Final[int] = 1
DEFAULT_BASE: Final[str] = "cauldron"
MAX_PAYLOAD_BYTES: Final[int] = 512 * 1024
# What a table's places can be comes from the games it offers (their catalogues): the most
# seats, the widest grid of readers, the most pawn positions of any of them.
_CATALOGUES: Final = tuple(g.catalogue for g in games.games())
N_SEATS: Final[int] = max(c.seats for c in _CATALOGUES)
GRID_SIZE: Final[int] = max(max(c.grid) if c.grid else 0 for c in _CATALOGUES)
N_PERIMETER: Final[int] = max(c.perimeter for c in _CATALOGUES)

TABLE_ID_PATTERN: Final[str] = r"^[A-Za-z0-9_-]{1,64}$"
_TABLE_ID_RE: Final = re.compile(TABLE_ID_PATTERN)
UID_PATTERN: Final[str] = r"^(?:[0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{20})$"
assert 0 < GRID_SIZE <= 10, "a cell is written 'r,c' with one digit each"
CELL_PATTERN: Final[str] = rf"^[0-{GRID_SIZE - 1}],[0-{GRID_SIZE - 1}]$"
# A game's rule id: Glastonbury's G1 … G11 and G10a, Quacks' Q1 … Q37.
RULE_PATTERN: Final[str] = r"^[A-Z][0-9]{1,2}a?$"
TRANSACTION_PATTERN: Final[str] = r"^[A-Za-z0-9_.:-]{1,64}$"
# Card ids of the catalogue (engine.games.glastonbury.rules.cards) and pawn tags "pawn-<seat>";
# whether the id
# exists in the catalogue is for the engine to judge (a stale tag map must not lose events).
CARD_ID_PATTERN: Final[str] = r"^[a-z0-9][a-z0-9-]{0,39}$"
# Sequence numbers stay exact in every JSON reader (IEEE doubles) and in SQLite's INTEGER.
MAX_SEQ: Final[int] = 2**53 - 1
# An HMAC-SHA256 in hex (engine.wire.auth): hub events and snapshots, signed commands.
MAC_PATTERN: Final[str] = r"^[0-9a-f]{64}$"

# The verbs of ``cmd/<verb>`` (engine) and ``hub/cmd/<verb>`` (hub). What each one's args
# and result are is `engine.wire.api` (`GAME_API`, `HUB_API`, one entry per verb here).
GAME_VERBS: Final[tuple[str, ...]] = (
    "new_game", "undo", "keep", "discard", "declinatio", "confirm", "end", "play", "hint",
    "history",
)
HUB_VERBS: Final[tuple[str, ...]] = ("turn", "buzz", "snapshot", "replay", "sim", "enrol",
                                     "readers", "layout")

EventKind = Literal["cell", "pad", "pawn", "button", "unknown_tag", "reader_health"]
EventAction = Literal["placed", "removed", "pressed"]
ReaderHealth = Literal["ok", "silent", "flicker", "absent"]
Severity = Literal["info", "warning", "error"]


# ---------------------------------------------------------------- errors


class WireError(Exception):
    """Anything wrong with a topic, a payload or the MQTT link. ``str()`` names the problem."""


class TopicError(WireError):
    """A topic that is not part of the contract."""


class PayloadError(WireError):
    """A payload that is not valid JSON or does not match its topic's model."""


class SchemaVersionError(PayloadError):
    """A payload written for another version of the contract."""


# ---------------------------------------------------------------- models


class WireModel(BaseModel):
    """Base of every payload: strict keys, immutable, versioned."""

    # strict: no "5" for 5 and no true for 1 on any field (a float field takes an int).
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False,
                              strict=True, allow_inf_nan=False)

    schema_version: Literal[1] = 1  # == SCHEMA_VERSION
    # Fields added to a signed model after its first version: left out of the signed form
    # while unset (`engine.wire.auth`), so what a hub signed before still verifies.
    LATER: ClassVar[frozenset[str]] = frozenset()


class HubEvent(WireModel):
    """One sensor event from the hub (topic ``hub/event``, QoS 1).

    Where it happened is exactly one of: ``cell`` (grid cell ``"r,c"``), ``seat`` (that seat's
    scan pad, or that seat's button), ``position`` (perimeter 0..19, a pawn sensor); the host
    button has ``button="undo"`` and no seat.

    - ``cell``/``pad``/``pawn`` + ``placed``/``removed``: a known tag (``card_id`` set; for a
      pawn ``pawn_seat`` is the pawn's owner). A pawn sensed by a Hall switch (a magnet, no
      tag) has neither ``uid`` nor ``card_id``: only its ``position``.
    - ``unknown_tag`` + ``placed``/``removed``: a tag not in the tag map (``card_id`` None),
      at a cell, pad or perimeter position; the engine may ask for enrolment. ``tag`` says
      why when the hub knows: ``retired`` (a spare replaced it: put it aside, never enrol it).
    - ``button`` + ``pressed``: ``button="confirm"`` with ``seat``, or ``button="undo"``.
    - ``reader_health``: ``reader`` went ``health`` (ok/silent/flicker/absent); no action.

    Dedup: ``seq`` strictly increases within one ``epoch`` (a hub outbox's lifetime, kept
    across restarts); ``(epoch, seq)`` identifies an event. Republished copies are equal.
    """

    hub_id: str = Field(min_length=1, max_length=64)
    epoch: str = Field(min_length=1, max_length=64)
    seq: int = Field(ge=1, le=MAX_SEQ)
    ts: float = Field(ge=0, description="Unix time (seconds) when the hub saw the change")
    kind: EventKind
    action: EventAction | None = None
    cell: str | None = Field(default=None, pattern=CELL_PATTERN)
    seat: int | None = Field(default=None, ge=0, lt=N_SEATS)
    position: int | None = Field(default=None, ge=0, lt=N_PERIMETER)
    reader: int | None = Field(default=None, ge=0, le=63)
    uid: str | None = Field(default=None, pattern=UID_PATTERN)
    card_id: str | None = Field(default=None, pattern=CARD_ID_PATTERN)
    pawn_seat: int | None = Field(default=None, ge=0, lt=N_SEATS)
    button: Literal["confirm", "undo"] | None = None
    health: ReaderHealth | None = None
    tag: Literal["retired"] | None = Field(
        default=None, description="why an unknown_tag is unknown: retired (a spare replaced it)")
    mac: str | None = Field(default=None, pattern=MAC_PATTERN,
                            description="HMAC of the hub's key (engine.wire.auth)")

    LATER: ClassVar[frozenset[str]] = frozenset({"tag"})

    @model_validator(mode="after")
    def _consistent(self) -> HubEvent:
        places = [p for p in ("cell", "seat", "position") if getattr(self, p) is not None]
        kind = self.kind
        if kind in ("cell", "pad", "pawn", "unknown_tag"):
            if self.action not in ("placed", "removed"):
                raise ValueError(f"a {kind} event needs action 'placed' or 'removed'")
            if self.uid is None and kind != "pawn":  # a sensed pawn is a magnet, not a tag
                raise ValueError(f"a {kind} event needs the tag uid")
            want = {"cell": ["cell"], "pad": ["seat"], "pawn": ["position"]}.get(kind)
            if want is not None and places != want:
                raise ValueError(f"a {kind} event gives its place as {want[0]!r} only")
            if kind == "unknown_tag":
                if len(places) != 1:
                    raise ValueError("an unknown_tag event gives exactly one of cell/seat/position")
                if self.card_id is not None:
                    raise ValueError("an unknown_tag event has no card_id")
            elif kind != "pawn" and self.card_id is None:
                raise ValueError(f"a {kind} event needs the card_id of the tag")
        elif kind == "button":
            if self.action != "pressed" or self.button is None:
                raise ValueError("a button event needs action 'pressed' and button confirm|undo")
            if self.button == "confirm" and places != ["seat"]:
                raise ValueError("a confirm button event gives the seat")
            if self.button == "undo" and places:
                raise ValueError("the undo (host) button has no seat")
        elif kind == "reader_health":
            if self.reader is None or self.health is None:
                raise ValueError("a reader_health event needs reader and health")
            if self.action is not None:
                raise ValueError("a reader_health event has no action")
        if kind != "reader_health" and self.health is not None:
            raise ValueError("only reader_health events carry health")
        if kind != "unknown_tag" and self.tag is not None:
            raise ValueError("only unknown_tag events say why a tag is unknown (tag)")
        return self

    @property
    def key(self) -> tuple[str, int]:
        """The dedup key ``(epoch, seq)``."""
        return (self.epoch, self.seq)


class ServiceState(WireModel):
    """``hub/state`` / ``engine/state`` (retained; the last will says ``offline``).

    A process has one last will. An engine serving several tables puts it on its own
    topic (``cauldron/<engine name>/engine/state``) and names that topic in each table's
    ``engine/state`` as ``liveness_topic``: a follower counts the table's engine online only
    while that topic says online too, so a crash shows on every table it served."""

    state: Literal["online", "offline"]
    client_id: str | None = Field(default=None, max_length=128)
    ts: float | None = Field(default=None, ge=0)
    version: str | None = Field(default=None, max_length=32)
    liveness_topic: str | None = Field(default=None, max_length=256,
                                       pattern=r"^[^+#]+/engine/state$")
    # An engine that cannot write a table's log says why (it retries by itself).
    degraded: str | None = Field(default=None, max_length=500)
    # A new hub wants to serve the table (its key replaced the old one's): its events wait
    # until the host accepts it (``cmd/confirm {"hub_id"}``); `registered_hub` is the old one.
    pending_hub: str | None = Field(default=None, min_length=1, max_length=64)
    registered_hub: str | None = Field(default=None, min_length=1, max_length=64)
    # The owning engine's claim of the table (its epoch, bumped at each claim): a follower
    # ignores a word with a lower one than it has seen (a stale owner's).
    fence: int | None = Field(default=None, ge=0, le=MAX_SEQ)


class ReaderSeen(WireModel):
    """What one reader sees in a `HubSnapshot`."""

    reader: int = Field(ge=0, le=63)
    cell: str | None = Field(default=None, pattern=CELL_PATTERN)
    seat: int | None = Field(default=None, ge=0, lt=N_SEATS)
    position: int | None = Field(default=None, ge=0, lt=N_PERIMETER)
    uid: str | None = Field(default=None, pattern=UID_PATTERN)
    card_id: str | None = Field(default=None, pattern=CARD_ID_PATTERN)
    health: ReaderHealth = "ok"


class BoardHealth(WireModel):
    """The scan board (the Pico) of a serial or SPI hub: ``hung`` when it stopped answering
    PING (the hub then resets it), ``disconnected`` while its cable is out; ``resets``
    counts the hub's resets of it."""

    state: Literal["ok", "hung", "disconnected"] = "ok"
    resets: int = Field(default=0, ge=0)
    firmware: str | None = Field(default=None, max_length=32)


# The hub's own game (its config's ``game``): a table whose game is another one cannot be
# sensed by it (the pages warn the host); None from a hub older than this field.
GAME_SERVED: Final = "the game the hub serves (engine.games id; its config's game)"


class HubSnapshot(WireModel):
    """``hub/snapshot`` (retained): every reader's confirmed content and health now.

    ``last_seq`` is the seq of the last event of ``epoch`` already reflected here; a consumer
    that has seen fewer events asks ``hub/cmd/replay`` for the gap.
    """

    hub_id: str = Field(min_length=1, max_length=64)
    epoch: str = Field(min_length=1, max_length=64)
    last_seq: int = Field(ge=0, le=MAX_SEQ)
    ts: float = Field(ge=0)
    backend: str = Field(max_length=32)
    capabilities: list[str] = Field(
        default_factory=list, max_length=8,
        description="what the back-end does besides reading: write_tag, lay_out (hub/cmd/layout)",
    )
    readers: list[ReaderSeen] = Field(max_length=64)
    enrolment: dict[str, JsonValue] | None = Field(
        default=None, description="enrolment progress {done, total, next} while enrolling"
    )
    board: BoardHealth | None = None
    pawns: list[int] | None = Field(
        default=None, max_length=N_PERIMETER,
        description="perimeter positions where a pawn is sensed; None: pawns not sensed",
    )
    game: str | None = Field(default=None, max_length=32, description=GAME_SERVED)
    mac: str | None = Field(default=None, pattern=MAC_PATTERN,
                            description="HMAC of the hub's key (engine.wire.auth)")

    LATER: ClassVar[frozenset[str]] = frozenset({"game"})


class ReaderHealthSeen(WireModel):
    """One reader in a `HubHealth`: where it is, its health, whether a tag lies on it."""

    reader: int = Field(ge=0, le=63)
    cell: str | None = Field(default=None, pattern=CELL_PATTERN)
    seat: int | None = Field(default=None, ge=0, lt=N_SEATS)
    position: int | None = Field(default=None, ge=0, lt=N_PERIMETER)
    health: ReaderHealth = "ok"
    occupied: bool = False


HubTroubleCode = Literal["read_only", "disk_full", "permission_denied", "io_error",
                         "write_failed", "readers_failed"]


class HubDegraded(WireModel):
    """Why a hub cannot do its work now (it retries by itself): it cannot store its events
    (the disk codes of `engine.datadir.TROUBLES`, ``write_failed``) or its readers' bus
    fails (``readers_failed``). ``reason`` is for a host."""

    code: HubTroubleCode
    reason: str = Field(max_length=500)


class HubHealth(WireModel):
    """``hub/health`` (retained): each reader's health and enrolment progress, and the hub's
    own (``degraded``), with no UID and no card id. The dashboard reads this, never
    `HubSnapshot`, which names the cards laid on the pads (covered cards); the ACL keeps it
    to that."""

    hub_id: str = Field(min_length=1, max_length=64)
    ts: float = Field(ge=0)
    backend: str = Field(max_length=32)
    readers: list[ReaderHealthSeen] = Field(max_length=64)
    enrolment: dict[str, JsonValue] | None = Field(
        default=None, description="enrolment progress {done, total, next} while enrolling"
    )
    board: BoardHealth | None = None
    pawns: list[int] | None = Field(default=None, max_length=N_PERIMETER)
    degraded: HubDegraded | None = None
    game: str | None = Field(default=None, max_length=32, description=GAME_SERVED)

    @classmethod
    def of(cls, snapshot: HubSnapshot, degraded: HubDegraded | None = None) -> HubHealth:
        """The card-free part of a snapshot."""
        return cls(
            hub_id=snapshot.hub_id, ts=snapshot.ts, backend=snapshot.backend,
            enrolment=snapshot.enrolment, board=snapshot.board, pawns=snapshot.pawns,
            degraded=degraded, game=snapshot.game,
            readers=[ReaderHealthSeen(reader=r.reader, cell=r.cell, seat=r.seat,
                                      position=r.position, health=r.health,
                                      occupied=r.uid is not None)
                     for r in snapshot.readers],
        )

    def same_as(self, other: HubHealth | None) -> bool:
        """Equal but for the time: nothing new to publish."""
        return other is not None and self.model_copy(update={"ts": other.ts}) == other


class Part(BaseModel):
    """Base of a part of a payload (no version of its own): strict keys, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Prompt(Part):
    """What the table waits for now: a code (for translations), the seat, English text."""

    code: str = Field(max_length=32)
    seat: int | None = Field(default=None, ge=0, lt=N_SEATS)
    text: str = Field(default="", max_length=500)


class Held(Part):
    """A card lifted from the square, not yet laid on a pad (face up, in a hand)."""

    cell: str = Field(pattern=CELL_PATTERN)
    card: str = Field(pattern=CARD_ID_PATTERN)
    via: Literal["take", "declinatio"] | None = None
    last_card: bool = False


class VanescoWait(Part):
    seat: int = Field(ge=0, lt=N_SEATS)
    card: str = Field(pattern=CARD_ID_PATTERN)  # the top card that seat must tap (face up)


class DealCell(Part):
    cell: str = Field(pattern=CELL_PATTERN)
    name: str = Field(max_length=64, description="'row R, column C' (from 1)")
    state: Literal["read", "missing", "wrong"]
    card: str | None = Field(default=None, pattern=CARD_ID_PATTERN,
                             description="the face-up card read there")
    why: str | None = Field(default=None, max_length=500, description="why it is wrong")


class SetAsideCard(Part):
    card: str = Field(pattern=CARD_ID_PATTERN)
    name: str = Field(max_length=128)


class SetAside(Part):
    """2 players: the removed colour's 8 cards, set aside before shuffling (G2)."""

    colour: str = Field(max_length=16)
    cards: list[SetAsideCard] = Field(default_factory=list, max_length=16)
    text: str = Field(default="", max_length=1000)


class DealNext(Part):
    code: str = Field(max_length=32, description="set_aside, lay_cards, fix_wrong or starting")
    text: str = Field(default="", max_length=1000)


class Dealing(Part):
    """The deal, guided (engine.games.glastonbury.table.deal_guide): public data only."""

    filled: int = Field(default=0, ge=0, le=36)
    missing: list[str] = Field(default_factory=list, max_length=36)
    total: int = Field(default=32, ge=0, le=36)
    counts: dict[str, int] = Field(default_factory=dict, description="read, missing, wrong")
    cells: list[DealCell] = Field(default_factory=list, max_length=36)
    set_aside: SetAside | None = None
    next: DealNext | None = None


class AlertFields(BaseModel):
    """An alert, defined once: an illegal or unexpected physical action, the rule broken
    and how to put it right (``kind`` notice: information only, e.g. what an undo took
    back). `TableAlert` (in the table state) and `GameAlert` (``game/alert``) are it."""

    alert_id: str = Field(min_length=1, max_length=64)
    rule: str = Field(pattern=RULE_PATTERN, description="rule id, e.g. 'G4'")
    kind: Literal["breach", "notice"] = Field(
        default="breach", description="breach: a rule was broken; notice: information only "
        "(e.g. what an undo took back), not to be shown as a breach")
    message: str = Field(min_length=1, max_length=500)
    instruction: str = Field(max_length=500, description="what to do to put it right")
    severity: Severity = "error"
    seat: int | None = Field(default=None, ge=0, lt=N_SEATS)
    params: dict[str, JsonValue] = Field(default_factory=dict,
                                         description="for translations (code and ids)")
    ts: float | None = Field(default=None, ge=0)


class TableAlert(AlertFields, Part):
    """A standing alert as the table state lists it (`GameAlert` announces each one)."""


class TableInfo(Part):
    """The engine service's state of the table: what it waits for."""

    status: str = Field(default="idle", max_length=16)
    game_id: str | None = Field(default=None, max_length=64)
    prompt: Prompt | None = None
    held: Held | None = None
    vanesco_wait: list[VanescoWait] = Field(default_factory=list, max_length=N_SEATS)
    alerts: list[TableAlert] = Field(default_factory=list, max_length=256)
    dealing: Dealing | None = None
    inputs: int = Field(default=0, ge=0, description="sensor inputs and commands this game")
    pawns_sensed: list[int] | None = Field(
        default=None, max_length=N_PERIMETER,
        description="perimeter positions where a pawn sensor sees a pawn; None: the table has "
        "no pawn sensors")


@view_dataclass(frozen=True, kw_only=True, config=ConfigDict(extra="forbid"))
class PublicTableView(PublicView):
    """The observer's `PublicView` of the game plus the engine service's ``table`` state."""

    table: TableInfo | None = None

    @classmethod
    def of(cls, view: PublicView, table: TableInfo | None) -> PublicTableView:
        fields = {f.name: getattr(view, f.name) for f in dataclasses.fields(PublicView)}
        return cls(**fields, table=table)

    def to_wire(self) -> dict[str, Any]:
        data = _PUBLIC_TABLE_VIEW.dump_python(self, mode="json")
        assert isinstance(data, dict)
        return data


_PUBLIC_TABLE_VIEW: Final = TypeAdapter(PublicTableView)


class SimHand(BaseModel):
    """A card held in someone's hand on the simulated table (face up: it was lifted from
    the square, a pad, or drawn to refill a hole)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    card: str = Field(pattern=CARD_ID_PATTERN)
    origin: str = Field(max_length=16, description="'r,c', 'pad:<seat>' or 'pile'")


class SimTablePublic(WireModel):
    """``hub/sim`` (retained): what anyone at the simulated table sees. Never a covered
    card (a cauldron shows its top and its size only) and never the pile's order."""

    hub_id: str = Field(min_length=1, max_length=64)
    ts: float = Field(ge=0)
    dealt: bool = False
    cells: dict[str, str] = Field(default_factory=dict, max_length=36)
    pads: dict[str, str] = Field(default_factory=dict, max_length=N_SEATS)
    hands: dict[str, SimHand] = Field(
        default_factory=dict, max_length=N_SEATS + 1,
        description="owner ('host' or a seat '0'..'3') -> the card in that hand")
    pile_size: int = Field(default=0, ge=0, le=200)
    tops: dict[str, str | None] = Field(default_factory=dict, max_length=N_SEATS)
    sizes: dict[str, int] = Field(default_factory=dict, max_length=N_SEATS)
    beside: dict[str, list[str]] = Field(default_factory=dict, max_length=N_SEATS)


class GamePublicBase(WireModel):
    """``game/public`` (retained) of a table of any game: ``game`` (its id in the registry)
    says whose ``view`` it is, typed by that game's `GameViews.public` plus the table's
    state (``table``): `public_model` gives each game's model. ``turn`` is the seat to play
    (None before a game, when it is over, or in a game without turns), for the hub's LED."""

    GAME: ClassVar[str] = DEFAULT_GAME  # the game of this model's views

    table: str | None = Field(default=None, pattern=TABLE_ID_PATTERN)
    game: str = Field(default=DEFAULT_GAME, max_length=32, description="the game's id "
                      "(engine.games): whose view ``view`` is")
    game_id: str | None = Field(default=None, max_length=64)
    turn: int | None = Field(default=None, ge=0, lt=N_SEATS)
    ts: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _its_game(self) -> GamePublicBase:
        if self.game != self.GAME:
            raise ValueError(f"a {self.GAME} view, not {self.game!r}'s")
        return self


class GamePublic(GamePublicBase):
    """``game/public`` of the default game (Glastonbury): the rules engine's observer's
    `PublicView` (never a covered card) plus the table state."""

    view: PublicTableView
    # The owning engine's claim of the table (its epoch, bumped at each claim): a follower
    # ignores a word with a lower one than it has seen (a stale owner's).
    fence: int | None = Field(default=None, ge=0, le=MAX_SEQ)


class GameSeatBase(WireModel):
    """``game/seat/<n>``: one seat's private view, typed by its game's `GameViews.seat`
    (`seat_model` gives each game's model). ``seat`` must equal the ``<n>`` of the topic,
    and the view's seat too."""

    GAME: ClassVar[str] = DEFAULT_GAME

    seat: int = Field(ge=0, lt=N_SEATS)
    game: str = Field(default=DEFAULT_GAME, max_length=32, description="the game's id "
                      "(engine.games): whose view ``view`` is")
    game_id: str | None = Field(default=None, max_length=64)
    ts: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _same_seat(self) -> GameSeatBase:
        if self.game != self.GAME:
            raise ValueError(f"a {self.GAME} view, not {self.game!r}'s")
        view_seat = getattr(getattr(self, "view", None), "seat", self.seat)
        if view_seat != self.seat:
            raise ValueError(f"the view is seat {view_seat}'s, not seat {self.seat}'s")
        return self


class GameSeat(GameSeatBase):
    """``game/seat/<n>`` of the default game (Glastonbury): the observer's `SeatView` (its
    recipes, its own stack with the memory aid, a Perluceo reveal sent once)."""

    view: SeatView
    # The owning engine's claim of the table (its epoch, bumped at each claim): a follower
    # ignores a word with a lower one than it has seen (a stale owner's).
    fence: int | None = Field(default=None, ge=0, le=MAX_SEQ)


_FENCE: Final[tuple[Any, Any]] = (int | None, Field(default=None, ge=0, le=MAX_SEQ))
_PUBLIC_MODELS: dict[str, type[GamePublicBase]] = {DEFAULT_GAME: GamePublic}
_SEAT_MODELS: dict[str, type[GameSeatBase]] = {DEFAULT_GAME: GameSeat}


def game_title(game: str) -> str:
    """A game's id as the prefix of its models' names (``quacks`` -> ``Quacks``)."""
    return "".join(part.title() for part in re.split(r"[^A-Za-z0-9]+", game))


def public_model(game: str) -> type[GamePublicBase]:
    """``game/public``'s model for a table of ``game``, its view typed by the game's own
    `GameViews.public` (found through the registry); `UnknownGame` for another id."""
    found = _PUBLIC_MODELS.get(game)
    if found is None:
        views = games.get(game).views
        view = create_model(f"{views.public.__name__}Table", __base__=views.public,
                            table=(TableInfo | None, None))
        found = create_model(f"GamePublic{game_title(game)}", __base__=GamePublicBase,
                             __doc__=f"``game/public`` of a {game} table.",
                             view=(view, ...), fence=_FENCE)
        found.GAME = game
        _PUBLIC_MODELS[game] = found
    return found


def seat_model(game: str) -> type[GameSeatBase]:
    """``game/seat/<n>``'s model for a table of ``game`` (its `GameViews.seat`)."""
    found = _SEAT_MODELS.get(game)
    if found is None:
        found = create_model(f"GameSeat{game_title(game)}", __base__=GameSeatBase,
                             __doc__=f"``game/seat/<n>`` of a {game} table.",
                             view=(games.get(game).views.seat, ...), fence=_FENCE)
        found.GAME = game
        _SEAT_MODELS[game] = found
    return found


# (any JSON writer's spacing: ``"game": "quacks"`` names Quacks too)
_GAME_IN: Final = re.compile(rb'"game"\s*:\s*"([^"\\]{1,32})"')


def _model_of(model: type[WireModel], payload: bytes | bytearray | str) -> type[WireModel]:
    """A game's view on ``game/public`` or ``game/seat/<n>`` is typed by that game's model:
    the payload's ``game`` (written before the view) names it."""
    if model is not GamePublic and model is not GameSeat:
        return model
    raw = payload.encode() if isinstance(payload, str) else bytes(payload)
    found = _GAME_IN.search(raw[:512])
    game = found.group(1).decode() if found else DEFAULT_GAME
    if game not in games.game_ids():
        raise PayloadError(f"no game {game[:32]!r} on this table: one of "
                           f"{', '.join(games.game_ids())}")
    return public_model(game) if model is GamePublic else seat_model(game)


class GameAlert(AlertFields, WireModel):
    """``game/alert``: an alert (`AlertFields`) raised (``active``) or ended
    (``active=False``, same ``alert_id``)."""

    active: bool = True
    game_id: str | None = Field(default=None, max_length=64)
    # The owning engine's claim of the table (its epoch, bumped at each claim): a follower
    # ignores a word with a lower one than it has seen (a stale owner's).
    fence: int | None = Field(default=None, ge=0, le=MAX_SEQ)


class CommandRequest(WireModel):
    """``cmd/<verb>`` and ``hub/cmd/<verb>``: a request; the answer goes to the same topic
    plus ``/response`` with the same ``transaction``."""

    transaction: str = Field(pattern=TRANSACTION_PATTERN)
    args: dict[str, JsonValue] = Field(
        default_factory=dict, description="the verb's args (engine.wire.api: one model each)")
    seat: int | None = Field(default=None, ge=0, lt=N_SEATS, description="seat asking, if any")
    source: str | None = Field(default=None, max_length=32, description="dashboard, button, …")
    auth: str | None = Field(default=None, max_length=128,
                             description="signature (engine.wire.auth.sign_command)")
    deadline: float | None = Field(default=None, ge=0,
                                   description="Unix time after which it must not run")


class CommandResponse(WireModel):
    """``.../response``: ``status`` ok with ``data``, or error with ``error`` (a reason)."""

    transaction: str = Field(pattern=TRANSACTION_PATTERN)
    status: Literal["ok", "error"]
    data: JsonValue = Field(default=None,
                            description="the verb's result (engine.wire.api: one model each)")
    error: str | None = Field(default=None, max_length=1000)
    code: str | None = Field(default=None, max_length=64, description="stable id of a refusal")
    rule: str | None = Field(default=None, pattern=RULE_PATTERN, description="rule id G…")

    @model_validator(mode="after")
    def _error_has_reason(self) -> CommandResponse:
        if self.status == "error" and not self.error:
            raise ValueError("an error response needs an error reason")
        if self.status == "ok" and self.error is not None:
            raise ValueError("an ok response has no error")
        return self


class GameEvents(WireModel):
    """``game/events`` (QoS 1, not retained): the public action stream of a table's game.

    After each applied input or command the engine publishes the rules actions it applied
    (``actions``, wire form, the first being action number ``index`` of the game) and the
    *public* events they produced (never a private one such as the Perluceo reveal). When a
    game starts, ``config`` and the dealt ``grid`` (the 32 cards face up, in the order of the
    square's takeable cells) come with it; an undo sends ``undone`` and the new length of the
    action list as ``index``. With the real-table rules (`Game.from_deal` with the pile
    unknown) a follower rebuilds exactly what a person at the table knows: refills are
    actions too, so no covered card is ever needed.
    """

    table: str | None = Field(default=None, pattern=TABLE_ID_PATTERN)
    game: str = Field(default=DEFAULT_GAME, max_length=32, description="the game's id "
                      "(engine.games): whose actions and events these are")
    game_id: str | None = Field(default=None, max_length=64)
    status: str = Field(max_length=16, description="the table's state: playing, over, ended")
    index: int = Field(ge=0, le=MAX_SEQ,
                       description="position of actions[0] in the game's action list")
    actions: list[dict[str, JsonValue]] = Field(default_factory=list, max_length=64)
    events: list[dict[str, JsonValue]] = Field(default_factory=list, max_length=256)
    undone: int = Field(default=0, ge=0, le=MAX_SEQ)
    config: dict[str, JsonValue] | None = Field(default=None,
                                          description="GameConfig wire form, at start")
    grid: list[str] | None = Field(default=None, min_length=32, max_length=32,
                                   description="the dealt square at start (takeable cells)")
    ts: float | None = Field(default=None, ge=0)
    # The owning engine's claim of the table (its epoch, bumped at each claim): a follower
    # ignores a word with a lower one than it has seen (a stale owner's).
    fence: int | None = Field(default=None, ge=0, le=MAX_SEQ)


MODELS: Final[tuple[type[WireModel], ...]] = (
    HubEvent,
    ServiceState,
    HubSnapshot,
    HubHealth,
    SimTablePublic,
    GamePublic,
    GameSeat,
    GameAlert,
    GameEvents,
    CommandRequest,
    CommandResponse,
)


# ---------------------------------------------------------------- topics


@dataclass(frozen=True)
class TopicInfo:
    """A parsed topic: the table, the suffix after the table (``"hub/event"``), and the
    seat / verb / response flag where the topic carries them."""

    table: str
    name: str
    model: type[WireModel]
    seat: int | None = None
    verb: str | None = None
    response: bool = False


def check_table_id(table: str) -> str:
    if not isinstance(table, str) or not _TABLE_ID_RE.match(table):
        raise TopicError(
            f"table id {table!r} must be 1-64 characters of letters, digits, '_' or '-'"
        )
    return table


class Topics:
    """Topic names of one table (``Topics("t1").hub_event == "cauldron/t1/hub/event"``).

    ``Topics("+")`` gives subscription patterns across every table (engine workers).
    """

    def __init__(self, table: str, base: str = DEFAULT_BASE) -> None:
        if table != "+":
            check_table_id(table)
        if not base or any(ch in base for ch in "+#") or base.startswith("/") or base.endswith(
            "/"
        ):
            raise TopicError(f"base topic {base!r} must be non-empty, without + # or edge '/'")
        self.table = table
        self.base = base
        self.prefix = f"{base}/{table}/"

    def _t(self, suffix: str) -> str:
        return self.prefix + suffix

    @property
    def hub_event(self) -> str:
        return self._t("hub/event")

    @property
    def hub_state(self) -> str:
        return self._t("hub/state")

    @property
    def hub_snapshot(self) -> str:
        return self._t("hub/snapshot")

    @property
    def hub_health(self) -> str:
        return self._t("hub/health")

    @property
    def hub_sim(self) -> str:
        return self._t("hub/sim")

    @property
    def engine_state(self) -> str:
        return self._t("engine/state")

    @property
    def game_public(self) -> str:
        return self._t("game/public")

    @property
    def game_alert(self) -> str:
        return self._t("game/alert")

    @property
    def game_events(self) -> str:
        return self._t("game/events")

    def game_seat(self, seat: int | str) -> str:
        if seat != "+" and not (isinstance(seat, int) and 0 <= seat < N_SEATS):
            raise TopicError(f"seat {seat!r} is not 0..3")
        return self._t(f"game/seat/{seat}")

    def cmd(self, verb: str) -> str:
        if verb != "+" and verb not in GAME_VERBS:
            raise TopicError(f"unknown command {verb!r}; known: {', '.join(GAME_VERBS)}")
        return self._t(f"cmd/{verb}")

    def hub_cmd(self, verb: str) -> str:
        if verb != "+" and verb not in HUB_VERBS:
            raise TopicError(f"unknown hub command {verb!r}; known: {', '.join(HUB_VERBS)}")
        return self._t(f"hub/cmd/{verb}")

    @staticmethod
    def response(request_topic: str) -> str:
        return request_topic + "/response"

    def all(self) -> str:
        """Pattern for every topic of this table (``cauldron/<table>/#``)."""
        return self._t("#")


_TOPIC_INFO: dict[tuple[str, str], TopicInfo] = {}  # topics met, identified once each
_TOPICS_KEPT: Final = 4096


def parse_topic(topic: str, base: str = DEFAULT_BASE) -> TopicInfo:
    """Identify a concrete topic of the contract, or raise `TopicError`."""
    found = _TOPIC_INFO.get((topic, base)) if isinstance(topic, str) else None
    if found is None:
        found = _parse_topic(topic, base)
        if len(_TOPIC_INFO) >= _TOPICS_KEPT:  # (many tables' topics: start again)
            _TOPIC_INFO.clear()
        _TOPIC_INFO[(topic, base)] = found
    return found


def _parse_topic(topic: str, base: str) -> TopicInfo:
    if not isinstance(topic, str):
        raise TopicError(f"topic must be text, got {type(topic).__name__}")
    parts = topic.split("/")
    base_parts = base.split("/")
    n = len(base_parts)
    if parts[:n] != base_parts or len(parts) < n + 2:
        raise TopicError(f"topic {topic[:200]!r} is not under '{base}/<table>/'")
    table = parts[n]
    check_table_id(table)
    rest = parts[n + 1 :]
    name = "/".join(rest)
    simple: dict[str, type[WireModel]] = {
        "hub/event": HubEvent,
        "hub/state": ServiceState,
        "hub/snapshot": HubSnapshot,
        "hub/health": HubHealth,
        "hub/sim": SimTablePublic,
        "engine/state": ServiceState,
        "game/public": GamePublic,
        "game/alert": GameAlert,
        "game/events": GameEvents,
    }
    if name in simple:
        return TopicInfo(table, name, simple[name])
    if len(rest) == 3 and rest[:2] == ["game", "seat"]:
        if rest[2] not in ("0", "1", "2", "3"):
            raise TopicError(f"seat {rest[2]!r} in {topic!r} is not 0..3")
        return TopicInfo(table, name, GameSeat, seat=int(rest[2]))
    for prefix, verbs in ((["cmd"], GAME_VERBS), (["hub", "cmd"], HUB_VERBS)):
        k = len(prefix)
        if rest[:k] == prefix and len(rest) in (k + 1, k + 2):
            verb = rest[k]
            if verb not in verbs:
                known = ", ".join(verbs)
                raise TopicError(f"unknown command {verb!r} in {topic!r}; known: {known}")
            if len(rest) == k + 2:
                if rest[k + 1] != "response":
                    raise TopicError(f"topic {topic!r}: only '/response' may follow a command")
                return TopicInfo(table, name, CommandResponse, verb=verb, response=True)
            return TopicInfo(table, name, CommandRequest, verb=verb)
    raise TopicError(f"topic {topic[:200]!r} is not part of the wire contract")


# ---------------------------------------------------------------- payloads


def _summarise(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "payload"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    more = exc.error_count() - 5
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def validate_payload(model: type[WireModel], data: Any, what: str = "payload") -> WireModel:
    """Validate already-decoded JSON ``data`` as ``model``; `PayloadError` on failure."""
    if not isinstance(data, dict):
        raise PayloadError(f"{what} must be a JSON object, got {type(data).__name__}")
    version = data.get("schema_version")
    if version is None:
        raise SchemaVersionError(f"{what} has no schema_version (expected {SCHEMA_VERSION})")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise SchemaVersionError(
            f"{what} has schema_version {version!r}; this program speaks version "
            f"{SCHEMA_VERSION}: update the older side"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise PayloadError(f"{what} is not a valid {model.__name__}: {_summarise(exc)}") from None
    except (ValueError, TypeError, RecursionError) as exc:  # defensive: never a crash
        raise PayloadError(f"{what} is not a valid {model.__name__}: {exc}") from None


# `cauldron doctor` checks the broker's rights with real messages between the services'
# accounts; every service drops them unlogged (a doctor run leaves nothing in their logs).
_DOCTOR_PROBE = re.compile(rb'\{"doctor": "[A-Za-z0-9_-]{1,64}"\}')


def doctor_probe(token: str) -> bytes:
    """The payload of one of doctor's rights probes."""
    payload = json.dumps({"doctor": token}).encode()
    if not _DOCTOR_PROBE.fullmatch(payload):
        raise ValueError(f"a doctor probe token is 1-64 letters, digits, - or _: {token!r}")
    return payload


def is_doctor_probe(payload: bytes | bytearray) -> bool:
    return len(payload) <= 80 and _DOCTOR_PROBE.fullmatch(bytes(payload)) is not None


def _validate_json(model: type[WireModel], payload: bytes | bytearray | str
                   ) -> WireModel | None:
    """The common case in one step, with pydantic's own JSON parser (a third of the cost
    of `json.loads` and validating the dict): a valid payload that states its
    ``schema_version``. None for anything else: `parse_payload`'s own path then says what
    is wrong, in its words."""
    try:
        found = model.model_validate_json(payload)
    except (ValidationError, ValueError, TypeError, RecursionError):
        return None
    return found if "schema_version" in found.model_fields_set else None


def parse_payload(
    topic: str, payload: bytes | bytearray | str, base: str = DEFAULT_BASE
) -> WireModel:
    """Decode the payload of ``topic`` into its model.

    Raises `TopicError` (topic not in the contract), `SchemaVersionError` or `PayloadError`
    (bad JSON, wrong shape, seat mismatch), each naming the problem; never anything else.
    """
    info = parse_topic(topic, base)
    if not isinstance(payload, bytes | bytearray | str):
        raise PayloadError(f"payload on {topic} must be bytes, got {type(payload).__name__}")
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"payload on {topic} is {len(payload)} bytes; limit {MAX_PAYLOAD_BYTES}")
    typed = _model_of(info.model, payload)
    model = _validate_json(typed, payload)
    if model is not None:
        if info.seat is not None and isinstance(model, GameSeatBase) and model.seat != info.seat:
            raise PayloadError(f"payload on {topic} is for seat {model.seat}, topic says "
                               f"{info.seat}")
        return model
    try:
        text = payload.decode("utf-8") if isinstance(payload, bytes | bytearray) else payload
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise PayloadError(f"payload on {topic} is not JSON: {reason}") from None
    model = validate_payload(typed, data, what=f"payload on {topic}")
    if info.seat is not None and isinstance(model, GameSeatBase) and model.seat != info.seat:
        raise PayloadError(f"payload on {topic} is for seat {model.seat}, topic says {info.seat}")
    return model


def encode(model: WireModel) -> bytes:
    """A model as compact JSON bytes (what goes on the wire)."""
    return model.model_dump_json(exclude_none=False).encode("utf-8")


_FIELDS: dict[type[Any], tuple[str, ...]] = {}


def _fields_of(value: Any) -> dict[str, Any]:
    """A dataclass instance (a view) as its fields, for `compact_json` (nested ones too)."""
    kind = type(value)
    names = _FIELDS.get(kind)
    if names is None:
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            raise TypeError(f"{kind.__name__} is not JSON data")
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
    return {name: getattr(value, name) for name in names}


_COMPACT: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                                   default=_fields_of)


def compact_json(data: Any) -> bytes:
    """JSON data (dicts, lists, tuples, str, int, float, bool, None, and dataclass
    instances such as the observer's views, as their fields) as `encode` writes it:
    compact, UTF-8. A view is written as its ``to_wire()``, without making that copy.
    orjson writes dataclasses natively (a few times faster: the engine writes a view per
    change of a game); what it does not take (a key that is no str, an int past 64 bits)
    goes through the standard encoder, which also says what is not JSON data. (A float
    that is not finite: orjson writes null; the engine's views and times hold none.)"""
    try:
        return orjson.dumps(data)
    except TypeError:  # (orjson.JSONEncodeError is one)
        return _COMPACT.encode(data).encode("utf-8")


def game_public_json(*, table: str | None, game: str = DEFAULT_GAME, game_id: str | None,
                     turn: int | None, ts: float | None, view: bytes,
                     table_info: dict[str, Any], fence: int | None) -> bytes:
    """``game/public`` as `encode(GamePublic(...))` writes it (the same fields, in order),
    from its parts: `view`, the observer's `PublicView` as `compact_json` wrote it (once per
    change of the game, not once per input), and `table_info`, `TableInfo`'s data. For the
    engine's hot path: what it built itself is not validated again (tests check that the
    result parses as the `GamePublic` the models make)."""
    if not view.startswith(b"{") or not view.endswith(b"}") or len(view) < 3:
        raise ValueError("view must be a JSON object with fields")
    head = compact_json({"schema_version": SCHEMA_VERSION, "table": table, "game": game,
                         "game_id": game_id, "turn": turn, "ts": ts})
    return (head[:-1] + b',"view":' + view[:-1] + b',"table":' + compact_json(table_info)
            + b'},"fence":' + compact_json(fence) + b"}")


def game_seat_json(*, seat: int, game: str, game_id: str | None, ts: float | None,
                   view: bytes, fence: int | None) -> bytes:
    """``game/seat/<n>`` as `encode(GameSeat(...))` writes it, from the seat's view as
    `compact_json` wrote it (the same fields, in order; tests check it parses)."""
    if not view.startswith(b"{") or not view.endswith(b"}"):
        raise ValueError("view must be a JSON object")
    head = compact_json({"schema_version": SCHEMA_VERSION, "seat": seat, "game": game,
                         "game_id": game_id, "ts": ts})
    return head[:-1] + b',"view":' + view + b',"fence":' + compact_json(fence) + b"}"


# ---------------------------------------------------------------- JSON Schema


def schema_file_names() -> dict[str, type[WireModel]]:
    """File name -> model, e.g. ``hub-event.schema.json``."""
    names: dict[str, type[WireModel]] = {}
    others = [g for g in games.game_ids() if g != DEFAULT_GAME]
    for model in (*MODELS, *map(public_model, others), *map(seat_model, others)):
        stem = re.sub(r"(?<!^)(?=[A-Z])", "-", model.__name__).lower()
        names[f"{stem}.schema.json"] = model
    return names


def json_schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every model's JSON Schema, each game's views included (``game-public-quacks…``)."""
    for file_name, model in schema_file_names().items():
        schema = model.model_json_schema()
        schema["$id"] = f"urn:cauldron-table:wire:v{SCHEMA_VERSION}:{file_name}"
        yield file_name, schema


def write_schemas(out_dir: Path) -> list[Path]:
    """Write one JSON Schema file per model into ``out_dir`` (created); return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, schema in json_schemas():
        path = out_dir / file_name
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written

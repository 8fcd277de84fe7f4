"""Response models. Every ``*Public`` model holds only what an observer of the table may
see. The game's views extend the rules engine observer's typed views (through the wire
contract), whose keys are fixed: a covered cauldron card has no field to travel in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, create_model
from pydantic.dataclasses import dataclass as view_dataclass

from engine import games
from engine.wire.api import EnrolSaid, GestureAction
from engine.wire.contract import AlertFields, BoardHealth, PublicTableView

CardId = str


class _Public(BaseModel):
    # extra="ignore": unknown keys from the engine are dropped, never forwarded.
    model_config = ConfigDict(extra="ignore")


# The game's views are the game's observer's typed views as the wire contract carries them
# (`PublicTableView`); the dashboard extends them and never redefines a field. A finished
# game's score breakdown is typed by its game (`GameViews.scores`: routers/scores.py).


@view_dataclass(frozen=True, kw_only=True, config=ConfigDict(extra="forbid"))
class ViewPublic(PublicTableView):
    """The public view as the dashboard serves it: the observer's `PublicView` plus the
    engine service's ``table`` state. Dashboard-only fields go here, with defaults."""


class GamePublicOut(_Public):
    table: str | None = None
    game: str = Field(default=games.DEFAULT_GAME, description="the game's id (engine.games)")
    game_id: str | None = None
    turn: int | None = None
    ts: float | None = None
    view: ViewPublic


class GameOtherOut(_Public):
    """The public game of a table that plays another game than the wire's typed views say
    (Quacks): the engine's public view as the game's observer made it (never a bag's
    contents, a hand or a seat's moves: checked on the wire by the engine's tests), drawn by
    that game's fragments."""

    table: str | None = None
    game: str = Field(description="the game's id (engine.games)")
    game_id: str | None = None
    turn: int | None = None
    ts: float | None = None
    view: dict[str, Any]


class AlertPublic(AlertFields, _Public):
    """A standing alert as the pages get it (`AlertFields`: the one definition)."""

    active: bool = True


class HubChangePublic(_Public):
    """A new hub wants to serve the table in place of the registered one; the engine
    ignores it until the host accepts it (``POST /api/host/hub/confirm``)."""

    old_hub: str | None = Field(default=None, description="the registered hub's id")
    new_hub: str = Field(description="the id of the hub that waits")


class ServiceStatus(_Public):
    broker: bool = Field(description="the dashboard is connected to the MQTT broker")
    hub: Literal["online", "offline", "unknown"] = "unknown"
    engine: Literal["online", "offline", "unknown"] = "unknown"
    hub_backend: str | None = None
    engine_degraded: str | None = Field(
        default=None, description="why the engine cannot follow the table now (it retries)")
    hub_degraded: str | None = Field(
        default=None, description="why the hub cannot do its work now (it retries)")
    hub_other_game: str | None = Field(
        default=None, description="the game the hub serves (hub/health) when it is not the "
        "table's (table_game): its readers cannot follow the table's game; the host is warned")
    hub_change: HubChangePublic | None = Field(
        default=None, description="a new hub waits for the host to accept it")


class VirtualPublic(_Public):
    """What anyone sees of the virtual table: cards in the hand and on pads (face up), the
    pile's size (never its order) and the cauldron tops the public view already shows."""

    enabled: bool
    dealt: bool = False
    cells: dict[str, CardId] = Field(default_factory=dict, description="face-up cards on cells")
    hand: CardId | None = None
    hand_from: str | None = None
    pads: dict[str, CardId] = Field(default_factory=dict)
    pile_size: int = 0
    tops: dict[str, CardId | None] = Field(default_factory=dict)
    sizes: dict[str, int] = Field(default_factory=dict)
    hands: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="owner ('host' or a seat '0'..'3') -> {card, origin}")
    message: str | None = None
    waiting: dict[str, str] = Field(default_factory=dict,
                                    description="seat -> why its bot waits")
    waiting_codes: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="seat -> {code, ...params}: the same, for the pages")


class TableState(_Public):
    """``GET /api/table`` and every message of ``WS /ws/table``."""

    type: Literal["table"] = "table"
    table: str
    table_game: str = Field(default=games.DEFAULT_GAME,
                            description="the game the table plays (engine.games id): a page "
                                        "served for another loads again")
    game: GamePublicOut | GameOtherOut | None
    alerts: list[AlertPublic]
    status: ServiceStatus
    joined: list[bool] = Field(description="seats whose phone has joined this game")
    phones: list[bool] = Field(default_factory=list,
                               description="seats whose page is connected now (its live socket)")
    virtual: VirtualPublic | None = None
    last_game: GamePublicOut | GameOtherOut | None = Field(
        default=None, description="the last finished game (its scores), while another runs"
    )


class SeatState(BaseModel):
    """``GET /api/seats/{n}`` and every message of ``WS /ws/seat/{n}``: that seat's view."""

    type: Literal["seat"] = "seat"
    seat: int
    table_game: str = Field(default=games.DEFAULT_GAME, description="the game the table plays")
    game_id: str | None
    colour: str | None = None
    memory_aid: bool = False
    stack: list[CardId] | None = Field(
        default=None, description="own cauldron bottom first (memory aid on), else null"
    )
    reveal: list[CardId] | None = Field(
        default=None, description="a Perluceo reveal, until the seat dismisses it"
    )
    recipes: list[str] = Field(default_factory=list)
    can_keep: bool = Field(default=False, description="this seat must keep/discard the last card")
    last_card: CardId | None = None
    can_declinatio: bool = Field(
        default=False,
        description="this seat stands at a corner where Declinatio would face only "
        "Vanesco/Perluceo: using it ends the game (G7)",
    )
    game: GamePublicOut | GameOtherOut | None = None
    seat_view: dict[str, Any] | None = Field(
        default=None, description="another game's own view of this seat (Quacks: its bag, "
        "what it is asked, what it may do): only on this seat's own socket")
    alerts: list[AlertPublic] = Field(default_factory=list)
    play: bool = Field(
        default=False,
        description="one-tap play (POST /api/seats/{n}/play) works: a virtual table on the "
        "simulated hub; else the phone shows the moves as instructions for the real cards",
    )


class CommandResult(BaseModel):
    """What a command (new game, undo, keep, …) answered."""

    ok: bool
    data: JsonValue = None
    error: str | None = None
    code: str | None = Field(default=None, description="a refusal's stable id (translations)")
    rule: str | None = Field(default=None, description="the rule a refusal names (G…)")
    unavailable: bool = Field(
        default=False, description="the broker or the service did not answer (vs. refused)"
    )


class JoinInfo(BaseModel):
    seat: int
    url: str
    joined: bool


class ReaderHealthPublic(BaseModel):
    reader: int
    place: str
    health: str
    occupied: bool


class ReadersOut(BaseModel):
    hub_id: str | None
    backend: str | None
    ts: float | None
    readers: list[ReaderHealthPublic]
    counts: dict[str, int]
    board: BoardHealth | None = None  # the scan board (Pico): "hung" when it stopped answering
    pawns: list[int] | None = None  # sensed pawn positions; None: no pawn sensors
    game: str | None = Field(default=None, description="the game the hub serves")
    other_game: bool = Field(default=False, description="the hub serves another game than "
                             "the table's: its readers cannot follow the table's game")


class EnrolmentOut(BaseModel):
    active: bool
    done: int | None = None
    total: int | None = None
    next: str | None = None
    message: str | None = Field(default=None, description="what the hub last said")
    said: list[EnrolSaid] | None = Field(default=None, description="the same, as codes")
    spare: str | None = Field(default=None, description="the piece a spare tag waits for")
    spares: int | None = Field(default=None, description="spares enrolled since the hub started")
    game: str | None = Field(default=None, description="the game the hub serves (hub/health): "
                             "whose pieces it enrols")
    detail: dict[str, Any] = Field(default_factory=dict)


class EnrolIn(BaseModel):
    """A host's enrolment step, carried out by the running hub."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["start", "undo", "skip", "stop", "spare"]
    seat: int = Field(default=1, ge=1, le=4, description="whose pad to tap the cards on (1-4)")
    write: bool = Field(default=False, description="also write the card id into each tag")
    piece: str | None = Field(default=None, min_length=1, max_length=32,
                              description="spare: the lost piece, or its kind (a game that "
                              "enrols by kind); its new tag is tapped on the seat's pad")


class NewGameForm(BaseModel):
    """The host's new-game form: which game, how to deal, and the game's own options (the
    fields of its options model, added by `new_game_in`: never listed here)."""

    model_config = ConfigDict(extra="forbid")

    game: str = Field(default=games.DEFAULT_GAME, description="the game's id (engine.games)")
    deal: Literal["auto", "virtual", "table"] = Field(
        default="auto",
        description="virtual: the dashboard shuffles and lays the cards on the simulated "
        "table; table: the cards already lie on the readers; auto: virtual with the sim hub",
    )
    seed: int | None = Field(default=None, description="shuffle seed for a virtual deal")

    def options(self) -> dict[str, Any]:
        """The game's options as the form gave them (every field, defaults included)."""
        return self.model_dump(mode="json", exclude=set(NewGameForm.model_fields))


def new_game_in(game: str | None = None) -> type[NewGameForm]:
    """The form's model for ``game``: `NewGameForm` with its options model's fields and
    checks (defaults, bounds, descriptions), so a new option reaches the engine unlisted."""
    options = games.get(game).options
    bases = cast("tuple[type[NewGameForm], ...]", (NewGameForm, options))
    model: type[NewGameForm] = create_model("NewGameIn", __base__=bases,
                                            __doc__="The host's new-game form.")
    return model


if TYPE_CHECKING:
    NewGameIn = NewGameForm
else:
    NewGameIn = new_game_in()


class MoveIn(BaseModel):
    """A move of the table's game from a seat's phone (``cmd/play``): one of the game's
    moves (`GameDefinition.moves`) and its arguments, checked by the game."""

    model_config = ConfigDict(extra="forbid")

    verb: str = Field(min_length=1, max_length=32, description="one of the game's moves")
    args: dict[str, JsonValue] = Field(default_factory=dict, max_length=16)


class SimIn(BaseModel):
    """A virtual-table gesture."""

    model_config = ConfigDict(extra="forbid")

    action: GestureAction = Field(
        description="lift: pick up the card at `where` (cell or pad); lay: put the card in "
        "hand on `where` (cell or pad); draw: lay the pile's top card into hole `where`; "
        "tap: tap the top card of seat `seat`'s cauldron on its pad (Vanesco); slide: slide "
        "the card on pad `seat` onto that cauldron (or beside it, a spell); drop: put the card "
        "in hand under the pile"
    )
    where: str | None = Field(default=None, max_length=16)
    seat: int | None = Field(default=None, ge=0, le=3)
    as_seat: int | None = Field(default=None, ge=0, le=3, description="with the host PIN: "
                                "act with this seat's hand (the demo's bots)")

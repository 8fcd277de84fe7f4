"""Response models. Every ``*Public`` model holds only what an observer of the table may
see: building one from an engine view drops any key not listed here (whitelist), so a
covered cauldron card can never reach the public table view by accident."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CardId = str


class _Public(BaseModel):
    # extra="ignore": unknown keys from the engine are dropped, never forwarded.
    model_config = ConfigDict(extra="ignore")


class SpellPublic(_Public):
    card: CardId
    uses_left: int


class SeatPublic(_Public):
    seat: int
    colour: str
    pawn: int
    faced_line: int | None = None
    top: CardId | None = None
    cauldron_size: int = 0
    spells: list[SpellPublic] = Field(default_factory=list)


class ExpectedPublic(_Public):
    seat: int | None = None
    phase: str | None = None
    faced_line: int | None = None
    take: list[str] = Field(default_factory=list)
    accio: list[str] = Field(default_factory=list)
    declinatio: bool = False
    declinatio_line: int | None = None
    declinatio_take: list[str] = Field(default_factory=list)
    # "pass" is a Python keyword: the wire name is kept through the alias.
    pass_: bool = Field(default=False, alias="pass", serialization_alias="pass")
    refill_cell: str | None = None
    last_card: CardId | None = None

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class ConfigPublic(_Public):
    colours: list[str] = Field(default_factory=list, description="known while dealing")
    first_seat: int = 0
    recipes: bool = False
    second_player_bonus: bool = False
    memory_aid: bool = False
    removed_colour: str | None = None


class FamilyScorePublic(_Public):
    family: str
    colour: str
    cards: list[CardId]
    immutos: list[CardId]
    counted: int
    base: int
    doubled: bool
    bonus: int
    points: int


class RecipeScorePublic(_Public):
    recipe: str
    achieved: bool
    points: int
    reason: str


class SeatScorePublic(_Public):
    seat: int
    colour: str
    total: int
    ingredient_points: int
    families: list[FamilyScorePublic]
    immuto_assignment: dict[str, str]
    recipes: list[RecipeScorePublic]
    second_player_bonus: int


class ScoresPublic(_Public):
    """The score breakdown of a finished game (cauldrons are face up by then)."""

    seats: list[SeatScorePublic]
    winners: list[int]


class EndPublic(_Public):
    reason: str | None = None
    last_card_seat: int | None = None
    scores: ScoresPublic | None = None


class PromptPublic(_Public):
    code: str
    seat: int | None = None
    text: str = ""


class HeldPublic(_Public):
    """A card lifted from the square, not yet laid on a pad (face up, in a hand)."""

    cell: str
    card: CardId
    via: str | None = None
    last_card: bool = False


class VanescoWaitPublic(_Public):
    seat: int
    card: CardId  # the top card that seat must tap (it was face up on top)


class DealCellPublic(_Public):
    cell: str
    name: str = Field(description="'row R, column C' (from 1)")
    state: Literal["read", "missing", "wrong"]
    card: CardId | None = Field(default=None, description="the face-up card read there")
    why: str | None = Field(default=None, description="why a wrong card is wrong")


class SetAsideCardPublic(_Public):
    card: CardId
    name: str


class SetAsidePublic(_Public):
    """2 players: the removed colour's 8 cards, set aside before shuffling (G2)."""

    colour: str
    cards: list[SetAsideCardPublic] = Field(default_factory=list)
    text: str = ""


class DealNextPublic(_Public):
    code: str = Field(description="set_aside, lay_cards, fix_wrong or starting")
    text: str = ""


class DealingPublic(_Public):
    filled: int = 0
    missing: list[str] = Field(default_factory=list)
    total: int = 32
    counts: dict[str, int] = Field(default_factory=dict, description="read, missing, wrong")
    cells: list[DealCellPublic] = Field(default_factory=list)
    set_aside: SetAsidePublic | None = None
    next: DealNextPublic | None = None


class TableInfoPublic(_Public):
    """The engine service's table state (what the table waits for)."""

    status: str = "idle"
    game_id: str | None = None
    prompt: PromptPublic | None = None
    held: HeldPublic | None = None
    vanesco_wait: list[VanescoWaitPublic] = Field(default_factory=list)
    dealing: DealingPublic | None = None
    inputs: int = Field(default=0, description="sensor inputs and commands taken this game")


class ViewPublic(_Public):
    """The rules engine's ``view_public()`` (plus the engine service's ``table`` state),
    restricted to the documented keys. While a game is being dealt only the grid is known."""

    players: int = 0
    config: ConfigPublic | None = None
    grid: list[list[CardId | None]]
    pile_size: int = 0
    seats: list[SeatPublic] = Field(default_factory=list)
    turn: int | None = None
    turns: int = 0
    phase: str = "dealing"
    move_value: int = 0
    expected: ExpectedPublic = Field(default_factory=ExpectedPublic)
    discarded: list[CardId] = Field(default_factory=list)
    out_of_game: list[CardId] = Field(default_factory=list)
    over: bool = False
    end: EndPublic | None = None
    table: TableInfoPublic | None = None


class GamePublicOut(_Public):
    table: str | None = None
    game_id: str | None = None
    turn: int | None = None
    ts: float | None = None
    view: ViewPublic


class AlertPublic(_Public):
    alert_id: str
    rule: str
    kind: str = Field(default="breach", description="breach, or notice (information only)")
    message: str
    instruction: str
    severity: str = "error"
    kind: str | None = Field(default=None, description="'notice': information, not a breach")
    seat: int | None = None
    active: bool = True
    params: dict[str, Any] = Field(default_factory=dict)


class ServiceStatus(_Public):
    broker: bool = Field(description="the dashboard is connected to the MQTT broker")
    hub: Literal["online", "offline", "unknown"] = "unknown"
    engine: Literal["online", "offline", "unknown"] = "unknown"
    hub_backend: str | None = None


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
    message: str | None = None
    restoring: bool = Field(default=False,
                            description="coming back from its saved state after a restart")


class TableState(_Public):
    """``GET /api/table`` and every message of ``WS /ws/table``."""

    type: Literal["table"] = "table"
    table: str
    game: GamePublicOut | None
    alerts: list[AlertPublic]
    status: ServiceStatus
    joined: list[bool] = Field(description="seats whose phone has joined this game")
    virtual: VirtualPublic | None = None
    last_game: GamePublicOut | None = Field(
        default=None, description="the last finished game (its scores), while another runs"
    )


class SeatState(BaseModel):
    """``GET /api/seats/{n}`` and every message of ``WS /ws/seat/{n}``: that seat's view."""

    type: Literal["seat"] = "seat"
    seat: int
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
    game: GamePublicOut | None = None
    alerts: list[AlertPublic] = Field(default_factory=list)
    play: bool = Field(
        default=False,
        description="one-tap play (POST /api/seats/{n}/play) works: a virtual table on the "
        "simulated hub; else the phone shows the moves as instructions for the real cards",
    )


class CommandResult(BaseModel):
    """What a command (new game, undo, keep, …) answered."""

    ok: bool
    data: Any = None
    error: str | None = None
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


class EnrolmentOut(BaseModel):
    active: bool
    done: int | None = None
    total: int | None = None
    next: str | None = None
    message: str | None = Field(default=None, description="what the hub last said")
    detail: dict[str, Any] = Field(default_factory=dict)


class EnrolIn(BaseModel):
    """A host's enrolment step, carried out by the running hub."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["start", "undo", "skip", "stop"]
    seat: int = Field(default=1, ge=1, le=4, description="whose pad to tap the cards on (1-4)")
    write: bool = Field(default=False, description="also write the card id into each tag")


class NewGameIn(BaseModel):
    """The host's new-game form."""

    model_config = ConfigDict(extra="forbid")

    colours: list[str] = Field(min_length=2, max_length=4, description="one player colour per seat")
    first_seat: int = Field(default=0, ge=0, le=3)
    removed_colour: str | None = Field(default=None, description="2 players: colour removed")
    recipes: bool = False
    second_player_bonus: bool = False
    memory_aid: bool = False
    deal: Literal["auto", "virtual", "table"] = Field(
        default="auto",
        description="virtual: the dashboard shuffles and lays the cards on the simulated "
        "table; table: the cards already lie on the readers; auto: virtual with the sim hub",
    )
    seed: int | None = Field(default=None, description="shuffle seed for a virtual deal")


class SimIn(BaseModel):
    """A virtual-table gesture."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["lift", "lay", "draw", "tap", "slide", "drop"] = Field(
        description="lift: pick up the card at `where` (cell or pad); lay: put the card in "
        "hand on `where` (cell or pad); draw: lay the pile's top card into hole `where`; "
        "tap: tap the top card of seat `seat`'s cauldron on its pad (Vanesco); slide: slide "
        "the card on pad `seat` onto that cauldron (or beside it, a spell); drop: put the card "
        "in hand under the pile"
    )
    where: str | None = Field(default=None, max_length=16)
    seat: int | None = Field(default=None, ge=0, le=3)

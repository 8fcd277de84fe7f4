"""The virtual table: gestures relayed to the simulated hub (``hub/cmd/sim``).

Every gesture needs a credential: the host PIN (header), or a seat's secret (its cookie, set
at ``/join``, or a header; ``?seat=`` says which seat) for that seat's own hand, at its turn or
for an input the engine waits for from it. A public client can look (``GET /api/virtual``) and
do nothing else.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, status
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from dashboard.bridge import corner_blocked
from dashboard.deps import (
    PIN_HEADER,
    BridgeDep,
    HostDep,
    SeatNumberDep,
    VirtualDep,
    check_pin,
    given_seat_secret,
    seat_secret_ok,
)
from dashboard.game import GAME
from dashboard.models import CommandResult, GamePublicOut, MoveIn, SimIn, VirtualPublic
from dashboard.routers import Refusal, answered
from dashboard.virtual import VirtualError, VirtualTable, owner_of
from engine.wire import api
from engine.wire.api import Command, PlayArgs, SeatArgs
from engine.wire.contract import N_SEATS

router = APIRouter(
    prefix="/api/virtual",
    tags=["virtual table"],
    responses={401: {"description": "no credential (host PIN or seat secret) given"},
               403: {"description": "wrong credential"},
               404: {"description": "the virtual table is off"},
               409: {"description": "the gesture cannot be done (reason given)"}},
)
play_router = APIRouter(prefix="/api/seats", tags=["seats"])


class Actor(BaseModel):
    """Who asks: the host (``seat`` None) or one seat, proven by its secret."""

    seat: int | None


def _check_seat_secret(request: Request, bridge: BridgeDep, seat: int) -> Actor:
    if not seat_secret_ok(request, bridge, seat):
        raise Refusal(status.HTTP_403_FORBIDDEN,
                      f"this link does not open {GAME.names.seat(seat)} for the current "
                      "game: scan the seat's QR code on the table screen again",
                      "seat_link_stale", params={"seat": seat})
    return Actor(seat=seat)


def require_actor(
    request: Request,
    bridge: BridgeDep,
    pin: Annotated[str | None, Header(alias=PIN_HEADER, description="the host PIN")] = None,
    seat: Annotated[int | None, Query(ge=0, lt=N_SEATS, description="acting seat")] = None,
) -> Actor:
    """A seat (its secret) or the host (PIN): a public client may do nothing here."""
    if seat is not None and given_seat_secret(request, seat):
        return _check_seat_secret(request, bridge, seat)
    if pin:
        if not check_pin(request, pin):
            raise Refusal(status.HTTP_403_FORBIDDEN, "wrong host PIN", "wrong_pin")
        return Actor(seat=None)
    raise Refusal(status.HTTP_401_UNAUTHORIZED,
                  f"a gesture needs the host PIN ({PIN_HEADER} header) or a seat's "
                  "secret (?seat= and its cookie)", "needs_credential")


ActorDep = Annotated[Actor, Depends(require_actor)]


@router.get("", summary="The virtual table's public state")
def get_virtual(virtual: VirtualDep) -> VirtualPublic:
    return virtual.public()


def do_gesture(virtual: VirtualDep, actor: Actor, body: SimIn) -> VirtualPublic:
    hand = actor.seat
    if actor.seat is None:
        hand = body.as_seat
    elif body.as_seat not in (None, actor.seat):
        raise Refusal(status.HTTP_403_FORBIDDEN,
                      f"{GAME.names.seat(actor.seat)} acts with its own hand only", "own_hand_only")
    try:
        # The host acting with a seat's hand (the demo's bots) is held to that seat's moment.
        virtual.check_moment(body.action, body.where, body.seat, hand,
                             by_host=actor.seat is None)
        return virtual.gesture(body.action, body.where, body.seat, owner_of(hand))
    except VirtualError as exc:
        raise Refusal(status.HTTP_409_CONFLICT, str(exc), exc.code, params=exc.params) from None


@router.post(
    "/gesture",
    summary="Move a card on the virtual table",
    description="lift / lay / draw / drop / slide / tap, and the one-tap take / refill / "
    "vanesco, as a person would at a real table; the simulated hub turns it into sensor "
    "events. A wrong gesture is allowed (the engine raises the alert, as it would for real "
    "cards), but never with a card in another hand, and the pile only for a refill.",
)
def gesture(virtual: VirtualDep, actor: ActorDep, body: SimIn) -> VirtualPublic:
    return do_gesture(virtual, actor, body)


class WaitingIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seat: int = Field(ge=0, lt=N_SEATS)
    reason: str | None = Field(default=None, max_length=300)
    # The same for the pages' languages (wait_<code> in dashboard/i18n), with ids as params.
    code: str | None = Field(default=None, pattern=r"^[a-z_]{1,40}$")
    params: dict[str, str | int | None] = Field(default_factory=dict, max_length=8)


@router.post("/waiting", summary="A bot says why it waits (host PIN: the demo's bots)",
             status_code=status.HTTP_204_NO_CONTENT)
def waiting(virtual: VirtualDep, actor: ActorDep, body: WaitingIn) -> None:
    if actor.seat is not None:
        raise Refusal(status.HTTP_403_FORBIDDEN, "only the host's bots say this", "host_only")
    virtual.note_waiting(body.seat, body.reason, body.code, body.params)


def _active_seat(bridge: BridgeDep, actor: Actor) -> int | None:
    state = bridge.table_state()
    game = state.game if isinstance(state.game, GamePublicOut) else None  # (Glastonbury's)
    seat = game.view.expected.seat if game else None
    if actor.seat is not None and seat != actor.seat:
        raise Refusal(status.HTTP_409_CONFLICT, f"it is not {GAME.names.seat(actor.seat)}'s turn",
                      "not_your_turn")
    return seat


def _decide(bridge: BridgeDep, actor: Actor, verb: Command[SeatArgs, Any]) -> CommandResult:
    seat = _active_seat(bridge, actor)
    state = bridge.table_state()
    game = state.game if isinstance(state.game, GamePublicOut) else None  # (Glastonbury's)
    if game is None or game.view.phase != "last_card" or seat is None:
        raise Refusal(status.HTTP_409_CONFLICT, "no last card to keep or discard now (G10a)",
                      "no_last_card", "G10a")
    return answered(bridge.command(verb, SeatArgs(seat=seat), seat=seat, source="virtual"))


@router.post("/keep", summary="Keep the last card (for the seat whose turn it is)")
def keep(virtual: VirtualDep, bridge: BridgeDep, actor: ActorDep) -> CommandResult:
    return _decide(bridge, actor, api.KEEP)


@router.post("/discard", summary="Discard the last card (for the seat whose turn it is)")
def discard(virtual: VirtualDep, bridge: BridgeDep, actor: ActorDep) -> CommandResult:
    return _decide(bridge, actor, api.DISCARD)


def _pass(bridge: BridgeDep, actor: Actor) -> CommandResult:
    seat = _active_seat(bridge, actor)
    state = bridge.table_state()
    game = state.game if isinstance(state.game, GamePublicOut) else None  # (Glastonbury's)
    if game is None or not game.view.expected.can_pass or seat is None:
        raise Refusal(status.HTTP_409_CONFLICT, "nobody can pass now (G4, G7)", "cannot_pass",
                      "G7")
    # The seat's own confirm: the engine lets it pass and nothing else (a bare confirm is
    # the host's, which also ends a Vanesco wait or starts a dealt game).
    return answered(bridge.command(api.CONFIRM, seat=seat, source="virtual"))


@router.post("/pass", summary="Pass at a corner instead of using Declinatio (the seat's button)")
def pass_turn(virtual: VirtualDep, bridge: BridgeDep, actor: ActorDep) -> CommandResult:
    return _pass(bridge, actor)


def _declinatio(bridge: BridgeDep, actor: Actor) -> CommandResult:
    _active_seat(bridge, actor)
    now = bridge.table_state().game
    seat = corner_blocked(now if isinstance(now, GamePublicOut) else None)
    if seat is None:
        raise Refusal(
            status.HTTP_409_CONFLICT,
            "Declinatio cannot end the game now: only at a corner where it would face a line "
            "of Vanesco/Perluceo only (G7); otherwise use it by taking a card from the line "
            "it reaches", "declinatio_not_blocked", "G7")
    return answered(bridge.command(api.DECLINATIO, SeatArgs(seat=seat), seat=seat,
                                   source="virtual"))


@router.post(
    "/declinatio",
    summary="Use Declinatio onto a line of Vanesco/Perluceo only: ends the game (G7)",
    description="For the seat whose turn it is, only when its pawn stands at a corner and "
    "Declinatio would face a line holding only Vanesco/Perluceo (the table's prompt "
    "`corner_blocked`). At a real table the seat taps its Declinatio card on its pad.",
)
def use_declinatio(virtual: VirtualDep, bridge: BridgeDep, actor: ActorDep) -> CommandResult:
    return _declinatio(bridge, actor)


# ---------------------------------------------------------------- the phone controller


class PlayIn(BaseModel):
    """One tap on a seat's phone (CONTRACTS.md)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["take", "refill", "vanesco", "keep", "discard", "pass", "declinatio"]
    where: str | None = Field(default=None, max_length=16, description="'r,c' (take, refill)")


def require_seat_or_host(
    request: Request,
    bridge: BridgeDep,
    seat: SeatNumberDep,
    pin: Annotated[str | None, Header(alias=PIN_HEADER, description="the host PIN")] = None,
) -> Actor:
    if pin:
        if not check_pin(request, pin):
            raise Refusal(status.HTTP_403_FORBIDDEN, "wrong host PIN", "wrong_pin")
        return Actor(seat=seat)  # the host plays for that seat
    return _check_seat_secret(request, bridge, seat)


def _refused(code: str, message: str, http: int = status.HTTP_409_CONFLICT,
             rule: str | None = None, params: dict[str, Any] | None = None) -> JSONResponse:
    error: dict[str, Any] = {"code": code, "rule": rule, "message": message}
    if params:  # the ids a code's words need (a cell, a seat)
        error["params"] = params
    return JSONResponse({"status": "error", "data": None, "error": error}, status_code=http)


def _virtual_or_none(request: Request, bridge: BridgeDep) -> VirtualTable | None:
    virtual: VirtualTable | None = request.app.state.virtual
    backend = bridge.status().hub_backend
    if virtual is None or (backend is not None and backend != "sim"):
        return None
    return virtual


@play_router.post(
    "/{seat}/move",
    summary="A move of the table's game from a seat's phone (a game with its own moves: Quacks)",
    description="`cmd/play` for the seat: `verb` is one of the game's moves "
    "(`GameDefinition.moves`: Quacks' draw, stop, flask, answer, offer, choose, roll, buy, "
    "done_buying, spend, untapped, undo_draw), `args` its arguments. The seat's secret or "
    "the host PIN; a refusal is 409 with its code and rule.",
    responses={409: {"description": "refused by the game (the reason and the rule say why)"}},
)
def move(bridge: BridgeDep, seat: SeatNumberDep,
         actor: Annotated[Actor, Depends(require_seat_or_host)], body: MoveIn) -> CommandResult:
    return answered(bridge.command(api.PLAY, PlayArgs(seat=seat, verb=body.verb,
                                                      args=body.args)))


@play_router.post(
    "/{seat}/play",
    summary="One tap of a seat's phone: a whole take, a refill, a Vanesco tap, or a button",
    description="take: lift the card at `where`, lay it on the seat's pad and slide it on; "
    "refill: the pile's top card into the hole `where`; vanesco: tap the seat's top card; "
    "keep / discard / pass / declinatio: the seat's buttons. The seat's secret "
    "(its cookie or the X-Seat-Secret header) or the host PIN.",
    responses={404: {"description": "no virtual table: make the move with the real cards"},
               409: {"description": "not possible now (the reason says why)"}},
)
def play(request: Request, bridge: BridgeDep, seat: SeatNumberDep,
         actor: Annotated[Actor, Depends(require_seat_or_host)], body: PlayIn) -> Any:
    virtual = _virtual_or_none(request, bridge)
    if virtual is None:
        return _refused("no_virtual_table",
                        "no virtual table: make the move with the real cards",
                        status.HTTP_404_NOT_FOUND)
    try:
        if body.action in ("take", "refill", "vanesco"):
            if body.action != "vanesco" and not body.where:
                return _refused("bad_args", f"{body.action} needs where: 'r,c'",
                                status.HTTP_422_UNPROCESSABLE_CONTENT)
            where = body.where if body.action != "vanesco" else None
            gesture_seat = seat if body.action != "refill" else None
            virtual.check_moment(body.action, where, gesture_seat, actor.seat)
            view = virtual.gesture(body.action, where, gesture_seat, owner_of(seat))
            return _answer(view.model_dump())
        if body.action in ("keep", "discard"):
            result = _decide(bridge, actor, api.KEEP if body.action == "keep" else api.DISCARD)
        elif body.action == "pass":
            result = _pass(bridge, actor)
        else:
            result = _declinatio(bridge, actor)
        return _answer(result.data)
    except VirtualError as exc:
        return _refused(exc.code, str(exc), params=exc.params)
    except HTTPException as exc:  # a `Refusal` keeps the engine's code and rule id
        return _refused(getattr(exc, "code", None) or "refused", str(exc.detail),
                        exc.status_code, getattr(exc, "rule", None),
                        getattr(exc, "params", None))


def _answer(data: Any) -> dict[str, Any]:
    return {"status": "ok", "data": data, "error": None}


class PawnIn(BaseModel):
    """One pawn moved on the virtual table: ``{"from": 3, "to": 5}`` (perimeter positions
    0..19)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: int = Field(alias="from", ge=0, lt=20)
    target: int = Field(alias="to", ge=0, lt=20)


@router.post(
    "/pawn",
    summary="Move a pawn on the virtual table (a table with pawn sensors)",
    description="The simulated table's Hall switches see it as a real table's would; a pawn "
    "moved to the wrong place gets the engine's alert (G3/G4) before the card is taken. "
    "Host PIN required.",
)
def move_pawn(_: HostDep, virtual: VirtualDep, bridge: BridgeDep,
              body: PawnIn) -> CommandResult:
    move = api.SIM.parse({"action": "pawn", "from": body.source, "to": body.target})
    return answered(bridge.hub_command(api.SIM, move))

"""Host controls (PIN protected): new game, undo, confirm, end, reader health, enrolment."""

from __future__ import annotations

import random
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response, status
from pydantic import JsonValue, TypeAdapter, ValidationError

from dashboard.deps import SCREEN_COOKIE, BridgeDep, HostDep
from dashboard.game import GAME, offers
from dashboard.models import (
    CommandResult,
    EnrolmentOut,
    JoinInfo,
    NewGameForm,
    ReaderHealthPublic,
    ReadersOut,
    new_game_in,
)
from dashboard.routers import Refusal, answered
from dashboard.virtual import VirtualError
from engine import games
from engine.games.base import Refused, UnknownGame
from engine.wire import api
from engine.wire.api import ConfirmArgs
from engine.wire.contract import N_SEATS

router = APIRouter(
    prefix="/api/host",
    tags=["host"],
    responses={
        401: {"description": "no host PIN given"},
        403: {"description": "wrong host PIN"},
    },
)
REFUSALS: dict[int | str, dict[str, Any]] = {
    409: {"description": "refused by the engine (the reason says why)"},
    503: {"description": "the broker or the engine does not answer"},
}


@router.post(
    "/login", summary="Check the host PIN", status_code=status.HTTP_204_NO_CONTENT
)
def login(_: HostDep, request: Request, response: Response) -> None:
    # This browser may show the join codes on the table view from now on (the big screen).
    response.set_cookie(SCREEN_COOKIE, request.app.state.screen_key, httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")


def new_game_form(body: dict[str, JsonValue]) -> NewGameForm:
    """The host's form checked by the model of the game it names (`new_game_in`): an
    unknown game or option, or a value out of bounds, is a 422 saying which."""
    game = body.get("game", games.DEFAULT_GAME)
    try:
        model = new_game_in(game if isinstance(game, str) else None)
    except UnknownGame as exc:
        raise Refusal(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc), exc.code) from None
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "form"
        said = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'form'}: {e['msg']}"
                         for e in exc.errors())  # fmt: skip
        raise Refusal(status.HTTP_422_UNPROCESSABLE_CONTENT, said, "bad_form",
                      params={"field": field}) from None


def game_config(form: NewGameForm) -> dict[str, JsonValue]:
    """The engine's options for the form, checked by the game's rules (G2), and its id."""
    try:
        checked = games.get(form.game).check(form.options())
    except UnknownGame as exc:
        raise Refusal(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc), exc.code) from None
    except Refused as exc:
        raise Refusal(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc), exc.code,
                      exc.rule) from None
    wire = checked.wire()
    if form.game != games.DEFAULT_GAME:
        wire["game"] = form.game
    return wire


@router.post(
    "/new_game",
    summary="Start a new game",
    description="Checks the set-up (G2), lays a shuffled deal on the simulated table when "
    "the deal is virtual, then asks the engine (`cmd/new_game`).",
    responses=REFUSALS,
)
def new_game(_: HostDep, bridge: BridgeDep, request: Request,
             body: Annotated[dict[str, JsonValue], Body(
                 description="`NewGameIn`: the game's id (`game`, default the registry's "
                 "default), `deal`, `seed` and the fields of that game's options model",
                 openapi_examples={"glastonbury": {"value": {"colours": ["red", "blue"]}},
                                   "quacks": {"value": {"game": "quacks", "players": 3}}})]
             ) -> CommandResult:
    form = new_game_form(body)
    config = game_config(form)
    game = games.get(form.game)
    virtual = request.app.state.virtual
    deal = form.deal
    if deal == "auto":
        sim = virtual is not None and bridge.status().hub_backend == "sim"
        deal = "virtual" if sim and offers(game, "virtual") else "table"
    if deal == "virtual" and (virtual is None or not offers(game, "virtual")):
        raise Refusal(status.HTTP_409_CONFLICT, "the virtual table is switched off",
                      "no_virtual_table")
    rng = random.Random(form.seed)
    # The recipe cards (G11) are dealt by the engine: on the broker a command is seen by
    # every client, each seat's recipes only on its own game/seat/<n>.
    if deal == "virtual":
        # The cards first, the engine after: the simulated hub answers once its readers saw
        # the whole deal, so the engine reads the new square, never half of the old one.
        assert virtual is not None
        playing = bridge.game_in_progress()
        if playing is not None:
            raise Refusal(status.HTTP_409_CONFLICT,
                          f"game {playing} is in progress: end it first", "game_in_progress")
        try:
            virtual.deal(config["removed_colour"], rng.randrange(2**32))
        except VirtualError as exc:
            raise Refusal(status.HTTP_409_CONFLICT, f"virtual deal: {exc}", "deal_failed"
                          ) from None
    return answered(bridge.command(api.NEW_GAME, api.NEW_GAME.parse(config)))


@router.post("/undo", summary="Undo the last action", responses=REFUSALS)
def undo(_: HostDep, bridge: BridgeDep) -> CommandResult:
    return answered(bridge.command(api.UNDO))


@router.post(
    "/confirm", summary="Confirm what the table waits for (e.g. a Vanesco)", responses=REFUSALS
)
def confirm(_: HostDep, bridge: BridgeDep) -> CommandResult:
    return answered(bridge.command(api.CONFIRM))


@router.post(
    "/hub/confirm", summary="Accept a new hub for this table (a replaced hub)",
    description="When the engine says a new hub wants to serve the table (the table view "
    "shows it), the host accepts it here; until then its events are refused.",
    responses=REFUSALS,
)
def confirm_hub(_: HostDep, bridge: BridgeDep,
                hub_id: Annotated[str, Body(embed=True, min_length=1, max_length=64)]
                ) -> CommandResult:
    return answered(bridge.command(api.CONFIRM, ConfirmArgs(hub_id=hub_id)))


@router.post("/end", summary="End the game now", responses=REFUSALS)
def end(_: HostDep, bridge: BridgeDep) -> CommandResult:
    return answered(bridge.command(api.END))


@router.get("/readers", summary="Reader health: each cell and pad ok / silent / flickering")
def readers(_: HostDep, bridge: BridgeDep) -> ReadersOut:
    snap = bridge.health
    if snap is None:
        return ReadersOut(hub_id=None, backend=None, ts=None, readers=[], counts={})
    rows = []
    counts: dict[str, int] = {}
    for seen in snap.readers:
        if seen.cell is not None:
            place = f"cell {seen.cell}"
        elif seen.seat is not None:
            place = f"pad {seen.seat}"
        else:
            place = f"pos {seen.position}"
        rows.append(
            ReaderHealthPublic(
                reader=seen.reader, place=place, health=seen.health, occupied=seen.occupied
            )
        )
        counts[seen.health] = counts.get(seen.health, 0) + 1
    return ReadersOut(
        hub_id=snap.hub_id, backend=snap.backend, ts=snap.ts, readers=rows, counts=counts,
        board=snap.board, pawns=snap.pawns, game=snap.game,
        other_game=bridge.hub_other_game() is not None,
    )


@router.get("/enrolment", summary="Tag enrolment progress")
def enrolment(_: HostDep, bridge: BridgeDep) -> EnrolmentOut:
    snap = bridge.health
    data = snap.enrolment if snap is not None else None
    game = snap.game if snap is not None else None
    if not data:
        return EnrolmentOut(active=False, game=game)

    def as_int(value: Any) -> int | None:
        return value if isinstance(value, int) else None

    nxt, message = data.get("next"), data.get("message")
    return EnrolmentOut(
        active=data.get("active", True) is not False,
        done=as_int(data.get("done")),
        total=as_int(data.get("total")),
        next=str(nxt) if nxt is not None else None,
        message=message if isinstance(message, str) else None,
        said=TypeAdapter(list[api.EnrolSaid] | None).validate_python(data.get("said")),
        spare=str(spare) if (spare := data.get("spare")) is not None else None,
        spares=as_int(data.get("spares")),
        game=game,
        detail=data,
    )


@router.get("/seats", summary="Every seat's join link (also for seats that joined)")
def seat_links(_: HostDep, bridge: BridgeDep, request: Request) -> list[JoinInfo]:
    links = []
    for seat in range(min(bridge.seats(), N_SEATS)):
        info = bridge.join_info(seat, str(request.base_url))
        if info is not None:
            links.append(info)
    return links


@router.post("/seats/{seat}/free", summary="Free a seat: its secret opens nothing any more, "
             "and it has a new QR code")
@router.post("/seats/{seat}/reissue", summary="A new secret (and QR code) for one seat")
def reissue(_: HostDep, bridge: BridgeDep, request: Request, seat: int) -> JoinInfo:
    game_id = bridge.game_id
    if game_id is None:
        raise Refusal(status.HTTP_404_NOT_FOUND, "no game yet", "no_game")
    if not 0 <= seat < bridge.seats():
        raise Refusal(status.HTTP_404_NOT_FOUND, f"{GAME.names.seat(seat)} is not at this table",
                      "no_such_seat", params={"seat": seat})
    bridge.secrets.rotate(game_id, seat)
    bridge.broadcast()
    info = bridge.join_info(seat, str(request.base_url))
    assert info is not None
    return info


@router.get("/colours", summary="The player colours a game may use")
def colours(_: HostDep) -> list[str]:
    choices = GAME.options.model_json_schema()["properties"]["colours"]["items"]["enum"]
    return [str(c) for c in choices]

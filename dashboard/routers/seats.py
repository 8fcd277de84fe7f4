"""Seats: joining by QR code, a seat's private view, its keep/discard, Declinatio and hint
buttons."""

from __future__ import annotations

import io
from typing import Annotated

import qrcode
import qrcode.image.svg
from fastapi import APIRouter, Header, Query, Request, Response, WebSocket, status
from fastapi.responses import RedirectResponse

from dashboard.bridge import Bridge
from dashboard.config import LANGS
from dashboard.deps import (
    PIN_HEADER,
    BridgeDep,
    LangDep,
    SeatDep,
    SeatNumberDep,
    check_pin,
    given_seat_secret,
    seat_secret_ok,
    sees_table_screen,
    set_seat_cookie,
)
from dashboard.game import GAME
from dashboard.models import CommandResult, JoinInfo, SeatState
from dashboard.routers import Refusal, answered
from dashboard.routers.pages import refused_page, render
from dashboard.routers.table import pump
from engine.wire import api
from engine.wire.api import HintArgs, SeatArgs
from engine.wire.contract import N_SEATS

router = APIRouter(tags=["seats"])


def _join(request: Request, bridge: Bridge, seat: int, pin: str | None) -> JoinInfo:
    """A seat's join code, for the host (PIN) or the table's screen (`sees_table_screen`):
    never for anyone else on the network, who could take every seat with it."""
    host = check_pin(request, pin)
    if pin and not host:
        raise Refusal(status.HTTP_403_FORBIDDEN, "wrong host PIN", "wrong_pin")
    if not host and not sees_table_screen(request):
        raise Refusal(status.HTTP_403_FORBIDDEN,
                      "join codes are shown on the table's screen and the host page only: scan "
                      "the code on the table's screen", "codes_on_screen_only")
    info = bridge.join_info(seat, str(request.base_url))
    if info is None:
        raise Refusal(status.HTTP_404_NOT_FOUND, "no game yet: the host starts one first",
                      "no_game")
    if info.joined and not host:
        raise Refusal(status.HTTP_403_FORBIDDEN,
                      f"{GAME.names.seat(seat)} has joined already; the host can show its code "
                      "again",
                      "seat_joined", params={"seat": seat})
    return info


@router.get(
    "/api/seats/{seat}/join",
    summary="A seat's join link",
    description="The link (with a short-lived one-time code) behind the seat's QR code, for "
    "the table's screen (a browser on this machine, or one the host unlocked) until the seat "
    "has joined, and for the host (PIN header).",
)
def join_link(
    request: Request,
    bridge: BridgeDep,
    seat: SeatNumberDep,
    pin: Annotated[str | None, Header(alias=PIN_HEADER)] = None,
) -> JoinInfo:
    return _join(request, bridge, seat, pin)


def qr_svg(text: str) -> str:
    image = qrcode.make(text, image_factory=qrcode.image.svg.SvgPathImage, box_size=10, border=2)
    out = io.BytesIO()
    image.save(out)
    return out.getvalue().decode("utf-8")


@router.get(
    "/api/seats/{seat}/qr.svg",
    summary="A seat's QR code (SVG)",
    response_class=Response,
    responses={200: {"content": {"image/svg+xml": {}}, "description": "the QR code"}},
)
def join_qr(
    request: Request,
    bridge: BridgeDep,
    seat: SeatNumberDep,
    pin: Annotated[str | None, Header(alias=PIN_HEADER)] = None,
) -> Response:
    info = _join(request, bridge, seat, pin)
    return Response(
        qr_svg(info.url), media_type="image/svg+xml", headers={"Cache-Control": "no-store"}
    )


@router.get("/join/{seat}", include_in_schema=False)
def join_seat(
    request: Request,
    bridge: BridgeDep,
    seat: int,
    page_lang: LangDep,
    token: Annotated[str | None, Query(max_length=64)] = None,
    lang: Annotated[str | None, Query(max_length=8)] = None,
) -> Response:
    """Where a seat's QR code leads: its one-time code is traded for the seat's secret,
    which only this phone gets, in a cookie (then the seat page, whose URL holds no
    secret). A used or stale code gets a page in the phone's language saying what to do
    (403); so does a seat this game does not have (404)."""
    if not 0 <= seat < bridge.seats():
        return refused_page(request, page_lang, "no_such_seat", status.HTTP_404_NOT_FOUND)
    secret = bridge.secrets.redeem(bridge.game_id, seat, token)
    if secret is None:
        page = render(request, "join_used.html", page_lang, "join")
        page.status_code = status.HTTP_403_FORBIDDEN
        page.headers["Cache-Control"] = "no-store"
        return page
    bridge.broadcast()  # the seat is joined: its code leaves the table view
    suffix = f"?lang={lang}" if lang in LANGS else ""
    response = RedirectResponse(f"/seat/{seat}{suffix}", status_code=303,
                                headers={"Cache-Control": "no-store",
                                         "Referrer-Policy": "no-referrer"})
    set_seat_cookie(response, request, seat, secret)
    return response


@router.get("/api/seats/{seat}", summary="A seat's private view")
def seat_view(bridge: BridgeDep, seat: SeatDep) -> SeatState:
    return bridge.seat_state(seat)


@router.post(
    "/api/seats/{seat}/keep", summary="Keep the last card of the game (G10a)",
    responses={409: {"description": "refused by the engine"}, 503: {"description": "no engine"}},
)
def keep(bridge: BridgeDep, seat: SeatDep) -> CommandResult:
    return answered(bridge.command(api.KEEP, SeatArgs(seat=seat), seat=seat))


@router.post(
    "/api/seats/{seat}/discard", summary="Discard the last card of the game (G10a)",
    responses={409: {"description": "refused by the engine"}, 503: {"description": "no engine"}},
)
def discard(bridge: BridgeDep, seat: SeatDep) -> CommandResult:
    return answered(bridge.command(api.DISCARD, SeatArgs(seat=seat), seat=seat))


@router.post(
    "/api/seats/{seat}/declinatio",
    summary="Use Declinatio onto a line of Vanesco/Perluceo only: ends the game (G7)",
    description="Only when this seat's pawn stands at a corner and Declinatio would face a "
    "line holding only Vanesco/Perluceo (the table's prompt `corner_blocked`); the engine "
    "refuses it otherwise (409). At a real table the seat taps its Declinatio card on its pad.",
    responses={409: {"description": "refused by the engine"}, 503: {"description": "no engine"}},
)
def declinatio(bridge: BridgeDep, seat: SeatDep) -> CommandResult:
    return answered(bridge.command(api.DECLINATIO, SeatArgs(seat=seat), seat=seat))


@router.post(
    "/api/seats/{seat}/hint",
    summary="What a bot suggests to this seat now, and why (it sees only what the seat sees)",
    responses={409: {"description": "refused by the engine"}, 503: {"description": "no engine"}},
)
def seat_hint(bridge: BridgeDep, seat: SeatDep, lang: LangDep) -> CommandResult:
    return answered(bridge.command(api.HINT, HintArgs(level="greedy", lang=lang), seat=seat))


@router.post(
    "/api/seats/{seat}/reveal/dismiss",
    summary="Hide the Perluceo reveal (it is shown once)",
    status_code=status.HTTP_204_NO_CONTENT,
)
def dismiss_reveal(bridge: BridgeDep, seat: SeatDep) -> Response:
    if not bridge.dismiss_reveal(seat):
        raise Refusal(status.HTTP_404_NOT_FOUND, "no Perluceo reveal to hide", "no_reveal")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.websocket("/ws/seat/{seat}")
async def seat_socket(websocket: WebSocket, seat: int) -> None:
    """Live `SeatState` messages for one seat (its cookie or header); closes with 4403 on
    a wrong or missing secret."""
    bridge: Bridge = websocket.app.state.bridge
    game_id = bridge.game_id
    await websocket.accept()  # then close with our code: browsers see 4403, not a bare 1006
    if not (0 <= seat < N_SEATS and seat_secret_ok(websocket, bridge, seat)):
        await websocket.close(code=4403, reason="wrong seat secret")
        return
    if game_id is not None and bridge.secrets.mark_joined(game_id, seat):
        bridge.broadcast()
    bridge.phone(seat, True)
    try:
        await pump(websocket, bridge, seat,
                   lambda: bridge.seat_state(seat).model_dump_json(by_alias=True),
                   given_seat_secret(websocket, seat))
    finally:
        bridge.phone(seat, False)

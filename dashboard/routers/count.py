"""Score-only mode (`dashboard.count`): the count page, its API and its live socket.

Reading is open, like the score screen (a count is made face up at the table, after the
game); every change is the host's (`HostDep`: the host PIN). A seat's phone follows its own
list through its seat link, ``/count/seat/<n>``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from dashboard.count import CountDesk, CountSession, CountSetup
from dashboard.deps import HostDep, LangDep, SettingsDep
from dashboard.game import GAME
from dashboard.routers.pages import render
from dashboard.routers.seats import qr_svg
from engine.games.base import CountRefused

router = APIRouter(tags=["count"])

SeatParam = Annotated[int, PathParam(ge=0, lt=4, description="seat 0-3 (Seat 1-4)")]
CardId = Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9-]+$")]


def get_desk(request: Request) -> CountDesk:
    desk: CountDesk | None = getattr(request.app.state, "count", None)
    if desk is None:
        raise HTTPException(404, "score-only mode is not available on this dashboard")
    return desk


DeskDep = Annotated[CountDesk, Depends(get_desk)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SetupIn(_Body):
    colours: list[str] = Field(min_length=2, max_length=4, description="seat i's colour")
    recipes: bool = False
    second_player_bonus: bool = False
    first_seat: int = Field(default=0, ge=0, le=3)
    last_card_seat: int | None = Field(default=None, ge=0, le=3)
    removed_colour: str | None = None


class CardIn(_Body):
    card: CardId


class DoneIn(_Body):
    done: bool = True


class LastCardIn(_Body):
    seat: int | None = Field(default=None, ge=0, le=3)


class EnrolIn(_Body):
    uid: str = Field(min_length=8, max_length=20, pattern=r"^[0-9A-Fa-f]+$")
    card: CardId


def _refused(exc: CountRefused) -> HTTPException:
    return HTTPException(409, {"code": exc.code, "message": exc.message, "seat": exc.seat})


def _run(desk: CountDesk, action: Callable[[CountSession], object], text: str | None = None
         ) -> dict[str, Any]:
    try:
        desk.act(action, text)
    except CountRefused as exc:
        raise _refused(exc) from None
    return desk.state()


# ------------------------------------------------------------------ pages


@router.get("/count", response_class=HTMLResponse, include_in_schema=False)
def count_page(request: Request, lang: LangDep, settings: SettingsDep,
               _desk: DeskDep) -> HTMLResponse:
    full = _full(request)
    return render(request, "count.html", lang, "count", table=settings.table if full else None,
                  seat=None, full=full)


@router.get("/count/seat/{seat}", response_class=HTMLResponse, include_in_schema=False)
def count_seat_page(request: Request, lang: LangDep, settings: SettingsDep, seat: SeatParam,
                    _desk: DeskDep) -> HTMLResponse:
    full = _full(request)
    return render(request, "count.html", lang, "count", table=settings.table if full else None,
                  seat=seat, full=full)


def _full(request: Request) -> bool:
    """Inside the whole dashboard (links to its pages), not `cauldron count` alone."""
    return getattr(request.app.state, "bridge", None) is not None


@router.get("/api/count/seats/{seat}/qr.svg", summary="QR code of a seat's count link")
def count_seat_qr(request: Request, seat: SeatParam, _desk: DeskDep) -> Response:
    url = str(request.base_url).rstrip("/") + f"/count/seat/{seat}"
    return Response(qr_svg(url), media_type="image/svg+xml")


# ------------------------------------------------------------------ reading


@router.get("/api/count", summary="The count: set-up, each seat's list, the live score")
def count_state(desk: DeskDep) -> JSONResponse:
    return JSONResponse(desk.state())


@router.websocket("/ws/count")
async def count_socket(websocket: WebSocket) -> None:
    desk: CountDesk | None = getattr(websocket.app.state, "count", None)
    await websocket.accept()
    if desk is None:
        await websocket.close(code=1008, reason="score-only mode is not available")
        return
    queue = desk.subscribe()
    pending: set[asyncio.Future[str]] = set()
    try:
        await websocket.send_text(desk.state_text())
        while True:
            receive = asyncio.ensure_future(websocket.receive_text())
            update = asyncio.ensure_future(queue.get())
            pending = {receive, update}
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if receive in done:
                receive.result()  # raises WebSocketDisconnect when the page went away
            if update in done:
                await websocket.send_text(update.result())
            for future in pending - done:
                future.cancel()
    except WebSocketDisconnect:
        pass
    finally:
        for future in pending:  # never left pending (asyncio would log each one)
            future.cancel()
        desk.unsubscribe(queue)
        # A page closed: closing its socket again is no error (it logged a traceback each).
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):
            await websocket.close()


# ------------------------------------------------------------------ the host's changes


@router.post("/api/count/login", status_code=204, summary="Check the host PIN")
def count_login(_host: HostDep) -> None:
    return None


@router.post("/api/count/setup", summary="Start a count: players (colours) and options")
def count_setup(body: SetupIn, desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    try:
        setup = CountSetup(tuple(body.colours), body.recipes, body.second_player_bonus,
                           body.first_seat, body.last_card_seat, body.removed_colour)
    except CountRefused as exc:
        raise HTTPException(422, exc.message) from None
    desk.start(setup)
    return desk.state()


@router.post("/api/count/seats/{seat}/cards", summary="Count a card for a seat (manual entry)")
def count_card(seat: SeatParam, body: CardIn, desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    try:
        desk.tap(body.card, seat, "manual")
    except CountRefused as exc:
        raise _refused(exc) from None
    return desk.state()


@router.delete("/api/count/seats/{seat}/cards/{card}", summary="Remove a card from a seat")
def count_remove(seat: SeatParam, card: Annotated[str, PathParam(max_length=40)],
                 desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    return _run(desk, lambda s: s.remove(seat, card), None)


@router.post("/api/count/seats/{seat}/undo", summary="Undo the seat's last tap")
def count_undo(seat: SeatParam, desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    return _run(desk, lambda s: s.undo(seat), None)


@router.post("/api/count/seats/{seat}/done", summary="Mark a seat done (or not)")
def count_done(seat: SeatParam, body: DoneIn, desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    return _run(desk, lambda s: s.set_done(seat, body.done), None)


@router.post("/api/count/seats/{seat}/active", summary="Send the reader's taps to this seat")
def count_active(seat: SeatParam, desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    return _run(desk, lambda s: s.set_active(seat), None)


@router.post("/api/count/last-card", summary="Who took the last card (recipe B-last-card)")
def count_last_card(body: LastCardIn, desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    def change(session: CountSession) -> None:
        if body.seat is not None and body.seat >= len(session.seats):
            raise CountRefused("no_seat", f"there is no {GAME.names.seat(body.seat)} in this count")
        session.set_last_card(body.seat)

    return _run(desk, change, None)


@router.post("/api/count/reader/tap", summary="Lay a card on the simulated reader")
def count_sim_tap(body: CardIn, desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    if desk.sim_tap is None:
        raise HTTPException(404, "no simulated reader: tap the real card on the reader, or "
                                 "pick it by hand")
    try:
        desk.sim_tap(body.card)
    except ValueError as exc:
        raise HTTPException(409, str(exc)) from None
    return desk.state()


@router.post("/api/count/enrol", summary="Enrol an unknown tag as a card, then count it")
def count_enrol(body: EnrolIn, desk: DeskDep, _host: HostDep) -> dict[str, Any]:
    if desk.enrol is None:
        raise HTTPException(404, "enrolment is not available here: run `cauldron enroll` "
                                 "(see the README, \"Scoring only\")")
    try:
        desk.enrol(body.uid.upper(), body.card)
    except ValueError as exc:
        raise HTTPException(409, str(exc)) from None
    with contextlib.suppress(CountRefused):
        desk.tap(body.card, None, "tag", body.uid.upper())
    return desk.state()

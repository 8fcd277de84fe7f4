"""FastAPI dependencies, as `Annotated` aliases (overridable in tests through
``app.dependency_overrides[get_settings]`` etc.)."""

from __future__ import annotations

import hmac
import math
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Path, Query, Request, status

from dashboard.bridge import Bridge
from dashboard.config import Lang, Settings
from dashboard.guard import PinGuard
from dashboard.i18n import COOKIE, negotiate
from dashboard.virtual import VirtualTable
from engine.rules.names import seat_name
from engine.wire.contract import N_SEATS

PIN_HEADER = "X-Host-Pin"


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_bridge(request: Request) -> Bridge:
    bridge: Bridge = request.app.state.bridge
    return bridge


SettingsDep = Annotated[Settings, Depends(get_settings)]
BridgeDep = Annotated[Bridge, Depends(get_bridge)]


def pin_ok(settings: Settings, pin: str | None) -> bool:
    """The bare comparison (constant time); requests go through `check_pin`."""
    return bool(pin) and hmac.compare_digest(settings.pin.encode(), (pin or "").encode())


def check_pin(request: Request, settings: Settings, pin: str | None) -> bool:
    """Whether `pin` is the host PIN; every wrong one counts against the client and
    overall (`PinGuard`), and while locked out the answer is 429, even for the right PIN."""
    if not pin:
        return False
    guard: PinGuard = request.app.state.pin_guard
    client = request.client.host if request.client else "unknown"
    wait = guard.wait(client)
    if wait > 0:
        seconds = math.ceil(wait)
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"too many wrong host PINs: try again in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )
    if pin_ok(settings, pin):
        guard.succeeded(client)
        return True
    guard.failed(client)
    return False


def require_host(
    request: Request,
    settings: SettingsDep,
    pin: Annotated[str | None, Header(alias=PIN_HEADER, description="the host PIN")] = None,
) -> None:
    if not pin:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, f"host PIN needed: send it in the {PIN_HEADER} header"
        )
    if not check_pin(request, settings, pin):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "wrong host PIN")


HostDep = Annotated[None, Depends(require_host)]


def seat_number(
    bridge: BridgeDep, seat: Annotated[int, Path(ge=0, lt=N_SEATS, description="seat 0-3")]
) -> int:
    if seat >= bridge.seats():
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"{seat_name(seat)} is not at this table")
    return seat


SeatNumberDep = Annotated[int, Depends(seat_number)]


def require_seat(
    bridge: BridgeDep,
    seat: SeatNumberDep,
    secret: Annotated[str | None, Query(max_length=128, description="the seat's secret")] = None,
) -> int:
    """The seat, when `secret` is that seat's secret for the current game (else 403)."""
    if not bridge.secrets.check(bridge.game_id, seat, secret):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"this link does not open {seat_name(seat)} for the current game: scan the seat's "
            "QR "
            "code on the table screen again",
        )
    game_id = bridge.game_id
    if game_id is not None and bridge.secrets.mark_joined(game_id, seat):
        bridge.broadcast()
    return seat


SeatDep = Annotated[int, Depends(require_seat)]


def get_virtual(request: Request, bridge: BridgeDep) -> VirtualTable:
    virtual: VirtualTable | None = request.app.state.virtual
    if virtual is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, "the virtual table is switched off on this dashboard"
        )
    backend = bridge.status().hub_backend
    if backend is not None and backend != "sim":
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"the hub reads real cards ({backend} back-end): the virtual table needs "
            "`cauldron hub --backend sim`",
        )
    return virtual


VirtualDep = Annotated[VirtualTable, Depends(get_virtual)]


def page_lang(
    request: Request,
    settings: SettingsDep,
    lang: Annotated[str | None, Query(max_length=8)] = None,
) -> Lang:
    return negotiate(
        lang, request.cookies.get(COOKIE), request.headers.get("accept-language"),
        settings.default_lang,
    )


LangDep = Annotated[Lang, Depends(page_lang)]

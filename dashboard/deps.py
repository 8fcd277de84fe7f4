"""FastAPI dependencies, as `Annotated` aliases (overridable in tests through
``app.dependency_overrides[get_settings]`` etc.)."""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import math
from typing import Annotated

from fastapi import Depends, Header, Path, Query, Request, Response, status
from starlette.requests import HTTPConnection

from dashboard.bridge import Bridge
from dashboard.config import Lang, Settings
from dashboard.game import GAME
from dashboard.guard import PinGuard, PinLocked, client_key
from dashboard.i18n import COOKIE, negotiate
from dashboard.routers import Refusal
from dashboard.virtual import VirtualTable
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


def check_pin(request: Request, pin: str | None) -> bool:
    """Whether `pin` is the host PIN: the one way a request's PIN is checked (`PinGuard`
    holds the PIN). A wrong one counts against the client; while that client must wait the
    answer is 429, even for the right PIN. Only ever given a header's value: a PIN in a
    URL would land in logs and history, and any page could make a browser send it."""
    if not pin:
        return False
    guard: PinGuard = request.app.state.pin_guard
    try:
        return guard.check(client_key(request.client.host if request.client else None), pin)
    except PinLocked as locked:
        seconds = math.ceil(locked.seconds)
        refusal = Refusal(status.HTTP_429_TOO_MANY_REQUESTS,
                          f"too many wrong host PINs from this device: try again in {seconds} s",
                          "pin_locked", params={"seconds": seconds})
        refusal.headers = {"Retry-After": str(seconds)}
        raise refusal from None


SCREEN_COOKIE = "cauldron-screen"


def sees_table_screen(request: Request) -> bool:
    """Whether this browser is the table's screen, which may show the join codes: a browser
    on this machine (loopback), or one where the host unlocked the host page
    (`SCREEN_COOKIE`, set by the host login: HttpOnly, same-site only, valid while this
    dashboard runs). A proxy on this machine must say whom it forwards (``X-Forwarded-For``,
    which uvicorn reads from loopback only), or every visitor would look local."""
    host = request.client.host if request.client else ""
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).is_loopback:
            return True
    given = request.cookies.get(SCREEN_COOKIE, "")
    key: str = request.app.state.screen_key
    return bool(given) and hmac.compare_digest(key.encode(), given.encode())


def require_host(
    request: Request,
    pin: Annotated[str | None, Header(alias=PIN_HEADER, description="the host PIN")] = None,
) -> None:
    if not pin:
        raise Refusal(status.HTTP_401_UNAUTHORIZED,
                      f"host PIN needed: send it in the {PIN_HEADER} header", "needs_pin")
    if not check_pin(request, pin):
        raise Refusal(status.HTTP_403_FORBIDDEN, "wrong host PIN", "wrong_pin")


HostDep = Annotated[None, Depends(require_host)]


def seat_number(
    bridge: BridgeDep, seat: Annotated[int, Path(ge=0, lt=N_SEATS, description="seat 0-3")]
) -> int:
    if seat >= bridge.seats():
        raise Refusal(status.HTTP_404_NOT_FOUND, f"{GAME.names.seat(seat)} is not at this table",
                      "no_such_seat", params={"seat": seat})
    return seat


SeatNumberDep = Annotated[int, Depends(seat_number)]


SEAT_HEADER = "X-Seat-Secret"  # for clients without cookies (bots, tests)
SEAT_COOKIE_AGE = 12 * 3600  # an evening of games; the host reissues a lost seat


def seat_cookie(seat: int) -> str:
    return f"cauldron-seat-{seat}"


def seat_cookie_paths(seat: int) -> tuple[str, ...]:
    """Where a seat's cookie goes: its own API and socket, and the virtual table's gestures."""
    return (f"/api/seats/{seat}", f"/ws/seat/{seat}", "/api/virtual")


def set_seat_cookie(response: Response, request: Request, seat: int, secret: str) -> None:
    """Hand the phone its seat's secret (at /join): HttpOnly, so no script reads it;
    SameSite=Strict, so no other site's page makes the phone act with it; never in a URL,
    where it would reach history, logs and Referer headers."""
    for path in seat_cookie_paths(seat):
        response.set_cookie(seat_cookie(seat), secret, max_age=SEAT_COOKIE_AGE, path=path,
                            httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")


def given_seat_secret(conn: HTTPConnection, seat: int) -> str | None:
    """The seat secret a request or WebSocket handshake carries for `seat`: the one way a
    seat credential is read. Its cookie, or the `SEAT_HEADER` header; never a query
    string (a URL lands in history, logs and Referer headers)."""
    given = conn.cookies.get(seat_cookie(seat)) or conn.headers.get(SEAT_HEADER)
    return given[:128] if given else None


def seat_secret_ok(conn: HTTPConnection, bridge: Bridge, seat: int) -> bool:
    """Whether `conn` carries `seat`'s secret for the current game."""
    return bridge.secrets.check(bridge.game_id, seat, given_seat_secret(conn, seat))


def require_seat(request: Request, bridge: BridgeDep, seat: SeatNumberDep) -> int:
    """The seat, when the request carries that seat's secret for the current game (else 403)."""
    if not seat_secret_ok(request, bridge, seat):
        raise Refusal(status.HTTP_403_FORBIDDEN,
                      f"this phone does not hold {GAME.names.seat(seat)} for the current game: "
                      "scan "
                      "the seat's QR code on the table screen again", "seat_link_stale",
                      params={"seat": seat})
    game_id = bridge.game_id
    if game_id is not None and bridge.secrets.mark_joined(game_id, seat):
        bridge.broadcast()
    return seat


SeatDep = Annotated[int, Depends(require_seat)]


def get_virtual(request: Request, bridge: BridgeDep) -> VirtualTable:
    virtual: VirtualTable | None = request.app.state.virtual
    if virtual is None:
        raise Refusal(status.HTTP_404_NOT_FOUND,
                      "the virtual table is switched off on this dashboard", "no_virtual_table")
    backend = bridge.status().hub_backend
    if backend is not None and backend != "sim":
        raise Refusal(status.HTTP_409_CONFLICT,
                      f"the hub reads real cards ({backend} back-end): the virtual table needs "
                      "`cauldron hub --backend sim`", "real_cards")
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

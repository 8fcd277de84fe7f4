"""HTML pages (Jinja2 templates; the scripts fill them from the API and WebSockets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, select_autoescape

from dashboard.config import LANGS, Lang, phones_reach
from dashboard.deps import LangDep, SettingsDep, sees_table_screen
from dashboard.game import host_games, offers, page_game, page_template, template_loader
from dashboard.i18n import COOKIE, bundle, family_renames, strings
from engine import games
from engine.games.base import GameDefinition
from engine.wire.contract import N_SEATS

TEMPLATES = Jinja2Templates(env=Environment(
    loader=template_loader(Path(__file__).resolve().parents[1] / "templates"),
    autoescape=select_autoescape()))  # the shell's pages, and each game's under its id
router = APIRouter(include_in_schema=False)


def table_game(request: Request) -> GameDefinition:
    """The game the table plays (the bridge knows; a page served for it loads its fragments)."""
    bridge = getattr(request.app.state, "bridge", None)  # none: the score-only count app
    if bridge is None:
        return games.get(request.app.state.settings.game)
    game: GameDefinition = bridge.table_game()
    return game


def render(request: Request, name: str, lang: Lang, page: str, **extra: Any) -> HTMLResponse:
    settings = request.app.state.settings
    game = table_game(request)
    virtual = settings.virtual and offers(game, "virtual")
    boot = {**bundle(lang, family_renames(settings.data_dir), game),
            "game": page_game(game, page, lang),
            "page": page, "virtual": virtual,
            # a virtual table at all (the host form's deal, whatever game the table plays now)
            "virtual_table": settings.virtual, **extra}
    response = TEMPLATES.TemplateResponse(
        request,
        name,
        {
            "lang": lang,
            "langs": LANGS,
            "t": strings(lang),
            "page": page,
            "virtual": virtual,
            "game": page_game(game, page, lang),
            "game_template": page_template(game, page),
            # JSON inside <script type="application/json">: "</" must not end the tag.
            "boot": json.dumps(boot, ensure_ascii=False).replace("</", "<\\/"),
            **extra,
        },
    )
    # No page's URL is passed on to another site (a second guard: no URL holds a secret).
    response.headers["Referrer-Policy"] = "no-referrer"
    if request.query_params.get("lang") in LANGS:
        response.set_cookie(COOKIE, lang, max_age=365 * 24 * 3600, samesite="lax")
    return response


def refused_page(request: Request, lang: Lang, code: str, http_status: int) -> HTMLResponse:
    """A page route that cannot serve its page: ``refusal_<code>`` in the page's language
    (never the API's English JSON on a phone)."""
    page = render(request, "refused.html", lang, "refused", code=code)
    page.status_code = http_status
    page.headers["Cache-Control"] = "no-store"
    return page


@router.get("/", response_class=HTMLResponse)
def table_page(request: Request, lang: LangDep, settings: SettingsDep) -> HTMLResponse:
    # The join codes hold the public address: on a loopback one they would open the phone.
    phones = phones_reach(settings.public_base() or str(request.base_url))
    return render(request, "table.html", lang, "table", table=settings.table, phones=phones,
                  screen=sees_table_screen(request))


@router.get("/virtual", response_class=HTMLResponse)
def virtual_page(request: Request, lang: LangDep, settings: SettingsDep) -> HTMLResponse:
    if not settings.virtual or not offers(table_game(request), "virtual"):
        return refused_page(request, lang, "no_virtual_table", status.HTTP_404_NOT_FOUND)
    return render(request, "virtual.html", lang, "virtual", table=settings.table)


@router.get("/seat/{seat}", response_class=HTMLResponse)
def seat_page(request: Request, lang: LangDep, seat: int) -> HTMLResponse:
    if not 0 <= seat < N_SEATS:
        return refused_page(request, lang, "no_such_seat", status.HTTP_404_NOT_FOUND)
    return render(request, "seat.html", lang, "seat", seat=seat)


@router.get("/host", response_class=HTMLResponse)
def host_page(request: Request, lang: LangDep, settings: SettingsDep) -> HTMLResponse:
    offered = host_games(lang, table_game(request))
    return render(request, "host.html", lang, "host", table=settings.table, games=offered)


@router.get("/scores", response_class=HTMLResponse)
def scores_page(request: Request, lang: LangDep, settings: SettingsDep) -> HTMLResponse:
    return render(request, "scores.html", lang, "scores", table=settings.table)


FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
    '<rect width="64" height="64" rx="12" fill="#0d1117"/>'
    '<path d="M12 26h40l-4 26a6 6 0 0 1-6 5H22a6 6 0 0 1-6-5z" fill="#ffdd00"/>'
    '<circle cx="24" cy="16" r="5" fill="#3fb950"/><circle cx="38" cy="12" r="4" fill="#58a6ff"/>'
    "</svg>"
)


@router.get("/favicon.ico")
def favicon() -> Response:
    return Response(FAVICON, media_type="image/svg+xml",
                    headers={"Cache-Control": "public, max-age=86400"})

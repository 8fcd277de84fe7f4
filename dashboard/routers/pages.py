"""HTML pages (Jinja2 templates; the scripts fill them from the API and WebSockets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from dashboard.config import LANGS, Lang
from dashboard.deps import LangDep, SettingsDep
from dashboard.i18n import COOKIE, bundle, strings
from engine.rules.observer import board_view

BOARD = board_view().to_wire()  # the rules' board: the scripts never repeat it
TEMPLATES = Jinja2Templates(directory=str(Path(__file__).resolve().parents[1] / "templates"))
router = APIRouter(include_in_schema=False)


def render(request: Request, name: str, lang: Lang, page: str, **extra: Any) -> HTMLResponse:
    boot = {**bundle(lang), "page": page, "board": BOARD, **extra}
    response = TEMPLATES.TemplateResponse(
        request,
        name,
        {
            "lang": lang,
            "langs": LANGS,
            "t": strings(lang),
            "page": page,
            # JSON inside <script type="application/json">: "</" must not end the tag.
            "boot": json.dumps(boot, ensure_ascii=False).replace("</", "<\\/"),
            **extra,
        },
    )
    if request.query_params.get("lang") in LANGS:
        response.set_cookie(COOKIE, lang, max_age=365 * 24 * 3600, samesite="lax")
    return response


@router.get("/", response_class=HTMLResponse)
def table_page(request: Request, lang: LangDep, settings: SettingsDep) -> HTMLResponse:
    return render(request, "table.html", lang, "table", table=settings.table, play=False)


@router.get("/virtual", response_class=HTMLResponse)
def virtual_page(request: Request, lang: LangDep, settings: SettingsDep) -> HTMLResponse:
    return render(request, "table.html", lang, "virtual", table=settings.table, play=True)


@router.get("/seat/{seat}", response_class=HTMLResponse)
def seat_page(
    request: Request, lang: LangDep, seat: Annotated[int, PathParam(ge=0, le=3)]
) -> HTMLResponse:
    return render(request, "seat.html", lang, "seat", seat=seat)


@router.get("/host", response_class=HTMLResponse)
def host_page(request: Request, lang: LangDep, settings: SettingsDep) -> HTMLResponse:
    return render(request, "host.html", lang, "host", table=settings.table)


@router.get("/scores", response_class=HTMLResponse)
def scores_page(request: Request, lang: LangDep, settings: SettingsDep) -> HTMLResponse:
    return render(request, "scores.html", lang, "scores", table=settings.table)

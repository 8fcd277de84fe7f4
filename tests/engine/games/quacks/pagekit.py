"""A small shell for Quacks' page fragments, until the dashboard shell serves them (issue 22):
the dashboard's own `core.js` and `app.css`, the fragments from `DEFINITION.fragments`, and a
real `QuacksTable` behind three JSON routes. The pages are built as the dashboard builds
its own: a boot JSON with the language's strings (the dashboard's and Quacks' ``q_…``)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from dashboard.i18n import bundle
from engine.games import get
from engine.games.quacks.definition import QuacksDefinition
from engine.games.quacks.scoring import breakdown
from engine.games.quacks.table import QuacksTable

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tests" / "dashboard"))
from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from dashkit import Server, wait_until  # noqa: E402

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "Server", "make_app", "wait_until"]

PAGE = """<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="stylesheet" href="/static/app.css">
{styles}<script id="boot" type="application/json">{boot}</script>
<script type="module">{script}</script></head>
<body class="page-{page}"><main id="main"><div id="q-root"></div></main></body></html>"""

SCRIPTS = {
    "table": """import {{ renderTable }} from "/games/quacks/static/quacks-table.js";
const root = document.getElementById("q-root");
window.__refresh = async () => {{ const v = await (await fetch("/api/view")).json();
  renderTable(root, v); document.body.dataset.round = String(v.round); return true; }};
window.__refresh();""",
    "seat": """import {{ renderSeat }} from "/games/quacks/static/quacks-seat.js";
const root = document.getElementById("q-root");
const ctx = {{ virtual: {virtual}, send: async (verb, args) => {{
  const r = await fetch("/api/seat/{seat}/" + verb, {{ method: "POST", body: JSON.stringify(args),
    headers: {{ "content-type": "application/json" }} }});
  const answer = await r.json(); await window.__refresh(); return answer; }} }};
window.__refresh = async () => {{ const v = await (await fetch("/api/seat/{seat}")).json();
  renderSeat(root, v, ctx); document.body.dataset.round = String(v.round);
  document.body.dataset.phase = v.phase; return true; }};
window.__refresh();""",
    "scores": """import {{ renderBreakdown }} from "/games/quacks/static/quacks-scores.js";
const root = document.getElementById("q-root");
window.__refresh = async () => {{
  renderBreakdown(root, await (await fetch("/api/scores")).json()); return true; }};
window.__refresh();""",
}


def make_app(table: QuacksTable, virtual: bool = True) -> FastAPI:
    definition = get("quacks")
    assert isinstance(definition, QuacksDefinition)
    app = FastAPI()
    app.state.table = table
    app.mount("/static", StaticFiles(directory=ROOT / "dashboard" / "static"), name="static")
    app.mount("/games/quacks/static", StaticFiles(directory=definition.fragments.static),
              name="quacks")  # fmt: skip

    def page(kind: str, lang: str, **fmt: Any) -> HTMLResponse:
        boot = bundle(lang)  # the dashboard's own words, and the game's page catalogue
        boot["catalogue"] = definition.page_catalogue(lang)
        styles = "".join(f'<link rel="stylesheet" href="/games/quacks/static/{s}">'
                         for s in definition.fragments.styles)  # fmt: skip
        html = PAGE.format(lang=lang, title=definition.titles[lang], styles=styles,
                           boot=json.dumps(boot).replace("</", "<\\/"), page=kind,
                           script=SCRIPTS[kind].format(**fmt))  # fmt: skip
        return HTMLResponse(html)

    @app.get("/table")
    def table_page(lang: str = "en") -> HTMLResponse:
        return page("table", lang)

    @app.get("/seat/{seat}")
    def seat_page(seat: int, lang: str = "en") -> HTMLResponse:
        return page("seat", lang, seat=seat, virtual="true" if virtual else "false")

    @app.get("/scores")
    def scores_page(lang: str = "en") -> HTMLResponse:
        return page("scores", lang)

    @app.get("/favicon.ico")
    def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/api/view")
    def view() -> JSONResponse:
        return JSONResponse(app.state.table.public_view())

    @app.get("/api/seat/{seat}")
    def seat_view(seat: int) -> JSONResponse:
        return JSONResponse(app.state.table.seat_view(seat))

    @app.get("/api/scores")
    def scores() -> JSONResponse:
        return JSONResponse(breakdown(app.state.table.game).model_dump(mode="json"))

    @app.post("/api/seat/{seat}/{verb}")
    async def play(seat: int, verb: str, request: Request) -> JSONResponse:
        args = await request.json()
        outcome = app.state.table.play(seat, verb, args)
        if outcome.refusal is not None:
            return JSONResponse({"status": "refused", "error": outcome.refusal.to_wire()})
        return JSONResponse({"status": "ok", "basket": list(outcome.basket)})

    return app


def bot_step(table: QuacksTable, seats: set[int], rng: random.Random, push: float = 0.8) -> bool:
    """One move of a seat in `seats` (a plain policy: draw with chance `push`, else the first
    legal action); False when none of them has anything to do."""
    game = table.game
    actors = [s for s in game.actors() if s in seats]
    if not actors:
        return False
    seat = rng.choice(actors)
    legal = game.legal_actions(seat)
    from engine.games.quacks.rules import Draw, Stop

    if Draw(seat) in legal and Stop(seat) in legal:
        outcome = table.play(seat, "draw" if rng.random() < push else "stop")
    else:
        outcome = table.apply_wire(definition_wire(rng.choice(legal)))
    assert outcome.ok, outcome.refusal
    return True


def definition_wire(action: Any) -> dict[str, Any]:
    return get("quacks").action_to_wire(action)

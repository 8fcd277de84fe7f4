"""The FastAPI application: `create_app(settings)`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from dashboard.bridge import Bridge
from dashboard.config import Settings
from dashboard.count import CountDesk
from dashboard.game import mount_fragments
from dashboard.guard import secure
from dashboard.routers import (
    Refusal,
    count,
    enrol,
    host,
    pages,
    refusal_response,
    scores,
    seats,
    table,
    virtual,
)
from dashboard.virtual import VirtualTable

STATIC = Path(__file__).with_name("static")

TAGS = [
    {"name": "table", "description": "The public table view (never a covered card)."},
    {"name": "seats", "description": "Seat join codes and private views (seat secret)."},
    {"name": "host", "description": "Host controls, protected by the host PIN."},
    {"name": "virtual table", "description": "Play with the simulated hub by clicking."},
    {"name": "scores", "description": "The final score breakdown."},
    {"name": "count", "description": "Score-only mode: tap each seat's cards on one reader."},
]


def create_app(settings: Settings | None = None, bridge: Bridge | None = None) -> FastAPI:
    """The dashboard app. The bridge connects to the broker when the app starts (lifespan)
    and keeps retrying, so the pages come up even while the broker is away."""
    settings = settings or Settings()
    bridge = bridge or Bridge(settings)
    virtual_table = VirtualTable(bridge) if settings.virtual else None
    if virtual_table is not None:
        bridge.virtual_public = virtual_table.public

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(bridge.start)

        async def watch() -> None:
            while True:
                bridge.check_connection()
                await asyncio.sleep(0.5)

        watcher = asyncio.create_task(watch())
        try:
            yield
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            await asyncio.to_thread(bridge.stop)

    app = FastAPI(
        title="Cauldron Table dashboard",
        summary="The table's screen, a private view per seat, host controls and a virtual table.",
        version="0.1.0",
        openapi_tags=TAGS,
        lifespan=lifespan,
    )
    app.state.settings = settings
    secure(app)  # body limit, same-origin check, host PIN guard (dashboard.guard)
    app.add_exception_handler(Refusal, refusal_response)  # a refusal keeps code and rule
    app.state.bridge = bridge
    app.state.virtual = virtual_table
    app.state.count = count_desk(settings)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    mount_fragments(app)  # each game's page fragments, /games/<id>/static/
    for router in (table.router, seats.router, host.router, enrol.router, virtual.router,
                   virtual.play_router,
                   scores.router, count.router, pages.router):
        app.include_router(router)
    return app


def count_desk(settings: Settings) -> CountDesk:
    """The score-only count, kept in the data dir (a restart loses no tap)."""
    return CountDesk(settings.data_dir / f"count-{settings.table}.json"
                     if settings.data_dir else None)


def create_count_app(settings: Settings, desk: CountDesk) -> FastAPI:
    """Score-only mode on its own (`cauldron count`): the count page and its API, no broker,
    no game; ``desk`` is fed by the reader its caller runs."""
    from fastapi.responses import RedirectResponse

    app = FastAPI(title="Cauldron Table: score-only count", version="0.1.0",
                  openapi_tags=[t for t in TAGS if t["name"] == "count"])
    app.state.settings = settings
    secure(app)
    app.state.count = desk
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    mount_fragments(app)  # the count page draws Glastonbury's breakdown
    app.include_router(count.router)

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse("/count")

    return app

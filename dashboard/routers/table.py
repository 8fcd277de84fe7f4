"""The public table: its state (REST) and its live feed (WebSocket)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from dashboard.bridge import FINAL_MESSAGES, Bridge
from dashboard.deps import BridgeDep
from dashboard.models import TableState
from dashboard.serving import WRITER

router = APIRouter(tags=["table"])


@router.get(
    "/api/table",
    summary="The public table state",
    description="The engine's public view (whitelisted: never a covered card), active alerts, "
    "hub/engine/broker status, which seats joined, and the virtual table's public part.",
)
def get_table(bridge: BridgeDep) -> TableState:
    return bridge.table_state()


async def pump(websocket: WebSocket, bridge: Bridge, channel: int | str,
               first: Callable[[], str], secret: str | None = None) -> None:
    """Send the state `first()` gives, then every new state of `channel` until the browser
    goes away (a reader task notices the close at once, so nothing waits on a dead socket).
    `first` is read once subscribed: a change in between reaches the socket either way (a
    state read before subscribing could miss the last change, and the page would stay on
    the older state until the next one)."""
    sub = bridge.add_subscriber("table" if channel == "table" else int(channel), secret)
    first_state = first()
    writer = websocket.scope.get("extensions", {}).get(WRITER)
    if writer is not None:  # served by dashboard.serving: the fan-out writes directly
        sub.write_now = writer["write"]

    async def send() -> None:
        await websocket.send_text(first_state)
        while True:
            message = await sub.next()  # shared by every socket of the channel: not changed
            await websocket.send(message)
            if message in FINAL_MESSAGES:  # the seat's secret opens nothing now
                return

    async def receive() -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return

    tasks = [asyncio.create_task(send()), asyncio.create_task(receive())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, RuntimeError):
                await task
        bridge.remove_subscriber(sub)
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):
            await websocket.close()


@router.websocket("/ws/table")
async def table_socket(websocket: WebSocket) -> None:
    """Live `TableState` messages (JSON text), one per change; public data only."""
    bridge: Bridge = websocket.app.state.bridge
    await websocket.accept()
    await pump(websocket, bridge, "table",
               lambda: bridge.table_state().model_dump_json(by_alias=True))

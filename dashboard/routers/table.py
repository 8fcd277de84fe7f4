"""The public table: its state (REST) and its live feed (WebSocket)."""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from dashboard.bridge import EXPIRED, Bridge
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


async def pump(websocket: WebSocket, bridge: Bridge, channel: int | str, first: str) -> None:
    """Send `first`, then every new state of `channel` until the browser goes away (a
    reader task notices the close at once, so nothing waits on a dead socket)."""
    sub = bridge.add_subscriber("table" if channel == "table" else int(channel))
    writer = websocket.scope.get("extensions", {}).get(WRITER)
    if writer is not None:  # served by dashboard.serving: the fan-out writes directly
        sub.write_now = writer["write"]

    async def send() -> None:
        await websocket.send_text(first)
        while True:
            message = await sub.next()  # shared by every socket of the channel: not changed
            await websocket.send(message)
            if message["text"] == EXPIRED:
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
    await pump(websocket, bridge, "table", bridge.table_state().model_dump_json(by_alias=True))

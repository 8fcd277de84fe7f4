"""The `HubEvent` a hub would publish for an interpreter input (shared by the engine-service,
demo and dashboard tests that feed an engine without a hub)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from engine.games.glastonbury.rules.board import cell_name
from engine.games.glastonbury.table.interpreter import SensorInput
from engine.wire.auth import ensure_key, keys_dir, sign_command, sign_hub
from engine.wire.contract import CommandRequest, HubEvent, HubSnapshot
from hub.backends.sim import made_up_uid


def hub_event(inp: SensorInput, seq: int, epoch: str = "e1", hub_id: str = "hub-test"
              ) -> HubEvent:
    common: dict[str, Any] = {"hub_id": hub_id, "epoch": epoch, "seq": seq, "ts": 1000.0 + seq}
    if inp.kind == "button":
        place = {"seat": inp.seat} if inp.button == "confirm" else {}
        return HubEvent(kind="button", action="pressed", button=inp.button, **place, **common)
    where = {"cell": cell_name(inp.cell)} if inp.cell is not None else {"seat": inp.pad}
    if inp.card is None:
        return HubEvent(kind="unknown_tag", action=inp.kind, uid=inp.uid, **where, **common)
    kind = "cell" if inp.cell is not None else "pad"
    return HubEvent(kind=kind, action=inp.kind, uid=made_up_uid(inp.card), card_id=inp.card,
                    **where, **common)


def signed(model: HubEvent | HubSnapshot, table: str) -> HubEvent | HubSnapshot:
    """`model` with the MAC the table's hub would give it (its key made if need be: the
    hub enrolled for `table` is `model.hub_id`)."""
    return sign_hub(model, table, ensure_key(keys_dir(), table, "hub", model.hub_id).key)


def hub_request(table: str, verb: str, args: dict[str, Any] | None = None) -> CommandRequest:
    """A ``hub/cmd/<verb>`` request as the engine or the dashboard sends it: signed with the
    table's command key, a deadline, a transaction of its own."""
    request = CommandRequest(transaction=uuid.uuid4().hex, args=dict(args or {}),
                             deadline=time.time() + 30)
    return sign_command(request, table, verb, ensure_key(keys_dir(), table, "cmd").key,
                        hub=True)

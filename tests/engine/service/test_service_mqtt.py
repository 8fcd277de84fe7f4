"""The engine service on a real broker: views, alerts, LEDs, commands with
`{transaction, status, data, error}`, and messages that must change nothing."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from glastonbury_table import glastonbury, hub_event
from hub_events import signed

from engine.games.glastonbury.rules import Take
from engine.games.glastonbury.rules.board import parse_cell
from engine.games.glastonbury.table.table_driver import scripted_game
from engine.service.service import EngineService, ServiceConfig
from engine.wire.api import GameAnswer, HintAnswer
from engine.wire.auth import sign_command
from engine.wire.contract import (
    CommandRequest,
    GameAlert,
    GamePublic,
    GameSeat,
    HubEvent,
    Topics,
    WireModel,
    encode,
)
from engine.wire.mqtt import WireClient


class Watcher:
    """A test client that records everything under one table."""

    def __init__(self, url: str, table: str) -> None:
        self.topics = Topics(table)
        self.client = WireClient(url, client_id=f"watch-{uuid.uuid4().hex[:8]}")
        self.messages: list[tuple[str, Any]] = []
        self.raw: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.client.subscribe(self.topics.all(), raw=self._raw)
        self.client.start(wait=10)
        self.client.subscribe(self.topics.all(), raw=self._raw, wait=5)

    def _raw(self, topic: str, payload: bytes) -> None:
        with self.lock:
            self.raw.append((topic, payload))

    def of(self, suffix: str) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(p) for t, p in self.raw if t == self.topics.prefix + suffix]

    def wait_for(self, check: Callable[[], object], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting")
            time.sleep(0.01)

    def public(self) -> dict[str, Any]:
        return self.of("game/public")[-1]


@pytest.fixture
def engine(mqtt_broker: str, tmp_path: Path, table_id: str) -> Iterator[EngineService]:
    config = ServiceConfig(mqtt=mqtt_broker, data_dir=tmp_path, tables=frozenset({table_id}),
                           name=f"eng-{uuid.uuid4().hex[:8]}")
    service = EngineService(config).start(wait=10)
    yield service
    service.stop()


@pytest.fixture
def watcher(mqtt_broker: str, table_id: str) -> Iterator[Watcher]:
    w = Watcher(mqtt_broker, table_id)
    yield w
    w.client.stop()


def _publish(watcher: Watcher, topic: str, model: WireModel | bytes) -> None:
    if isinstance(model, HubEvent):  # as the table's enrolled hub signs it
        model = signed(model, watcher.topics.table)
    payload = model if isinstance(model, bytes) else encode(model)
    done = threading.Event()
    watcher.client.publish_raw(topic, payload, on_ack=done.set)
    assert done.wait(5)


def _new_game(watcher: Watcher, args: dict[str, Any]) -> dict[str, Any]:
    reply = watcher.client.request(watcher.topics.cmd("new_game"), args, timeout=10)
    assert reply.status == "ok" and isinstance(reply.data, dict), reply.error
    return dict(reply.data)


def test_a_game_over_mqtt_views_alerts_leds_and_commands(
    engine: EngineService, watcher: Watcher, table_id: str
) -> None:
    script = scripted_game(2, 11, max_decisions=6, memory_aid=True)
    args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
    data = _new_game(watcher, args)
    assert data["status"] == "dealing" and data["game_id"]
    inputs = script.deal + [i for turn in script.turns for i in turn]
    for seq, inp in enumerate(inputs, start=1):
        _publish(watcher, watcher.topics.hub_event, hub_event(inp, seq))
    watcher.wait_for(lambda: watcher.of("game/public")
                     and watcher.public()["view"]["table"]["inputs"] == len(inputs) + 1)
    public = GamePublic.model_validate(watcher.public())
    assert public.table == table_id and public.turn is not None
    assert public.view.config is not None and public.view.config.memory_aid is True
    seat0 = GameSeat.model_validate(watcher.of("game/seat/0")[-1])
    assert seat0.view.stack is not None
    # The turn LED follows the game.
    watcher.wait_for(lambda: bool(watcher.of("hub/cmd/turn"))
                     and watcher.of("hub/cmd/turn")[-1]["args"]["seat"] == public.turn)
    # A card lifted from a line the pawn does not face: alert, buzz; put back: cleared.
    game = glastonbury(engine.tables[table_id].interp).game
    assert game is not None
    line = game.faced_line()
    cell = next(c for c in range(36) if (card := game.grid[c]) and c not in _line_cells(line)
                and not card.startswith(("corner", "vanesco", "perluceo", "accio")))
    from engine.games.glastonbury.table.interpreter import lay, lift

    seq = len(inputs)
    card = game.grid[cell]
    assert card is not None
    for inp in (lift(cell, card), lay(cell, card)):
        seq += 1
        _publish(watcher, watcher.topics.hub_event, hub_event(inp, seq))
    watcher.wait_for(lambda: len(watcher.of("game/alert")) >= 2)
    raised, cleared = (GameAlert.model_validate(m) for m in watcher.of("game/alert")[:2])
    assert raised.active and raised.rule in ("G6", "G4") and raised.instruction.startswith("Put")
    assert not cleared.active and cleared.alert_id == raised.alert_id
    assert raised.params["code"]
    watcher.wait_for(lambda: bool(watcher.of("hub/cmd/buzz")))
    # Commands that do not fit the moment: refused with a reason, nothing changes.
    interp = glastonbury(engine.tables[table_id].interp)
    watcher.wait_for(lambda: watcher.public()["view"]["table"]["inputs"] == interp.inputs)
    before = watcher.public()["view"]
    for verb in ("keep", "discard", "confirm"):
        reply = watcher.client.request(watcher.topics.cmd(verb), {}, timeout=10)
        assert reply.status == "error" and reply.error
    reply = watcher.client.request(watcher.topics.cmd("new_game"), args, timeout=10)
    assert reply.status == "error" and "in progress" in (reply.error or "")
    assert glastonbury(engine.tables[table_id].interp).public_view().to_wire() == before
    # A hint for the seat to play (read-only: the view does not change); others refused.
    turn = watcher.public()["view"]["turn"]
    reply = watcher.client.request(watcher.topics.cmd("hint"), {"lang": "fr"}, seat=turn,
                                   timeout=10)
    assert reply.status == "ok", reply.error
    hint = HintAnswer.model_validate(reply.data)
    assert hint.seat == turn and hint.reason and hint.action
    assert (hint.cell is not None and Take(parse_cell(hint.cell)) in game.legal_actions()) or (
        hint.action["type"] != "take")
    reply = watcher.client.request(watcher.topics.cmd("hint"), {}, seat=1 - turn, timeout=10)
    assert reply.status == "error" and reply.error
    assert glastonbury(engine.tables[table_id].interp).public_view().to_wire() == before
    # Undo: ok with what was taken back and the instructions to put the cards back.
    reply = watcher.client.request(watcher.topics.cmd("undo"), {}, timeout=10)
    undone = GameAnswer.model_validate(reply.data)
    assert reply.status == "ok" and undone.instructions
    assert (undone.undone or "").startswith("Undone: "), reply.data
    reply = watcher.client.request(watcher.topics.cmd("end"), {}, timeout=10)
    assert reply.status == "ok" and GameAnswer.model_validate(reply.data).status == "ended"
    reply = watcher.client.request(watcher.topics.cmd("undo"), {}, timeout=10)
    assert reply.status == "error" and "undo" in (reply.error or "")


def _line_cells(line: int | None) -> set[int]:
    from engine.games.glastonbury.rules.board import LINES

    return set(LINES[line]) if line is not None else set()


def test_malformed_duplicated_reordered_and_replayed_messages_change_nothing(
    engine: EngineService, watcher: Watcher, table_id: str
) -> None:
    script = scripted_game(3, 4, max_decisions=3)
    _new_game(watcher, {k: v for k, v in script.new_game_args.items() if k != "game_id"})
    events = [hub_event(inp, n) for n, inp in enumerate(script.deal, start=1)]
    events[5], events[6] = events[6], events[5]  # reordered
    for event in events:
        _publish(watcher, watcher.topics.hub_event, event)
    interp = glastonbury(engine.tables[table_id].interp)
    watcher.wait_for(lambda: interp.status.value == "playing")
    state = (interp.inputs, json.dumps(interp.public_view().to_wire(), sort_keys=True))
    topic = watcher.topics.hub_event
    bad_payloads = [
        b"not json",
        b'{"schema_version": 1, "hub_id": "h"}',
        json.dumps({**json.loads(encode(events[0])), "schema_version": 7}).encode(),
        json.dumps({**json.loads(encode(events[0])), "seq": 40, "kind": "cell",
                    "cell": "9,9"}).encode(),
    ]
    for payload in bad_payloads:
        _publish(watcher, topic, payload)
    for event in (events[0], events[10], events[31]):  # duplicated / replayed
        _publish(watcher, topic, event)
    # A request with a malformed body is answered with the reason when it has a transaction.
    request = json.dumps({"schema_version": 1, "transaction": "tx-1", "args": "nope"}).encode()
    _publish(watcher, watcher.topics.cmd("confirm"), request)
    watcher.wait_for(lambda: bool(watcher.of("cmd/confirm/response")))
    response = watcher.of("cmd/confirm/response")[-1]
    assert response["transaction"] == "tx-1" and response["status"] == "error"
    watcher.wait_for(lambda: engine.stats["duplicates"] >= 3)
    assert engine.client.stats["rejected"] >= 4
    assert engine.stats["reordered"] >= 1
    assert (interp.inputs, json.dumps(interp.public_view().to_wire(), sort_keys=True)) == state
    # A request on a verb outside the contract is never served.
    with pytest.raises(Exception, match="unknown command"):
        watcher.client.request(f"cauldron/{table_id}/cmd/explode", {}, timeout=1)


def test_requests_carry_the_callers_transaction(engine: EngineService, watcher: Watcher) -> None:
    request = CommandRequest(transaction="my-tx-42", args={}, deadline=time.time() + 10)
    table = watcher.topics.table
    request = sign_command(request, table, "undo", watcher.client.command_key(table))
    _publish(watcher, watcher.topics.cmd("undo"), request)
    watcher.wait_for(lambda: bool(watcher.of("cmd/undo/response")))
    response = watcher.of("cmd/undo/response")[-1]
    assert response == {"schema_version": 1, "transaction": "my-tx-42", "status": "error",
                        "data": None, "error": response["error"], "code": "nothing_to_undo",
                        "rule": None}
    assert "no game" in response["error"]
    state = watcher.of("engine/state")
    assert state and state[-1]["state"] == "online"

"""The engine serialises each view once (issue 21's throughput): ``game/public`` is written
from the observer's view serialised once per change of the game plus the table's state, not
validated again, and a seat's retained view is published only when it changes. What goes on
the wire must still be exactly what the models make: each payload parses as the
`GamePublic` / `GameSeat` built (and validated) from the interpreter at that moment, at every
step of whole games with alerts, undos and their ends."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from glastonbury_table import glastonbury, hub_event

from engine.games.glastonbury.table.interpreter import SensorInput, lay, lift
from engine.games.glastonbury.table.table_driver import scripted_game
from engine.service.service import EngineService, ServiceConfig
from engine.wire.auth import command_mac_ok, load_key
from engine.wire.contract import (
    CommandRequest,
    GameEvents,
    GamePublic,
    GameSeat,
    Topics,
    compact_json,
    game_public_json,
    parse_payload,
)


def _service(folder: Path) -> tuple[EngineService, list[tuple[str, bytes]]]:
    service = EngineService(ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=folder,
                                          name="views-test"))
    published: list[tuple[str, bytes]] = []

    def record(topic: str, payload: bytes, **_: Any) -> int:
        published.append((topic, payload))
        return 0

    service.client.publish_raw = record  # type: ignore[method-assign]
    return service, published


def _inputs(seed: int) -> tuple[dict[str, Any], list[SensorInput]]:
    """A whole scripted game, with a stray lift and lay now and then (alerts raised and
    cleared) so that the table's state changes without the game."""
    script = scripted_game(3, seed, max_decisions=80)
    rng = random.Random(seed)
    inputs = list(script.deal)
    for turn in script.turns:
        for inp in turn:
            inputs.append(inp)
            if inp.kind == "placed" and inp.cell is not None and inp.card and rng.random() < 0.15:
                inputs += [lift(inp.cell, inp.card), lay(inp.cell, inp.card)]
    return {k: v for k, v in script.new_game_args.items() if k != "game_id"}, inputs


def _check(service: EngineService, published: list[tuple[str, bytes]]) -> None:
    """The last game/public and each seat's last view are what the models make now."""
    runtime = service.tables["t1"]
    interp = glastonbury(runtime.interp)
    topics = Topics("t1")
    public = [p for t, p in published if t == topics.game_public]
    assert public, "a game/public for the change"
    parsed = parse_payload(topics.game_public, public[-1])
    assert isinstance(parsed, GamePublic)
    made = GamePublic(table="t1", game_id=interp.game_id, turn=interp.turn, ts=parsed.ts,
                      view=interp.public_view(), fence=None)
    assert parsed == made
    for seat in range(interp.game.players if interp.game is not None else 0):
        sent = [p for t, p in published if t == topics.game_seat(seat)]
        view = interp.seat_view(seat)
        assert sent and view is not None
        seat_model = parse_payload(topics.game_seat(seat), sent[-1])
        assert seat_model == GameSeat(seat=seat, game_id=interp.game_id, ts=None, view=view)


@pytest.mark.parametrize("seed", [1, 7])
def test_public_and_seat_views_are_the_models_at_every_step(tmp_path: Path, seed: int
                                                            ) -> None:
    service, published = _service(tmp_path)
    args, inputs = _inputs(seed)
    service.command("t1", "new_game", dict(args))
    undone = 0
    for seq, inp in enumerate(inputs, start=1):
        service.receive("t1", hub_event(inp, seq))
        _check(service, published)
        if seq > 40 and seq % 23 == 0 and undone < 3:  # a new Game: no stale serialisation
            service.command("t1", "undo", {})
            _check(service, published)
            undone += 1
    assert service.tables["t1"].interp.status.value in ("over", "playing")
    # game/events and the hub's turn commands are made without validating them again:
    # each parses as its model, and each turn command is signed as the hub checks it.
    topics = Topics("t1")
    events = [p for t, p in published if t == topics.game_events]
    turns = [p for t, p in published if t == topics.hub_cmd("turn")]
    assert events and turns
    for payload in events:
        assert isinstance(parse_payload(topics.game_events, payload), GameEvents)
    key = load_key(service.config.keys, "t1", "cmd")
    assert key is not None
    for payload in turns:
        request = parse_payload(topics.hub_cmd("turn"), payload)
        assert isinstance(request, CommandRequest)
        assert command_mac_ok(request, "t1", "turn", key.key, hub=True)


def test_an_unchanged_seat_view_is_not_published_again(tmp_path: Path) -> None:
    service, published = _service(tmp_path)
    args, inputs = _inputs(3)
    service.command("t1", "new_game", dict(args))
    for seq, inp in enumerate(inputs[:60], start=1):
        service.receive("t1", hub_event(inp, seq))
    seats = [(t, p) for t, p in published if "/game/seat/" in t]
    # Each seat's view changes only with its own cauldron (or recipes): far fewer than one
    # per seat per action, and never the same payload twice in a row on one topic.
    last: dict[str, bytes] = {}
    for topic, payload in seats:
        assert last.get(topic) != payload, topic
        last[topic] = payload


def test_game_public_json_is_encode_of_the_model() -> None:
    view = {"grid": [["a", None]], "players": 2}
    table = {"status": "idle", "inputs": 3}
    out = game_public_json(table="t1", game_id=None, turn=None, ts=1.5,
                           view=compact_json(view), table_info=table, fence=4)
    assert out == (b'{"schema_version":1,"table":"t1","game":"glastonbury","game_id":null,'
                   b'"turn":null,"ts":1.5,"view":{"grid":[["a",null]],"players":2,"table":{"status":"idle",'
                   b'"inputs":3}},"fence":4}')
    with pytest.raises(ValueError):
        game_public_json(table="t1", game_id=None, turn=None, ts=1.5, view=b"{}",
                         table_info=table, fence=None)


def test_compact_json_writes_a_view_as_its_wire_form(tmp_path: Path) -> None:
    service, _ = _service(tmp_path)
    args, inputs = _inputs(5)
    service.command("t1", "new_game", dict(args))
    for seq, inp in enumerate(inputs, start=1):
        service.receive("t1", hub_event(inp, seq))
        view = glastonbury(service.tables["t1"].interp).rules_view()
        assert compact_json(view) == compact_json(view.to_wire())
    with pytest.raises(TypeError):
        compact_json({"not json": object()})

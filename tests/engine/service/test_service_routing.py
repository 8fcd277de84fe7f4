"""What the service publishes where (captured, no broker): private things stay on the seat's
topic, alerts carry their rule, several tables in one process, shards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glastonbury_table import deal_grid, hub_event

from engine.games.glastonbury.rules.board import TAKEABLE_CELLS
from engine.games.glastonbury.table.interpreter import lay, lift, pad_lay
from engine.service.service import EngineService, ServiceConfig
from engine.wire.contract import encode


class Captured(EngineService):
    def __init__(self, data_dir: Path, **config: Any) -> None:
        super().__init__(ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=data_dir,
                                       name="cap", **config))
        self.sent: list[tuple[str, dict[str, Any], bool]] = []
        self.client.publish_raw = self._raw  # type: ignore[method-assign]

    def _publish(self, topic: str, model: Any, retain: bool = False, qos: int = 1) -> None:
        self._raw(topic, encode(model), retain=retain)

    def _raw(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1,
             on_ack: Any = None) -> int:
        self.sent.append((topic, json.loads(payload), retain))
        return 0

    def on(self, suffix: str) -> list[tuple[dict[str, Any], bool]]:
        return [(p, r) for t, p, r in self.sent if t.endswith(suffix)]


def _start(service: EngineService, table: str, placed: dict[str, str]) -> int:
    service.command(table, "new_game", {"colours": ["yellow", "red"], "first_seat": 0})
    seq = 0
    for cell, card in zip(TAKEABLE_CELLS, deal_grid(placed), strict=True):
        seq += 1
        service.receive(table, hub_event(lay(cell, card), seq))
    return seq


def _feed(service: EngineService, table: str, seq: int, *inputs: Any) -> int:
    for inp in inputs:
        seq += 1
        service.receive(table, hub_event(inp, seq))
    return seq


def test_perluceo_reveal_goes_once_to_its_seat_only(tmp_path: Path) -> None:
    service = Captured(tmp_path)
    seq = _start(service, "t1", {"0,2": "yellow-a-2", "2,3": "red-b-4", "4,4": "perluceo-1",
                                 "1,2": "blue-a-1", "2,2": "blue-a-2"})
    refills = iter(["grey-b-4", "grey-b-3", "grey-b-2"])
    for cell, card, seat in (("0,2", "yellow-a-2", 0), ("2,3", "red-b-4", 1)):
        seq = _feed(service, "t1", seq, lift(cell, card), pad_lay(seat, card),
                    lay(cell, next(refills)))
    service.sent.clear()
    seq = _feed(service, "t1", seq, lift("4,4", "perluceo-1"), pad_lay(0, "perluceo-1"))
    reveals = [(p, r) for p, r in service.on("game/seat/0") if p["view"]["reveal"]]
    assert len(reveals) == 1 and reveals[0][1] is False  # once, not retained
    assert reveals[0][0]["view"]["reveal"] == ["yellow-a-2"]
    assert not any(p["view"]["reveal"] for p, _ in service.on("game/seat/1"))
    assert all("perluceo_reveal" not in json.dumps(p) for p, _ in service.on("game/public"))
    assert all(r for p, r in service.on("game/public"))  # the public view is retained


def test_alerts_buzz_and_turn_leds(tmp_path: Path) -> None:
    service = Captured(tmp_path)
    seq = _start(service, "t1", {"1,1": "red-a-2"})
    assert [p["args"] for p, _ in service.on("hub/cmd/turn")] == [{"seat": 0}]
    _feed(service, "t1", seq, lift("1,1", "red-a-2"), lay("1,1", "red-a-2"))
    alerts = [p for p, _ in service.on("game/alert")]
    assert [(a["rule"], a["active"], a["params"]["code"]) for a in alerts] == [
        ("G6", True, "illegal_take"), ("G6", False, "illegal_take")]
    assert alerts[0]["alert_id"] == alerts[1]["alert_id"]
    assert [p["args"] for p, _ in service.on("hub/cmd/buzz")] == [{"ms": 300}]


def test_many_tables_in_one_process_and_shards(tmp_path: Path) -> None:
    service = Captured(tmp_path)
    for table in ("a", "b", "c"):
        _start(service, table, {})
    assert {t: rt.interp.status.value for t, rt in service.tables.items()} == {
        "a": "playing", "b": "playing", "c": "playing"}
    assert sorted(p.stem for p in (tmp_path / "tables").glob("*.sqlite")) == ["a", "b", "c"]
    # One last will for the process: each table's engine/state names the topic it is on.
    service._republish_all()
    states = {t: p for t, p, retained in service.sent if t.endswith("/engine/state")}
    assert set(states) == {f"cauldron/{t}/engine/state" for t in ("a", "b", "c")}
    assert service.state_topic == "cauldron/cap/engine/state"
    assert {p["liveness_topic"] for p in states.values()} == {service.state_topic}
    single = Captured(tmp_path / "single", tables=frozenset({"a"}))
    _start(single, "a", {})
    single._republish_all()
    assert [p.get("liveness_topic") for p, _ in single.on("/engine/state")] == [None]
    shards = [ServiceConfig(shard=(i, 3)) for i in range(3)]
    names = [f"table-{k}" for k in range(30)]
    owners = [[s.serves(n) for s in shards].count(True) for n in names]
    assert owners == [1] * 30  # every table is served by exactly one shard
    only = ServiceConfig(tables=frozenset({"a"}))
    assert only.serves("a") and not only.serves("b")

"""Every refusal the hub sends carries a stable ``code`` (issue 22: 20 of 23 had none), so
pages render it in their language: a source check over every ``CommandRefused`` the hub
raises, and a walk of the refusal paths over a real broker (the messages are unchanged)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from test_hub_enrol_mode import NEW_TAG, ask, live
from test_hub_service import fast_client, make_hub

from engine.wire.contract import Topics
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.service import Hub

__all__ = ["live"]  # the fixture, used by name

HUB = Path(__file__).resolve().parents[2] / "hub"


def _refusals_without_code() -> list[str]:
    missing = []
    for path in sorted(HUB.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if name != "CommandRefused":
                continue
            code = next((k.value for k in node.keywords if k.arg == "code"), None)
            if code is None or (isinstance(code, ast.Constant) and not code.value):
                missing.append(f"{path.relative_to(HUB.parent)}:{node.lineno}")
    return missing


def test_every_refusal_the_hub_raises_passes_a_code() -> None:
    # Malformed args are refused by the API map (engine.wire.api), with the codes below.
    assert (HUB / "service.py").read_text(encoding="utf-8").count("CommandRefused(") > 10
    assert _refusals_without_code() == []


# (verb, args, code, words the message still says)
WALK: list[tuple[str, dict[str, Any], str, str]] = [
    ("enrol", {"action": "stop"}, "enrol_not_running", "enrol stop: no enrolment is running"),
    ("enrol", {"action": "dance"}, "bad_enrol_action", "enrol: action 'dance'"),
    ("enrol", {"action": "start", "pad": "one"}, "bad_enrol_args", "enrol: pad 'one'"),
    ("enrol", {"action": "start", "pad": 7}, "no_such_pad", "no pad for Seat 8"),
    ("enrol", {"action": "start", "pad": 1}, "pad_occupied", "lies on Seat 2's pad"),
    ("turn", {"seat": 1}, "no_table_io", "this hub has no table I/O configured"),
    ("buzz", {"ms": 100}, "no_table_io", "this hub has no table I/O configured"),
    ("replay", {"epoch": "nope", "from_seq": 1}, "wrong_epoch", "replay: epoch 'nope'"),
    ("sim", {"action": "place", "where": 3}, "bad_sim_args", "sim place: where 3: Input"),
    ("sim", {"action": "place", "where": "9,9", "uid": NEW_TAG}, "sim_refused", "sim place:"),
    ("sim", {"action": "pawn", "from": 0, "to": 1}, "no_pawn_sensors", "no pawn sensors"),
    ("sim", {"action": "lift", "where": "0,1"}, "sim_refused", ""),
]


def test_every_refusal_path_answers_its_code(
        live: tuple[Hub, SimulatedTable, WireClient, list[Any]], table_id: str) -> None:
    hub, sim, client, _events = live
    sim.place("pad:1", uid=NEW_TAG)
    epoch = hub.outbox.epoch
    walk = [*WALK, ("replay", {"epoch": epoch, "from_seq": 0}, "bad_replay_range",
                    "replay: from_seq 0: Input should be greater than or equal to 1")]
    for verb, args, code, words in walk:
        reply = ask(client, table_id, verb, **args)
        assert reply.status == "error", (verb, args, reply)
        assert (reply.code, words in str(reply.error)) == (code, True), (verb, args, reply.error)


def test_a_virtual_box_refuses_enrolment_with_a_code(mqtt_broker: str, table_id: str,
                                                      tmp_path: Path) -> None:
    tagmap = virtual_box_tagmap()
    hub = make_hub(mqtt_broker, table_id, tmp_path / "o.sqlite", SimulatedTable(tagmap=tagmap),
                   tagmap)
    try:
        with fast_client(mqtt_broker) as client:
            reply = client.request(Topics(table_id).hub_cmd("enrol"), {"action": "start"},
                                   timeout=5)
    finally:
        hub.stop()
    assert reply.status == "error" and reply.code == "nothing_to_enrol"
    assert "enrol: nothing to enrol" in str(reply.error)

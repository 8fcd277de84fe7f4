"""The wire contract: topics, models, parse/reject, JSON Schemas."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.wire.contract import (
    GAME_VERBS,
    HUB_VERBS,
    CommandRequest,
    CommandResponse,
    GameAlert,
    GamePublic,
    GameSeat,
    HubEvent,
    HubSnapshot,
    PayloadError,
    SchemaVersionError,
    ServiceState,
    TopicError,
    Topics,
    WireError,
    encode,
    parse_payload,
    parse_topic,
    write_schemas,
)

T = Topics("t1")


def event(**over: object) -> HubEvent:
    fields: dict[str, object] = dict(
        hub_id="hub-t1", epoch="e1", seq=1, ts=1.5, kind="cell", action="placed",
        cell="2,3", uid="04A1B2C3D4E5F6", card_id="blue-a-4", reader=14,
    )
    fields.update(over)
    return HubEvent(**fields)  # type: ignore[arg-type]


def test_topics_of_a_table() -> None:
    assert T.hub_event == "cauldron/t1/hub/event"
    assert T.hub_state == "cauldron/t1/hub/state"
    assert T.engine_state == "cauldron/t1/engine/state"
    assert T.game_public == "cauldron/t1/game/public"
    assert T.game_seat(2) == "cauldron/t1/game/seat/2"
    assert T.game_alert == "cauldron/t1/game/alert"
    assert T.cmd("undo") == "cauldron/t1/cmd/undo"
    assert Topics.response(T.cmd("undo")) == "cauldron/t1/cmd/undo/response"
    assert T.hub_cmd("buzz") == "cauldron/t1/hub/cmd/buzz"
    assert Topics("+").hub_event == "cauldron/+/hub/event"
    assert Topics("t1", base="venue/a").hub_event == "venue/a/t1/hub/event"


@pytest.mark.parametrize("bad", ["", "a/b", "a+b", "#", "x" * 65, "sp ace"])
def test_bad_table_ids_are_refused(bad: str) -> None:
    with pytest.raises(TopicError, match="table id"):
        Topics(bad)


def test_unknown_verbs_and_seats_are_refused() -> None:
    with pytest.raises(TopicError, match="unknown command 'shuffle'"):
        T.cmd("shuffle")
    with pytest.raises(TopicError, match="seat"):
        T.game_seat(4)


def test_parse_topic_identifies_each_topic() -> None:
    assert parse_topic(T.hub_event).model is HubEvent
    assert parse_topic(T.hub_snapshot).model is HubSnapshot
    assert parse_topic(T.engine_state).model is ServiceState
    assert parse_topic(T.game_public).model is GamePublic
    assert parse_topic(T.game_alert).model is GameAlert
    seat = parse_topic(T.game_seat(3))
    assert (seat.model, seat.seat) == (GameSeat, 3)
    for verb in GAME_VERBS:
        info = parse_topic(T.cmd(verb))
        assert (info.model, info.verb, info.response) == (CommandRequest, verb, False)
        assert parse_topic(T.cmd(verb) + "/response").model is CommandResponse
    for verb in HUB_VERBS:
        assert parse_topic(T.hub_cmd(verb)).verb == verb
    for bad in ["other/t1/hub/event", "cauldron/t1", "cauldron/t1/hub/evil",
                "cauldron/t1/game/seat/9", "cauldron/t1/cmd/undo/oops", "cauldron/t+/hub/event"]:
        with pytest.raises(TopicError):
            parse_topic(bad)


def test_every_model_round_trips() -> None:
    samples = [
        (T.hub_event, event()),
        (T.hub_event, event(kind="pad", cell=None, seat=1, card_id="accio-1")),
        (T.hub_event, event(kind="unknown_tag", card_id=None, cell=None, seat=0)),
        (T.hub_event, event(kind="button", action="pressed", button="confirm", seat=2,
                            cell=None, uid=None, card_id=None, reader=None)),
        (T.hub_event, event(kind="button", action="pressed", button="undo",
                            cell=None, uid=None, card_id=None, reader=None)),
        (T.hub_event, event(kind="reader_health", action=None, health="flicker", uid=None,
                            card_id=None)),
        (T.hub_event, event(kind="pawn", cell=None, position=7, card_id="pawn-1", pawn_seat=1)),
        (T.hub_state, ServiceState(state="online", client_id="hub-t1", ts=3.0)),
        (T.hub_snapshot, HubSnapshot(hub_id="h", epoch="e", last_seq=0, ts=1, backend="sim",
                                     readers=[])),
        (T.game_public, GamePublic.model_validate({"view": {"grid": [[None]]}, "turn": 1})),
        (T.game_seat(1), GameSeat.model_validate(
            {"seat": 1, "view": {"seat": 1, "colour": "blue", "stack": ["blue-a-4"]}})),
        (T.game_alert, GameAlert(alert_id="a1", rule="G4", message="Wrong line",
                                 instruction="Put blue-a-4 back on 2,3", seat=0)),
        (T.cmd("new_game"), CommandRequest(transaction="tx-1", args={"players": 3})),
        (T.cmd("undo") + "/response", CommandResponse(transaction="tx-1", status="ok", data=[1])),
        (T.cmd("undo") + "/response",
         CommandResponse(transaction="tx-1", status="error", error="G4: nothing to undo")),
    ]
    for topic, model in samples:
        assert parse_payload(topic, encode(model)) == model


@pytest.mark.parametrize(
    ("over", "reason"),
    [
        ({"kind": "cell", "cell": None, "seat": 1}, "place as 'cell'"),
        ({"action": "pressed"}, "needs action 'placed' or 'removed'"),
        ({"uid": None}, "needs the tag uid"),
        ({"card_id": None}, "needs the card_id"),
        ({"kind": "unknown_tag"}, "no card_id"),
        ({"cell": "6,0"}, "cell"),
        ({"uid": "04a1b2c3"}, "uid"),
        ({"seq": 0}, "seq"),
        ({"health": "ok"}, "only reader_health"),
    ],
)
def test_inconsistent_events_are_refused(over: dict[str, object], reason: str) -> None:
    data = json.loads(encode(event()))
    data.update(over)
    with pytest.raises(PayloadError, match=reason):
        parse_payload(T.hub_event, json.dumps(data).encode())


def test_malformed_payloads_name_the_problem() -> None:
    good = json.loads(encode(event()))
    cases: list[tuple[bytes, type[WireError], str]] = [
        (b"", PayloadError, "not JSON"),
        (b"\xff\xfe", PayloadError, "not JSON"),
        (b"[1]", PayloadError, "JSON object"),
        (b'{"kind": "cell"}', SchemaVersionError, "no schema_version"),
        (json.dumps({**good, "schema_version": 2}).encode(), SchemaVersionError, "version 1"),
        (json.dumps({**good, "extra": 1}).encode(), PayloadError, "extra"),
        (b"[" * 100_000, PayloadError, "not JSON"),
        (b"x" * 600_000, PayloadError, "limit"),
    ]
    for payload, error, reason in cases:
        with pytest.raises(error, match=reason):
            parse_payload(T.hub_event, payload)
    seat = GameSeat.model_validate({"seat": 2, "view": {"seat": 2, "colour": "red"}})
    with pytest.raises(PayloadError, match="seat 2, topic says 1"):
        parse_payload(T.game_seat(1), encode(seat))
    with pytest.raises(PayloadError, match="error reason"):
        parse_payload(T.cmd("undo") + "/response", b'{"schema_version":1,"transaction":"a",'
                      b'"status":"error"}')


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=4),
    max_leaves=20,
)
topics = st.sampled_from(
    [T.hub_event, T.hub_state, T.hub_snapshot, T.game_public, T.game_seat(0), T.game_alert,
     T.cmd("undo"), T.cmd("keep") + "/response", T.hub_cmd("sim"), "cauldron/t1/nope",
     "bad", ""]
)


@given(topic=topics, data=json_values, extra=st.dictionaries(st.text(max_size=12), json_values,
                                                             max_size=6))
def test_fuzz_parse_payload_raises_only_wire_errors(topic: str, data: object,
                                                    extra: dict[str, object]) -> None:
    candidates = [json.dumps(data).encode(), json.dumps({"schema_version": 1, **extra}).encode()]
    for payload in candidates:
        with contextlib.suppress(WireError):  # anything else fails the test
            parse_payload(topic, payload)


@given(payload=st.binary(max_size=200))
def test_fuzz_random_bytes(payload: bytes) -> None:
    with pytest.raises(WireError):
        parse_payload(T.hub_event, payload)


def test_write_schemas(tmp_path: Path) -> None:
    paths = write_schemas(tmp_path / "schemas")
    names = {p.name for p in paths}
    assert "hub-event.schema.json" in names and "command-response.schema.json" in names
    schema = json.loads((tmp_path / "schemas" / "hub-event.schema.json").read_text())
    assert "schema_version" in schema["properties"]
    assert schema["$id"].endswith("hub-event.schema.json")

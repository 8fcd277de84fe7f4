"""Fuzz: the arguments of ``hub/cmd/<verb>`` requests (turn, buzz, snapshot, replay, sim)
as the hub's command handler gets them. Each is answered or refused with `CommandRefused`
(an error response naming the problem), never another exception; a refused ``sim`` command
leaves the simulated table as it was, and no command invents or loses an event."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin
from hub_events import hub_request
from hypothesis import given
from hypothesis import strategies as st

from engine.games.glastonbury.rules.cards import enrolment_order
from engine.wire.contract import HUB_VERBS, TopicInfo, Topics, parse_topic
from engine.wire.mqtt import CommandRefused, WireClient
from hub.backends.sim import SimulatedTable, made_up_uid, virtual_box_tagmap
from hub.io import TableIO
from hub.outbox import Outbox
from hub.service import Hub

CARDS = enrolment_order()[:10]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)  # JSON has no inf or NaN
    | st.text(max_size=10)
    | st.sampled_from(["0,1", "2,2", "0,0", "9,9", "pad:0", "pad:7", "place", "remove",
                       "clear", "20261129-00000000", made_up_uid(CARDS[0]), *CARDS]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids,
                                                              max_size=3),
    max_leaves=6)
arg_keys = st.sampled_from(["action", "where", "card_id", "uid", "seat", "ms", "epoch",
                            "from_seq", "to_seq"]) | st.text(max_size=6)
args_strategy = st.dictionaries(arg_keys, json_values, max_size=4)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """A hub that is never connected (its publishes wait in the outbox), with table I/O on
    gpiozero mock pins; the handler is called as the MQTT layer would call it."""
    previous = Device.pin_factory
    Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    tmp: Path = tmp_path_factory.mktemp("hubfuzz")
    tagmap = virtual_box_tagmap()
    sim = SimulatedTable(tagmap=tagmap)
    io = TableIO(turn_leds=[17, 27, 22, 23], buzzer=24)
    hub = Hub(table="t-fuzz", backend=sim, tagmap=tagmap, outbox=Outbox(tmp / "o.sqlite"),
              client=WireClient("mqtt://127.0.0.1:1"), io=io)
    sim.place("0,1", card_id=CARDS[0])
    for _ in range(3):
        hub.step()
    try:
        yield hub
    finally:
        io.close()
        hub.outbox.close()
        Device.pin_factory = previous


def call(hub: Hub, verb: str, args: dict[str, Any]) -> Any:
    """As the dashboard or the engine sends it: signed, a transaction of its own."""
    info: TopicInfo = parse_topic(Topics(hub.table).hub_cmd(verb))
    return hub._on_command(info, hub_request(hub.table, verb, args))


sim_args = st.fixed_dictionaries(
    {"action": st.sampled_from(["place", "remove", "clear"]) | json_values},
    optional={"where": st.sampled_from(["0,1", "0,2", "3,3", "pad:1", "0,0", "x"]) | json_values,
              "card_id": st.sampled_from(CARDS) | json_values,
              "uid": st.sampled_from([made_up_uid(c) for c in CARDS]) | json_values})
replay_args = st.fixed_dictionaries(
    {}, optional={"epoch": st.just("EPOCH") | json_values,
                  "from_seq": st.integers(-2, 5) | json_values,
                  "to_seq": st.integers(-2, 5) | json_values})


@given(verb=st.sampled_from(["sim", "replay"]), sim=sim_args, replay=replay_args)
def test_fuzz_hub_sim_and_replay_commands(hub: Hub, verb: str, sim: dict[str, Any],
                                          replay: dict[str, Any]) -> None:
    args = sim if verb == "sim" else {**replay, "epoch": hub.outbox.epoch
                                      if replay.get("epoch") == "EPOCH" else replay.get("epoch")}
    test_fuzz_hub_commands.hypothesis.inner_test(hub, verb, args)  # type: ignore[attr-defined]


@given(verb=st.sampled_from(["turn", "buzz", "snapshot", "replay", "sim"]),
       args=args_strategy)
def test_fuzz_hub_commands(hub: Hub, verb: str, args: dict[str, Any]) -> None:
    sim = hub.backend
    assert isinstance(sim, SimulatedTable)
    table_before = sim.truth()
    seq_before = hub.outbox.last_seq
    try:
        answer = call(hub, verb, copy.deepcopy(args))
    except CommandRefused as exc:
        assert str(exc) and "\n" not in str(exc)
        assert sim.truth() == table_before, "a refused command changed the table"
    else:
        assert isinstance(answer, dict)
    assert hub.outbox.last_seq == seq_before  # a command never makes an event by itself
    if verb == "sim":  # put the table back as it was for the next example
        sim.clear()
        for reader, uid in table_before.items():
            sim.place(reader, uid=uid)


def test_one_handler_per_hub_verb(hub: Hub) -> None:
    """hub/cmd/<verb> goes through one verb -> handler map that covers the contract's
    HUB_VERBS exactly; a refusal names the problem."""
    assert set(hub._handlers) == set(HUB_VERBS)
    assert call(hub, "turn", {"seat": 1}) == {"seat": 1}
    with pytest.raises(CommandRefused, match="buzz: ms"):
        call(hub, "buzz", {"ms": 0})

"""``hub/cmd/layout``: the game changed without the readers (an undo, a game's end or start),
and a back-end that lays its table out itself says so (capability ``lay_out`` in
``hub/snapshot``) and does it; any other back-end refuses, naming why. The engine asks by
capability, never by a back-end's name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hub_events import hub_request

from engine.games.glastonbury.rules.cards import enrolment_order
from engine.wire.contract import TopicInfo, Topics, parse_topic
from engine.wire.mqtt import CommandRefused, WireClient
from hub.backends.base import ReaderBackend
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.layout import Layout
from hub.outbox import Outbox
from hub.service import Hub

CARDS = enrolment_order()[:3]


def _hub(tmp_path: Path, backend: ReaderBackend) -> Hub:
    return Hub(table="t-layout", backend=backend, tagmap=virtual_box_tagmap(),
               outbox=Outbox(tmp_path / "o.sqlite"), client=WireClient("mqtt://127.0.0.1:1"))


def call(hub: Hub, args: dict[str, Any]) -> Any:
    info: TopicInfo = parse_topic(Topics(hub.table).hub_cmd("layout"))
    return hub._on_command(info, hub_request(hub.table, "layout", args))


@pytest.fixture
def sim_hub(tmp_path: Path) -> Iterator[Hub]:
    hub = _hub(tmp_path, SimulatedTable(tagmap=virtual_box_tagmap()))
    try:
        yield hub
    finally:
        hub.outbox.close()


def test_the_simulated_table_announces_it_lays_itself_out(sim_hub: Hub) -> None:
    assert set(sim_hub.snapshot().capabilities) == {"lay_out", "write_tag"}


def test_a_layout_is_laid_out_by_the_simulated_table(sim_hub: Hub) -> None:
    sim = sim_hub.backend
    assert isinstance(sim, SimulatedTable)
    sim.place("0,1", card_id=CARDS[0])
    answer = call(sim_hub, {"layout": {"cells": {"0,2": CARDS[1], "1,0": CARDS[2]},
                                       "stacks": [[CARDS[0]]], "pile": []}, "pawns": None})
    assert answer == {"moved": 3}
    lying = {sim.layout.place(r).cell_key: sim.card_at(uid) for r, uid in sim.truth().items()}
    assert lying == {"0,2": CARDS[1], "1,0": CARDS[2]}  # the old card went to its cauldron


@pytest.mark.parametrize(("args", "why"), [
    ({"layout": "everything"}, "layout 'everything': Input should be a valid dictionary"),
    ({"layout": None, "pawns": [1, 2, 3, 4, 5]}, "pawns .*at most 4 items"),
    ({"layout": {"cells": {"0,1": "no-such-card"}}}, "unknown card ids"),
])
def test_a_bad_layout_is_refused_naming_the_problem(sim_hub: Hub, args: dict[str, Any],
                                                    why: str) -> None:
    with pytest.raises(CommandRefused, match=why):
        call(sim_hub, args)


class _Readers(ReaderBackend):
    """A back-end of real readers: it reads, it cannot move cards."""

    name = "readers"

    def poll(self) -> Any:
        raise AssertionError("not polled here")

    def state(self) -> dict[int, str | None]:
        return {}

    def health(self) -> dict[int, Any]:
        return {}

    def seed_state(self, state: Any) -> None:
        pass


def test_a_table_of_real_readers_refuses_to_lay_itself_out(tmp_path: Path) -> None:
    hub = _hub(tmp_path, _Readers(Layout()))
    try:
        assert hub.snapshot().capabilities == []
        with pytest.raises(CommandRefused, match="cannot lay a table out") as exc:
            call(hub, {"layout": {"cells": {}}, "pawns": None})
        assert exc.value.code == "cannot_lay_out"
    finally:
        hub.outbox.close()

"""A whole Quacks game through a real broker and the real engine service: ``new_game`` with
``game=quacks``, bots deciding from their seat's topic only, seat 0's draws tapped on its
pad by the hub (the chip a person drew from that bag), the others' through the virtual bag
(``cmd/play`` draw), choices and the shop; the engine restarted mid-game resumes the table
from its log. On the wire: no public payload holds a bag's contents, a hand or a seat's
moves, and each seat's view goes to its own topic only."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hidden import keys_of
from hub_events import signed
from test_service_mqtt import Watcher, _publish
from test_service_quacks import SECRET_KEYS

from engine.app.demo.moves import move_of
from engine.games import get
from engine.games.quacks.bots.policies import make_bot
from engine.games.quacks.rules import Draw, action_from_wire, to_wire
from engine.games.quacks.table import QuacksInterpreter
from engine.service.service import EngineService, ServiceConfig
from engine.wire.contract import CommandResponse, HubEvent, parse_payload

PLAYERS = 3


class LastWatcher(Watcher):
    """A `Watcher` that keeps each topic's last payload too (a whole game is thousands of
    messages: looking one up must not parse them all)."""

    def __init__(self, url: str, table: str) -> None:
        self.last: dict[str, bytes] = {}
        super().__init__(url, table)

    def _raw(self, topic: str, payload: bytes) -> None:
        with self.lock:
            self.raw.append((topic, payload))
            self.last[topic] = payload


class Table:
    """The engine (restartable on its data dir) and a watcher of the table's topics."""

    def __init__(self, url: str, folder: Path, table: str) -> None:
        self.url, self.folder, self.table = url, folder, table
        self.engine = self._start()
        self.watcher = LastWatcher(url, table)
        self.seq = 0

    def _start(self) -> EngineService:
        return EngineService(ServiceConfig(mqtt=self.url, data_dir=self.folder,
                                           tables=frozenset({self.table}),
                                           name=f"eng-{uuid.uuid4().hex[:8]}")).start(wait=10)

    def restart(self) -> None:
        self.engine.stop()
        self.engine = self._start()

    def request(self, verb: str, args: dict[str, Any]) -> CommandResponse:
        return self.watcher.client.request(self.watcher.topics.cmd(verb), args, timeout=10)

    def command(self, verb: str, args: dict[str, Any]) -> dict[str, Any]:
        reply = self.request(verb, args)
        assert reply.status == "ok" and isinstance(reply.data, dict), (verb, args, reply)
        return dict(reply.data)

    def seat_payloads(self) -> list[bytes]:
        """Each seat's last view as received (waits for the first of each)."""
        topics = [self.watcher.topics.prefix + f"game/seat/{s}" for s in range(PLAYERS)]
        self.watcher.wait_for(lambda: all(t in self.watcher.last for t in topics))
        with self.watcher.lock:
            return [self.watcher.last[t] for t in topics]

    def tap(self, seat: int, chip: str) -> None:
        """A chip laid on seat's draw pad, as its hub reports it (signed)."""
        self.seq += 1
        event = HubEvent(hub_id="hub-quacks", epoch="e1", seq=self.seq, ts=1000.0 + self.seq,
                         kind="pad", action="placed", uid=f"04{self.seq:012X}", card_id=chip,
                         seat=seat)
        _publish(self.watcher, self.watcher.topics.hub_event, signed(event, self.table))

    def latest(self, suffix: str) -> dict[str, Any]:
        with self.watcher.lock:
            payload = self.watcher.last[self.watcher.topics.prefix + suffix]
        data: dict[str, Any] = json.loads(payload)
        return data

    def seen(self, suffix: str) -> bool:
        with self.watcher.lock:
            return self.watcher.topics.prefix + suffix in self.watcher.last

    def inputs(self) -> int:
        table = self.latest("game/public")["view"]["table"]
        return int(table["inputs"])


@pytest.fixture
def quacks_table(mqtt_broker: str, tmp_path: Path, table_id: str) -> Iterator[Table]:
    table = Table(mqtt_broker, tmp_path, table_id)
    yield table
    table.watcher.client.stop()
    table.engine.stop()


def a_chip_in_the_bag(table: Table, seat: int, rng: random.Random) -> str:
    """What a person drawing blind from seat's bag holds: any chip of that bag (the test
    plays the person, who holds the physical chips)."""
    interp = table.engine.tables[table.table].interp
    assert isinstance(interp, QuacksInterpreter) and interp.game is not None
    game = interp.game
    mine = [c for c in get("quacks").catalogue.pieces if game.where(c) == f"bag:{seat}"]
    return rng.choice(mine)


def play(table: Table, rng: random.Random, limit: int) -> int:
    """Bots move from their seat's topic until the game is over (or `limit` moves). A
    seat's view may lag the public one it follows on the wire: a move refused as not fitting
    the moment (or nobody with a move) waits for a newer view, then decides again."""
    bots = [make_bot("push" if s % 2 else "greedy") for s in range(PLAYERS)]
    moves = 0
    while moves < limit:
        if table.latest("game/public")["view"]["table"]["status"] != "playing":
            return moves
        views = table.seat_payloads()
        moved = False
        for seat in range(PLAYERS):
            view = json.loads(views[seat])["view"]
            if not view["options"]:
                continue
            choice = bots[seat].choose(view, [action_from_wire(o) for o in view["options"]],
                                       rng)
            before = table.inputs()
            if seat == 0 and isinstance(choice, Draw):  # a real chip on the pad
                table.tap(0, a_chip_in_the_bag(table, 0, rng))
            else:
                verb, args = move_of(to_wire(choice))
                reply = table.request("play", {"seat": seat, "verb": verb, "args": args})
                if reply.status != "ok":  # decided on a view since superseded
                    assert reply.code == "illegal", reply
                    break
            table.watcher.wait_for(lambda: table.inputs() > before)  # noqa: B023 - waited here
            moves += 1
            moved = True
        if not moved:  # every view was stale: wait for one to change
            table.watcher.wait_for(lambda: table.seat_payloads() != views  # noqa: B023
                                   or table.latest("game/public")["view"]["table"]["status"]
                                   != "playing", timeout=10)
    return moves


def test_a_whole_quacks_game_by_bots_through_the_broker_and_a_restart(
        quacks_table: Table) -> None:
    table = quacks_table
    rng = random.Random(7)
    data = table.command("new_game", {"game": "quacks", "players": PLAYERS})
    assert data["status"] == "playing"
    table.watcher.wait_for(lambda: table.seen("game/public"))
    assert table.latest("game/public")["game"] == "quacks"
    play(table, rng, limit=80)
    said = json.dumps(table.latest("game/public")["view"], sort_keys=True)

    table.restart()  # the engine comes back from its log, to the same table
    table.watcher.wait_for(lambda: json.dumps(table.latest("game/public")["view"],
                                              sort_keys=True) == said
                           and table.latest("engine/state")["state"] == "online")
    play(table, rng, limit=20_000)
    public = table.latest("game/public")
    assert public["view"]["table"]["status"] == "over"
    assert public["view"]["winners"]

    for topic, payload in table.watcher.raw:
        data = json.loads(payload)
        parse_payload(topic, payload)  # each payload is what its model says (Quacks' views)
        if topic.endswith("/game/public"):
            assert not keys_of(data["view"]) & SECRET_KEYS, data
        elif "/game/seat/" in topic:
            assert data["view"]["me"] == data["seat"] == int(topic.rsplit("/", 1)[1])
        elif topic.endswith("/game/events"):
            assert data["game"] == "quacks"
            assert not any(e.get("private") for e in data["events"])
    taps = [json.loads(p) for t, p in table.watcher.raw if t.endswith("/game/events")
            and any(a["type"] == "draw" and a["seat"] == 0 for a in json.loads(p)["actions"])]
    assert taps, "seat 0's pad taps drew chips"

"""A Quacks table served by the engine service (issue 22's seam, issue 23's game): a game
chosen at ``new_game``, the phone's moves through ``cmd/play``, pad taps from the hub, the
host's undo, views on the wire, and a restart that resumes the table from its log. (The same
through a real broker: test_service_quacks_e2e.py.)"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hidden import keys_of

from engine.app.demo.moves import move_of
from engine.games import get
from engine.games.base import Refused, final_scores
from engine.games.quacks.bots.policies import make_bot
from engine.games.quacks.rules import action_from_wire, to_wire
from engine.games.quacks.rules.catalogue import kind_of
from engine.games.quacks.scoring import QuacksScores
from engine.games.quacks.table import QuacksInterpreter
from engine.service.service import EngineService, ServiceConfig
from engine.wire.api import HintAnswer, HistoryAnswer
from engine.wire.contract import (
    GameEvents,
    GamePublicBase,
    GameSeatBase,
    HubEvent,
    Topics,
    parse_payload,
    public_model,
    seat_model,
)

TABLE = "t1"
# What no public view may hold: a bag's contents (in draw order or not, beyond counts), a
# seat's hand, its legal moves, the fortune deck or the game's random state.
SECRET_KEYS = frozenset({"bag", "hand", "deck", "rng", "options", "start_deck"})


class Wire:
    """What the service published, by topic (the last payload, and every one)."""

    def __init__(self) -> None:
        self.last: dict[str, dict[str, Any]] = {}
        self.all: list[tuple[str, dict[str, Any]]] = []
        self.raw: list[tuple[str, bytes]] = []

    def record(self, topic: str, payload: bytes | Any, **_: Any) -> int:
        raw = payload if isinstance(payload, bytes) else payload.model_dump_json().encode()
        data = json.loads(raw)
        self.last[topic] = data
        self.all.append((topic, data))
        self.raw.append((topic, raw))
        return 0


def _service(folder: Path) -> tuple[EngineService, Wire]:
    service = EngineService(ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=folder,
                                          name="quacks-test", hub_io=False))
    wire = Wire()
    service.client.publish_raw = wire.record  # type: ignore[method-assign]
    service.client.publish = wire.record  # type: ignore[method-assign,assignment]
    return service, wire


def bot_turns(service: EngineService, wire: Wire, seats: int, rng: random.Random,
              limit: int, until: Callable[[], bool] = lambda: False) -> int:
    """Bots play from what their seat's topic says (its view and moves) until the game is
    over, `until()` holds, or `limit` moves were made; the number of moves."""
    topics = Topics(TABLE)
    bots = [make_bot("push" if s % 2 else "greedy") for s in range(seats)]
    moves = 0
    while moves < limit:
        if wire.last[topics.game_public]["view"]["table"]["status"] != "playing":
            return moves
        moved = False
        for seat in range(seats):
            if until():
                return moves
            view = wire.last[topics.game_seat(seat)]["view"]
            if not view["options"]:
                continue
            legal = [action_from_wire(o) for o in view["options"]]
            choice = bots[seat].choose(view, legal, rng)
            verb, args = move_of(to_wire(choice))
            service.command(TABLE, "play", {"seat": seat, "verb": verb, "args": args})
            moves += 1
            moved = True
        assert moved, "nobody has a move, yet the game is not over"
    return moves


def test_a_quacks_game_is_chosen_at_new_game_and_played_through_the_service(
        tmp_path: Path) -> None:
    service, wire = _service(tmp_path)
    topics = Topics(TABLE)
    answer = service.command(TABLE, "new_game", {"game": "quacks", "players": 2})
    assert answer["status"] == "playing"
    public = wire.last[topics.game_public]
    assert public["game"] == "quacks" and public["view"]["game"] == "quacks"
    moves = bot_turns(service, wire, 2, random.Random(1), limit=5000)
    public = wire.last[topics.game_public]
    assert public["view"]["table"]["status"] == "over", moves
    stored = service.tables[TABLE].store.games()[-1]
    assert stored.status == "over" and stored.result is not None
    assert stored.config["game"] == "quacks"
    # The final breakdown per round rides in the public view (`GameViews.scores`), typed,
    # and is the game's stored result.
    assert public["view"]["over"] is True
    scores = final_scores(get("quacks").views, public["view"])
    assert isinstance(scores, QuacksScores) and scores.over and scores.winners
    assert scores.model_dump(mode="json") == stored.result
    # On the wire: every view is what Quacks' own models say (the contract finds them
    # through the registry), no public payload ever held a secret, and each seat's view
    # went to its own topic only and says whose it is.
    for topic, raw in wire.raw:
        if "/game/public" in topic or "/game/seat/" in topic:
            model = parse_payload(topic, raw)
            assert isinstance(model, GamePublicBase | GameSeatBase) and model.game == "quacks"
            assert type(model) in (public_model("quacks"), seat_model("quacks"))
            spaced = json.dumps(json.loads(raw)).encode()  # another writer's spacing
            assert type(parse_payload(topic, spaced)) is type(model)
    for topic, data in wire.all:
        if topic == topics.game_public:
            assert not keys_of(data["view"]) & SECRET_KEYS, topic
        elif topic.startswith(f"cauldron/{TABLE}/game/seat/"):
            assert data["game"] == "quacks"
            assert data["view"]["me"] == data["seat"] == int(topic.rsplit("/", 1)[1])
        elif topic == topics.game_events:
            assert data["game"] == "quacks"
            assert not any(e.get("private") for e in data["events"]), data
    service.stop()


def test_a_restarted_engine_resumes_the_quacks_table(tmp_path: Path) -> None:
    service, wire = _service(tmp_path)
    topics = Topics(TABLE)
    service.command(TABLE, "new_game", {"game": "quacks", "players": 3})
    bot_turns(service, wire, 3, random.Random(2), limit=60)
    before = {t: wire.last[t] for t in (topics.game_public, *map(topics.game_seat, range(3)))}
    service.stop()

    again, wire2 = _service(tmp_path)
    again.load()
    assert again.tables[TABLE].interp.plays == "quacks"
    again._republish(again.tables[TABLE])
    for topic, data in before.items():
        now = dict(wire2.last[topic])
        assert {**now, "ts": None} == {**data, "ts": None}, topic
    bot_turns(again, wire2, 3, random.Random(3), limit=30)  # and the game goes on
    again.stop()


def test_quacks_refusals_carry_a_code_and_change_nothing(tmp_path: Path) -> None:
    service, wire = _service(tmp_path)
    with pytest.raises(Refused) as unknown:
        service.command(TABLE, "new_game", {"game": "chess"})
    assert unknown.value.code == "unknown_game"
    assert "glastonbury" in str(unknown.value) and "quacks" in str(unknown.value)
    service.command(TABLE, "new_game", {"game": "quacks", "players": 2})
    public = json.dumps(wire.last[Topics(TABLE).game_public]["view"])
    for verb, args, code in (
            ("play", {"seat": 0, "verb": "juggle"}, "unknown_move"),
            ("play", {"seat": 0, "verb": "answer", "args": {"yes": "maybe"}}, "bad_args"),
            ("play", {"seat": 0, "verb": "buy", "args": {"chips": ["white-1-01"]}}, "illegal"),
            ("keep", {"seat": 0}, "not_in_this_game"),
            ("new_game", {"game": "glastonbury", "colours": ["red", "blue"]},
             "game_in_progress"),
    ):
        with pytest.raises(Refused) as refused:
            service.command(TABLE, verb, args)
        assert refused.value.code == code, (verb, args, refused.value)
    assert json.dumps(wire.last[Topics(TABLE).game_public]["view"]) == public


def test_a_chip_tapped_on_a_pad_is_drawn_and_a_wrong_one_is_refused_on_the_table(
        tmp_path: Path) -> None:
    service, wire = _service(tmp_path)
    topics = Topics(TABLE)
    # (no fortune card: the first round's drawing starts at once)
    service.command(TABLE, "new_game", {"game": "quacks", "players": 2, "fortune_cards": False})
    interp = service.tables[TABLE].interp
    assert isinstance(interp, QuacksInterpreter) and interp.game is not None
    game = interp.game  # where each physical chip is: what the people holding them know
    chip = next(c for c in get("quacks").catalogue.pieces if game.where(c) == "bag:0")
    other = next(c for c in get("quacks").catalogue.pieces if game.where(c) == "bag:1")
    kind = chip.rsplit("-", 1)[0]
    in_bag = wire.last[topics.game_seat(0)]["view"]["bag"][kind]

    def tap(seq: int, seat: int, chip: str) -> None:
        service.receive(TABLE, HubEvent(hub_id="hub-test", epoch="e1", seq=seq,
                                        ts=1000.0 + seq, kind="pad", action="placed",
                                        uid=f"04{seq:012X}", card_id=chip, seat=seat))

    tap(1, 0, other)  # another seat's chip: refused, standing on the table
    alerts = wire.last[topics.game_public]["view"]["table"]["alerts"]
    assert [a["seat"] for a in alerts] == [0] and alerts[0]["params"]["code"]
    raised = [d for t, d in wire.all if t == topics.game_alert and d["active"]]
    assert raised and raised[-1]["seat"] == 0
    tap(2, 0, chip)  # one of its own: drawn into its pot; the alert clears
    assert wire.last[topics.game_public]["view"]["table"]["alerts"] == []
    assert wire.last[topics.game_seat(0)]["view"]["bag"].get(kind, 0) == in_bag - 1
    events = [d for t, d in wire.all if t == topics.game_events]
    assert events[-1]["actions"][0]["type"] == "draw", events[-1]
    # The host's undo takes the draw back.
    answer = service.command(TABLE, "undo", {})
    assert answer["status"] == "playing"
    assert wire.last[topics.game_seat(0)]["view"]["bag"][kind] == in_bag
    service.stop()


def test_a_quacks_seat_asks_a_hint_and_a_follower_the_history(tmp_path: Path) -> None:
    """The read-only commands through the game's interpreter: a hint from Quacks' bots
    for the asking seat, the public action stream from the game's start."""
    service, wire = _service(tmp_path)
    service.command(TABLE, "new_game", {"game": "quacks", "players": 2, "fortune_cards": False})
    hint = HintAnswer.model_validate(
        service.command(TABLE, "hint", {"level": "push", "lang": "en"}, seat=1))
    assert hint.seat == 1 and hint.action["seat"] == 1 and hint.level == "push"
    with pytest.raises(Refused) as refused:
        service.command(TABLE, "hint", {"level": "search"}, seat=1)  # Glastonbury's bot
    assert refused.value.code == "bad_args"
    service.command(TABLE, "play", {"seat": 0, "verb": "draw"})
    service.command(TABLE, "play", {"seat": 1, "verb": "draw"})
    history = HistoryAnswer.model_validate(service.command(TABLE, "history", {}))
    messages = [GameEvents.model_validate(m) for m in history.messages]
    assert messages[0].game == "quacks" and messages[0].config
    drawn = [a for m in messages for a in m.actions]
    followed = [a for t, d in wire.all if t == Topics(TABLE).game_events for a in d["actions"]]
    assert drawn == followed and [a["seat"] for a in drawn] == [0, 1]
    service.stop()


def test_Q22_a_chip_tapped_into_the_basket_shows_on_its_seat_and_the_table(
        tmp_path: Path) -> None:
    """A bought chip tapped on the pad waits in the seat's basket while a second may
    follow: the seat's phone and the big screen show it at once (the shop's views)."""
    service, wire = _service(tmp_path)
    topics = Topics(TABLE)
    service.command(TABLE, "new_game", {"game": "quacks", "players": 2,
                                        "fortune_cards": False, "seed": 11})

    def two_chips(seat: int) -> list[str]:
        options = wire.last[topics.game_seat(seat)]["view"]["options"]
        return next((o["chips"] for o in options
                     if o["type"] == "buy" and len(o["chips"]) == 2), [])

    # Seeded bag and bots: the same first shop every run.
    bot_turns(service, wire, 2, random.Random(5), limit=500,
              until=lambda: any(two_chips(s) for s in range(2)))
    seat = next(s for s in range(2) if two_chips(s))
    interp = service.tables[TABLE].interp
    assert isinstance(interp, QuacksInterpreter) and interp.game is not None
    kind = kind_of(two_chips(seat)[0])
    chip = min(c for c in get("quacks").catalogue.pieces
               if kind_of(c) == kind and interp.game.where(c) == "supply")
    service.receive(TABLE, HubEvent(hub_id="hub-test", epoch="e1", seq=1, ts=1000.0,
                                    kind="pad", action="placed", uid="04000000000001",
                                    card_id=chip, seat=seat))
    assert wire.last[topics.game_seat(seat)]["view"]["basket"] == [chip]
    assert wire.last[topics.game_public]["view"]["baskets"][str(seat)] == [chip]
    service.stop()


def test_the_host_undo_takes_a_quacks_alert_down_from_the_screens(tmp_path: Path) -> None:
    """An alert cleared by the host's undo is said on game/alert (inactive): the screens
    take it down, as they do when the seat's next tap clears it."""
    service, wire = _service(tmp_path)
    topics = Topics(TABLE)
    service.command(TABLE, "new_game", {"game": "quacks", "players": 2, "fortune_cards": False})
    interp = service.tables[TABLE].interp
    assert isinstance(interp, QuacksInterpreter) and interp.game is not None
    game = interp.game
    own = next(c for c in get("quacks").catalogue.pieces if game.where(c) == "bag:0")
    other = next(c for c in get("quacks").catalogue.pieces if game.where(c) == "bag:1")
    for seq, chip in ((1, own), (2, other)):  # a draw, then another seat's chip: refused
        service.receive(TABLE, HubEvent(hub_id="hub-test", epoch="e1", seq=seq,
                                        ts=1000.0 + seq, kind="pad", action="placed",
                                        uid=f"04{seq:012X}", card_id=chip, seat=0))
    raised = [d for t, d in wire.all if t == topics.game_alert and d["active"]]
    assert raised and raised[-1]["seat"] == 0
    service.command(TABLE, "undo", {})
    alerts = [d for t, d in wire.all if t == topics.game_alert]
    assert alerts[-1]["alert_id"] == raised[-1]["alert_id"] and not alerts[-1]["active"]
    assert wire.last[topics.game_public]["view"]["table"]["alerts"] == []
    service.stop()

"""The event-sourced log: replay rebuilds the identical game, undo is a replay without the
last action(s), and a corrupt log is refused with `InvalidLog` naming the action number."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
import rules_deals as D
from hypothesis import given
from hypothesis import strategies as st

from engine.games.glastonbury.rules import Game, GameLog, InvalidLog, Phase, Refill, Take, replay
from engine.games.glastonbury.rules.events import Event


def _played(players: int, seed: int, unknown: bool = False) -> tuple[Game, list[Game]]:
    """A finished random game and a copy of it before each action."""
    config = D.config(players)
    game = Game.new(config, random.Random(seed))
    if unknown:
        game = Game.from_deal(config, game.deal.grid, None)
    rng = random.Random(seed)
    before: list[Game] = []
    while not game.is_over():
        before.append(game.copy())
        game.apply(rng.choice(game.legal_actions()))
    return game, before


@pytest.mark.parametrize("unknown", [False, True])
def test_undo_is_a_replay_without_the_last_action(unknown: bool) -> None:
    game, before = _played(3, 12, unknown)
    log = GameLog.of(game)
    assert len(log.actions) == len(before)
    for k in (1, 2, 5, len(before) // 2, len(before)):
        undone = replay(log.without_last(k))
        assert undone == before[-k]
        assert undone.legal_actions() == before[-k].legal_actions()
    assert replay(log.without_last(10_000)) == Game(log.config, log.deal)


def test_undo_of_a_refill_returns_to_the_refill_phase() -> None:
    table = D.game(D.config(2), {"1,2": "orange-a-3"}, unknown=True)
    D.take(table, "1,2")
    refill = table.legal_actions()[3]
    table.apply(refill)
    undone = replay(GameLog.of(table).without_last())
    assert undone.phase is Phase.REFILL and undone.refill_cell == D.cell("1,2")
    assert refill in undone.legal_actions()


def test_log_wire_form() -> None:
    game, _ = _played(2, 3)
    wire = json.loads(json.dumps(GameLog.of(game).to_wire()))
    assert set(wire) == {"schema_version", "config", "deal", "actions"}
    assert wire["config"]["colours"] == ["yellow", "red"]
    assert wire["config"]["removed_colour"] == "green"
    assert len(wire["deal"]["grid"]) == 32 and "1,2" in wire["deal"]["grid"]
    assert len(wire["deal"]["pile"]) == 44
    assert wire["actions"][0] == {"type": "take", "cell": game.actions[0].to_wire()["cell"]}
    assert replay(GameLog.from_wire(wire)) == game


def test_events_have_json_wire_forms() -> None:
    game = Game.new(D.config(4), random.Random(9))
    rng = random.Random(9)
    seen: set[str] = set()
    events: list[Event] = list(game.opening_events)
    while not game.is_over():
        events += game.apply(rng.choice(game.legal_actions()))
    for event in events:
        wire = json.loads(json.dumps(event.to_wire()))
        seen.add(wire["type"])
        if "cell" in wire:
            assert isinstance(wire["cell"], str) and "," in wire["cell"]
    assert {"turn_started", "card_taken", "refilled", "game_ended"} <= seen


def _wire(seed: int = 4) -> dict[str, Any]:
    game, _ = _played(2, seed)
    return GameLog.of(game).to_wire()


def test_illegal_action_in_the_log_is_named_by_its_number() -> None:
    wire = _wire()
    wire["actions"][6] = {"type": "take", "cell": "0,0"}  # a corner card
    with pytest.raises(InvalidLog) as err:
        replay(GameLog.from_wire(wire))
    assert err.value.rule == "G3" and "action #7 (take 0,0) is illegal" in err.value.message


def test_refill_in_a_known_pile_log_is_refused() -> None:
    wire = _wire()
    wire["actions"].insert(2, {"type": "refill", "card": "orange-a-1"})
    with pytest.raises(InvalidLog) as err:
        replay(GameLog.from_wire(wire))
    assert err.value.rule == "G4" and "action #3" in err.value.message


def test_actions_after_the_end_are_refused() -> None:
    wire = _wire()
    wire["actions"].append({"type": "keep"})
    n = len(wire["actions"])
    with pytest.raises(InvalidLog) as err:
        replay(GameLog.from_wire(wire))
    assert err.value.rule == "G10a" and f"action #{n}" in err.value.message


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda w: w["actions"].__setitem__(4, {"type": "jump"}), "action #5: unknown action"),
        (lambda w: w["actions"].__setitem__(0, "take 1,2"), "action #1: an action must be"),
        (lambda w: w.__setitem__("schema_version", 99), "schema_version 99"),
        (lambda w: w.__setitem__("actions", {"0": 1}), "'actions' must be a list"),
        (lambda w: w["config"].__setitem__("colours", ["yellow"]), "bad log header"),
        (lambda w: w["config"].__setitem__("speed", 3), "unknown configuration field"),
        (lambda w: w["deal"]["grid"].pop("1,2"), "bad log header"),
        (lambda w: w["deal"].__setitem__("pile", w["deal"]["pile"][1:]), "bad deal"),
        (lambda w: w["deal"]["grid"].__setitem__("1,2", w["deal"]["grid"]["1,3"]), "twice"),
    ],
)
def test_corrupt_logs_are_refused_with_a_clear_message(mutate: Any, words: str) -> None:
    wire = _wire()
    mutate(wire)
    with pytest.raises(InvalidLog) as err:
        replay(GameLog.from_wire(wire))
    assert words in err.value.message
    assert err.value.rule.startswith("G")


@pytest.mark.parametrize("data", [None, [], "log", 3, {"schema_version": 1}])
def test_not_a_log(data: object) -> None:
    with pytest.raises(InvalidLog):
        replay(GameLog.from_wire(data))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:6]):
            out += _paths(v, (*prefix, i))
    return out


BASE = _wire(5)
PATHS = [p for p in _paths(BASE) if p]


@given(path=st.sampled_from(PATHS), value=JSON)
def test_fuzz_a_mutated_log_replays_or_is_refused_cleanly(
    path: tuple[Any, ...], value: Any
) -> None:
    wire = copy.deepcopy(BASE)
    node = wire
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        game = replay(GameLog.from_wire(wire))
    except InvalidLog as exc:
        assert exc.rule.startswith("G") and exc.message
    else:
        assert isinstance(game, Game)


def test_replay_is_deterministic_and_refuses_nothing_it_wrote() -> None:
    for seed in range(5):
        game, _ = _played(4, seed)
        first = replay(GameLog.of(game))
        second = replay(GameLog.from_wire(GameLog.of(first).to_wire()))
        assert first == second == game
        assert isinstance(game.actions[0], Take | Refill)

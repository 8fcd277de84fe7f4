"""The typed API map (engine.wire.api): one entry per verb of the contract, malformed args
refused in one place with a code (and the rule id where one applies), handler maps that
cover the verbs exactly, a result dumped with only the keys that apply, and the map
exported as JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from engine.wire import api
from engine.wire.api import (
    GAME_API,
    GESTURES,
    HUB_API,
    BadArgs,
    EnrolStatus,
    NewGameArgs,
    SeatArgs,
    SimArgs,
    TakeCard,
    api_document,
    dispatch,
    dump,
    handler_map,
    parse_args,
    parse_gesture,
    write_api_schemas,
)
from engine.wire.contract import GAME_VERBS, HUB_VERBS, Prompt


def test_one_entry_per_verb_of_the_contract() -> None:
    assert tuple(GAME_API) == GAME_VERBS
    assert tuple(HUB_API) == HUB_VERBS
    assert set(api.GAME_CHANGING_VERBS) == set(GAME_VERBS) - {"hint", "history"}


@pytest.mark.parametrize(("verb", "args", "code", "rule", "words"), [
    ("new_game", {"colours": "red"}, "bad_config", "G2", "colours 'red'"),
    ("new_game", {"colours": ["red", "blue"], "first_seat": "0"}, "bad_config", "G4",
     "first_seat '0'"),
    ("new_game", {"colours": ["red", "blue"], "recipe_cards": "x"}, "bad_config", "G11",
     "recipe_cards"),
    ("new_game", {"colours": ["red", "blue"], "shuffle": True}, "bad_config", "G2",
     "shuffle"),
    ("new_game", {"colours": ["red", "blue"], "game_id": ""}, "bad_args", "G2", "game_id"),
    ("keep", {"seat": 7}, "bad_args", None, "seat 7"),
    ("keep", {"seat": True}, "bad_args", None, "seat True"),
    ("hint", {"level": "genius"}, "bad_args", None, "level 'genius'"),
    ("undo", {"why": "host"}, "bad_args", None, "why"),
])
def test_malformed_game_args_are_refused_with_a_code(verb: str, args: dict[str, object],
                                                     code: str, rule: str | None,
                                                     words: str) -> None:
    with pytest.raises(BadArgs) as caught:
        parse_args(GAME_API, verb, args)
    assert (caught.value.code, caught.value.rule) == (code, rule)
    assert caught.value.message.startswith(f"{verb}: ") and words in caught.value.message


def test_an_unknown_verb_is_refused_with_its_code() -> None:
    with pytest.raises(BadArgs, match="unknown command 'shuffle'") as caught:
        parse_args(GAME_API, "shuffle", {})
    assert caught.value.code == "unknown_command"


def test_args_that_are_not_an_object_are_refused() -> None:
    with pytest.raises(BadArgs, match="args must be a JSON object") as caught:
        GAME_API["keep"].parse([1, 2])
    assert caught.value.code == "bad_args"


def test_new_game_args_give_the_config_as_sent() -> None:
    args = api.NEW_GAME.parse({"colours": ["red", "blue"], "recipes": True,
                               "recipe_cards": [["a", "b"], ["c", "d"]]})
    assert isinstance(args, NewGameArgs)
    assert args.config_wire() == {"colours": ["red", "blue"], "recipes": True}
    named = args.model_copy(update={"game_id": "g1"})
    assert dump(named) == {"colours": ["red", "blue"], "recipes": True,
                           "recipe_cards": [["a", "b"], ["c", "d"]], "game_id": "g1"}


@pytest.mark.parametrize(("raw", "code", "words"), [
    ({"action": "teleport"}, "sim_refused", "unknown gesture 'teleport'"),
    ({}, "sim_refused", "unknown gesture None"),
    ({"action": "slide", "seat": 9}, "sim_refused", "seat 9"),
    ({"action": "slide"}, "sim_refused", "slide needs 'seat'"),
    ({"action": "lift"}, "sim_refused", "lift needs 'where'"),
    ({"action": "lift", "where": "1,1", "owner": "mallory"}, "sim_refused", "owner 'mallory'"),
    ({"action": "place", "where": 3}, "bad_sim_args", "sim place: where 3"),
    ({"action": "pawns", "positions": [1, 2, 3, 4, 5]}, "bad_sim_args", "positions"),
    ({"action": "restore", "layout": {"cells": {"9,9": "x"}}}, "sim_refused", "layout.cells"),
])
def test_malformed_gestures_are_refused_with_a_code(raw: dict[str, object], code: str,
                                                    words: str) -> None:
    with pytest.raises(BadArgs) as caught:
        parse_gesture(raw)
    assert caught.value.code == code and words in caught.value.message, caught.value.message


def test_every_gesture_is_one_model_per_action() -> None:
    actions = [g.model_fields["action"].annotation.__args__[0]  # type: ignore[union-attr]
               for g in GESTURES]
    assert len(actions) == len(set(actions))
    assert set(api_document()["gestures"]) == set(actions)
    take = parse_gesture({"action": "take", "where": "0,1", "seat": 2, "owner": "2"})
    assert isinstance(take, TakeCard) and (take.place, take.seat_no) == ("0,1", 2)
    move = parse_gesture({"action": "pawn", "from": 3, "to": 5})
    assert dump(move)["from"] == 3  # the wire name, not the Python one


class _Echo(BaseModel):
    said: str


def test_handler_maps_cover_the_verbs_exactly_and_refuse_in_one_place() -> None:
    calls: list[tuple[str, int | None]] = []

    kept = api.GameAnswer(table="t", game_id="g", status="playing", actions=[], instructions=[],
                          undone=None, undone_codes=[], steps=[], prompt=Prompt(code="take"))

    def keep(ctx: str, args: SeatArgs) -> api.GameAnswer:
        calls.append((ctx, args.seat))
        return kept

    small = {"keep": api.KEEP}
    handlers = handler_map(small, [api.KEEP.bind(keep)])
    assert dispatch(handlers, "keep", "ctx", {"seat": 1}) == dump(kept)
    assert calls == [("ctx", 1)]
    with pytest.raises(BadArgs) as caught:
        dispatch(handlers, "keep", "ctx", {"seat": "one"})
    assert caught.value.code == "bad_args" and calls == [("ctx", 1)]  # the handler never ran
    with pytest.raises(BadArgs, match="unknown command 'end'"):
        dispatch(handlers, "end", "ctx", {})
    with pytest.raises(ValueError, match="do not match the API"):
        handler_map(GAME_API, [api.KEEP.bind(keep)])


def test_a_result_keeps_only_the_keys_that_apply() -> None:
    assert dump(EnrolStatus(active=False)) == {"active": False}
    assert dump(EnrolStatus(active=True, pad=1, next=None)) == {"active": True, "pad": 1,
                                                                "next": None}
    assert dump(api.StoredAnswer({"table": "t1", "old": 1})) == {"table": "t1", "old": 1}


def test_the_map_exports_as_json_schema(tmp_path: Path) -> None:
    paths = write_api_schemas(tmp_path / "schemas")
    names = {p.name for p in paths}
    assert {"api.json", "api-new-game-args.schema.json", "api-game-answer.schema.json",
            "api-gesture.schema.json"} <= names
    index = json.loads((tmp_path / "schemas" / "api.json").read_text())
    assert set(index["cmd"]) == set(GAME_VERBS) and set(index["hub/cmd"]) == set(HUB_VERBS)
    assert index["hub/cmd"]["sim"]["args"] == "Gesture"
    gesture = json.loads((tmp_path / "schemas" / "api-gesture.schema.json").read_text())
    assert gesture["discriminator"]["propertyName"] == "action"
    assert SimArgs.__name__ not in json.dumps(index["cmd"])

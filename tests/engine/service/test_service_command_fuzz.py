"""Fuzz: the arguments of ``cmd/<verb>`` requests (the envelope is fuzzed in
test_wire_contract.py; here what the engine makes of ``args`` and ``seat``). A command is
carried out or refused with `Refused`; a refused command changes nothing: the same public
view, seat views, inputs count and game log as before. Never another exception (which the
MQTT layer would answer as ``internal error`` with a traceback in the log)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from engine.games.base import Refused
from engine.games.glastonbury.rules import GameLog
from engine.games.glastonbury.rules.cards import PLAYER_COLOURS
from engine.games.glastonbury.table.interpreter import TableInterpreter
from engine.games.glastonbury.table.table_driver import scripted_game
from engine.service.service import EngineService, ServiceConfig

VERBS = ["new_game", "undo", "keep", "discard", "confirm", "end", "frobnicate"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10) | st.integers() | st.floats()
    | st.text(max_size=8) | st.sampled_from([*PLAYER_COLOURS, "orange", "A-orange", "g1"]),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                              max_size=3),
    max_leaves=8)
arg_keys = st.sampled_from(["colours", "first_seat", "recipes", "second_player_bonus",
                            "memory_aid", "start_positions", "removed_colour", "recipe_cards",
                            "game_id"]) | st.text(max_size=8)
args_strategy = st.dictionaries(arg_keys, json_values, max_size=5)
seats = st.none() | st.integers(-2, 5)


def snapshot(interp: TableInterpreter) -> Any:
    log = GameLog.of(interp.game).to_wire() if interp.game is not None else None
    seat_views = [interp.seat_view(s) for s in range(4)] if hasattr(interp, "seat_view") else []
    return copy.deepcopy((interp.public_view(), seat_views, interp.inputs, log))


def interpreter(stage: int, seed: int) -> TableInterpreter:
    """stage 0: no game; 1: dealing; 2+: playing, ``stage - 2`` decisions in."""
    interp = TableInterpreter("t")
    if stage == 0:
        return interp
    script = scripted_game(2 + seed % 3, seed, max_decisions=max(0, stage - 2))
    interp.command("new_game", dict(script.new_game_args))
    deal = script.deal if stage > 1 else script.deal[:5]
    for inp in deal + [i for turn in script.turns for i in turn]:
        interp.handle(inp)
    return interp


@given(stage=st.integers(0, 12), seed=st.integers(0, 5), verb=st.sampled_from(VERBS),
       args=args_strategy, seat=seats)
def test_fuzz_commands_do_their_job_or_change_nothing(stage: int, seed: int, verb: str,
                                                     args: dict[str, Any],
                                                     seat: int | None) -> None:
    interp = interpreter(stage, seed)
    before = snapshot(interp)
    try:
        interp.command(verb, args, seat=seat)
    except Refused as exc:
        assert str(exc)
        assert snapshot(interp) == before, f"{verb} {args} refused but changed the table"


@given(args=args_strategy, seat=seats)
def test_fuzz_new_game_args_through_the_service(tmp_path: Path, args: dict[str, Any],
                                                seat: int | None) -> None:
    """As the engine service runs a ``cmd/new_game`` (it names the game; the store logs it)."""
    config = ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=tmp_path / "data",
                           name="fuzz")
    service = EngineService(config)
    try:
        try:
            data = service.command("t-fuzz", "new_game", dict(args), seat=seat)
        except Refused:
            runtime = service.tables["t-fuzz"]
            assert runtime.store.games() == [] and runtime.interp.game_id is None
        else:
            assert data["status"] == "dealing"
    finally:
        for runtime in service.tables.values():
            runtime.store.close()

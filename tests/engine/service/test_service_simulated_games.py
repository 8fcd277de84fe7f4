"""Whole random games played as table gestures (table_driver -> interpreter) end exactly as
the pure engine ends them given the same decisions: 200 seeds, 2-4 players."""

from __future__ import annotations

import pytest

from engine.games.glastonbury.rules import Refill
from engine.games.glastonbury.table.interpreter import Status, TableInterpreter
from engine.games.glastonbury.table.table_driver import scripted_game, to_sim_args

SEEDS = range(200)


@pytest.mark.parametrize("chunk", range(4))
def test_random_games_through_the_table_match_the_pure_engine(chunk: int) -> None:
    for seed in SEEDS[chunk::4]:
        players = 2 + seed % 3
        script = scripted_game(players, seed, memory_aid=seed % 2 == 0)
        ref = script.reference
        assert ref is not None and ref.is_over()
        interp = TableInterpreter("sim")
        interp.command("new_game", dict(script.new_game_args))
        for inp in script.deal:
            interp.handle(inp)
        assert interp.status is Status.PLAYING
        for steps in script.turns:
            for inp in steps:
                out = interp.handle(inp)
                assert not out.raised, (seed, inp, [a.message for a in out.raised])
        game = interp.game
        assert game is not None and interp.status is Status.OVER, seed
        # Same decisions; the table's log adds the refills it observed.
        assert [a for a in game.actions if not isinstance(a, Refill)] == ref.actions, seed
        assert game.grid == ref.grid
        assert game.cauldrons == ref.cauldrons and game.spells == ref.spells
        assert game.pawns == ref.pawns and game.discarded == ref.discarded
        assert game.out_of_game == ref.out_of_game and len(game.pile) == len(ref.pile)
        assert (game.end_reason, game.last_card_seat) == (ref.end_reason, ref.last_card_seat)
        assert game.scores().to_json() == ref.scores().to_json()
        assert interp.active_alerts == []


def test_inputs_translate_to_the_hubs_sim_command() -> None:
    script = scripted_game(2, 3, max_decisions=3)
    first = script.turns[0]
    args = [to_sim_args(i) for i in first]
    assert args[0] == {"action": "remove", "where": args[0]["where"]}
    assert args[1]["action"] == "place" and args[1]["where"].startswith("pad:")
    assert all(a is None or a["action"] in ("place", "remove") for a in args)

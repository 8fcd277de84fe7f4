"""The engine's ``new_game`` (engine/service/commands.py): what the engine deals itself, and
a switch to another game reading the table's readers anew."""

from __future__ import annotations

from pathlib import Path

from glastonbury_table import deal_grid, glastonbury, hub_event

from engine.games.glastonbury.rules.board import TAKEABLE_CELLS, cell_name
from engine.games.glastonbury.table.interpreter import Status, lay
from engine.service.service import EngineService, ServiceConfig
from engine.wire.contract import HubSnapshot, ReaderSeen
from hub.backends.sim import made_up_uid

NEW_GAME = {"colours": ["yellow", "red"], "first_seat": 0}


def _service(tmp_path: Path) -> EngineService:
    # Not started: `receive`/`command` work without a broker (publishes wait in memory).
    return EngineService(ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=tmp_path,
                                       name="commands-test"))


def test_G11_the_engine_deals_the_recipes_when_the_host_gives_a_seed(tmp_path: Path) -> None:
    """A seed (the virtual deal's) is not a recipe deal: the engine still deals the
    recipes; what the command gives itself (a scripted game's recipes) stands."""
    service = _service(tmp_path)
    service.command("t1", "new_game", {**NEW_GAME, "recipes": True, "seed": 5})
    dealt = glastonbury(service.table("t1").interp).recipe_cards
    assert len(dealt) == 2 and all(len(pair) == 2 for pair in dealt)
    service.command("t1", "end", {})
    given = [list(pair) for pair in dealt]
    service.command("t1", "new_game", {**NEW_GAME, "recipes": True, "recipe_cards": given})
    assert [list(p) for p in glastonbury(service.table("t1").interp).recipe_cards] == given
    service.stop()


def test_a_switch_to_another_game_takes_the_next_snapshot_whole(tmp_path: Path) -> None:
    """The square dealt during a Quacks game is not in Quacks' observations: the new
    Glastonbury game reads it from the hub's next snapshot, even when an event came first
    (its cursor then matches the snapshot's: it was not taken as a resync)."""
    service = _service(tmp_path)
    service.command("t1", "new_game", {"game": "quacks", "players": 2, "fortune_cards": False})
    grid = deal_grid({})
    seq = 0
    for cell, card in zip(TAKEABLE_CELLS, grid, strict=True):  # Quacks reads no cell
        seq += 1
        service.receive("t1", hub_event(lay(cell, card), seq))
    service.command("t1", "end", {})
    service.command("t1", "new_game", dict(NEW_GAME))
    runtime = service.table("t1")
    assert runtime.interp.status is Status.DEALING
    seq += 1  # a reader reads its card again before the snapshot comes
    service.receive("t1", hub_event(lay(TAKEABLE_CELLS[0], grid[0]), seq))
    readers = [ReaderSeen(reader=i, cell=cell_name(cell), uid=made_up_uid(card), card_id=card)
               for i, (cell, card) in enumerate(zip(TAKEABLE_CELLS, grid, strict=True))]
    service._snapshot("t1", HubSnapshot(hub_id="hub-test", epoch="e1", last_seq=seq,
                                        ts=2000.0, backend="sim", readers=readers))
    assert runtime.interp.status is Status.PLAYING  # type: ignore[comparison-overlap]
    assert not runtime.resync_next
    service.stop()

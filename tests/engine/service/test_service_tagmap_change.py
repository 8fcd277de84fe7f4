"""A changed tag map re-reads the square (issue 19): the hub's next snapshot names the
cards lying on the grid anew, and the engine takes it, though no event came. No game starts
on cards the readers no longer know; a card just enrolled counts at once."""

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
                                       name="tagmap-test"))


def _snapshot(grid: list[str], known: dict[int, bool], last_seq: int) -> HubSnapshot:
    """What the hub's readers see, named with its tag map now (`known[i]`: card i's tag)."""
    readers = [ReaderSeen(reader=i, cell=cell_name(cell), uid=made_up_uid(card),
                          card_id=card if known.get(i, True) else None)
               for i, (cell, card) in enumerate(zip(TAKEABLE_CELLS, grid, strict=True))]
    return HubSnapshot(hub_id="hub-test", epoch="e1", last_seq=last_seq, ts=2000.0,
                       backend="sim", readers=readers)


def _lay_all(service: EngineService, grid: list[str], unknown: set[int]) -> int:
    seq = 0
    for i, (cell, card) in enumerate(zip(TAKEABLE_CELLS, grid, strict=True)):
        seq += 1
        inp = lay(cell, None, uid=made_up_uid(card)) if i in unknown else lay(cell, card)
        service.receive("t1", hub_event(inp, seq))
    return seq


def test_a_card_enrolled_while_it_lies_on_the_grid_counts_at_once(tmp_path: Path) -> None:
    service = _service(tmp_path)
    service.command("t1", "new_game", dict(NEW_GAME))
    grid = deal_grid({})
    seq = _lay_all(service, grid, unknown={0})
    runtime = service.table("t1")
    assert runtime.interp.status is Status.DEALING  # one cell holds a tag nobody knows
    service._snapshot("t1", _snapshot(grid, {}, seq))  # the host enrolled it meanwhile
    assert glastonbury(runtime.interp).cells[TAKEABLE_CELLS[0]] == grid[0]
    assert runtime.interp.status is Status.PLAYING  # type: ignore[comparison-overlap]


def test_no_game_starts_on_cards_the_readers_no_longer_know(tmp_path: Path) -> None:
    service = _service(tmp_path)
    grid = deal_grid({})
    seq = _lay_all(service, grid, unknown=set())
    runtime = service.table("t1")
    # The tag map is replaced (a box enrolled anew, one card not yet): the square's first
    # card is now an unknown tag for the readers.
    service._snapshot("t1", _snapshot(grid, {0: False}, seq))
    assert glastonbury(runtime.interp).cells[TAKEABLE_CELLS[0]].startswith("uid:")
    service.command("t1", "new_game", dict(NEW_GAME))
    assert runtime.interp.status is Status.DEALING


def test_a_snapshot_behind_the_events_changes_nothing(tmp_path: Path) -> None:
    """Events in flight explain a difference: only a caught-up snapshot renames."""
    service = _service(tmp_path)
    grid = deal_grid({})
    seq = _lay_all(service, grid, unknown=set())
    runtime = service.table("t1")
    service._snapshot("t1", _snapshot(grid, {0: False}, seq - 1))
    assert glastonbury(runtime.interp).cells[TAKEABLE_CELLS[0]] == grid[0]

"""Disk full, then freed: the engine says `degraded` with the reason, the table view and the
host page show it, and once space is back the engine heals by itself (no new event needed)
with nothing lost.

The disk fills through SQLite's own limit (``PRAGMA max_page_count``): the write fails with
SQLite's real "database or disk is full" (SQLITE_FULL), the error a full file system gives,
without a root-only mount, on a CI machine as on a laptop."""

from __future__ import annotations

import random
from typing import Any

from dashkit import Dash, wait_until
from hub_events import hub_event

from engine.games.glastonbury.rules import Game, GameConfig
from engine.games.glastonbury.table.interpreter import TableInterpreter
from engine.games.glastonbury.table.table_driver import (
    deal_inputs,
    inputs_for,
    next_decision,
    refill_of,
)
from engine.wire import api


def _script(seed: int, decisions: int) -> tuple[dict[str, Any], list[Any]]:
    """A 2-player game's new_game args and the inputs of its deal and first decisions."""
    rng = random.Random(seed)
    ref = Game.new(GameConfig(colours=("yellow", "red")), rng)
    args = {"colours": ["yellow", "red"], "first_seat": ref.config.first_seat}
    interp = TableInterpreter("ref")
    interp.command("new_game", {**args, "game_id": "ref"})
    inputs = deal_inputs(ref.deal.grid)
    for inp in inputs:
        interp.handle(inp)
    for _ in range(decisions):
        decision = next_decision(ref, rng)
        steps = inputs_for(interp, decision, refill_of(ref, decision))
        for inp in steps:
            interp.handle(inp)
        inputs += steps
    return args, inputs


def test_disk_full_then_freed_shows_degraded_then_heals_with_nothing_lost(
    dash: Dash, engine_service: Any, page: Any
) -> None:
    table = dash.table
    engine = engine_service
    args, inputs = _script(seed=3, decisions=10)
    engine.command(table, "new_game", dict(args))
    dealt = len(deal_inputs(Game.new(GameConfig(colours=("yellow", "red")),
                                     random.Random(3)).deal.grid))
    for seq, inp in enumerate(inputs[:dealt], start=1):
        engine.receive(table, hub_event(inp, seq))
    runtime = engine.tables[table]
    # The disk is full: the log cannot grow by a single page.
    db = runtime.store._db
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")
    for seq in range(dealt + 1, len(inputs) + 1):
        engine.receive(table, hub_event(inputs[seq - 1], seq))
    wait_until(lambda: "full" in (dash.bridge.status().engine_degraded or ""), 10,
               "the dashboard to hear the engine is degraded")
    assert engine.stats["store_failures"] >= 1
    for path in ("/?lang=en", "/host?lang=en"):
        page.goto(dash.url + path)
        banner = page.locator('[data-banner="degraded"]')
        banner.wait_for()
        assert "disk is full" in banner.inner_text() and "retrying" in banner.inner_text()
    # A command while the disk is full is refused with the reason, and changes nothing.
    reply = dash.bridge.command(api.UNDO)
    assert not reply.ok and "full" in (reply.error or "")
    # Space is freed: the engine writes what it holds by itself, on its timer.
    db.execute("PRAGMA max_page_count = 1000000")
    wait_until(lambda: dash.bridge.status().engine_degraded is None, 15, "the engine to heal")
    page.goto(dash.url + "/?lang=en")
    page.locator("#banners").wait_for(state="attached")
    assert page.locator('[data-banner="degraded"]').count() == 0
    # Nothing lost: every input is in the log, in order, and the game is the reference's.
    reference = TableInterpreter(table)
    reference.command("new_game", {**args, "game_id": runtime.interp.game_id})
    for inp in inputs:
        reference.handle(inp)
    assert runtime.interp.inputs == reference.inputs == len(inputs) + 1
    rebuilt = runtime.store.rebuild()
    assert rebuilt.public_view() == reference.public_view() == runtime.interp.public_view()
    assert dash.bridge.command(api.UNDO).ok  # and the table takes commands again

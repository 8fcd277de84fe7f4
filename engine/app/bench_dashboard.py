"""`cauldron bench dashboard`: the dashboard's benchmark (`dashboard.bench`), handed the
hub's games for its whole-path figures. They come from the table driver's scripted games,
which the dashboard may not import (the dependency rule): the composition root wires them."""

from __future__ import annotations

from collections.abc import Iterator

from dashboard import bench
from dashboard.bench import FULL_WARMUP, HUB_ID, UPDATES
from engine.benchkit import Figure, ProgressFn
from engine.service.table_driver import scripted_game
from engine.wire.contract import HubEvent


def hub_games(seed: int) -> Iterator[tuple[dict[str, object], list[HubEvent]]]:
    """Random 4-player games as one hub's events, without end: (new_game args, the 32
    deal events then up to `FULL_WARMUP` + `UPDATES` of the play's). One hub for all of
    them, its `seq` running on (an engine takes a new hub only after the host says so)."""
    seq = 0
    k = 0
    while True:
        script = scripted_game(4, seed + k, max_decisions=60)
        k += 1
        args = {key: v for key, v in script.new_game_args.items() if key != "game_id"}
        events = []
        play = [i for turn in script.turns for i in turn][:FULL_WARMUP + UPDATES]
        for inp in script.deal + play:  # only what is sent: a gap in `seq` is a loss
            seq += 1
            fields: dict[str, object] = {"hub_id": HUB_ID, "epoch": "bench", "seq": seq,
                                         "ts": 0.0}
            if inp.kind == "button":
                fields.update(kind="button", action="pressed", button=inp.button,
                              seat=inp.seat)
            elif inp.cell is not None:
                fields.update(kind="cell", action=inp.kind, uid="04AABBCCDDEEFF",
                              card_id=inp.card, cell=f"{inp.cell // 6},{inp.cell % 6}")
            else:
                fields.update(kind="pad", action=inp.kind, uid="04AABBCCDDEEFF",
                              card_id=inp.card, seat=inp.pad)
            events.append(HubEvent.model_validate(fields))
        yield args, events


def run(runs: int, progress: ProgressFn) -> list[Figure]:
    return bench.run(runs, progress, hub_games=hub_games)

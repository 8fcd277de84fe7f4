"""`cauldron bench engine-service` end to end, made small: a real broker and a real engine
process, the load generator's lean client sending the hub events and taking the views.
Not a timed test: it checks that every event sent was answered by a view and measured."""

from __future__ import annotations

import math
from typing import Any

import pytest

import engine.bench.service as bench


def test_a_small_ladder_answers_every_event(monkeypatch: pytest.MonkeyPatch) -> None:
    real = bench._in_process

    def small(scripts: Any, tables: int, events: int, store: str | None = None,
              batch: int = 1) -> dict[str, float]:
        return real(scripts, 4, 5, store, batch)

    monkeypatch.setattr(bench, "LEVELS", (4,))
    monkeypatch.setattr(bench, "WINDOW_S", 1.5)
    monkeypatch.setattr(bench, "_in_process", small)
    figures = {f.name: f for f in bench.run(1, lambda *_: None)}
    latency = figures["event latency p50 at 100 tables (hub->public)"]
    levels = latency.detail["levels"]
    assert [level["tables"] for level in levels] == [4]
    level = levels[0]
    assert level["sent"] >= 4 * 10  # 10 events/s per table for 1.5 s
    assert level["lost"] == 0, "every event answered by a view"
    assert math.isfinite(level["p50_ms"]) and math.isfinite(level["p99_ms"])
    assert level["engine_cpu_ms_per_event"] > 0
    assert figures["engine alone, 10 per group commit: CPU per event"].median > 0
    assert latency.detail["load_average_1min"]["start"] >= 0

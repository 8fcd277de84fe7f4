"""The demo stack a test runs (broker, hub, engine, dashboard and bots, in-process): started
with the tests' defaults, and stopped however the test ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.app.demo.stack import DemoOptions, DemoStack

# No pace (the bots move at once), two players, and an ended game shown for 30 s.
DEFAULTS: dict[str, Any] = {"port": 0, "pace": 0, "players": 2, "linger": 30}


@contextmanager
def running_demo(data_dir: Path, say: Callable[[str], None] = lambda _: None,
                 **options: Any) -> Iterator[DemoStack]:
    stack = DemoStack(DemoOptions(**{**DEFAULTS, **options, "data_dir": data_dir}), say=say)
    try:
        yield stack.start()
    finally:
        stack.stop()

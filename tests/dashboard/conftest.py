"""Fixtures for the dashboard tests (helpers in dashkit.py).

- ``dash``: the dashboard served by uvicorn on a free port (a background thread), following
  a fresh table on the session broker; ``dash.publish_game(game)`` etc. publish real rules
  engine views over the real broker, as the engine service does.
- ``dash_app``: the same, not served (for FastAPI's TestClient).
- ``table_stack``: a served dashboard plus the real engine service and a real hub on the
  simulated table (in-process, same broker) for whole games through the virtual table.
- ``engine_service``: the real engine service (in-process) on the table, without a hub: tests feed
  it hub events themselves (``dashkit.drive_engine``).
- ``browser`` / ``page``: headless system Chromium through Playwright (skipped when it is
  missing, except with CI=true where a missing Chromium fails).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashkit import Dash, Stack, make_dash, wait_until


@pytest.fixture
def dash(mqtt_broker: str, table_id: str, tmp_path: Path) -> Iterator[Dash]:
    """A served dashboard (uvicorn thread) on a fresh table."""
    yield from make_dash(mqtt_broker, table_id, tmp_path, serve=True)


@pytest.fixture
def dash_app(mqtt_broker: str, table_id: str, tmp_path: Path) -> Iterator[Dash]:
    """A dashboard not yet served: for FastAPI's TestClient."""
    yield from make_dash(mqtt_broker, table_id, tmp_path, serve=False)


@pytest.fixture
def engine_service(mqtt_broker: str, table_id: str, tmp_path: Path) -> Iterator[Any]:
    """The real engine service for the table (in-process, no hub)."""
    from engine.service.service import EngineService, ServiceConfig

    service = EngineService(ServiceConfig(
        mqtt=mqtt_broker, data_dir=tmp_path / "engine", tables=frozenset({table_id}),
        name=f"engine-{table_id}",
    ))
    service.start(wait=10)
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture
def table_stack(mqtt_broker: str, table_id: str, tmp_path: Path) -> Iterator[Stack]:
    """Dashboard + the real engine service (in-process) + `cauldron hub --backend sim` (a
    subprocess, as deployed: its polling loop does not compete for this process's GIL)."""
    yield from _table_stack(mqtt_broker, table_id, tmp_path)


@pytest.fixture
def pawn_table_stack(mqtt_broker: str, table_id: str, tmp_path: Path) -> Iterator[Stack]:
    """`table_stack` on a simulated table with pawn sensors (hub config ``perimeter``)."""
    config = tmp_path / "hub.toml"
    config.write_text("perimeter = true\n")
    yield from _table_stack(mqtt_broker, table_id, tmp_path, ["--config", str(config)])


def _table_stack(mqtt_broker: str, table_id: str, tmp_path: Path,
                 hub_args: list[str] | None = None) -> Iterator[Stack]:
    import signal
    import subprocess
    import sys

    from engine.service.service import EngineService, ServiceConfig

    engine = EngineService(ServiceConfig(
        mqtt=mqtt_broker, data_dir=tmp_path / "engine", tables=frozenset({table_id}),
        name=f"engine-{table_id}",
    ))
    engine.start(wait=10)
    hub_log = (tmp_path / "hub.log").open("w")
    hub = subprocess.Popen(
        [str(Path(sys.executable).parent / "cauldron"), "hub", "--backend", "sim",
         "--table", table_id, "--data-dir", str(tmp_path / "hub"), "--mqtt", mqtt_broker, "-q",
         *(hub_args or [])],
        stdout=subprocess.DEVNULL, stderr=hub_log, cwd=Path(__file__).resolve().parents[2],
    )
    gen = make_dash(mqtt_broker, table_id, tmp_path, serve=True)
    dash = next(gen)
    try:
        # A Python process starting (imports, the broker, 32 readers) on a loaded 2-core
        # machine: it took over 15 s under a load average of 25.
        wait_until(lambda: dash.bridge.status().hub_backend == "sim" or hub.poll() is not None,
                   90, "the hub snapshot")
        assert hub.poll() is None, (tmp_path / "hub.log").read_text()
        yield Stack(dash=dash, engine=engine, hub=hub)
    finally:
        next(gen, None)  # stops the dashboard
        hub.send_signal(signal.SIGINT)
        try:
            hub.wait(10)
        except subprocess.TimeoutExpired:
            hub.kill()
            hub.wait(5)
        hub_log.close()
        engine.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1600, "height": 1000}, locale="fr-FR")
    pg = context.new_page()
    pg.set_default_timeout(8000)
    try:
        yield pg
    finally:
        context.close()

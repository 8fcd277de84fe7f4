"""Shared pytest fixtures for every package's tests.

MQTT brokers (real ones: Mosquitto when installed, else the embedded amqtt broker; both on
127.0.0.1 only, anonymous, no persistence; see `engine.wire.broker.LocalBroker`):

- ``mqtt_broker`` (session scope) -> ``str``: the URL of a broker shared by the whole run,
  e.g. ``"mqtt://127.0.0.1:41234"``. Never stop it; use a unique table id per test
  (``table_id``) so tests do not see each other's (retained) messages.
- ``restartable_broker`` (function scope) -> `LocalBroker`: a private broker for outage
  tests; ``.url``, ``.port``, ``.kind``, ``.stop()``, ``.start()``, ``.restart()`` (same
  port, retained messages and sessions are lost as with a real restart without persistence).
- ``broker_kind`` (session) -> ``"mosquitto"`` or ``"amqtt"``: which one is used. Set
  ``CAULDRON_TEST_BROKER=amqtt`` to force the embedded broker.
- ``table_id`` (function) -> ``str``: a fresh table id such as ``"t-3f9a1c"``.

PostgreSQL (real; `tests/pg_cluster.py`: a throw-away cluster, or ``CAULDRON_TEST_PG``):

- ``pg_url`` (function) -> ``str``: a fresh empty database's URL, dropped afterwards.
- ``own_pg_cluster`` (function) -> `Cluster`: a throw-away cluster for one test, which may
  ``crash()`` and ``resume()`` it; ``database()`` gives a URL.
- ``store_url`` (function, parametrized ``sqlite`` / ``postgresql``) -> ``str``: a store for
  `engine.service.store.open_store`; tests using it run on both back-ends.

Options and markers:

- ``--soak``: run tests marked ``@pytest.mark.soak`` (skipped otherwise).

Hypothesis profiles (one knob for every property test; no test hard-codes its count):

- ``ci`` (chosen when ``CI`` is set, as in `bash .ci/run`): 100 examples, derandomized
  (the same examples every run: CI never flakes on a new random draw), no deadline.
- ``dev`` (otherwise): 25 random examples, no deadline: quick while working.
- ``HYPOTHESIS_PROFILE=ci|dev`` chooses one explicitly. A test whose example is a whole
  game takes a quarter: ``settings(max_examples=max(5, settings().max_examples // 4))``.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
from hypothesis import HealthCheck, settings

# Test folders mirror the packages (tests/engine/...) and have no __init__.py, so pytest's
# rootdir insertion could make `engine` resolve to tests/engine; the checkout comes first.
_ROOT = str(Path(__file__).resolve().parents[1])
if sys.path[0] != _ROOT:
    sys.path.insert(0, _ROOT)

from browser import launched  # noqa: E402

from engine.wire.broker import (  # noqa: E402
    BrokerKind,
    BrokerStartError,
    LocalBroker,
    find_mosquitto,
)

# A suite started in the background by a script (`cmd &` without job control) inherits SIGINT
# ignored, and so would every hub, engine and demo it starts: their Ctrl-C tests would hang.
# Python's own handler here makes the children start with SIGINT at its default again.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Each run (each xdist worker) has its own data home: no test writes to the real one, and
# workers never share a table log, a key file or a saved table. Subprocesses inherit it.
_DATA_HOME = tempfile.mkdtemp(
    prefix=f"cauldron-test-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-")
os.environ["XDG_DATA_HOME"] = _DATA_HOME


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_DATA_HOME, ignore_errors=True)


# No deadline: a busy 2-core machine (CI, 8 engineers) makes timings meaningless here.
_HYPOTHESIS = settings(deadline=None, print_blob=True,
                       suppress_health_check=[HealthCheck.function_scoped_fixture,
                                              HealthCheck.too_slow])
settings.register_profile("ci", _HYPOTHESIS, max_examples=100, derandomize=True)
settings.register_profile("dev", _HYPOTHESIS, max_examples=25)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI") else "dev"))

# The tables' hub and command keys (engine.wire.auth): one private folder per test run, so
# the hubs, engines and dashboards a test starts (in-process or as subprocesses) share them.
if not os.environ.get("CAULDRON_KEYS_DIR"):
    import tempfile

    os.environ["CAULDRON_KEYS_DIR"] = tempfile.mkdtemp(prefix="cauldron-test-keys-")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--soak", action="store_true", default=False, help="run soak tests too")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--soak"):
        return
    skip = pytest.mark.skip(reason="soak test: run with --soak")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def broker_kind() -> BrokerKind:
    forced = os.environ.get("CAULDRON_TEST_BROKER")
    if forced in ("mosquitto", "amqtt"):
        return cast(BrokerKind, forced)
    return "mosquitto" if find_mosquitto() else "amqtt"


def started_broker(kind: BrokerKind) -> LocalBroker:
    """A broker on a free port; another port when that one was taken meanwhile (xdist
    workers pick free ports at the same moment)."""
    for attempt in range(3):
        broker = LocalBroker(kind=kind)
        try:
            return broker.start()
        except BrokerStartError:
            broker.close()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def mqtt_broker(broker_kind: BrokerKind) -> Iterator[str]:
    broker = started_broker(broker_kind)
    try:
        yield broker.url
    finally:
        broker.close()


@pytest.fixture
def restartable_broker(broker_kind: BrokerKind) -> Iterator[LocalBroker]:
    broker = started_broker(broker_kind)
    try:
        yield broker
    finally:
        broker.close()


@pytest.fixture
def table_id() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def _cluster() -> Iterator[object]:
    """A started throw-away PostgreSQL cluster, stopped afterwards (skipped when PostgreSQL
    is not installed, except on CI)."""
    from pg_cluster import Cluster, NoPostgres

    cluster = Cluster()
    try:
        cluster.start()
    except NoPostgres as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[object]:
    yield from _cluster()


@pytest.fixture
def own_pg_cluster() -> Iterator[object]:
    """A cluster of the test's own, to crash (`crash()`) and restart (`resume()`)."""
    if os.environ.get("CAULDRON_TEST_PG"):
        pytest.skip("needs a throw-away cluster to crash, not the CAULDRON_TEST_PG server")
    yield from _cluster()


@pytest.fixture
def pg_url(pg_cluster: object) -> Iterator[str]:
    from pg_cluster import Cluster

    assert isinstance(pg_cluster, Cluster)
    url = pg_cluster.database()
    try:
        yield url
    finally:
        pg_cluster.drop(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store")
    return cast(str, request.getfixturevalue("pg_url"))


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Chromium, one per test process (`tests/browser.py`)."""
    yield from launched()

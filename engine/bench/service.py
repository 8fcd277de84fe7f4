"""`cauldron bench engine-service`: event-handling latency and tables per engine process.

A real broker on 127.0.0.1 (Mosquitto on a free port, or the embedded amqtt broker) and a
real `cauldron engine` process (its own data dir in a temporary folder). A load generator
plays N tables at once: each table gets ``new_game``, its 32-card deal, then the gestures of
a random game paced at 10 events/s (hub events, QoS 1, as a hub sends them). Latency is
measured end to end: from publishing a hub event to receiving the ``game/public`` that
reflects it (the view's ``table.inputs`` count), so it includes two broker hops; it is
sampled on every 4th table (all tables get the load). The load generator shares the
machine with the engine, so it is cheap measuring equipment: the measured events and the
views go through a lean MQTT client (`engine.bench.rawmqtt`, ~0.1 ms of CPU an event),
only the set-up through the product's `WireClient`. "Engine alone" figures feed
the same events straight into `EngineService.receive` (no MQTT): the engine's own cost,
one event at a time and 10 at a time (one group commit each, as the dispatcher hands over
what is queued). A view counting N inputs answers every event up to N (the engine
publishes a table's views once per batch).

The ladder of table counts (25 … 300, new tables each level; earlier tables stay open)
stops when the engine saturates (over 10 % of the events unanswered after the window);
"tables sustained" is the largest level with p99 <= 50 ms and no event unanswered, searched
between the ladder's levels (halving the gap between the largest level that held and the
next that did not) to 10 tables: up to 100 tables first, the levels above only once 100
held (a saturated level's backlog would spoil whatever is measured after it). Bounded:
< 3 min. Other load on the machine shows in the figures: run it on a quiet one. The load
generator's client takes every view (no QoS 0 flood guard): a dropped view would count its
events as answered by the next one.

``--store postgresql://…`` measures the same with the games kept in PostgreSQL: the bench
makes a scratch database on that server (dropped afterwards; or, without the right to
create one, uses the given database under fresh table ids), the engine process claims the
ladder's tables through the venue's table list, as at a venue. Without it: SQLite.
"""

from __future__ import annotations

import heapq
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from engine.bench.kit import Figure, ProgressFn, percentile, stop_process
from engine.bench.rawmqtt import RawMqtt
from engine.wire import api
from engine.wire.api import dump
from engine.wire.auth import ensure_key, sign_command, sign_hub
from engine.wire.broker import LocalBroker
from engine.wire.contract import CommandRequest, HubEvent, Topics, encode

EVENTS_PER_SECOND = 10.0
WINDOW_S = 6.0
LEVELS = (25, 50, 100, 150, 200, 300)
SEARCH_STEP = 10  # "tables sustained" is searched between the ladder's levels to this
BUDGET_S = 150.0
GOAL_P99_MS = 50.0
SAMPLE_EVERY = 4  # latency is measured on every 4th table (all tables get the load)
GROUP = 10  # "engine alone", grouped: events handed over together, as the dispatcher does
_INPUTS = re.compile(rb'"inputs":(\d+)')


class _Recorder:
    """Receives every table's game/public; matches them to the events sent. A view counting
    ``inputs`` answers every event sent up to that count (the engine publishes a table's
    view once per batch of its events: the last state)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent: dict[str, dict[int, float]] = {}  # table -> inputs awaited -> sent at
        self.latencies: list[float] = []
        self.seen: dict[str, int] = {}

    def expect(self, table: str, inputs: int) -> None:
        with self.lock:
            self.sent.setdefault(table, {})[inputs] = time.perf_counter()

    def waiting(self) -> int:
        return sum(len(v) for v in self.sent.values())

    def on_public(self, topic: str, payload: bytes) -> None:
        now = time.perf_counter()
        at = payload.rfind(b'"inputs":')  # the table block comes last
        found = _INPUTS.match(payload, at) if at >= 0 else None
        if found is None:
            return
        table = topic.split("/")[1]
        inputs = int(found.group(1))
        with self.lock:
            self.seen[table] = max(self.seen.get(table, 0), inputs)
            awaited = self.sent.get(table)
            if awaited:
                for count in [c for c in awaited if c <= inputs]:
                    self.latencies.append(now - awaited.pop(count))


def _scripts(count: int, seed: int) -> list[tuple[dict[str, object], list[bytes]]]:
    from engine.games.glastonbury.table.table_driver import scripted_game
    from engine.wire.contract import HubEvent

    scripts = []
    for k in range(count):
        script = scripted_game(4, seed + k, max_decisions=60)
        args = {key: v for key, v in script.new_game_args.items() if key != "game_id"}
        inputs = script.deal + [i for turn in script.turns for i in turn]
        payloads = []
        for seq, inp in enumerate(inputs, start=1):
            fields: dict[str, object] = {"hub_id": f"bench-{k}", "epoch": "bench", "seq": seq,
                                         "ts": 0.0}
            if inp.kind == "button":
                fields.update(kind="button", action="pressed", button=inp.button,
                              seat=inp.seat)
            else:
                where: dict[str, object] = (
                    {"cell": f"{inp.cell // 6},{inp.cell % 6}"} if inp.cell is not None
                    else {"seat": inp.pad})
                kind = "cell" if inp.cell is not None else "pad"
                fields.update(kind=kind, action=inp.kind, uid="04AABBCCDDEEFF",
                              card_id=inp.card, **where)
            payloads.append(encode(HubEvent.model_validate(fields)))
        scripts.append((args, payloads))
    return scripts


def _signed(table: str, payloads: list[bytes], keys: Path) -> list[HubEvent]:
    """The events of a script as the table's hub signs them (engine.wire.auth)."""
    events = [HubEvent.model_validate_json(p) for p in payloads]
    if not events:
        return events
    key = ensure_key(keys, table, "hub", events[0].hub_id).key
    signed = [sign_hub(e, table, key) for e in events]
    return [e for e in signed if isinstance(e, HubEvent)]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    import os

    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _level(client: object, load: RawMqtt, recorder: _Recorder, tables: int, prefix: str,
           raw_scripts: list[tuple[dict[str, object], list[bytes]]], pid: int,
           set_up_by: float) -> dict[str, float]:
    """One level: set up through `client` (a `WireClient`: the signed new game, the deal),
    then the measured load through `load` (the lean client: its CPU is the engine's loss)."""
    from engine.wire.mqtt import WireClient

    assert isinstance(client, WireClient) and client.keys is not None
    names = [f"{prefix}-{k}" for k in range(tables)]
    # Signed as each table's hub would (set-up, not measured).
    scripts = [(args, [encode(e) for e in _signed(name, payloads, client.keys)])
               for name, (args, payloads) in zip(names, raw_scripts, strict=False)]
    sampled = set(names[::SAMPLE_EVERY])
    for name in sorted(sampled):  # watching every table would load the machine measured
        load.subscribe(Topics(name).game_public, recorder.on_public)
    # Set-up, not measured: new game and the deal for every table.
    for name, (args, payloads) in zip(names, scripts, strict=False):
        topics = Topics(name)
        request = sign_command(
            CommandRequest(transaction=uuid.uuid4().hex, args=dump(api.NEW_GAME.parse(args)),
                           deadline=time.time() + 60),
            name, "new_game", client.command_key(name))
        client.publish(topics.cmd("new_game"), request)
        for payload in payloads[:32]:
            client.publish_raw(topics.hub_event, payload)
    while time.monotonic() < set_up_by:
        with recorder.lock:
            ready = sum(1 for n in sampled if recorder.seen.get(n, 0) >= 33)
        if ready == len(sampled):
            break
        time.sleep(0.05)
    # Measured: 10 events/s per table, staggered, for WINDOW_S seconds.
    start = time.perf_counter() + 0.2
    queue = [(start + k / (EVENTS_PER_SECOND * tables), k, 32) for k in range(tables)]
    heapq.heapify(queue)
    hub_topics = [Topics(name).hub_event for name in names]
    end = start + WINDOW_S
    sent = 0
    cpu_before = _cpu_seconds(pid)
    while queue:
        when, k, index = heapq.heappop(queue)
        if when >= end:
            break
        delay = when - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        name = names[k]
        payloads = scripts[k][1]
        if index >= len(payloads):
            continue
        if name in sampled:
            recorder.expect(name, index + 2)  # +1 command, +1 this
        load.publish(hub_topics[k], payloads[index])
        sent += 1
        heapq.heappush(queue, (when + 1.0 / EVENTS_PER_SECOND, k, index + 1))
    drain_by = time.monotonic() + 3.0  # late answers count with their real latency
    while time.monotonic() < drain_by:
        with recorder.lock:
            if not recorder.waiting():
                break
        time.sleep(0.02)
    cpu = _cpu_seconds(pid) - cpu_before
    for name in sampled:
        load.unsubscribe(Topics(name).game_public)
    with recorder.lock:
        lat = sorted(recorder.latencies)
        lost = recorder.waiting()
        recorder.latencies.clear()
        recorder.sent.clear()
    if not lat:
        return {"tables": tables, "sent": sent, "lost": lost, "p50_ms": float("inf"),
                "p99_ms": float("inf"), "engine_cpu_ms_per_event": cpu * 1000 / max(sent, 1)}
    return {
        "tables": tables,
        "sent": sent,
        "lost": lost,
        "events_per_s": sent / WINDOW_S,
        "p50_ms": statistics.median(lat) * 1000,
        "p99_ms": percentile(lat, 99) * 1000,
        "engine_cpu_ms_per_event": cpu * 1000 / max(sent, 1),
    }


@contextmanager
def scratch_store(store: str | None) -> Iterator[str | None]:
    """A PostgreSQL database of its own for one bench run (None: SQLite, a temp dir each)."""
    from engine.service.store import is_postgres

    if store is None or not is_postgres(store):
        yield None
        return
    import psycopg

    name = f"cauldron_bench_{uuid.uuid4().hex[:8]}"
    parts = urlsplit(store)
    try:
        with psycopg.connect(store, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
    except psycopg.Error as exc:
        print(f"note: cannot create a scratch database ({exc}); measuring in "
              f"{parts.path.lstrip('/') or 'the default database'} under new table ids",
              file=sys.stderr)
        yield store
        return
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(store, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


def _in_process(scripts: list[tuple[dict[str, object], list[bytes]]], tables: int,
                events_per_table: int, store: str | None = None,
                batch: int = 1) -> dict[str, float]:
    """The engine alone: hub events straight into `EngineService.receive` (dedup, rules,
    the store's write, views encoded; the MQTT client sends nothing). Per-event handling
    time; with `batch` > 1, events are handed over `batch` at a time as the dispatcher
    hands over what is queued (one group commit each), and each event's time is its
    batch's share."""
    from engine.service.service import EngineService, ServiceConfig

    with tempfile.TemporaryDirectory(prefix="cauldron-bench-inproc-") as folder:
        keys = Path(folder) / "keys"
        service = EngineService(ServiceConfig(mqtt="mqtt://127.0.0.1:1", data_dir=Path(folder),
                                              name="bench-inproc", store=store, keys=keys))
        service.client.publish_raw = lambda *a, **k: 0  # type: ignore[method-assign]
        run = uuid.uuid4().hex[:4]
        names = [f"p{run}-{k}" for k in range(tables)]
        events = [_signed(name, payloads, keys)
                  for name, (_, payloads) in zip(names, scripts[:tables], strict=False)]
        if service.store.claims:  # at a venue: served once claimed, as by a real engine
            service.store.set_venue_tables(add=names)
            service._start_ownership()
            by = time.monotonic() + 120
            while not all(service.serves(n) and n in service.tables for n in names):
                if time.monotonic() > by:
                    raise RuntimeError("the bench's engine did not claim its tables")
                time.sleep(0.05)
        for name, (args, _), evs in zip(names, scripts, events, strict=False):
            service.command(name, "new_game", dict(args))
            for event in evs[:32]:
                service.receive(name, event)
        times: list[float] = []
        clock = time.perf_counter
        cpu_before = time.thread_time()  # this thread's CPU: the machine's load aside
        queued = [(Topics(name).hub_event, evs[index])
                  for index in range(32, 32 + events_per_table)
                  for name, evs in zip(names, events, strict=True) if index < len(evs)]
        for first in range(0, len(queued), batch):
            group = queued[first:first + batch]
            start = clock()
            if batch > 1:
                service._begin_batch()
            try:
                for topic, event in group:
                    service._on_hub_event(topic, event)  # MAC check, then receive
            finally:
                if batch > 1:
                    service._end_batch()
            share = (clock() - start) / len(group)
            times.extend([share] * len(group))
        cpu = time.thread_time() - cpu_before
        if service.ownership is not None:
            service.ownership.stop()
        for runtime in service.tables.values():
            runtime.store.close()
        service.store.close()
    times.sort()
    return {
        "events": len(times),
        "p50_ms": times[len(times) // 2] * 1000,
        "p99_ms": times[int(len(times) * 0.99)] * 1000,
        "events_per_s": len(times) / sum(times),
        "cpu_ms_per_event": cpu * 1000 / max(len(times), 1),
    }


def run(runs: int, progress: ProgressFn, store: str | None = None) -> list[Figure]:
    load = os.getloadavg()[0]
    with scratch_store(store) as url:
        figures = _run(runs, progress, url)
    load_at = {"start": round(load, 2), "end": round(os.getloadavg()[0], 2)}
    for figure in figures:
        figure.detail = {**figure.detail, "store": "postgresql" if url else "sqlite",
                         "load_average_1min": load_at}
        if url:  # side by side with the SQLite figures
            figure.name = f"{figure.name} [pg]"
    return figures


def _claim(url: str, names: list[str], by: float) -> None:
    """Add `names` to the venue's tables and wait until the bench's engine serves them."""
    from engine.service.store.postgres import PostgresStore

    venue = PostgresStore(url, max_size=1)
    try:
        venue.set_venue_tables(add=names)
        wanted = set(names)
        while time.monotonic() < by:
            if wanted <= {o.table for o in venue.owners() if o.engine}:
                return
            time.sleep(0.1)
    finally:
        venue.close()


def _holds(result: dict[str, float]) -> bool:
    """A level the engine sustained: p99 within the goal, no event unanswered."""
    return result["p99_ms"] <= GOAL_P99_MS and not result["lost"]


def _settle(pid: int, by: float) -> None:
    """Until the engine process is nearly idle (under 20 % of a core over 0.5 s): what a
    saturated level queued is handled before the next level is measured."""
    while time.monotonic() < by:
        before = _cpu_seconds(pid)
        time.sleep(0.5)
        if _cpu_seconds(pid) - before < 0.1:
            return


def _wait_for_engine(client: object, by: float) -> None:
    """Until the engine process answers a command (it has started and subscribed; on a
    busy machine that takes longer than any fixed wait)."""
    from engine.wire.mqtt import RequestTimeout, WireClient

    assert isinstance(client, WireClient)
    while time.monotonic() < by:
        try:
            client.request(Topics("bench-probe").cmd("history"), {}, timeout=1.0)
            return
        except RequestTimeout:
            continue
    raise RuntimeError("the engine process did not answer within 60 s")


def _run(runs: int, progress: ProgressFn, store: str | None) -> list[Figure]:
    from engine.wire.mqtt import WireClient

    began = time.monotonic()
    progress("engine-service: preparing games", 0, 1)
    scripts = _scripts(max(LEVELS), seed=100)
    progress("engine-service: preparing games", 1, 1)
    alone = []
    grouped = []
    for r in range(max(1, min(runs, 3))):
        alone.append(_in_process(scripts, 100, 40, store))
        grouped.append(_in_process(scripts, 100, 40, store, batch=GROUP))
        progress("engine-service: engine alone", r + 1, max(1, min(runs, 3)))
    began = time.monotonic()  # the ladder's own budget (a slow store must not eat it)
    broker = LocalBroker().start()  # Mosquitto (TCP_NODELAY) when installed
    data = tempfile.TemporaryDirectory(prefix="cauldron-bench-engine-")
    keys = Path(data.name) / "keys"  # the ladder's tables' keys, shared with the engine
    where = ["--store", store] if store else ["--data-dir", str(Path(data.name))]
    engine = subprocess.Popen(
        [sys.executable, "-m", "engine.app", "engine", "--mqtt", broker.url, *where,
         "--name", f"bench-{uuid.uuid4().hex[:6]}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "CAULDRON_KEYS_DIR": str(keys)},
    )
    recorder = _Recorder()
    # Set-up and the engine's probe through the product's client; the measured load and
    # the views it answers with through the lean one (`RawMqtt`), which takes every view
    # (no flood guard: a dropped view would count its events as answered by the next).
    client = WireClient(broker.url, client_id=f"bench-setup-{uuid.uuid4().hex[:6]}",
                        keys=keys)
    load = RawMqtt(broker.url, client_id=f"bench-load-{uuid.uuid4().hex[:6]}")
    results: list[dict[str, float]] = []
    repeats: list[dict[str, float]] = []
    try:
        client.start(wait=10)
        load.connect()
        if not store:  # (at a venue, `_claim` waits for the engine to serve each level)
            _wait_for_engine(client, time.monotonic() + 60)
        # The ladder, with the extra samples at 100 tables taken before any level that
        # may saturate the engine (a backlog would spill into the next level).
        plan = [(t, False) for t in LEVELS if t <= 100]
        plan += [(100, True)] * max(0, min(runs, 3) - 1)
        plan += [(t, False) for t in LEVELS if t > 100]
        step = 0

        def measure(tables: int, repeat: bool) -> dict[str, float] | None:
            nonlocal step
            left = BUDGET_S - (time.monotonic() - began)
            if left < 15:
                return None
            step += 1
            prefix = f"b{uuid.uuid4().hex[:4]}-{step}"
            if store:  # at a venue, the engine serves the tables it has claimed
                for k in range(tables):  # (and only those whose hub key it holds)
                    ensure_key(keys, f"{prefix}-{k}", "hub", f"bench-{k}")
                _claim(store, [f"{prefix}-{k}" for k in range(tables)],
                       time.monotonic() + min(30.0, left - 10))
            result = _level(client, load, recorder, tables, prefix, scripts, engine.pid,
                            time.monotonic() + min(20.0, left - 10))
            (repeats if repeat else results).append(result)
            return result

        def ladder(steps: list[tuple[int, bool]]) -> bool:
            """Measure `steps` in order; False once out of budget or saturated."""
            for tables, repeat in steps:
                result = measure(tables, repeat)
                if result is None:
                    return False
                progress("engine-service: tables ladder", len(results) + len(repeats),
                         len(plan))
                if result["lost"] > 0.1 * result["sent"]:
                    return False  # saturated: more tables only queue up
            return True

        def search() -> None:
            """Halve the gap between the largest level that held and the smallest above it
            that did not, down to SEARCH_STEP tables (the ladder's 50 -> 100 is coarse)."""
            while True:
                held = [r["tables"] for r in results if _holds(r)]
                low = max(held, default=0)
                above = [r["tables"] for r in results if r["tables"] > low and not _holds(r)]
                if not above or min(above) - low <= SEARCH_STEP:
                    return
                middle = int(low + (min(above) - low) / 2) // SEARCH_STEP * SEARCH_STEP
                if middle <= low:
                    return
                _settle(engine.pid, time.monotonic() + 20)  # a saturated level's backlog
                if measure(middle, False) is None:
                    return
                progress("engine-service: tables search", len(results), len(results) + 1)

        # Up to 100 tables and the search below it first: a level that saturates the
        # engine leaves a backlog (and the broker's queue overflowing) that would spoil
        # any level measured after it. Above 100 only once 100 held.
        upto_100 = [step for step in plan if step[0] <= 100]
        going = ladder(upto_100)
        search()
        if going and any(r["tables"] >= 100 and _holds(r) for r in results):
            ladder([step for step in plan if step[0] > 100])
            search()
    finally:
        load.close()
        client.stop()
        stop_process(engine)
        broker.close()
        data.cleanup()
    at_100 = [r for r in results if r["tables"] == 100] + repeats
    ok = [r["tables"] for r in results if _holds(r)]
    detail = {"broker": broker.kind, "levels": results, "repeats_at_100": repeats,
              "window_s": WINDOW_S, "events_per_table_per_s": EVENTS_PER_SECOND}
    cpu = [r["engine_cpu_ms_per_event"] for r in results + repeats if r["sent"]]
    return [
        Figure("engine alone: handling time per event p50", "ms",
               [a["p50_ms"] for a in alone], detail={"runs": alone, "tables": 100}),
        Figure("engine alone: handling time per event p99", "ms",
               [a["p99_ms"] for a in alone], goal="<= 50 ms"),
        Figure("engine alone: events handled per second", "events/s",
               [a["events_per_s"] for a in alone], goal=">= 1,000 (100 tables x 10/s)"),
        Figure(f"engine alone, {GROUP} queued events per group commit: events/s", "events/s",
               [g["events_per_s"] for g in grouped], goal=">= 1,000",
               detail={"runs": grouped, "tables": 100}),
        # The same work's CPU time (the handling thread's, no MQTT): what other jobs on the
        # machine change least, so what compares best between runs and machines' loads.
        Figure(f"engine alone, {GROUP} per group commit: CPU per event", "ms",
               [g["cpu_ms_per_event"] for g in grouped]),
        Figure("engine CPU per hub event (both threads)", "ms", cpu or [float("nan")],
               detail={"implied events/s per core": 1000 / statistics.median(cpu)
                       if cpu else None}),
        Figure("event latency p50 at 100 tables (hub->public)", "ms",
               [r["p50_ms"] for r in at_100] or [float("nan")], detail=detail),
        Figure("event latency p99 at 100 tables (hub->public)", "ms",
               [r["p99_ms"] for r in at_100] or [float("nan")], goal="<= 50 ms"),
        Figure("tables sustained at 10 events/s, p99 <= 50 ms", "tables",
               [float(max(ok, default=0))], goal=">= 100 tables"),
    ]

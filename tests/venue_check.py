"""The venue check (issue 21): a real venue in miniature, with faults injected from outside.

Starts a broker (Mosquitto when installed), a throw-away PostgreSQL cluster
(`tests/pg_cluster.py`), 3 engine processes and N tables (real hubs on simulated tables,
default 6) playing whole games at once. While they play, it takes the engine owning the
most tables away again and again, alternating ``SIGKILL`` (then a new engine is started)
and ``SIGSTOP`` (the engine is woken with ``SIGCONT`` once its tables are served again: it
must find itself fenced and rejoin). It checks and prints:

- failover: from the fault until every table of that engine is owned by another one and
  its ``engine/state`` says so (median, max; the goal is ≤ 10 s);
- lost and doubled: each table's stored hub events against its hub's outbox, and the
  answers per command (one each);
- states equal to replays: each table's public view and its log's game equal a pure replay
  of its hub's events.

Run it from the repository: ``make venue-check`` or
``.venv/bin/python tests/venue_check.py [--tables 6] [--faults 4]``. Exit status 0 when
every check passed. `cauldron` itself starts nothing for it.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from waiting import EXIT_WITHIN

if TYPE_CHECKING:  # imported by main() once the keys and data dirs are set
    from test_service_venue import Venue

HERE = Path(__file__).resolve().parent
# tests/ holds an `engine` folder of tests: the repository's packages come first
sys.path[:0] = [str(HERE.parent)]
sys.path += [str(HERE), str(HERE / "engine" / "service")]

FAILOVER_GOAL_S = 10.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=6)
    parser.add_argument("--faults", type=int, default=4, help="engines taken away in turn")
    options = parser.parse_args(argv)
    if options.tables < 1 or options.faults < 0:
        parser.error("--tables must be at least 1 and --faults at least 0")

    scratch = Path(tempfile.mkdtemp(prefix="cauldron-venue-check-"))
    # Keys and data of this run only (the engines inherit them), never the user's own.
    os.environ["CAULDRON_KEYS_DIR"] = str(scratch / "keys")
    os.environ["XDG_DATA_HOME"] = str(scratch / "data")

    import test_service_venue as tv
    from pg_cluster import Cluster, NoPostgres
    from waiting import wait_for

    from engine.wire.broker import LocalBroker
    from engine.wire.contract import Topics

    try:
        cluster = Cluster().start()
    except NoPostgres as exc:
        print(f"venue check: {exc}", file=sys.stderr)
        return 2
    broker = LocalBroker().start()
    tmp = scratch
    venue = tv.Venue(broker.url, cluster.database(), tmp)
    tables, scripts = tv._tables(venue, tmp, options.tables)
    failures: list[str] = []
    times: list[tuple[str, float]] = []
    try:
        for _ in range(3):
            venue.start_engine()
        wait_for(lambda: all(o is not None for o in venue.owners().values())
                 and len(venue.store.live_engines()) == 3, 60, "3 engines serving")
        inputs = {t: s.deal + [i for turn in s.turns for i in turn] for t, s in scripts.items()}
        commands = []
        for name, script in scripts.items():
            args = {k: v for k, v in script.new_game_args.items() if k != "game_id"}
            reply = venue.client.request(Topics(name).cmd("new_game"), args, timeout=15)
            if reply.status != "ok":
                failures.append(f"new_game on {name}: {reply.error}")
            commands.append(reply.transaction)
        longest = max(len(v) for v in inputs.values())
        fault_at = {int(longest * (k + 1) / (options.faults + 1)) for k in range(options.faults)}
        faults = 0
        for step in range(longest):
            made = {n: t.make(inputs[n][step]) for n, t in tables.items()
                    if step < len(inputs[n])}
            for name, before in made.items():
                tables[name].seen(before)
            if step in fault_at:
                kind = "SIGKILL" if faults % 2 == 0 else "SIGSTOP"
                faults += 1
                took = _fault(venue, kind)
                times.append((kind, took))
                print(f"  {kind}: served again in {took:.2f} s", flush=True)
                if took > FAILOVER_GOAL_S:
                    failures.append(f"{kind}: failover took {took:.1f} s")
        with venue.lock:
            doubled = sum(1 for t in commands if venue.responses[t] > 1)
            unanswered = sum(1 for t in commands if venue.responses[t] == 0)
        lost = stored_twice = 0
        for name, table in tables.items():
            try:  # (waits until every event of the table is handled)
                tv._ends_as_replayed(venue, name, table, scripts[name], inputs[name], 90)
            except AssertionError as exc:
                failures.append(f"table {name} is not its replay: {exc}")
            rows = venue.store.table(name)._rows(
                "SELECT COUNT(*), COUNT(DISTINCT seq) FROM {inputs} WHERE {table} "
                "AND source = 'hub'")
            count, distinct = int(rows[0][0]), int(rows[0][1])
            lost += max(0, table.hub.outbox.last_seq - distinct)
            stored_twice += count - distinct
        events = sum(t.hub.outbox.last_seq for t in tables.values())
        kills = [t for _, t in times]
        print(f"venue check: {len(tables)} tables, 3 engines, {events} hub events, "
              f"{len(times)} faults ({', '.join(k for k, _ in times)})")
        if kills:
            print(f"failover: median {statistics.median(kills):.2f} s, max {max(kills):.2f} s "
                  f"(goal <= {FAILOVER_GOAL_S:g} s)")
        print(f"lost events: {lost}; stored twice: {stored_twice}; commands answered twice: "
              f"{doubled}, unanswered: {unanswered}; tables not equal to their replay: "
              f"{sum(1 for f in failures if 'replay' in f)}")
        if lost or stored_twice or doubled or unanswered:
            failures.append("events lost or doubled")
    finally:
        for table in tables.values():
            table.stop()
        for engine in venue.engines:
            if engine.poll() is None:
                engine.send_signal(signal.SIGCONT)
        venue.close()
        broker.close()
        cluster.stop()
    for failure in failures:
        print(f"FAILED: {failure}")
    print("venue check: " + ("passed" if not failures else "FAILED") + f" (logs in {tmp})")
    return 0 if not failures else 1


def _fault(venue: Venue, kind: str) -> float:
    """Take the engine owning the most tables away; seconds until they are served again."""
    from test_service_venue import _served_again
    from waiting import wait_for

    owners = venue.owners()
    live = [e for e in venue.engines if e.poll() is None]
    ids = {e.pid: venue.engine_of(e) for e in live}
    victim = max(live, key=lambda e: sum(1 for o in owners.values() if o == ids[e.pid]))
    orphans = [t for t, o in owners.items() if o == ids[victim.pid]]
    began = time.monotonic()
    victim.send_signal(signal.SIGKILL if kind == "SIGKILL" else signal.SIGSTOP)
    try:
        took = _served_again(venue, began, orphans, ids[victim.pid])
    except AssertionError:
        took = time.monotonic() - began
    if kind == "SIGKILL":
        victim.wait(EXIT_WITHIN)
        venue.start_engine()
    else:
        victim.send_signal(signal.SIGCONT)  # it wakes fenced and rejoins
    wait_for(lambda: len(venue.store.live_engines()) == 3, 60, "3 engines in the venue again")
    return took


if __name__ == "__main__":
    sys.exit(main())

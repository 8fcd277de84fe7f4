"""``cauldron bench hub``: the table's sensing budget.

- the modelled sweep of 36 readers (`firmware.sweep.model_sweep`: the real scan loop on the
  register-level MFRC522 simulator with datasheet timings; deterministic) at three tag
  wake-up times: 0.3 ms, 1 ms and 5.1 ms (the ISO/IEC 14443-3 worst case, the budget's);
- placement -> screen at p95, computed: the modelled confirmation (two sweeps), the serial
  link, the hub's poll interval, the measured hub path below, and the software path's
  budget from the hub's publish to the browser (measured by `cauldron bench dashboard`);
- the same with the interpreter's cost counted (`firmware.interp`: the firmware's own
  loop on the MicroPython unix port, calibrated against a published RP2040 figure):
  the sweep, the sweep that acquires a card, and placement -> screen p95, the card laid
  -> P line part modelled on the real firmware loop;
- the hub's added latency from a confirmed reader change to the MQTT publish: the change
  goes through the hub exactly as in service (tag map, event, SQLite outbox, QoS 1 publish)
  to a real broker on localhost (Mosquitto, else the embedded broker), and is timed twice:
  until paho has written it to the socket, and until a subscriber has received it.
"""

from __future__ import annotations

import inspect
import statistics
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from engine.bench.kit import Figure, ProgressFn, percentile
from engine.wire.broker import LocalBroker
from engine.wire.contract import Topics
from engine.wire.mqtt import WireClient
from hub.backends.sim import SimulatedTable, virtual_box_tagmap
from hub.layout import cells
from hub.outbox import Outbox
from hub.service import Hub

CHANGES_PER_RUN = 300
# Placement -> screen terms that this bench does not measure itself.
SERIAL_LINE_MS = 1.0  # one short line over USB full speed: 1 ms frames (estimate)
SOFTWARE_PATH_P95_MS = 20.0  # hub publish -> browser, ARCHITECTURE budget (bench dashboard)


def _latency_run(broker: LocalBroker, workdir: Path, run: int) -> tuple[list[float], list[float]]:
    table = f"bench{run}"
    topics = Topics(table)
    received: dict[int, float] = {}
    arrived = threading.Condition()

    def on_message(client: paho.Client, userdata: object, message: paho.MQTTMessage) -> None:
        # The seq sits at a fixed place in the compact JSON; no parse on the timed path.
        now = time.perf_counter()
        text = message.payload.decode()
        start = text.index('"seq":') + 6
        seq = int(text[start:text.index(",", start)])
        with arrived:
            received[seq] = now
            arrived.notify_all()

    sub = paho.Client(CallbackAPIVersion.VERSION2)
    sub.on_message = on_message
    sub.connect("127.0.0.1", broker.port)
    sub.subscribe(topics.hub_event, 1)
    sub.loop_start()
    tagmap = virtual_box_tagmap()
    sim = SimulatedTable(tagmap=tagmap)
    client = WireClient(broker.url, client_id=f"bench-hub-{run}", state_topic=topics.hub_state)
    hub = Hub(table=table, backend=sim, client=client, outbox=Outbox(workdir / f"o{run}.sqlite"),
              tagmap=tagmap, snapshot_interval=3600)
    hub.start(poll=False)
    client.wait_connected(10)
    time.sleep(0.2)  # subscription settled
    to_socket: list[float] = []
    to_subscriber: list[float] = []
    cards = list(tagmap.cards())
    grid = cells()
    try:
        for i in range(CHANGES_PER_RUN):
            # Alternate cells so that no reader looks like it flickers.
            where = "{},{}".format(*grid[(i // 2) % len(grid)])
            if i % 2 == 0:
                sim.place(where, card_id=cards[(i // 2) % len(cards)])
            else:
                sim.remove(where)
            while True:
                result = sim.poll()
                if result.changes:
                    break
            start = time.perf_counter()
            events = hub.handle(result)
            to_socket.append((time.perf_counter() - start) * 1000)
            last = events[-1].seq
            with arrived:
                if not arrived.wait_for(partial(received.__contains__, last), timeout=5):
                    raise RuntimeError("the broker did not deliver an event within 5 s")
            to_subscriber.append((received[events[0].seq] - start) * 1000)
    finally:
        hub.stop()
        sub.loop_stop()
        sub.disconnect()
    return to_socket, to_subscriber


def sweep_figures(runs: int) -> tuple[list[Figure], dict[str, object]]:
    """The modelled 36-reader sweep at each wake-up time (deterministic: the same value
    for every run)."""
    from firmware.sweep import WAKEUPS_MS, at_wakeup, placement_ms

    figures = []
    worst: dict[str, object] = {}
    for wakeup in WAKEUPS_MS:
        sweep = at_wakeup(wakeup)
        keys = ("new_tag_sweep_ms", "max_sweep_ms", "acquire_sweep_ms", "lead",
                "max_antennas_on", "crosstalk", "spi_hz", "settle_us", "per_reader_us")
        figures.append(Figure(
            f"modelled sweep at {wakeup:g} ms wake-up", "ms", [float(sweep["sweep_ms"])] * runs,
            goal="<= 40 ms" if wakeup == max(WAKEUPS_MS) else "",
            detail={"readers": 36, "occupied": len(sweep["occupied"]),
                    **{k: sweep[k] for k in keys}},
        ))
        worst = {"sweep": sweep, "placement": placement_ms(sweep)}
    return figures, worst


def interpreter_figures(runs: int, progress: ProgressFn) -> tuple[list[Figure], dict[str, Any]]:
    """The sweep with the interpreter's cost counted (``firmware.interp``): the firmware's
    own loop replayed on the MicroPython unix port, its instructions counted by valgrind
    (the same on a loaded machine; then one count serves every run), calibrated against a
    published RP2040 figure for the same loop, and charged to the simulator's clock.
    Without valgrind: timed on the wall clock, one measurement per run. The timed method
    runs once beside the count as its cross-check (detail: ``wall_clock_*``)."""
    from firmware.interp import counting, measure, model

    results = []
    counted = counting()
    for run_index in range(runs):
        progress("interpreter cost (MicroPython unix port)", run_index, runs)
        if not counted:
            measure.cache_clear()
        results.append(model(5.1, measured=measure()))
    progress("interpreter cost (MicroPython unix port)", runs, runs)
    last = results[-1]
    detail = {k: last[k] for k in (
        "method", "cpu_hz", "ratio", "unix_add_test_us", "rp2040_add_test_us",
        "calibration_source", "float_add_ratio", "interpreter_per_poll_us",
        "interpreter_per_step_us", "interpreter_per_machine_call_us", "per_reader_us",
        "loop_us", "implementation")}
    if counted:  # the cross-check: the same loop on the wall clock (load-sensitive)
        timed = model(5.1, measured=measure(method="time"))
        detail["wall_clock_sweep_ms"] = timed["sweep_ms"]
        detail["wall_clock_acquiring_sweep_ms"] = timed["acquiring_sweep_ms"]
        detail["wall_clock_placement_p95_ms"] = timed["placement_p95_ms"]
    detail["note"] = "hardware/timing.md, 'The interpreter's cost'"
    figures = [
        Figure(f"sweep at 5.1 ms wake-up, {INTERPRETER}", "ms",
               [float(r["sweep_ms"]) for r in results], goal="<= 40 ms",
               detail={**detail, "max_sweep_ms": last["max_sweep_ms"]}),
        Figure(f"sweep acquiring a card at 5.1 ms wake-up, {INTERPRETER}", "ms",
               [float(r["acquiring_sweep_ms"]) for r in results], goal="<= 40 ms",
               detail={"one new card on an empty reader; all 36 new at once (ms)":
                       last["all_new_sweep_ms"]}),
    ]
    return figures, {"placement_p95_ms": [float(r["placement_p95_ms"]) for r in results]}


INTERPRETER = "interpreter included"


def run(runs: int, progress: ProgressFn) -> list[Figure]:
    sweeps, worst = sweep_figures(runs)
    interp, interp_placement = interpreter_figures(runs, progress)
    p50_socket, p95_socket, p50_sub, p95_sub = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="cauldron-bench-hub-") as tmp, LocalBroker() as broker:
        for run_index in range(runs):
            progress("hub change -> publish", run_index, runs)
            socket_ms, sub_ms = _latency_run(broker, Path(tmp), run_index)
            p50_socket.append(statistics.median(socket_ms))
            p95_socket.append(percentile(socket_ms, 95))
            p50_sub.append(statistics.median(sub_ms))
            p95_sub.append(percentile(sub_ms, 95))
        progress("hub change -> publish", runs, runs)
        kind = broker.kind
    detail = {"broker": kind, "changes_per_run": CHANGES_PER_RUN}
    placement = worst["placement"]
    assert isinstance(placement, dict)
    confirm = float(placement["p95_ms"])
    poll = 1000 * float(inspect.signature(Hub).parameters["poll_interval"].default)
    totals = [confirm + SERIAL_LINE_MS + poll + hub + SOFTWARE_PATH_P95_MS
              for hub in p95_sub]
    confirm_interp = interp_placement["placement_p95_ms"]
    totals_interp = [c + SERIAL_LINE_MS + poll + hub + SOFTWARE_PATH_P95_MS
                     for c, hub in zip(confirm_interp, p95_sub, strict=True)]
    return [
        *sweeps,
        *interp,
        Figure(f"placement to screen p95 at 5.1 ms wake-up, {INTERPRETER}", "ms",
               totals_interp, goal="<= 150 ms", detail={
                   "modelled on the real firmware loop: card laid -> P line written, p95":
                       statistics.median(confirm_interp),
                   "estimate: serial line over USB": SERIAL_LINE_MS,
                   "hub poll interval": poll,
                   "measured: hub change -> subscriber p95 (this bench)":
                       statistics.median(p95_sub),
                   "budget: hub publish -> browser p95 (cauldron bench dashboard)":
                       SOFTWARE_PATH_P95_MS,
               }),
        Figure("placement -> screen p95 (computed)", "ms", totals, goal="<= 150 ms", detail={
            "modelled: card laid -> confirmed line, p95 (two sweeps at 5.1 ms wake-up)": confirm,
            "estimate: serial line over USB": SERIAL_LINE_MS,
            "hub poll interval": poll,
            "measured: hub change -> subscriber p95 (this bench)": statistics.median(p95_sub),
            "budget: hub publish -> browser p95 (cauldron bench dashboard)":
                SOFTWARE_PATH_P95_MS,
        }),
        Figure("hub change -> MQTT publish sent, p50", "ms", p50_socket, detail=detail),
        Figure("hub change -> MQTT publish sent, p95", "ms", p95_socket, goal="<= 5 ms",
               detail=detail),
        Figure("hub change -> subscriber via broker, p50", "ms", p50_sub, detail=detail),
        Figure("hub change -> subscriber via broker, p95", "ms", p95_sub, goal="<= 5 ms",
               detail=detail),
    ]

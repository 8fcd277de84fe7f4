"""`cauldron bench dashboard`: software latency from a ``game/public`` publish to the table
view showing it, in a real headless Chromium.

Set-up (all on 127.0.0.1): a local broker, the dashboard served by uvicorn, the table view
open in Chromium, and a publisher playing the engine's part with real rules-engine views.
Each update carries its publish time (``GamePublic.ts``, wall clock); the page records
``performance.timeOrigin + performance.now() - ts`` right after its DOM shows the new state.
The page's clock is checked against this process's clock (minimum round trip of several
probes) and the offset is removed. Updates go one at a time (the next after the page showed
the previous one), so none is coalesced away. Reported per run: p50 and p95 over the updates;
the figures are medians over runs.
"""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import threading
import time
from typing import Any

from engine.benchkit import Figure, ProgressFn

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
UPDATES = 60


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _clock_offset_ms(page: Any) -> tuple[float, float]:
    """(page clock - our clock, in ms; the round trip of the best probe)."""
    best: tuple[float, float] | None = None
    for _ in range(15):
        before = time.time()
        page_now = float(page.evaluate("performance.timeOrigin + performance.now()"))
        after = time.time()
        rtt = (after - before) * 1000
        offset = page_now - (before + after) * 500
        if best is None or rtt < best[1]:
            best = (offset, rtt)
    assert best is not None
    return best


def run(runs: int, progress: ProgressFn) -> list[Figure]:
    from engine.cli import CliError

    if not os.path.exists(CHROMIUM):
        raise CliError(f"Chromium is needed at {CHROMIUM}: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise CliError("playwright is needed: pip install playwright (no browser download; "
                       "the system Chromium is used)") from None
    import uvicorn

    from dashboard.bridge import Bridge
    from dashboard.config import Settings
    from dashboard.main import create_app
    from engine.rules import Game, GameConfig
    from engine.wire.broker import LocalBroker, free_port
    from engine.wire.contract import GamePublic, Topics
    from engine.wire.mqtt import WireClient

    table = "bench-dashboard"
    p50s: list[float] = []
    p95s: list[float] = []
    maxes: list[float] = []
    bridge_p50s: list[float] = []
    bridge_p95s: list[float] = []
    detail: dict[str, Any] = {"updates_per_run": UPDATES}
    with LocalBroker() as broker:
        detail["broker"] = broker.kind
        settings = Settings(mqtt=broker.url, table=table, pin="000000", virtual=False)
        bridge = Bridge(settings)
        app = create_app(settings, bridge)
        # The server's share: publish -> the bridge has handed the new state to the sockets.
        server_side: list[float] = []

        def on_model(_topic: str, model: Any) -> None:
            ts = getattr(model, "ts", None)
            if isinstance(model, GamePublic) and ts is not None:
                server_side.append((time.time() - ts) * 1000)

        bridge.listeners.append(on_model)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                               log_level="warning", timeout_graceful_shutdown=2))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        publisher = WireClient(broker.url, client_id="bench-dashboard-publisher")
        publisher.start(wait=10)
        topic = Topics(table).game_public
        try:
            deadline = time.monotonic() + 15
            while not (server.started and bridge.connected):
                if time.monotonic() > deadline:
                    raise CliError("the dashboard did not start within 15 s")
                time.sleep(0.01)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1600, "height": 1000})
                page.goto(f"http://127.0.0.1:{port}/?lang=en")
                page.wait_for_function("window.__cauldron && window.__cauldron.renders > 0")
                total = runs * UPDATES
                done = 0
                for run_index in range(runs):
                    game = Game.new(GameConfig(colours=("yellow", "red", "green", "blue")),
                                    random.Random(run_index))
                    rng = random.Random(run_index)
                    offset, rtt = _clock_offset_ms(page)
                    page.evaluate("window.__cauldron.latencies = []")
                    server_side.clear()
                    for _ in range(UPDATES):
                        if game.is_over():
                            game = Game.new(game.config, random.Random(rng.random()))
                        game.apply(rng.choice(game.legal_actions()))
                        ts = time.time()
                        view = game.view_public()
                        update = GamePublic(table=table, game_id=f"bench-{run_index}",
                                            turn=view["expected"]["seat"], ts=ts, view=view)
                        publisher.publish(topic, update, retain=True)
                        page.wait_for_function(
                            "ts => window.__cauldron.lastTs === ts", arg=ts, polling="raf")
                        done += 1
                        progress("dashboard latency", done, total)
                    raw = page.evaluate("window.__cauldron.latencies")
                    samples = [float(x) - offset for x in raw]
                    if len(samples) != UPDATES:
                        raise CliError(f"the page showed {len(samples)} of {UPDATES} updates")
                    p50s.append(_percentile(samples, 0.50))
                    p95s.append(_percentile(samples, 0.95))
                    maxes.append(max(samples))
                    bridge_p50s.append(_percentile(server_side, 0.50))
                    bridge_p95s.append(_percentile(server_side, 0.95))
                    detail.setdefault("clock_offset_ms", []).append(round(offset, 3))
                    detail.setdefault("clock_probe_rtt_ms", []).append(round(rtt, 3))
                browser.close()
        finally:
            publisher.stop()
            server.should_exit = True
            thread.join(10)
    detail["max_ms"] = [round(m, 2) for m in maxes]
    with contextlib.suppress(OSError):  # other work on the machine skews the figures
        detail["load_average_1min"] = round(os.getloadavg()[0], 2)
    return [
        Figure("publish -> table view shown, p50", "ms", p50s, goal="", detail=detail),
        Figure("publish -> table view shown, p95", "ms", p95s, goal="<= 20 ms"),
        Figure("publish -> table view shown, worst of run", "ms", maxes,
               detail={"median_of_p50": statistics.median(p50s)}),
        Figure("of which publish -> bridge fan-out, p50", "ms", bridge_p50s),
        Figure("of which publish -> bridge fan-out, p95", "ms", bridge_p95s),
    ]

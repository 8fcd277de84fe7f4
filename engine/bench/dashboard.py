"""`cauldron bench dashboard`: software latency from a ``game/public`` publish to the table
view showing it, in a real headless Chromium.

Set-up, as deployed (all on 127.0.0.1): a local broker; the dashboard as its own process
(``cauldron dashboard``); the table view open in Chromium; this process plays the engine's
part, publishing real rules-engine views. Each update carries its publish time
(``GamePublic.ts``, wall clock); the page records ``performance.timeOrigin +
performance.now() - ts`` when the WebSocket message arrives and again right after its DOM
shows the new state. The page's clock is checked against this process's clock (the probe
with the smallest round trip of several) and the offset removed. Updates go one at a time
(the next after the page showed the previous one; the page itself resolves the wait, so no
polling competes with the update), so none is coalesced away. 20 warm-up updates are not
counted. Per run: p50 and p95 over the updates; the figures are medians over runs. The
same updates to a plain Python WebSocket client give the server's share (broker +
dashboard) without the browser. Then 500 live viewers (`_viewers`): publish -> each one's
message, p50/p99, and the CPU time per update of the dashboard and of the clients.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.bench.kit import Figure, ProgressFn, percentile, stop_process

if TYPE_CHECKING:
    from engine.wire.contract import HubEvent, PublicTableView

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
UPDATES = 60
VIEWERS = 500
VIEWER_UPDATES = 30
VIEWER_WARMUP = 5
VIEWER_PROCESSES = 4  # the measuring clients, spread so that they are not the bottleneck
# ... and at a lower priority: phones do not take the dashboard's CPU, the clients here
# would (their times are the kernel's, so their own scheduling does not count anyway).
VIEWER_NICE = 10



def _random_views(seed: int) -> Iterator[PublicTableView]:
    """Public views of random 4-player play, one per action, without end (a new game when
    one is over): the updates both dashboard benches publish."""
    from engine.games.glastonbury.rules import Game, GameConfig
    from engine.games.glastonbury.rules.observer import public_view
    from engine.wire.contract import PublicTableView

    rng = random.Random(seed)
    game = Game.new(GameConfig(colours=("yellow", "red", "green", "blue")), rng)
    while True:
        if game.is_over():
            game = Game.new(game.config, random.Random(rng.random()))
        game.apply(rng.choice(game.legal_actions()))
        yield PublicTableView.of(public_view(game), None)

FULL_GAMES_SEED = 300
FULL_WARMUP = 5  # events after each deal not counted (a new game's first renders)
HUB_ID = "bench-hub"


# The hub's games for the whole-path figures: (seed) -> endless (new_game args, that game's
# hub events); `hub_games` below, from the table driver's scripted games.
HubGames = Callable[[int], Iterator[tuple[dict[str, object], list["HubEvent"]]]]


def _full_path(page: Any, broker_url: str, table: str, runs: int, keys: Path,
               hub_games: HubGames,
               progress: ProgressFn) -> dict[str, list[float]]:
    """The budget's whole software path: this process plays the hub, publishing signed hub
    events (QoS 1, as `cauldron hub` does); a real `cauldron engine` process applies them
    and publishes ``game/public``; the dashboard sends it on; the page shows it. Per run, a
    new game and its deal (not counted), then `UPDATES` events one at a time, each after
    the page drew the previous one. An update is matched to its event by the view's
    ``table.inputs`` (the command, then one per event). Per run: p50/p95 of hub publish ->
    shown, hub publish -> message in the page, and hub publish -> engine's publish (the
    engine's ``ts``; same machine, same clock)."""
    from engine.wire import api
    from engine.wire.api import dump
    from engine.wire.auth import ensure_key, sign_hub
    from engine.wire.contract import HubEvent, Topics, encode
    from engine.wire.mqtt import WireClient

    topics = Topics(table)
    data = keys.parent / "engine-data"
    engine = subprocess.Popen(
        [sys.executable, "-m", "engine.app", "engine", "--mqtt", broker_url,
         "--data-dir", str(data), "--name", "bench-dashboard-engine"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "CAULDRON_KEYS_DIR": str(keys)},
    )
    hub = WireClient(broker_url, client_id="bench-dashboard-hub", keys=keys)
    out: dict[str, list[float]] = {"shown_p50": [], "shown_p95": [], "recv_p50": [],
                                   "recv_p95": [], "engine_p50": [], "engine_p95": []}
    try:
        hub.start(wait=10)
        key = ensure_key(keys, table, "hub", HUB_ID).key
        games = hub_games(FULL_GAMES_SEED)
        for run_index in range(runs):
            args, events = next(games)
            if run_index == 0:
                _wait_for_engine(hub, table, engine, time.monotonic() + 60)
            else:  # the previous game ends first (the host's End)
                hub.request(topics.cmd("end"), {}, timeout=10)
            reply = hub.request(topics.cmd("new_game"), dump(api.NEW_GAME.parse(args)),
                                timeout=10)
            if reply.status != "ok":
                raise RuntimeError(f"the engine refused new_game: {reply.error}")
            signed = [sign_hub(e, table, key) for e in events]
            payloads = [encode(e) for e in signed if isinstance(e, HubEvent)]
            for payload in payloads[:32]:
                hub.publish_raw(topics.hub_event, payload)
            page.evaluate(_WAIT_INPUTS, 33)
            page.evaluate(_DRAWN)
            offset, _ = _clock_offset_ms(page)
            page.evaluate("window.__cauldron.log = []")
            sent: dict[int, float] = {}
            play = payloads[32:32 + FULL_WARMUP + UPDATES]
            for index, payload in enumerate(play):
                inputs = 34 + index  # the command, the deal's 32, then this one
                ts = time.time()
                hub.publish_raw(topics.hub_event, payload)
                page.evaluate(_WAIT_INPUTS, inputs)
                page.evaluate(_DRAWN)
                if index >= FULL_WARMUP:
                    sent[inputs] = ts
                progress("full path (hub -> engine -> page)", run_index * len(play) + index + 1,
                         runs * len(play))
            shown: list[float] = []
            received: list[float] = []
            engine_share: list[float] = []
            for engine_ts, inputs, got, rendered, _ in page.evaluate("window.__cauldron.log"):
                start = sent.get(int(inputs))
                if start is None:
                    continue
                shown.append(float(rendered) - offset - start * 1000)
                received.append(float(got) - offset - start * 1000)
                engine_share.append((float(engine_ts) - start) * 1000)
            if len(shown) != len(sent):
                raise RuntimeError(f"the page showed {len(shown)} of {len(sent)} hub events")
            for name, samples in (("shown", shown), ("recv", received),
                                  ("engine", engine_share)):
                out[f"{name}_p50"].append(percentile(samples, 50))
                out[f"{name}_p95"].append(percentile(samples, 95))
    finally:
        hub.stop()
        stop_process(engine)
    return out


def _wait_for_engine(client: Any, table: str, engine: subprocess.Popen[bytes],
                     by: float) -> None:
    """Until the engine process answers a command (started and subscribed: on a busy
    machine that takes longer than any fixed wait)."""
    from engine.wire.contract import Topics
    from engine.wire.mqtt import RequestTimeout

    while time.monotonic() < by and engine.poll() is None:
        try:
            client.request(Topics(table).cmd("history"), {}, timeout=1.0)
            return
        except RequestTimeout:
            continue
    raise RuntimeError("the engine process did not answer within 60 s")


# Until the page shows `n` table inputs; bounded, so that an event the engine did not take
# ends the bench with a reason instead of waiting for ever.
_WAIT_INPUTS = """n => Promise.race([window.__cauldron.waitForInputs(n), new Promise((_, fail) =>
  setTimeout(() => fail(new Error(`the page did not show table input ${n} within 30 s: `
    + "the engine took no game/public for that hub event (see its log)")), 30000))])"""

# After an update is shown: resolves once the browser has drawn the frame with it (the
# frame's callbacks, then its style, layout and paint: the probe's `drawn`).
_DRAWN = "window.__cauldron.drawn"


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


def _start_dashboard(mqtt: str, table: str, port: int) -> subprocess.Popen[bytes]:
    script = Path(sys.executable).parent / "cauldron"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "engine.app"]
    return subprocess.Popen(
        [*command, "dashboard", "--port", str(port), "--mqtt", mqtt, "--table", table,
         "--pin", "000000", "--no-virtual"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def _plain_client(port: int, publisher: Any, topic: str, table: str,
                  runs: int) -> tuple[list[float], list[float]]:
    """p50/p95 per run of publish -> message at a Python WebSocket client on /ws/table."""
    import json

    from websockets.sync.client import connect

    from engine.wire.contract import GamePublic

    p50s: list[float] = []
    p95s: list[float] = []
    with connect(f"ws://127.0.0.1:{port}/ws/table", max_size=None) as ws:
        ws.recv(timeout=10)
        for run_index in range(runs):
            views = _random_views(1000 + run_index)
            samples = []
            for _ in range(UPDATES):
                view = next(views)
                ts = time.time()
                publisher.publish(topic, GamePublic(table=table, game_id=f"plain-{run_index}",
                                                    ts=ts, view=view), retain=True)
                while True:
                    message = json.loads(ws.recv(timeout=10))
                    if message.get("game") and message["game"].get("ts") == ts:
                        samples.append((time.time() - ts) * 1000)
                        break
            p50s.append(percentile(samples, 50))
            p95s.append(percentile(samples, 95))
    return p50s, p95s


def _viewers(port: int, publisher: Any, topic: str, table: str, runs: int, viewers: int,
             progress: ProgressFn, dashboard_pid: int | None = None) -> dict[str, list[float]]:
    """Per run: p50 and p99 of publish -> message received at each of `viewers` live
    WebSocket clients of /ws/table (an event's audience of phones), the p99 of the time the
    clients read it, and the CPU time the dashboard (`dashboard_pid`) and the clients spent
    per update. Each update is published after every client has the previous one;
    `VIEWER_WARMUP` updates first are not counted.

    The clients must not be what is measured: 500 phones have 500 CPUs, but 500
    `websockets` clients in one Python process spent more CPU reading an update (~22 ms)
    than the dashboard spent sending it (~15-19 ms), and each noted its time after that
    process's queue of the others. So they are spread over `VIEWER_PROCESSES` processes
    at a lower priority (`VIEWER_NICE`), and "received" is the kernel's receive time of a
    message's last bytes (SO_TIMESTAMPNS; on loopback, when the dashboard's send reached
    the viewer's socket). "Read" is when the client process got to it, before parsing: on
    a shared 2-core machine that adds the wait for the measuring processes to be
    scheduled, which phones would not share.
    See `_viewer_process`."""
    import json
    import multiprocessing

    from engine.wire.contract import GamePublic

    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    shares = [viewers // VIEWER_PROCESSES + (i < viewers % VIEWER_PROCESSES)
              for i in range(VIEWER_PROCESSES)]
    crowds = []
    for share in shares:
        commands = ctx.Queue()
        proc = ctx.Process(target=_viewer_process, args=(port, share, commands, results),
                           daemon=True)
        proc.start()
        crowds.append((proc, commands))
    p50s: list[float] = []
    p99s: list[float] = []
    read_p99s: list[float] = []
    server_cpu: list[float] = []
    server_kernel: list[float] = []  # of which in the kernel (sending on the sockets)
    client_cpu: list[float] = []

    def update(view: PublicTableView, game_id: str) -> tuple[list[list[float]], float]:
        """Publish one update; ([received, read] ms after the publish for each viewer, the
        clients' CPU seconds)."""
        ts = time.time()
        for _, commands in crowds:
            commands.put(ts)
        publisher.publish(topic, GamePublic(table=table, game_id=game_id, ts=ts, view=view),
                          retain=True)
        arrived: list[list[float]] = []
        cpu = 0.0
        for _ in crowds:
            answer = results.get(timeout=60)
            if answer[0] != "arrived":
                raise RuntimeError(f"a viewer process failed: {answer[1]}")
            arrived.extend(json.loads(answer[1]))
            cpu += answer[2]
        if len(arrived) != viewers:
            raise RuntimeError(f"{len(arrived)} of {viewers} viewers got an update")
        return [[(t - ts) * 1000 for t in times] for times in arrived], cpu

    try:
        for _ in crowds:
            ready = results.get(timeout=120)
            if ready[0] != "ready":
                raise RuntimeError(f"the viewers did not connect: {ready[1]}")
        # Warm-up (not counted): each connection's first full-size messages.
        warm = _random_views(4999)
        for _ in range(VIEWER_WARMUP):
            update(next(warm), "viewers-warm-up")
        for run_index in range(runs):
            views = _random_views(5000 + run_index)
            samples: list[float] = []
            read: list[float] = []
            clients = 0.0
            server_before = _cpu_seconds(dashboard_pid)
            for i in range(VIEWER_UPDATES):
                latencies, cpu = update(next(views), f"viewers-{run_index}")
                samples.extend(received for received, _ in latencies)
                read.extend(seen for _, seen in latencies)
                clients += cpu
                progress(f"{viewers} viewers", run_index * VIEWER_UPDATES + i + 1,
                         runs * VIEWER_UPDATES)
            server_after = _cpu_seconds(dashboard_pid)
            p50s.append(percentile(samples, 50))
            p99s.append(percentile(samples, 99))
            read_p99s.append(percentile(read, 99))
            if server_before is not None and server_after is not None:
                server_cpu.append(sum(server_after) - sum(server_before))
                server_kernel.append(server_after[1] - server_before[1])
            client_cpu.append(clients * 1000 / VIEWER_UPDATES)
    finally:
        for _, commands in crowds:
            commands.put(None)
        for proc, _ in crowds:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
    per_update = 1000 / VIEWER_UPDATES  # s per run -> ms per update
    return {"p50": p50s, "p99": p99s, "read_p99": read_p99s,
            "server_cpu": [x * per_update for x in server_cpu],
            "server_kernel": [x * per_update for x in server_kernel],
            "client_cpu": client_cpu}


def _cpu_seconds(pid: int | None) -> tuple[float, float] | None:
    """CPU time (user, system) a process has used so far, from /proc (None elsewhere)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


# Linux's SO_TIMESTAMPNS: the kernel stamps each received segment with the time it arrived.
SO_TIMESTAMPNS = 35


def _viewer_process(port: int, viewers: int, commands: Any, results: Any) -> None:
    """`viewers` WebSocket clients in one event loop. For each expected publish time: when
    each client received the message carrying it, two ways: the kernel's receive time of
    its last bytes (SO_TIMESTAMPNS: delivery to the viewer, whatever this process is doing)
    and this process's clock when it read them, before parsing (which adds the wait for
    this process to be scheduled); and this process's CPU time for the update. They offer
    per-message deflate as browsers do, so a server that accepted it would pay here too."""
    import asyncio
    import json
    import socket
    import struct

    from websockets.client import ClientProtocol
    from websockets.exceptions import InvalidHandshake
    from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
    from websockets.frames import Frame, Opcode
    from websockets.http11 import Response
    from websockets.uri import parse_uri

    if hasattr(os, "nice"):
        os.nice(VIEWER_NICE)
    uri = parse_uri(f"ws://127.0.0.1:{port}/ws/table")
    ancillary = socket.CMSG_SPACE(16)
    Times = tuple[float, float]  # (kernel receive time, read by this process)

    class Crowd:
        def __init__(self) -> None:
            self.needle: bytes | None = None
            self.pending: set[Viewer] = set()
            self.arrived: list[Times] = []
            self.done = asyncio.Event()

        def expect(self, needle: bytes, viewers: list[Viewer]) -> None:
            self.needle, self.arrived = needle, []
            self.pending = set(viewers)
            self.done.clear()
            for viewer in viewers:  # a message that came before its publish time did
                for when, data in viewer.early:
                    if needle in data:
                        self.found(viewer, when)
                        break
                viewer.early.clear()

        def found(self, viewer: Viewer, when: Times) -> None:
            self.pending.discard(viewer)
            self.arrived.append(when)
            if not self.pending:
                self.done.set()

        def message(self, viewer: Viewer, when: Times, data: bytes) -> None:
            if viewer in self.pending and self.needle is not None and self.needle in data:
                self.found(viewer, when)
            else:
                viewer.early.append((when, data))

    class Viewer:
        def __init__(self, crowd: Crowd) -> None:
            self.crowd = crowd
            self.ws = ClientProtocol(uri, extensions=[ClientPerMessageDeflateFactory()],
                                     max_size=None)
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self.sock.setblocking(False)
            self.first = asyncio.get_running_loop().create_future()
            self.early: list[tuple[Times, bytes]] = []

        async def open(self) -> None:
            loop = asyncio.get_running_loop()
            await loop.sock_connect(self.sock, ("127.0.0.1", port))
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.ws.send_request(self.ws.connect())
            self.flush()
            loop.add_reader(self.sock, self.readable)
            await asyncio.wait_for(self.first, 30)

        def readable(self) -> None:
            read = time.time()  # before any parsing
            try:
                data, cmsgs, _, _ = self.sock.recvmsg(1 << 16, ancillary)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self.lost(exc)
                return
            if not data:
                self.lost(ConnectionError("closed by the server"))
                return
            kernel = read
            for level, kind, stamp in cmsgs:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(stamp) >= 16:
                    sec, nsec = struct.unpack("qq", stamp[:16])
                    kernel = sec + nsec / 1e9
            self.ws.receive_data(data)
            for event in self.ws.events_received():
                if isinstance(event, Response):
                    if self.ws.handshake_exc is not None and not self.first.done():
                        self.first.set_exception(self.ws.handshake_exc)
                elif isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                    if not self.first.done():
                        self.first.set_result(None)  # subscribed: the first state came
                    else:
                        self.crowd.message(self, (kernel, read), bytes(event.data))
            self.flush()

        def flush(self) -> None:
            for chunk in self.ws.data_to_send():
                if chunk:
                    self.sock.send(chunk)  # small (pongs): the socket buffer takes them

        def lost(self, exc: Exception) -> None:
            asyncio.get_running_loop().remove_reader(self.sock)
            if not self.first.done():
                self.first.set_exception(exc)

        def close(self) -> None:
            asyncio.get_running_loop().remove_reader(self.sock)
            self.sock.close()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        crowd = Crowd()
        sockets: list[Viewer] = []
        try:
            for _ in range(viewers):
                viewer = Viewer(crowd)
                await viewer.open()
                sockets.append(viewer)
        except (OSError, TimeoutError, InvalidHandshake) as exc:  # told to the parent
            results.put(("error", f"connect failed after {len(sockets)}: {exc!r}"))
            return
        results.put(("ready", ""))
        while True:
            ts = await loop.run_in_executor(None, commands.get)
            if ts is None:
                break
            cpu = time.process_time()
            crowd.expect(f'"ts":{json.dumps(ts)}'.encode(), sockets)
            try:
                await asyncio.wait_for(crowd.done.wait(), 60)
            except TimeoutError:
                results.put(("error", f"{len(crowd.pending)} viewers got no update in 60 s"))
                return
            results.put(("arrived", json.dumps(crowd.arrived), time.process_time() - cpu))
        for viewer in sockets:
            viewer.close()

    asyncio.run(main())


def run(runs: int, progress: ProgressFn) -> list[Figure]:
    """The dashboard's figures, the whole path (hub events of `hub_games`) included."""
    from engine.cli import CliError

    if not os.path.exists(CHROMIUM):
        raise CliError(f"Chromium is needed at {CHROMIUM}: apt-get install chromium")
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise CliError("playwright is needed: pip install playwright (no browser download; "
                       "the system Chromium is used)") from None

    from engine.games.glastonbury.rules import Game, GameConfig
    from engine.games.glastonbury.rules.observer import public_view
    from engine.wire.broker import LocalBroker, free_port
    from engine.wire.contract import GamePublic, PublicTableView, Topics
    from engine.wire.mqtt import WireClient

    table = "bench-dashboard"
    shown_p50: list[float] = []
    shown_p95: list[float] = []
    shown_max: list[float] = []
    recv_p50: list[float] = []
    recv_p95: list[float] = []
    server_p50: list[float] = []
    server_p95: list[float] = []
    drawn_p95: list[float] = []
    detail: dict[str, Any] = {"updates_per_run": UPDATES}
    with LocalBroker() as broker, tempfile.TemporaryDirectory(prefix="cauldron-bench-") as scratch:
        detail["broker"] = broker.kind
        port = free_port()
        dashboard = _start_dashboard(broker.url, table, port)
        publisher = WireClient(broker.url, client_id="bench-dashboard-publisher")
        topic = Topics(table).game_public
        try:
            publisher.start(wait=10)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1600, "height": 1000})
                deadline = time.monotonic() + 20
                while True:
                    try:
                        page.goto(f"http://127.0.0.1:{port}/?lang=en")
                        break
                    except PlaywrightError:
                        if time.monotonic() > deadline or dashboard.poll() is not None:
                            raise CliError("the dashboard did not start within 20 s") from None
                        time.sleep(0.2)
                page.wait_for_function("window.__cauldron && window.__cauldron.renders > 0")
                # the dashboard is connected to the broker once the status says so
                page.wait_for_function("!document.querySelector('[data-banner=broker]')")
                total = runs * UPDATES
                done = 0
                # Warm-up (not counted): first renders, JIT, connection buffers.
                warm = Game.new(GameConfig(colours=("yellow", "red")), random.Random(99))
                for _ in range(20):
                    warm.apply(warm.legal_actions()[0])
                    view = PublicTableView.of(public_view(warm), None)
                    ts = time.time()
                    publisher.publish(topic, GamePublic(table=table, game_id="warm-up", ts=ts,
                                                        view=view), retain=True)
                    page.evaluate("ts => window.__cauldron.waitFor(ts)", ts)
                for run_index in range(runs):
                    views = _random_views(run_index)
                    offset, rtt = _clock_offset_ms(page)
                    page.evaluate("window.__cauldron.latencies = [];"
                                  "window.__cauldron.received = []; window.__cauldron.log = []")
                    for _ in range(UPDATES):
                        view = next(views)
                        ts = time.time()
                        update = GamePublic(table=table, game_id=f"bench-{run_index}",
                                            turn=view.expected.seat, ts=ts, view=view)
                        publisher.publish(topic, update, retain=True)
                        # resolved by the page itself: no polling competes with the update
                        page.evaluate("ts => window.__cauldron.waitFor(ts)", ts)
                        # the next one once this one is drawn (placements are seconds
                        # apart: none waits for the previous one's layout and paint)
                        page.evaluate(_DRAWN)
                        done += 1
                        progress("dashboard latency", done, total)
                    shown = [float(x) - offset
                             for x in page.evaluate("window.__cauldron.latencies")]
                    arrived = [float(x) - offset
                               for x in page.evaluate("window.__cauldron.received")]
                    if len(shown) != UPDATES:
                        raise CliError(f"the page showed {len(shown)} of {UPDATES} updates")
                    shown_p50.append(percentile(shown, 50))
                    shown_p95.append(percentile(shown, 95))
                    shown_max.append(max(shown))
                    recv_p50.append(percentile(arrived, 50))
                    recv_p95.append(percentile(arrived, 95))
                    drawn = [float(entry[4]) - offset - float(entry[0]) * 1000
                             for entry in page.evaluate("window.__cauldron.log")]
                    drawn_p95.append(percentile(drawn, 95))
                    detail.setdefault("clock_offset_ms", []).append(round(offset, 3))
                    detail.setdefault("clock_probe_rtt_ms", []).append(round(rtt, 3))
                # The whole path: hub event -> engine -> game/public -> dashboard -> page.
                full = _full_path(page, broker.url, table, runs, Path(scratch) / "keys",
                                  hub_games, progress)
                browser.close()
            # The server's share: the same updates to a plain WebSocket client (no browser).
            server_p50, server_p95 = _plain_client(port, publisher, topic, table, runs)
            # Many viewers: the same updates to 500 live clients.
            with contextlib.suppress(OSError):
                detail["load_average_1min_before_viewers"] = round(os.getloadavg()[0], 2)
            many = _viewers(port, publisher, topic, table, runs, VIEWERS, progress,
                            dashboard.pid)
            detail.update(viewers=VIEWERS, updates_per_run_viewers=VIEWER_UPDATES,
                          viewer_processes=VIEWER_PROCESSES)
        finally:
            publisher.stop()
            stop_process(dashboard)
    with contextlib.suppress(OSError):  # other work on the machine skews the figures
        detail["load_average_1min"] = round(os.getloadavg()[0], 2)
    return [
        Figure("publish -> table view shown, p50", "ms", shown_p50, detail=detail),
        Figure("publish -> table view shown, p95", "ms", shown_p95, goal="<= 20 ms"),
        Figure("publish -> table view shown, worst of run", "ms", shown_max),
        Figure("of which publish -> message in the page, p50", "ms", recv_p50),
        Figure("of which publish -> message in the page, p95", "ms", recv_p95),
        Figure("publish -> frame drawn after it, p95", "ms", drawn_p95),
    ] + ([
        Figure("hub event -> engine -> table view shown, p50", "ms", full["shown_p50"]),
        Figure("hub event -> engine -> table view shown, p95", "ms", full["shown_p95"],
               goal="<= 20 ms"),
        Figure("of which hub event -> engine's game/public, p50", "ms", full["engine_p50"]),
        Figure("of which hub event -> engine's game/public, p95", "ms", full["engine_p95"]),
        Figure("of which hub event -> message in the page, p95", "ms", full["recv_p95"]),
    ] if full else []) + [
        Figure("server share: publish -> plain WebSocket client, p50", "ms", server_p50),
        Figure("server share: publish -> plain WebSocket client, p95", "ms", server_p95),
        Figure(f"viewers {VIEWERS} p50", "ms", many["p50"]),
        Figure(f"viewers {VIEWERS} p99", "ms", many["p99"], goal="<= 50 ms"),
        Figure(f"viewers {VIEWERS} p99, read by the clients", "ms", many["read_p99"]),
        Figure(f"viewers {VIEWERS}: clients' CPU per update", "ms", many["client_cpu"]),
    ] + ([  # the last viewers wait for nearly all of it: what their p99 cannot be below
        Figure(f"viewers {VIEWERS}: dashboard CPU per update", "ms", many["server_cpu"]),
        Figure(f"viewers {VIEWERS}: of which kernel (socket sends)", "ms",
               many["server_kernel"]),
    ] if many["server_cpu"] else [])


def hub_games(seed: int) -> Iterator[tuple[dict[str, object], list[HubEvent]]]:
    """Random 4-player games as one hub's events, without end: (new_game args, the 32
    deal events then up to `FULL_WARMUP` + `UPDATES` of the play's). One hub for all of
    them, its `seq` running on (an engine takes a new hub only after the host says so)."""
    from engine.games.glastonbury.table.table_driver import scripted_game
    from engine.wire.contract import HubEvent

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

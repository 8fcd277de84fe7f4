"""``cauldron hub``, ``cauldron enroll``, ``cauldron readers`` and ``cauldron schema``."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cli import CliError

if TYPE_CHECKING:
    from engine.wire.api import A, Command, EnrolStatus, R
    from hub.backends.base import ReaderBackend
    from hub.config import HubConfig
    from hub.tagmap import TagMap


def _config_options(parser: argparse.ArgumentParser, mqtt: bool = True) -> None:
    from hub.config import BACKENDS  # the one list of reader back-ends

    parser.add_argument("--config", type=Path, help="hub config file (TOML or JSON)")
    parser.add_argument("--backend", choices=BACKENDS,
                        help="reader back-end (default from config, else sim)")
    parser.add_argument("--table", help="table id: topics go under cauldron/<table>/")
    parser.add_argument("--game", help="the game this table serves (default from config, "
                        "else the registry's default)")
    parser.add_argument("--data-dir", type=Path, help="where the outbox and tag map live")
    parser.add_argument("--tagmap", type=Path, help="tag map file (default <data-dir>/tagmap.json)")
    parser.add_argument("--port", dest="serial_port", help="serial port of the Pico firmware")
    if mqtt:
        parser.add_argument("--mqtt", help="broker URL, e.g. mqtt://127.0.0.1:1883")


# Where `cauldron setup` puts the hub's config on an installed table.
INSTALLED_CONFIG = Path("/etc/cauldron/hub.toml")


def _load_config(args: argparse.Namespace, installed: bool = False) -> HubConfig:
    """The hub's settings: --config, else (with `installed`, for the host's tools
    `enroll` and `readers` given no table of their own) the installed table's config."""
    from hub.config import HubConfig
    from hub.errors import ConfigError

    path = args.config
    if (installed and path is None and args.backend is None and args.table is None
            and args.data_dir is None and INSTALLED_CONFIG.exists()):
        if not os.access(INSTALLED_CONFIG, os.R_OK):
            raise CliError(f"{INSTALLED_CONFIG} (this table's hub) is readable by root and "
                           "the service only: run it with sudo")
        path = INSTALLED_CONFIG
    try:
        config = HubConfig.load(
            path,
            backend=args.backend,
            table=args.table,
            game=getattr(args, "game", None),
            data_dir=args.data_dir,
            tagmap=args.tagmap,
            mqtt=getattr(args, "mqtt", None),
        )
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if args.serial_port:
        config.serial["port"] = args.serial_port
    from hub.game import use

    use(config.game)  # before anything lays out, enrols or names the game's pieces
    return config


def _tagmap_for(config: HubConfig) -> tuple[TagMap, str | None]:
    """The tag map to use, and a note for the person (shown once the set-up is sound)."""
    from hub.errors import TagMapError
    from hub.tagmap import TagMap

    try:
        if config.backend == "sim" and not config.tagmap_path.exists():
            from hub.backends.sim import virtual_box_tagmap

            return virtual_box_tagmap(), "simulated table: a virtual box (every card enrolled)"
        tagmap = TagMap.load(config.tagmap_path)
    except TagMapError as exc:
        raise CliError(str(exc)) from None
    if not len(tagmap):
        return tagmap, (f"note: tag map {config.tagmap_path} is empty; every card is an "
                        "unknown tag until you run `cauldron enroll`")
    return tagmap, None


def _backend_for(config: HubConfig, tagmap: TagMap, sim_state: bool = False) -> ReaderBackend:
    """The configured back-end, opened. ``sim_state``: a sim table is the hub's, kept in the
    data dir across restarts (only `cauldron hub`; the set-up tools get a table of their own)."""
    from hub.backends import make_backend
    from hub.errors import HubError

    try:
        backend = make_backend(config, tagmap, sim_state=sim_state)
        backend.open()
    except HubError as exc:
        raise CliError(str(exc)) from None
    return backend


def _sim_steps(args: argparse.Namespace, backend: ReaderBackend) -> list[Any] | None:
    from hub.errors import ConfigError

    script, demo = getattr(args, "sim_script", None), getattr(args, "sim_demo", False)
    if script is None and not demo:
        return None
    if backend.name != "sim":
        raise CliError("--sim-script and --sim-demo need --backend sim")
    from hub.simscript import demo_script, load_script

    try:
        return load_script(script) if script is not None else demo_script(seed=args.seed)
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def _clear_for_script(backend: ReaderBackend) -> int:
    """A sim script plays from an empty table: lift what an earlier run left lying there (the
    hub reports those removals). Returns how many were lifted."""
    from hub.backends.sim import SimulatedTable

    assert isinstance(backend, SimulatedTable)
    left = len(backend.truth())
    backend.clear()
    return left


def _start_sim(backend: ReaderBackend, steps: list[Any], speed: float,
               stop: threading.Event) -> threading.Thread:
    from hub.backends.sim import SimulatedTable
    from hub.simscript import run_steps

    assert isinstance(backend, SimulatedTable)

    def play() -> None:
        run_steps(backend, steps, stop, speed,
                  on_error=lambda m: print(f"sim script: {m}", file=sys.stderr))

    thread = threading.Thread(target=play, name="sim-script", daemon=True)
    thread.start()
    return thread


# ---------------------------------------------------------------- cauldron hub


def _run_hub(args: argparse.Namespace) -> int:
    from engine.wire.contract import HubEvent, Topics
    from engine.wire.mqtt import MqttError, WireClient
    from hub.errors import HubError, OutboxError
    from hub.game import piece_name, place_name
    from hub.io import TableIO
    from hub.outbox import Outbox
    from hub.service import Hub

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = _load_config(args)
    try:
        client = WireClient(config.broker_url, client_id=config.hub_name,
                            tls_ca=config.mqtt_ca, state_topic=Topics(config.table).hub_state,
                            keys=config.keys_dir)
    except (MqttError, HubError) as exc:
        raise CliError(str(exc)) from None
    tagmap, note = _tagmap_for(config)
    backend = _backend_for(config, tagmap, sim_state=True)
    try:
        steps = _sim_steps(args, backend)
        io = TableIO.from_config(config.io)
        outbox = Outbox(config.outbox_path)
        left = _clear_for_script(backend) if steps else 0
    except OutboxError as exc:
        backend.close()
        _say_degraded(client, Topics(config.table, client.base).hub_health, config.hub_name,
                      backend.name, config.outbox_path, exc)
        raise CliError(f"{exc}: the hub cannot run without its outbox (`sudo cauldron "
                       "doctor` says what to do)") from None
    except (HubError, OSError, CliError) as exc:
        backend.close()
        raise CliError(str(exc)) from None
    if note:
        print(note, file=sys.stderr)
    if left:
        print(f"sim script: the table starts empty ({left} card(s) left from before lifted)",
              file=sys.stderr)
    hub = Hub(table=config.table, backend=backend, client=client, outbox=outbox, tagmap=tagmap,
              hub_id=config.hub_name, io=io, poll_interval=config.poll_interval,
              keys=config.keys_dir,
              snapshot_interval=config.snapshot_interval)

    def show(event: HubEvent) -> None:
        # The host watches this: places and cards named for people (the game's names).
        where = (place_name(event.cell) if event.cell else
                 place_name(f"pad:{event.seat}") if event.seat is not None else "")
        what = (piece_name(event.card_id) if event.card_id else
                event.uid or event.health or event.button or "")
        try:
            print(f"#{event.seq:<5} {event.kind:<13} {event.action or '':<8} {where:<18} "
                  f"{what}", flush=True)
        except (BrokenPipeError, ValueError):  # stdout closed (| head): keep running quietly
            hub.listeners.remove(show)

    if not args.quiet:
        hub.listeners.append(show)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    hub.start()
    pending = outbox.pending_count()
    print(f"hub {config.hub_name}: {backend.name} back-end, {backend.n_readers} readers, "
          f"publishing to {client.broker.redacted()} under {hub.topics.prefix}"
          + (f" ({pending} undelivered event(s) from before)" if pending else ""),
          file=sys.stderr, flush=True)
    if not client.wait_connected(3):
        if client.refused:
            print(client.not_connected_reason(3) + ". The hub keeps trying; events are kept "
                  "on disk meanwhile.", file=sys.stderr, flush=True)
        else:
            print(f"waiting for the MQTT broker at {client.broker.redacted()} (events are "
                  "kept on disk until it answers)...", file=sys.stderr, flush=True)
    player = _start_sim(backend, steps, args.sim_speed, stop) if steps else None
    deadline = time.monotonic() + args.duration if args.duration else None
    try:
        while not stop.wait(0.1):
            if deadline is not None and time.monotonic() >= deadline:
                break
            if args.exit_when_done and player is not None and not player.is_alive():
                time.sleep(0.1)  # last changes confirmed and published
                if outbox.pending_count() == 0:
                    break
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        hub.stop()
    return 0


def _say_degraded(client: Any, topic: str, hub_id: str, backend: str, path: Path,
                  exc: Any) -> None:
    """A hub that cannot open its outbox says why on its retained ``hub/health`` before it
    exits (doctor and the dashboard show it while systemd starts it again)."""
    from engine.wire.contract import HubDegraded, HubHealth

    trouble = exc.trouble
    health = HubHealth(hub_id=hub_id, ts=time.time(), backend=backend, readers=[],
                       degraded=HubDegraded(code=trouble.code, reason=(
                           f"the hub cannot open its outbox {path} ({trouble.words})")[:500]))
    done = threading.Event()
    client.start()
    if client.wait_connected(5):
        client.publish(topic, health, retain=True, on_ack=done.set)
        done.wait(5)
    client.stop()


# ---------------------------------------------------------------- cauldron enroll


def _hub_link(config: HubConfig, purpose: str, timeout: float = 3.0) -> Any:
    """A client that can ask this table's running hub (hub/cmd/*), or None when no hub
    answers. It logs in with the hub's own account under a client id of its own."""
    import uuid

    from engine.wire.mqtt import MqttError, WireClient
    from hub.errors import HubError

    try:
        # Signed with the table's command key (the hub refuses anything else), which is
        # never made here: a key of its own would be nobody else's.
        client = WireClient(config.broker_url,
                            client_id=f"{config.hub_name}-{purpose}-{uuid.uuid4().hex[:6]}",
                            tls_ca=config.mqtt_ca, make_keys=False, keys=config.keys_dir)
    except (MqttError, HubError) as exc:
        raise CliError(str(exc)) from None
    client.start()
    if not client.wait_connected(timeout):
        refused = client.refused
        reason = client.not_connected_reason(timeout)
        client.stop(timeout=0.5)
        if refused:
            raise CliError(reason)
        return None
    return client


def _ask_hub(client: Any, table: str, command: Command[A, R], args: Mapping[str, object],
             timeout: float = 5.0) -> R | None:
    """``hub/cmd/<verb>`` (`engine.wire.api.HUB_API`); its typed result, None when no hub
    answers; refusals (and an answer this program cannot read) raise."""
    from pydantic import ValidationError

    from engine.wire.api import BadArgs, dump
    from engine.wire.contract import Topics
    from engine.wire.mqtt import MqttError, RequestTimeout

    verb = command.verb
    try:
        reply = client.request(Topics(table).hub_cmd(verb), dump(command.parse(args)),
                               timeout=timeout)
    except RequestTimeout:
        return None
    except (MqttError, BadArgs) as exc:  # no command key here
        raise CliError(str(exc)) from None
    if reply.status != "ok":
        raise CliError(reply.error or f"the hub refused {verb}")
    assert isinstance(command.result, type), "one result model for the hub's verbs"
    try:
        return command.result.model_validate(reply.data)
    except ValidationError as exc:
        raise CliError(f"the hub's answer to {verb} is not what this program knows ({exc}); "
                       "are the hub and this program the same version?") from None


def _seat_pad(text: str) -> int:
    """--pad N is Seat N's pad, counted from 1 like every seat people see; the wire's 0..3."""
    try:
        seat = int(text)
    except ValueError:
        seat = 0
    if not 1 <= seat <= 4:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seat: give 1 to 4 (--pad 1 is "
                                         "Seat 1's pad)")
    return seat - 1


def _enroll_live(args: argparse.Namespace, config: HubConfig, client: Any) -> int | None:
    """Drive the running hub's enrolment mode from the terminal; None: no hub answered."""
    import select

    from engine.wire.api import ENROL
    from hub.enroll import COMMANDS_HELP
    from hub.game import piece_noun, place_name

    def ask(action: str, **more: object) -> EnrolStatus | None:
        return _ask_hub(client, config.table, ENROL, {"action": action, **more})

    def typed() -> str | None:
        """u / s / q typed (then Enter): its action; waits a moment for it."""
        ready, _, _ = select.select([sys.stdin], [], [], 0.2)
        if not ready:
            return None
        line = sys.stdin.readline()
        word = (line.strip().lower()[:1] or "?") if line else "q"
        action = {"u": "undo", "s": "skip", "q": "stop"}.get(word)
        if action is None:
            print(f"Unknown command {line.strip()!r}: {COMMANDS_HELP}", flush=True)
        return action

    status = ask("start", pad=args.pad, write=args.write)
    if status is None:
        return None
    pad = place_name(f"pad:{args.pad}")
    print(f"The running hub {config.hub_name} enrols: tap each {piece_noun()} on {pad}. "
          f"{COMMANDS_HELP} (then Enter). The host page shows the same progress.",
          flush=True)
    status, ended = _follow_enrolment(ask, status, args.idle_timeout, typed)
    return 0 if ended and status.done is not None and status.done == status.total else 1


def _spare_live(args: argparse.Namespace, config: HubConfig, client: Any) -> int | None:
    """``--spare`` asked of the running hub (``enrol`` ``spare``): the hub reads the pad, a
    game may go on; this says what it says until the spare is enrolled or stopped. None: no
    hub answered."""
    from engine.wire.api import ENROL

    def ask(action: str, **more: object) -> EnrolStatus | None:
        return _ask_hub(client, config.table, ENROL, {"action": action, **more})

    def wait() -> None:
        time.sleep(0.2)

    status = ask("spare", pad=args.pad, piece=args.spare)
    if status is None:
        return None
    status, ended = _follow_enrolment(ask, status, args.idle_timeout, wait)
    return 0 if ended and status.said and status.said[-1].code == "spare_enrolled" else 1


def _follow_enrolment(ask: Callable[..., EnrolStatus | None], status: EnrolStatus,
                      idle_timeout: float | None, between: Callable[[], str | None]
                      ) -> tuple[EnrolStatus, bool]:
    """Say what the hub's enrolment (or spare) says until it ends: (its last status, True);
    or until ``idle_timeout`` s pass without news or Ctrl-C: it is stopped, (that status,
    False). ``between`` waits a moment between two looks and may give an action to ask."""
    said, idle_since = None, time.monotonic()
    try:
        while True:
            if status.message != said:
                said, idle_since = status.message, time.monotonic()
                print(said, flush=True)
            if not status.active:
                return status, True
            action = between()
            if action is not None:
                status = ask(action) or status
                continue
            if idle_timeout is not None and time.monotonic() - idle_since > idle_timeout:
                print(f"No tag for {idle_timeout:g} s.", flush=True)
                status = ask("stop") or status
                print(status.message, flush=True)
                return status, False
            status = ask("status") or status
    except KeyboardInterrupt:
        status = ask("stop") or status
        print(f"\n{status.message}", flush=True)
        return status, False


def _through_hub(config: HubConfig, purpose: str, live: Any, otherwise: str) -> int | None:
    """Run ``live(client)`` against the running hub; None (after saying ``otherwise``) when
    no hub answers, so the caller reads the readers itself."""
    client = _hub_link(config, purpose)
    if client is not None:
        try:
            result: int | None = live(client)
        finally:
            client.stop(timeout=0.5)
        if result is not None:
            return result
    print(f"No hub answers for table {config.table} at {_redacted(config)}: {otherwise}",
          file=sys.stderr, flush=True)
    return None


def _run_enroll(args: argparse.Namespace) -> int:
    """The running hub enrols (or takes the spare); with none, this reads the pad itself."""
    config = _load_config(args, installed=True)
    spare = args.spare is not None
    if not args.offline and not _sim_wanted(args):
        live = _spare_live if spare else _enroll_live
        result = _through_hub(config, "spare" if spare else "enrol",
                              lambda c: live(args, config, c),
                              "reading the pad directly (stop the hub first if it runs "
                              "elsewhere).")
        if result is not None:
            return result
    return _enroll_spare(args, config) if spare else _enroll_offline(args, config)


def _sim_wanted(args: argparse.Namespace) -> bool:
    return getattr(args, "sim_script", None) is not None or getattr(args, "sim_demo", False)


def _redacted(config: HubConfig) -> str:
    from engine.wire.mqtt import BrokerUrl

    return BrokerUrl.parse(config.mqtt).redacted()


def _pad_backend(args: argparse.Namespace, config: HubConfig) -> tuple[ReaderBackend, int]:
    """A back-end of the enrolling tool's own (opened, with an empty tag map: it reads UIDs)
    and the reader of ``--pad``."""
    from hub.tagmap import TagMap

    backend = _backend_for(config, TagMap())
    try:
        return backend, backend.layout.pad_reader(args.pad)
    except ValueError as exc:
        backend.close()
        raise CliError(f"{exc}; choose --pad 1..{config.pads}") from None


def _enroll_offline(args: argparse.Namespace, config: HubConfig) -> int:
    import select

    from hub.enroll import COMMANDS_HELP, Enrolment, run_enrolment
    from hub.errors import BackendError, TagMapError
    from hub.game import enrolment_order, piece_noun, place_name
    from hub.tagmap import TagMap

    try:
        tagmap = TagMap.load(config.tagmap_path)
    except TagMapError as exc:
        raise CliError(str(exc)) from None
    backend, pad = _pad_backend(args, config)
    try:
        enrolment = Enrolment(tagmap, order=enrolment_order(), backend=backend, reader=pad,
                              write_tags=args.write)
    except BackendError as exc:
        backend.close()
        raise CliError(str(exc)) from None
    steps = _sim_steps(args, backend)
    stop = threading.Event()

    def read_command() -> str | None:
        if not sys.stdin.isatty() and steps:
            return None
        ready, _, _ = select.select([sys.stdin], [], [], 0)
        if not ready:
            return None
        line = sys.stdin.readline()
        return line if line else "q"

    def say(text: str) -> None:
        print(text, flush=True)

    print(f"Enrolling into {config.tagmap_path}: tap each {piece_noun()} on "
          f"{place_name(f'pad:{args.pad}')}. "
          f"{COMMANDS_HELP} (then Enter).", flush=True)
    if steps:
        _start_sim(backend, steps, args.sim_speed, stop)
    try:
        complete = run_enrolment(enrolment, backend, pad, read_command, say,
                                 idle_timeout=args.idle_timeout)
    except KeyboardInterrupt:
        print(f"\n{enrolment.stopped()}")
        complete = False
    finally:
        stop.set()
        backend.close()
    return 0 if complete else 1


def _outbox_sightings(config: HubConfig) -> tuple[dict[str, float], set[str]]:
    """What the table's hub stored (none played yet: nothing): when each tag was last seen,
    and the tags lying on its readers, for a spare by kind (`Spare.of`)."""
    import sqlite3

    from hub.errors import OutboxError
    from hub.outbox import Outbox

    if not config.outbox_path.exists():
        return {}, set()
    try:
        outbox = Outbox(config.outbox_path)
    except (OutboxError, sqlite3.Error) as exc:
        raise CliError(f"the hub's outbox {config.outbox_path} cannot be read ({exc}); name "
                       "the lost piece itself, not its kind") from None
    try:
        return outbox.last_seen(), set(outbox.reader_state().values())
    finally:
        outbox.close()


def _enroll_spare(args: argparse.Namespace, config: HubConfig) -> int:
    """``cauldron enroll --spare <piece or kind>`` with no hub running (or ``--offline``): one
    new tag, read from the pad directly (a hub started later reads the changed tag map)."""
    from hub.enroll import Spare, SpareError, run_spare
    from hub.errors import TagMapError
    from hub.tagmap import TagMap

    try:
        tagmap = TagMap.load(config.tagmap_path)
        seen, lying = _outbox_sightings(config)
        spare = Spare.of(tagmap, args.spare, seen=seen, lying=lying)
    except (TagMapError, SpareError) as exc:
        raise CliError(str(exc)) from None
    backend, pad = _pad_backend(args, config)
    steps = _sim_steps(args, backend)
    stop = threading.Event()
    if steps:
        _start_sim(backend, steps, args.sim_speed, stop)
    try:
        done = run_spare(spare, backend, pad, lambda text: print(text, flush=True),
                         idle_timeout=args.idle_timeout)
    except KeyboardInterrupt:
        done = False
    finally:
        stop.set()
        backend.close()
    return 0 if done else 1


# ---------------------------------------------------------------- cauldron readers


def render_grid(backend: ReaderBackend, tagmap: TagMap, width: int = 24) -> str:
    """The 6x6 grid and the pads as text: card name (or UID) and health per reader."""
    state = backend.state()
    cards = {r: tagmap.card_for(uid) for r, uid in state.items() if uid}
    grid = render_readers(backend.layout, state, cards, backend.health(), width)
    stats = getattr(backend, "stats", None)  # the firmware's STATS line (serial back-end)
    return grid + (f"\nfirmware timing: {stats}" if stats else "")


def render_readers(layout: Any, state: Mapping[int, str | None],
                   cards: Mapping[int, str | None],
                   health: Mapping[int, str], width: int = 24) -> str:
    """`render_grid` from plain data (a live hub's ``readers`` answer, or a back-end)."""
    from hub.game import piece_name

    marks = {"ok": " ", "flicker": "~", "silent": "!", "absent": "x"}

    def cell(reader: int) -> str:
        uid = state.get(reader)
        card = cards.get(reader)
        text = (piece_name(card) if card else f"?{uid[-6:]}") if uid else "."
        return f"{marks.get(health.get(reader, 'ok'), '?')}{text}"[:width].ljust(width)

    lines = []
    if layout.cells:  # a game without a grid (Quacks): its pads only
        lines.append("      " + "".join(f"col {c + 1}".ljust(width) for c in range(6)))
    for row in range(6 if layout.cells else 0):
        parts = []
        for col in range(6):
            parts.append("[corner]".ljust(width) if (row, col) in layout.corners
                         else cell(layout.cell_reader(row, col)))
        lines.append(f"row {row + 1} " + "".join(parts))
    if lines:
        lines.append("")
    lines.append("pads  " + "".join(f"{seat + 1}:{cell(layout.pad_reader(seat))}"
                                     for seat in range(layout.pads)))
    problems = {r: h for r, h in health.items() if h != "ok"}
    lines.append("")
    lines.append("health: all readers ok" if not problems else "health: " + ", ".join(
        f"{layout.place(r).label()}: {h}" for r, h in sorted(problems.items())))
    lines.append("legend: . empty, ?XXXXXX unknown tag, ~ flicker, ! silent, x absent")
    return "\n".join(lines)


def _readers_live(args: argparse.Namespace, config: HubConfig, client: Any) -> int | None:
    """Show the running hub's readers (``hub/cmd/readers``); None when no hub answers."""
    from engine.wire.api import READERS
    from hub.layout import Layout

    live = sys.stdout.isatty() and not args.once
    try:
        while True:
            data = _ask_hub(client, config.table, READERS, {})
            if data is None:
                return None
            rows = data.readers
            layout = Layout(pads=data.pads,
                            perimeter=any(r.position is not None for r in rows))
            state = {r.reader: r.uid for r in rows if r.uid}
            cards = {r.reader: r.card_id for r in rows}
            health = {r.reader: r.health for r in rows}
            grid = render_readers(layout, state, cards, health)
            head = (f"hub {data.hub_id} ({data.backend} back-end, "
                    f"{data.tags_known} tags known), live")
            if not live:  # a pipe or a log: one grid, then done (a terminal redraws)
                with contextlib.suppress(BrokenPipeError):
                    print(head + "\n" + grid, flush=True)
                return 0
            else:
                sys.stdout.write("\x1b[H\x1b[J" + head + "\n" + grid + "\n\nCtrl-C to stop\n")
                sys.stdout.flush()
            time.sleep(max(args.interval, 0.2))
    except KeyboardInterrupt:
        return 0


def _run_readers(args: argparse.Namespace) -> int:
    config = _load_config(args, installed=True)
    if args.bench:  # hardware/bench-test.md
        from hub.bench_readers import run_bench
        from hub.errors import HubError

        try:
            return run_bench(config, args.bench_readers, args.tries, args.polls,
                             Path(args.report), interactive=sys.stdin.isatty(),
                             hold_field=args.hold_field, sweep_readers=args.bench_sweep)
        except (HubError, OSError) as exc:
            raise CliError(str(exc)) from None
    if not args.direct and not _sim_wanted(args):
        result = _through_hub(config, "readers", lambda c: _readers_live(args, config, c),
                              "reading the readers directly" + (
                                  " (a simulated table of its own, not the hub's)"
                                  if config.backend == "sim" else ""))
        if result is not None:
            return result
    tagmap, _note = _tagmap_for(config)
    backend = _backend_for(config, tagmap)
    steps = _sim_steps(args, backend)
    stop = threading.Event()
    if steps:
        _start_sim(backend, steps, args.sim_speed, stop)
    live = sys.stdout.isatty() and not args.once
    last_draw = 0.0
    try:
        sweeps = 0
        while True:
            backend.poll()
            sweeps += 1
            now = time.monotonic()
            if args.once and sweeps >= args.sweeps:
                print(render_grid(backend, tagmap))
                return 0
            if live and now - last_draw >= args.interval:
                last_draw = now
                sys.stdout.write("\x1b[H\x1b[J" + render_grid(backend, tagmap)
                                 + f"\n\n{sweeps} sweeps; Ctrl-C to stop\n")
                sys.stdout.flush()
            elif not live and not args.once and now - last_draw >= args.interval:
                last_draw = now
                print(render_grid(backend, tagmap) + "\n", flush=True)
            time.sleep(config.poll_interval)
    except KeyboardInterrupt:
        return 0
    finally:
        stop.set()
        backend.close()


# ---------------------------------------------------------------- cauldron schema


def _run_schema(args: argparse.Namespace) -> int:
    from engine.wire.api import write_api_schemas
    from engine.wire.contract import write_schemas

    try:
        paths = [*write_schemas(args.out), *write_api_schemas(args.out)]
    except OSError as exc:
        raise CliError(f"cannot write schemas into {args.out}: {exc.strerror}") from None
    for path in paths:
        print(path)
    return 0


def _sim_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sim-script", type=Path, help="steps for the simulated table")
    parser.add_argument("--sim-demo", action="store_true",
                        help="play a made-up game on the simulated table")
    parser.add_argument("--sim-speed", type=float, default=1.0,
                        help="speed-up of sim waits (a card must lie >= ~15 ms to be seen)")
    parser.add_argument("--seed", type=int, default=1, help="seed of --sim-demo")


def register(subparsers: Any) -> None:
    hub = subparsers.add_parser(
        "hub", help="run the table hub: readers -> MQTT events",
        description="Read the table's RFID readers and publish hub events on MQTT. With "
                    "--backend sim and --sim-demo it plays a made-up game (no hardware).")
    _config_options(hub)
    _sim_options(hub)
    hub.add_argument("--duration", type=float, help="stop after this many seconds")
    hub.add_argument("--exit-when-done", action="store_true",
                     help="stop once the sim script is played and every event delivered")
    hub.add_argument("-q", "--quiet", action="store_true", help="do not print each event")
    hub.add_argument("-v", "--verbose", action="store_true", help="log connection details")
    hub.set_defaults(handler=_run_hub)

    enroll = subparsers.add_parser(
        "enroll", help="enrol the box's tags: tap each card on a pad",
        description="Walk through every card of the box in catalogue order (a game of "
                    "identical chips, kind by kind); tap each on the pad. Resumes where it "
                    "stopped. With the hub running, the hub enrols (so "
                    "the host page shows the progress and the new tags are used at once).")
    _config_options(enroll)
    enroll.add_argument("--offline", action="store_true",
                        help="read the pad directly, without the running hub (the hub must "
                             "be stopped)")
    _sim_options(enroll)
    enroll.add_argument("--pad", type=_seat_pad, default=0, metavar="SEAT",
                        help="whose scan pad to use: 1 to 4 (default 1, Seat 1's pad)")
    enroll.add_argument("--write", action="store_true",
                        help="also write the card id into each tag (serial/spi/pcsc back-ends)")
    enroll.add_argument("--spare", metavar="PIECE_OR_KIND",
                        help="a new tag for a lost piece (an id, or a kind such as white-1): "
                             "tap it on the pad (the running hub reads it, a game may go "
                             "on); the piece's old tag is retired")
    enroll.add_argument("--idle-timeout", type=float, default=None,
                        help="stop after this many seconds without a tag")
    enroll.set_defaults(handler=_run_enroll)

    readers = subparsers.add_parser(
        "readers", help="live grid of what each reader sees (table set-up)",
        description="Asks the running hub what each reader sees; with no hub running (or "
                    "--direct) reads the readers itself.")
    _config_options(readers)
    readers.add_argument("--direct", action="store_true",
                         help="read the readers directly, not through the running hub")
    _sim_options(readers)
    readers.add_argument("--once", action="store_true", help="print one grid and exit")
    readers.add_argument("--sweeps", type=int, default=5, help="sweeps before --once prints")
    readers.add_argument("--interval", type=float, default=0.2, help="seconds between redraws")
    bench = readers.add_argument_group("bench test (hardware/bench-test.md)")
    bench.add_argument("--bench", action="store_true",
                       help="measure wake-up time, read rate and chip version per reader")
    bench.add_argument("--bench-readers", default="0", help="readers to measure, e.g. 0,5,33")
    bench.add_argument("--tries", type=int, default=20, help="polls per wake-up delay")
    bench.add_argument("--polls", type=int, default=200, help="reads per read rate")
    bench.add_argument("--report", default="reader-report.json", help="where to write it")
    bench.add_argument("--hold-field", type=int, default=None, metavar="READER",
                       help="keep this reader's field on through the run (overlap)")
    bench.add_argument("--bench-sweep", type=int, default=0, metavar="N",
                       help="then time the firmware's sweep of readers 0..N-1 (2-4), "
                            "wake-ups overlapped")
    readers.set_defaults(handler=_run_readers)

    schema = subparsers.add_parser(
        "schema", help="write the wire contract's and the API map's JSON Schemas")
    schema.add_argument("--out", type=Path, default=Path("schemas"),
                        help="directory to write into (default ./schemas)")
    schema.set_defaults(handler=_run_schema)

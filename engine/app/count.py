"""``cauldron count``: score-only mode on one laptop or Pi with one reader, no broker.

Wires a reader back-end (``pcsc``: a USB NFC reader, the default; ``sim``: a simulated
reader on the page; ``spi``/``serial``: the table's own pads, from its hub config) to the
count page (`dashboard.count.CountDesk` served by `dashboard.main.create_count_app`): every
tag laid on a pad is looked up in the tag map, else in the tag's own memory (NDEF text), and
counted for the seat being counted (with a table's pads, one per seat: for that pad's seat).
Nothing imports this module: it is where the hub and the
dashboard meet for this mode, as `engine.app.demo` is for the demo.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cli import CliError
from engine.games.glastonbury.rules.cards import RECIPES
from engine.games.glastonbury.rules.names import card_name
from hub.config import BACKENDS  # the reader back-ends, one list

if TYPE_CHECKING:
    from dashboard.count import CountDesk
    from hub.backends.base import ReaderBackend
    from hub.tagmap import TagMap

log = logging.getLogger("cauldron.count")
POLL_INTERVAL = 0.02  # a tap is confirmed after two equal reads: ~40 ms


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "count", help="score only: tap each seat's cards on one reader, see the exact score",
        description="Score-only mode: after a game with the real cards, each seat taps its "
                    "cauldron cards and spells on one reader (or picks them on the page); the "
                    "page shows the exact score, the breakdown and the podium. Open the "
                    "address it prints.")
    parser.add_argument("--backend", choices=BACKENDS,
                        help="the reader: pcsc = USB NFC reader (default), sim = a simulated "
                             "reader on the page (no hardware), spi/serial = the table's pads")
    parser.add_argument("--config", type=Path, help="hub config file (TOML or JSON)")
    parser.add_argument("--data-dir", type=Path, help="where the tag map and the count live "
                        "(default $XDG_DATA_HOME/cauldron)")
    parser.add_argument("--tagmap", type=Path, help="tag map file (default <data-dir>/tagmap.json)")
    parser.add_argument("--serial-port", help="serial port of the Pico firmware (serial)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1; "
                        "0.0.0.0 lets the seats' phones follow their lists)")
    parser.add_argument("--port", type=int, default=8765, help="web port (default 8765)")
    parser.add_argument("--pin", default=os.environ.get("CAULDRON_HOST_PIN"),
                        help="host PIN (default $CAULDRON_HOST_PIN, else a random one)")
    parser.add_argument("--lang", choices=["fr", "en", "de"], default="en", help="page language")
    parser.set_defaults(handler=run)


class RecipeTags:
    """Tags stuck on recipe cards (UID -> recipe id). Recipe cards are no game cards, so
    they stay out of the table's tag map (and off the wire); the count enrols them the first
    time one is tapped. Kept beside the tag map as ``recipe-tags.json``."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.tags: dict[str, str] = {}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self.tags = {str(k).upper(): v for k, v in data.items() if v in RECIPES}
            except (OSError, ValueError, AttributeError):
                log.warning("recipe tags %s cannot be read: they are asked again", path)

    def add(self, uid: str, recipe: str) -> None:
        owner = next((u for u, r in self.tags.items() if r == recipe), None)
        if owner is not None and owner != uid:
            raise ValueError(f"{card_name(recipe)} is already enrolled with tag {owner}; "
                             "undo that first to change it")
        self.tags[uid] = recipe
        if self.path is not None:
            tmp = self.path.with_suffix(".tmp")
            try:
                tmp.write_text(json.dumps(self.tags, indent=1), encoding="utf-8")
                tmp.replace(self.path)
            except OSError as exc:
                del self.tags[uid]
                raise ValueError(f"the recipe tags cannot be saved: {exc.strerror}") from None


class ReaderLoop:
    """Polls the back-end on a thread and hands each tag laid on a pad to the desk."""

    def __init__(self, backend: ReaderBackend, tagmap: TagMap, desk: CountDesk) -> None:
        self.backend, self.tagmap, self.desk = backend, tagmap, desk
        self.recipes = RecipeTags(tagmap.path.with_name("recipe-tags.json")
                                  if tagmap.path is not None else None)
        self.stop = threading.Event()
        self.pads = [backend.layout.pad_reader(seat) for seat in range(backend.layout.pads)]
        self._seen: dict[tuple[str, str], threading.Event] = {}  # (kind, uid) -> waiter
        self._waiters = threading.Lock()
        self._sim_lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="count-reader", daemon=True)

    def card_for(self, uid: str) -> str | None:
        return (self.tagmap.card_for(uid) or self.recipes.tags.get(uid)
                or self.backend.tag_memory(uid))

    def _run(self) -> None:
        from hub.errors import HubError

        while not self.stop.is_set():
            try:
                self._sweep()
            except HubError as exc:
                self.desk.set_reader(health="absent", label=str(exc))
                self.stop.wait(1.0)
            except Exception:  # the reader thread must outlive any one bad read
                log.exception("count reader loop")
                self.stop.wait(1.0)
            self.stop.wait(POLL_INTERVAL)

    def _sweep(self) -> None:
        result = self.backend.poll()
        for change in result.changes:
            if change.reader not in self.pads:
                continue
            if change.kind == "placed":
                self.desk.reader_tap(change.uid, self.card_for(change.uid),
                                     self._seat_of(change.reader))
            self._signal(change.kind, change.uid)
        if result.health:
            health = self.backend.health()
            bad = [health[r] for r in self.pads if health.get(r, "ok") != "ok"]
            self.desk.set_reader(health=bad[0] if bad else "ok")

    def _seat_of(self, reader: int) -> int | None:
        """With one pad per seat (a table's pads), a pad's taps are its seat's; with one
        reader, they go to the seat being counted."""
        if len(self.pads) < 2:
            return None
        seat = self.backend.layout.place(reader).seat
        session = self.desk.session
        return seat if session is not None and seat is not None and seat < len(
            session.seats) else None

    def _signal(self, kind: str, uid: str) -> None:
        with self._waiters:
            event = self._seen.pop((kind, uid), None)
        if event is not None:
            event.set()

    def _expect(self, kind: str, uid: str) -> threading.Event:
        event = threading.Event()
        with self._waiters:
            self._seen[(kind, uid)] = event
        return event

    def sim_tap(self, card_id: str) -> None:
        """The simulated reader: lay ``card_id`` on pad 0, wait until it is read, lift it."""
        from engine.games.glastonbury.rules.cards import is_card_id
        from hub.backends.sim import SimulatedTable
        from hub.errors import HubError

        sim = self.backend
        assert isinstance(sim, SimulatedTable)
        if not is_card_id(card_id):
            raise ValueError(f"{card_name(card_id)} has no tag in the simulated box: pick it "
                             "by hand")
        with self._sim_lock:
            uid = sim.uid_of(card_id)
            placed, removed = self._expect("placed", uid), self._expect("removed", uid)
            try:
                sim.place(self.pads[0], card_id=card_id)
            except HubError as exc:
                raise ValueError(str(exc)) from None
            try:
                if not placed.wait(5):
                    raise ValueError("the simulated reader did not see the card: try again")
            finally:
                sim.remove(self.pads[0])
                removed.wait(5)

    def enrol(self, uid: str, card_id: str) -> None:
        """Enrol an unknown tag from the page (saved at once, as `cauldron enroll` does)."""
        from hub.errors import HubError
        from hub.tagmap import tag_value_name

        if card_id in RECIPES:
            if uid in self.tagmap:
                known = self.tagmap.card_for(uid) or ""
                raise ValueError(f"tag {uid} is already enrolled as {tag_value_name(known)}")
            self.recipes.add(uid, card_id)
            return
        if uid in self.recipes.tags:
            raise ValueError(f"tag {uid} is already enrolled as "
                             f"{card_name(self.recipes.tags[uid])}")
        try:
            self.tagmap.add(uid, card_id)
        except HubError as exc:
            raise ValueError(str(exc)) from None
        try:
            if self.tagmap.path is not None:
                self.tagmap.save()
        except (HubError, OSError) as exc:
            self.tagmap.remove_card(card_id)
            raise ValueError(f"the tag map cannot be saved: {exc}") from None


def connect(backend: ReaderBackend, tagmap: TagMap, desk: CountDesk) -> ReaderLoop:
    """Feed ``desk`` from ``backend`` (an opened back-end) on a reader thread, started here;
    stop it with ``loop.stop.set()``."""
    loop = ReaderLoop(backend, tagmap, desk)
    desk.set_reader(kind=backend.name, label=_reader_label(backend),
                    simulated=backend.name == "sim")
    if backend.name == "sim":
        desk.sim_tap = loop.sim_tap
    if tagmap.path is not None:
        desk.enrol = loop.enrol
    loop.thread.start()
    return loop


def _check_port(host: str, port: int) -> None:
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise CliError(f"cannot listen on {host}:{port} ({exc.strerror}): choose another "
                           "--port") from None


def _reader_label(backend: ReaderBackend) -> str:
    names = getattr(backend, "reader_names", None)
    if callable(names):
        found = list(names().values())
        if found:
            return ", ".join(found)
    if backend.name == "sim":
        return "simulated reader (pick a card and tap it on the page)"
    return f"{backend.name} pads"


def run(args: argparse.Namespace) -> int:
    from hub.backends import make_backend
    from hub.cli import _tagmap_for
    from hub.config import HubConfig
    from hub.errors import HubError

    try:
        config = HubConfig.load(args.config, data_dir=args.data_dir, tagmap=args.tagmap,
                                backend=args.backend or (None if args.config else "pcsc"))
    except HubError as exc:
        raise CliError(str(exc)) from None
    if args.config is None:
        config.pads = 1  # one reader: every tap goes to the seat being counted
    if args.serial_port:
        config.serial["port"] = args.serial_port
    tagmap, note = _tagmap_for(config)
    try:
        backend = make_backend(config, tagmap, sim_state=False)
        backend.open()
    except HubError as exc:
        raise CliError(f"{exc}. To try the count without a reader: "
                       "cauldron count --backend sim") from None
    try:
        return _serve(args, config, backend, tagmap, note)
    finally:
        backend.close()


def _serve(args: argparse.Namespace, config: Any, backend: ReaderBackend, tagmap: TagMap,
           note: str | None) -> int:
    import uvicorn
    from pydantic import ValidationError

    from dashboard.config import Settings
    from dashboard.count import CountDesk
    from dashboard.main import create_count_app
    from dashboard.serving import uvicorn_config

    fields: dict[str, Any] = {"host": args.host, "port": args.port, "default_lang": args.lang,
                              "virtual": False}
    if args.pin:
        fields["pin"] = args.pin
    try:
        settings = Settings(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise CliError(f"--{first['loc'][0]}: {first['msg']}") from None
    _check_port(args.host, args.port)
    desk = CountDesk(config.data_dir / f"count-{config.table}.json")
    loop = connect(backend, tagmap, desk)
    app = create_count_app(settings, desk)
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    if note:
        print(note, file=sys.stderr)
    print(f"score-only count with the {backend.name} reader ({_reader_label(backend)})",
          flush=True)
    print(f"open http://{shown}:{args.port}/count#pin={settings.pin}", flush=True)
    if not args.pin:
        print(f"host PIN: {settings.pin}", flush=True)
    server = uvicorn.Server(uvicorn_config(app, args.host, args.port))
    try:
        server.run()
    finally:
        loop.stop.set()
        loop.thread.join(2)
    return 0

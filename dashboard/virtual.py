"""The virtual table: a stateless relay to the simulated hub's physical table.

The simulated hub back-end (`hub.backends.sim`) owns everything physical: what lies on each
reader, the pile in order, the cauldrons, the pads and each hand. This module only

- shows its public view (``hub/sim``, retained: no covered card, no pile order), plus which
  bots wait and why (not physical: what the demo's bots tell the table screen);
- relays gestures to it (``hub/cmd/sim``), with the hand they are made with: ``"host"`` or a
  seat ``"0"``..``"3"``, and refuses those the moment does not allow (a draw is part of a
  refill the engine expects; a seat acts at its turn, or for an input the engine waits for
  from it). Who may ask is checked by the router (a seat's secret or the host PIN).

The hub then produces the same sensor events as real cards, and the engine judges them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from dashboard.bridge import Bridge
from dashboard.game import GAME
from dashboard.models import VirtualPublic
from engine.wire.api import SIM, BadArgs, SimResult
from engine.wire.contract import SimTablePublic, WireModel

log = logging.getLogger("cauldron.dashboard")
HOST = "host"
STALE_VIEW = 30.0  # seconds: how far behind a hub/sim message may come (a busy dispatcher)


class VirtualError(Exception):
    """A gesture the virtual table cannot do (nothing in hand, the cell is taken, ...);
    ``code``: its stable id, for the pages to say it in their language."""

    def __init__(self, message: str, code: str,
                 params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.params = params or {}


def _older(view: SimTablePublic, than: SimTablePublic | None) -> bool:
    """`view` is the same hub's view from before `than`. A gesture's answer carries the view
    after it and is read on the MQTT client's network thread, while ``hub/sim`` waits in its
    dispatcher's queue: an earlier ``hub/sim`` may come after the answer, and must not take
    the table back in time (a lifted card shown still lying: the next lift refused). A clock
    set back by more than `STALE_VIEW` seconds is taken as the newer view."""
    return (than is not None and view.hub_id == than.hub_id
            and 0 < than.ts - view.ts < STALE_VIEW)


def owner_of(seat: int | None) -> str:
    """The hand a gesture is made with: a seat's, or the host's."""
    return HOST if seat is None else str(seat)


class VirtualTable:
    """Relays gestures to the simulated hub and shows its public physical view."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self._lock = threading.Lock()
        self._sim: SimTablePublic | None = None
        self._waiting: dict[int, str] = {}  # seat -> why its bot waits
        self._waiting_codes: dict[int, dict[str, Any]] = {}  # the same as {code, ...params}
        bridge.client.subscribe(bridge.topics.hub_sim, self._on_sim)

    def _on_sim(self, topic: str, model: WireModel) -> None:
        if isinstance(model, SimTablePublic):
            self._take_view(model)

    def _take_view(self, view: SimTablePublic) -> None:
        """The one way a view of the simulated table comes in (``hub/sim``, or a gesture's
        answer): never one older than the view held."""
        with self._lock:
            if _older(view, self._sim):
                return
            self._sim = view
        self.bridge.broadcast()

    # ------------------------------------------------------------ what anyone may see

    def public(self) -> VirtualPublic:
        """The latest public view (never waits: the MQTT dispatcher calls this)."""
        with self._lock:
            sim, waiting = self._sim, dict(self._waiting)
            codes = {str(s): c for s, c in self._waiting_codes.items()}
        message = " ".join(f"{GAME.names.seat(s)}'s bot is waiting: {why}"
                           for s, why in sorted(waiting.items())) or None
        if sim is None:
            return VirtualPublic(enabled=True, message=message,
                                 waiting={str(s): w for s, w in waiting.items()},
                                 waiting_codes=codes)
        host = sim.hands.get(HOST)
        return VirtualPublic(
            enabled=True,
            dealt=sim.dealt,
            cells=dict(sim.cells),
            hand=host.card if host else None,
            hand_from=host.origin if host else None,
            hands={o: {"card": h.card, "origin": h.origin} for o, h in sim.hands.items()},
            pads=dict(sim.pads),
            pile_size=sim.pile_size,
            tops=dict(sim.tops),
            sizes=dict(sim.sizes),
            message=message,
            waiting={str(s): w for s, w in waiting.items()},
            waiting_codes=codes,
        )

    def note_waiting(self, seat: int, reason: str | None, code: str | None = None,
                     params: dict[str, Any] | None = None) -> None:
        """A bot says it waits (``reason``; ``code`` and ``params`` for the pages' languages)
        or goes on (None)."""
        with self._lock:
            if reason is None:
                changed = self._waiting.pop(seat, None) is not None
                self._waiting_codes.pop(seat, None)
            else:
                coded = {**(params or {}), "code": code} if code else {}
                changed = (self._waiting.get(seat), self._waiting_codes.get(seat)) != (
                    reason, coded or None)
                self._waiting[seat] = reason[:300]
                if coded:
                    self._waiting_codes[seat] = coded
                else:
                    self._waiting_codes.pop(seat, None)
        if changed:
            self.bridge.broadcast()

    # ------------------------------------------------------------ the hub

    def _sim_command(self, gesture: Mapping[str, object], timeout: float | None = None
                     ) -> SimResult:
        try:
            args = SIM.parse(gesture)
        except BadArgs as exc:
            raise VirtualError(exc.message, exc.code) from None
        # A gesture answers once the readers saw it (up to 3 s, `hub.backends.sim`), and may
        # start as late as its deadline (60 % of the wait): the usual command's 5 s left a
        # gesture done but unanswered on a busy machine ("no answer ... within 5 s").
        timeout = timeout or 2 * self.bridge.settings.command_timeout
        result = self.bridge.hub_command(SIM, args, timeout)
        if not result.ok:
            raise VirtualError(result.error or "the simulated hub refused",
                               result.code or "sim_refused")
        data = SimResult.model_validate(result.data if isinstance(result.data, dict) else {})
        if data.view is not None:  # the view after it, if hub/sim is not in yet
            self._take_view(SimTablePublic.model_validate(data.view))
        return data

    def deal(self, removed_colour: str | None, seed: int | None) -> list[str]:
        """Shuffle the box and lay 32 cards on the square; the rest is the pile (G2). The
        hub answers once its readers have seen the whole deal."""
        # The slowest gesture (32 readers to see, a save) on a busy machine: a timeout
        # here leaves the table dealt and the host's game not started.
        data = self._sim_command({"action": "deal", "removed_colour": removed_colour,
                                  "seed": seed}, 3 * self.bridge.settings.command_timeout)
        return list(data.grid or [])

    # ------------------------------------------------------------ gestures

    def check_moment(self, action: str, where: str | None, seat: int | None,
                     acting: int | None, by_host: bool = False) -> None:
        """Refuse what the moment does not allow (`acting`: the seat whose hand acts, by its
        secret or the host's `as_seat`; None for the host's own hand): raises
        `VirtualError`. The host (`by_host`) is not held by a standing alert: it is the one
        who puts the square right."""
        public = self.bridge.public
        view: dict[str, Any] = public.view.to_wire() if public is not None else {}
        table = view.get("table") if isinstance(view.get("table"), dict) else {}
        assert isinstance(table, dict)
        expected = view.get("expected") if isinstance(view.get("expected"), dict) else {}
        assert isinstance(expected, dict)
        playing = table.get("status") == "playing" and not view.get("over")
        if acting is not None and not by_host:
            self._held_by_alert(action, where)
        if action in ("draw", "refill"):
            hole = expected.get("refill_cell")
            if not playing or expected.get("phase") != "refill" or hole is None:
                raise VirtualError("the draw pile is only for refilling a hole, and no hole "
                                   "is waiting for its refill now", "no_refill_now")
            if action == "refill" and where != hole:
                raise VirtualError(f"the hole to refill is {GAME.names.place(hole)}, not "
                                   f"{GAME.names.place(where) if where else 'that'}",
                                   "refill_other_hole", {"cell": hole})
            with self._lock:
                sim = self._sim
            drawn = [o for o, h in (sim.hands.items() if sim else []) if h.origin == "pile"]
            if drawn:
                who = "the host" if drawn[0] == HOST else GAME.names.seat(int(drawn[0]))
                raise VirtualError(f"the refill card is already in {who}'s hand",
                                   "refill_in_hand")
        if acting is None:
            return
        if action == "lay":
            with self._lock:
                held = self._sim.hands.get(str(acting)) if self._sim else None
            hole = expected.get("refill_cell")
            if held is not None and held.origin == "pile" and where != hole:
                raise VirtualError("a card drawn from the pile goes into the hole "
                                   f"{GAME.names.place(hole) if hole else ''}, nowhere else",
                                   "pile_card_to_hole", {"cell": hole} if hole else {})
        turn = view.get("turn")
        taps = [w.get("seat") for w in table.get("vanesco_wait") or [] if isinstance(w, dict)]
        if action in ("tap", "vanesco"):
            if seat != acting or acting not in taps:
                raise VirtualError(f"{GAME.names.seat(acting)} taps only its own card, when a "
                                   "Vanesco takes it", "tap_own_card")
            return
        if seat is not None and seat != acting:
            raise VirtualError(f"{GAME.names.seat(acting)} acts on its own pad only",
                               "own_pad_only")
        if where is not None and where.startswith("pad:") and where != f"pad:{acting}":
            raise VirtualError(f"{GAME.names.seat(acting)} acts on its own pad only",
                               "own_pad_only")
        takes = action == "take" or (action == "lift" and where is not None
                                     and not where.startswith("pad:"))
        if (takes or action in ("draw", "refill")) and (not playing or turn != acting):
            # Its own hand and pad are a seat's at any time; the square only at its turn.
            raise VirtualError(f"it is not {GAME.names.seat(acting)}'s turn", "not_your_turn")

    def _held_by_alert(self, action: str, where: str | None) -> None:
        """While the square is wrong (an alert about one of its cells stands), a seat's
        gesture on the square waits: only the cells the alerts name may be touched."""
        on_square = action in ("take", "draw", "refill") or (
            action == "lift" and where is not None and not where.startswith("pad:"))
        if not on_square:
            return
        with self.bridge._lock:
            game_id = self.bridge.game_id
            standing = [a for a in self.bridge.alerts.values()
                        if a.active and a.kind == "breach" and a.severity == "error"
                        and a.game_id in (None, game_id) and a.params.get("cell")]
        if standing and where not in {a.params.get("cell") for a in standing}:
            raise VirtualError("held: the square must be put right first (see the alert)",
                               code="held_by_alert", params={"rule": standing[0].rule})

    def gesture(self, action: str, where: str | None = None, seat: int | None = None,
                owner: str = HOST) -> VirtualPublic:
        """One gesture with `owner`'s hand; returns the public view after it."""
        args: dict[str, object] = {"action": action, "owner": owner}
        if where is not None:
            args["where"] = where
        if seat is not None:
            args["seat"] = seat
        self._sim_command(args)
        return self.public()

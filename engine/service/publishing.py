"""Publishing what a table looks like: ``game/public`` (the observer's view serialised
once per change of the game, the table's state once per input), each seat's retained view
(only when it changed), ``game/events``, the hub's commands (turn LED, buzzer, layout, replay
requests), and everything again after a reconnect. Only while this engine speaks for the
table (`ServiceBase._publish`)."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from engine.games.base import Changes, Outcome
from engine.service.alerts import Alerts
from engine.service.ownership import speaks_for
from engine.service.runtime import HUB_COMMAND_LIFE, VIEW_QOS, Staged, TableRuntime
from engine.wire import api
from engine.wire.api import BadArgs, Command, TurnArgs, dump
from engine.wire.auth import ensure_key, sign_command
from engine.wire.contract import (
    CommandRequest,
    GameEvents,
    Topics,
    compact_json,
    game_public_json,
    game_seat_json,
)

log = logging.getLogger("cauldron.engine")
A = TypeVar("A", bound=BaseModel)


class Publishing(Alerts):
    """What the engine publishes for a table."""

    def _republish_all(self) -> None:
        with self._lock:
            for runtime in list(self.tables.values()):
                self._republish(runtime)
            for table, why in self.unopened.items():  # a log that would not open at start
                topics = Topics(table, self.config.base)
                self._publish(topics.engine_state, self._state("online", topics, why),
                              retain=True)

    def _republish(self, runtime: TableRuntime) -> None:
        self._publish(runtime.topics.engine_state,
                      self._state("online", runtime.topics, runtime.degraded, runtime),
                      retain=True)
        runtime.sent_seats.clear()
        # Standing alerts too (the dashboard may have restarted and lost them): they stay
        # until the table is right.
        self.publish_views(runtime, Changes(changed=True,
                                            raised=list(runtime.interp.active_alerts)))

    def publish_views(self, runtime: TableRuntime, outcome: Outcome) -> None:
        now = self.clock()
        self._publish_alerts(runtime, outcome, now)
        events = self._game_events(runtime, outcome, now)
        if events is not None:
            self._publish(runtime.topics.game_events, events)
        self._publish_state(runtime, outcome, now)

    def _publish_state(self, runtime: TableRuntime, outcome: Outcome, now: float) -> None:
        """The views (public, seats), the hub's turn LED and buzzer, a simulated table's
        layout: what the table looks like after `outcome`."""
        interp = runtime.interp
        topics = runtime.topics
        game_id = interp.game_id
        if outcome.changed:
            turn = interp.turn
            # The game's view is new (an action, an undo, a start or end, a chip tapped into a
            # basket): so may each seat's be. Else only the table's state moved (a card lifted).
            cached = runtime.rules_json
            game_changed = cached is None or cached[0] is not interp.rules_view()
            fence, allowed = speaks_for(self.ownership, self.store.claims, self.config.base,
                                        topics.game_public)
            if not allowed:  # (said once, by `_publish`)
                fence = None
            # Views are state, each superseding the last: QoS 0 (no PUBACK traffic); after a
            # reconnect every view is published again (`_republish_all`).
            if allowed:
                self.client.publish_raw(topics.game_public,
                                        self._public_json(runtime, turn, now, fence),
                                        retain=True, qos=VIEW_QOS)
            else:
                self.stats["fenced"] = self.stats.get("fenced", 0) + 1
            if turn != runtime.turn:
                runtime.turn = turn
                if self.config.hub_io:
                    self._hub_command(runtime, api.TURN, TurnArgs(seat=turn))
            if game_changed or not runtime.sent_seats:
                self._publish_seats(runtime, outcome, game_id, now)
        if "lay_out" in runtime.hub_capabilities:
            self._lay_out(runtime, outcome)
        if self.config.hub_io and any(a.severity == "error" for a in outcome.raised):
            self._hub_command(runtime, api.BUZZ, {"ms": self.config.buzz_ms})

    @staticmethod
    def _public_json(runtime: TableRuntime, turn: int | None, now: float,
                     fence: int | None) -> bytes:
        """``game/public`` (`GamePublic`): the observer's view serialised once per change
        of the game (`TableRuntime.rules_json`), the table's state once per input."""
        interp = runtime.interp
        view = interp.rules_view()
        cached = runtime.rules_json
        if cached is None or cached[0] is not view:
            cached = runtime.rules_json = (view, compact_json(view))
        return game_public_json(table=runtime.name, game=interp.plays, game_id=interp.game_id,
                                turn=turn, ts=now,
                                view=cached[1], table_info=interp.table_wire(), fence=fence)

    def _lay_out(self, runtime: TableRuntime, outcome: Outcome) -> None:
        """A table that lays itself out (the hub's ``lay_out`` capability) is asked to, when
        the game changed without its readers (after an undo, at a game's end or start): the
        game says how (`Interpreter.layouts`)."""
        for layout in runtime.interp.layouts(outcome):
            self._hub_command(runtime, api.LAYOUT, layout)

    @staticmethod
    def _game_events(runtime: TableRuntime, outcome: Outcome, now: float) -> GameEvents | None:
        """The game/events message of `outcome`, just applied (None: it did nothing a
        follower sees)."""
        interp = runtime.interp
        followed = interp.followed(outcome)
        if followed is None:
            return None
        # The interpreter's own wire forms: not validated again (tests check that what is
        # published parses as `GameEvents`).
        return GameEvents.model_construct(
            table=runtime.name, game=interp.plays, game_id=interp.game_id,
            status=interp.status.value, index=followed.index, actions=followed.actions,
            events=followed.events, undone=outcome.undone, config=followed.config,
            grid=followed.grid, ts=now)

    def _publish_seats(self, runtime: TableRuntime, outcome: Outcome, game_id: str | None,
                       now: float) -> None:
        """Each seat's view on its own topic only (retained, when it changed), and a view
        seen once (not retained)."""
        interp = runtime.interp
        fence, allowed = speaks_for(self.ownership, self.store.claims, self.config.base,
                                    runtime.topics.game_public)
        if not allowed:
            return
        for seat in range(interp.seats):
            view = interp.seat_view(seat)
            if view is None:
                continue
            said = (game_id, fence, view)
            if runtime.sent_seats.get(seat) != said:  # only what changed for that seat
                runtime.sent_seats[seat] = said
                self.client.publish_raw(
                    runtime.topics.game_seat(seat),
                    game_seat_json(seat=seat, game=interp.plays, game_id=game_id, ts=None,
                                   view=compact_json(view), fence=fence),
                    retain=True, qos=VIEW_QOS)
        for seat, view in interp.seen_once(outcome):  # not retained: a one-time look (G9)
            self.client.publish_raw(
                runtime.topics.game_seat(seat),
                game_seat_json(seat=seat, game=interp.plays, game_id=game_id, ts=now,
                               view=compact_json(view), fence=fence), qos=1)

    def _hub_command(self, runtime: TableRuntime, command: Command[A, Any],
                     args: A | Mapping[str, object]) -> None:
        """``hub/cmd/<verb>`` (`HUB_API`: its args typed, so a malformed one fails here, not
        at the hub), signed with the table's command key (the hub refuses anything else); a
        unique transaction, since the hub refuses one it has seen."""
        verb = command.verb
        try:
            typed = command.parse(args)
        except BadArgs as exc:  # a bad setting (e.g. buzz_ms): said, and the game goes on
            self._log_bounded(f"bad_hub_{verb}", "table %s: hub/cmd/%s not sent: %s",
                              runtime.name, verb, exc)
            return
        self.stats[f"hub_{verb}"] = self.stats.get(f"hub_{verb}", 0) + 1
        # Made here from typed args, so not validated again (a turn change is a third of
        # the hub events: its request was the costliest message the engine made).
        request = CommandRequest.model_construct(
            transaction=f"engine-{verb}-{secrets.token_hex(8)}", args=dump(typed),
            source="engine", deadline=time.time() + HUB_COMMAND_LIFE)  # the hub's clock
        table = runtime.name
        key = self._key(table, "cmd") or self._key(table, "cmd", reload=True)
        signing = key.key if key is not None else ensure_key(self.config.keys, table, "cmd").key
        request = sign_command(request, table, verb, signing, hub=True)
        self._publish(runtime.topics.hub_cmd(verb), request)

    def _publish_staged(self, staged: Staged) -> None:
        """What a table's stored batch changed: every alert and game/events message in
        order, then its views once (the last state; each view supersedes the one before)."""
        runtime = staged.runtime
        now = self.clock()
        merged = Changes()
        for outcome, events in staged.outcomes:
            self._publish_alerts(runtime, outcome, now)
            if events is not None:
                self._publish(runtime.topics.game_events, events)
            merged.actions += outcome.actions
            merged.events += outcome.events
            merged.raised += outcome.raised
            merged.changed = merged.changed or outcome.changed
            merged.started = merged.started or outcome.started
            merged.ended = merged.ended or outcome.ended
            merged.undone += outcome.undone
        if staged.outcomes:
            self._publish_state(runtime, merged, now)

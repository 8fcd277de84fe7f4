"""Commands ``cmd/<verb>``: admitted (served table, signed, within its deadline, not
replayed), run once (a transaction stored before is answered with its stored answer), stored
before they are published; the read-only ``hint`` and ``history``."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, JsonValue

from engine import games
from engine.games.base import Followed, Interpreter, Refused, TableStatus
from engine.service.errors import StoreError
from engine.service.intake import HubIntake
from engine.service.runtime import Asking, TableRuntime
from engine.wire.api import (
    SNAPSHOT,
    BadArgs,
    Bound,
    ConfirmArgs,
    GameAnswer,
    HintAnswer,
    HintArgs,
    HistoryAnswer,
    HubAccepted,
    NewGameBase,
    NoArgs,
    StoredAnswer,
    dispatch,
    dump,
)
from engine.wire.auth import Unauthorised
from engine.wire.contract import CommandRequest, GameEvents, Prompt, TopicInfo
from engine.wire.mqtt import CommandRefused, NoAnswer

log = logging.getLogger("cauldron.engine")
# `history` answers in messages within `GameEvents`' limits (64 actions, 256 events).
HISTORY_ACTIONS = 64

HISTORY_EVENTS = 256

# Commands that change nothing: not stored, so a repeat simply runs again.
READ_ONLY_VERBS = frozenset({"hint", "history"})


class Commands(HubIntake):
    """``cmd/<verb>``: admitted, run once, stored, answered."""

    handlers: dict[str, Bound[Asking]]  # verb -> handler (EngineService)

    def _on_command(self, info: TopicInfo, request: CommandRequest) -> JsonValue:
        """A command from the broker: a served table, a signed request within its deadline
        (never one seen before), then its verb's handler."""
        table = info.table
        if not self.serves(table):  # another engine answers: one answer per command
            self.stats["ignored_tables"] += 1
            raise NoAnswer
        assert info.verb is not None
        with self._lock:
            if table in self.broken:  # the real reason, not "not served"
                raise CommandRefused(f"table {table}'s log does not replay "
                                     f"({self.broken[table]}); see the engine's log",
                                     code="broken_log")
            if not self.configured(table):
                self._refuse_table(table, f"command {info.verb}")
                raise CommandRefused(f"this engine does not serve table {table}",
                                     code="unknown_table")
            try:
                self._check_credential(table, info.verb, request)
            except CommandRefused as exc:  # a repeat seen here: the answer it got, if stored
                stored = (self._stored_answer(table, info.verb, request.transaction)
                          if exc.code == "replayed" else None)
                if stored is None:
                    raise
                return stored
            if self.open_table(table) is None:
                raise CommandRefused(f"table {table}: {self.unopened[table]}; free or repair "
                                     "the engine's disk (`sudo cauldron doctor`)",
                                     code="log_unwritable")
        try:
            return self.command(table, info.verb, request.args, seat=request.seat,
                                transaction=request.transaction)
        except Refused as exc:
            self.stats["refused"] += 1
            raise CommandRefused(str(exc), code=exc.code, rule=exc.rule) from None

    def _check_credential(self, table: str, verb: str, request: CommandRequest) -> None:
        """Refuse (`CommandRefused`) an unsigned, forged, expired or replayed command."""
        try:
            self._guard.admit(request, table, verb,
                              lambda reload: self._key(table, "cmd", reload=reload), self.clock())
        except Unauthorised as exc:
            if exc.code == "expired":
                self.stats["expired"] += 1
                self._log_bounded("expired_cmd", "table %s: dropped command %s (%s): %s",
                                  table, verb, request.transaction[:64], exc)
            else:
                self.stats["forged"] += 1
                if exc.code == "unauthorised":
                    self._log_bounded("forged_cmd", "refused command %s on table %s: %s", verb,
                                      table, exc)
            raise CommandRefused(str(exc), code=exc.code) from None

    def command(self, table: str, verb: str, args: Mapping[str, object] | None = None,
                seat: int | None = None, transaction: str | None = None
                ) -> dict[str, JsonValue]:
        """Run one command for `table` (already admitted); raises `Refused` (nothing
        changed) when it does not fit or its args are malformed (`GAME_API`). A
        `transaction` already stored (it ran, here or on another engine, before a restart or
        a handover) runs no more: its stored answer."""
        with self._lock:
            if verb not in self.handlers:
                raise Refused(f"unknown command {verb!r}", code="unknown_command")
            self._flush()  # the events before it are stored before it (the log's order)
            stored = self._stored_answer(table, verb, transaction)
            if stored is not None:
                return stored
            runtime = self.table(table)
            runtime.transaction = transaction
            try:
                return dispatch(self.handlers, verb, Asking(runtime, verb, seat), args)
            except BadArgs as exc:
                raise Refused(exc.message, code=exc.code, rule=exc.rule) from None
            finally:
                runtime.transaction = None

    def _stored_answer(self, table: str, verb: str,
                       transaction: str | None) -> dict[str, Any] | None:
        """The stored answer of a command that ran already (game commands are stored with
        their transaction id, in the transaction of their effect)."""
        if transaction is None or verb in READ_ONLY_VERBS:
            return None
        try:
            stored = self.table(table).store.stored_answer(transaction)
        except StoreError as exc:
            raise Refused(f"{verb}: the table's log cannot be read now ({exc}), so nothing "
                          "changed; try again in a moment", code="storage") from None
        if stored is not None:
            self.stats["repeats"] = self.stats.get("repeats", 0) + 1
            log.info("table %s: %s %s ran before; its stored answer again", table, verb,
                     transaction)
        return stored

    def _cmd_hint(self, asking: Asking, args: HintArgs) -> HintAnswer:  # read-only
        return self._hint(asking.runtime.interp, args, asking.seat)

    def _cmd_history(self, asking: Asking, args: NoArgs) -> HistoryAnswer:  # read-only
        return HistoryAnswer(messages=[m.model_dump(mode="json", exclude_none=True)
                                       for m in self._history(asking.runtime)])

    def _cmd_new_game(self, asking: Asking, args: NewGameBase) -> GameAnswer | StoredAnswer:
        runtime = asking.runtime
        if args.game_id is not None:
            raise Refused("new_game: the engine names the game; do not send game_id",
                          code="bad_args")
        ts = self.clock()
        if runtime.interp.status in (TableStatus.DEALING, TableStatus.PLAYING):
            raise Refused(f"game {runtime.interp.game_id} is in progress: end it first "
                          "(command end)", code="game_in_progress")
        named: dict[str, object] = {"game_id": time.strftime(
            "%Y%m%d-%H%M%S", time.gmtime(ts)) + f"-{len(runtime.store.games()) + 1}"}
        # Dealt here, so no seat's secret crosses the broker in a command (G11): each seat
        # sees its own on game/seat/<n> only. Stored with the command for replay. What the
        # command gives itself (a scripted game's recipes or seed) stands.
        secret = games.get(args.game).secret_setup(args.config_wire(), random.SystemRandom())
        named.update({k: v for k, v in secret.items() if getattr(args, k, None) is None})
        # The table's interpreter is its game's: another game, another interpreter, from
        # what the readers hold now (a restart does the same from the stored command).
        observed_game = runtime.interp.plays
        observed = runtime.interp.observed()
        interp = (runtime.interp if runtime.interp.plays == args.game
                  else games.get(args.game).interpreter(runtime.name, observed))
        answer = self._run(runtime, "new_game", args.model_copy(update=named), asking.seat, ts,
                           observed, interp)
        if runtime.interp is interp and interp.plays != observed_game:
            # Another game's readers (a Quacks table's pads, a Glastonbury deal on the
            # grid): what they hold is not in the old game's observations. The hub's
            # snapshot, asked now and taken whole, tells the new game.
            runtime.resync_next = True
            self._hub_command(runtime, SNAPSHOT, {})
        return answer

    def _cmd_confirm(self, asking: Asking, args: ConfirmArgs
                     ) -> GameAnswer | HubAccepted | StoredAnswer:
        if args.hub_id is not None:
            return self._confirm_hub(asking.runtime, args.hub_id)
        return self._cmd_game(asking, args)

    def _cmd_game(self, asking: Asking, args: BaseModel) -> GameAnswer | StoredAnswer:
        return self._run(asking.runtime, asking.verb, args, asking.seat, self.clock(), None)

    def _confirm_hub(self, runtime: TableRuntime, hub_id: str) -> HubAccepted:
        """The host accepts a new hub for the table (a replaced Raspberry Pi)."""
        if hub_id != runtime.pending_hub:
            raise Refused(f"confirm: no hub {hub_id[:64]!r} is waiting to serve table "
                          f"{runtime.name}", code="no_pending_hub")
        self._register_hub(runtime, hub_id)
        return HubAccepted(table=runtime.name, hub_id=hub_id)

    def _run(self, runtime: TableRuntime, verb: str, args: BaseModel, seat: int | None,
             ts: float, observed: dict[str, Any] | None, interp: Interpreter | None = None
             ) -> GameAnswer | StoredAnswer:
        """Apply a game command (to `interp`, the table's new one for a new game of
        another game), store it (or undo it and refuse), publish."""
        try:
            runtime.fresh()
        except StoreError as exc:
            raise Refused(f"{verb}: the table's log cannot be read now ({exc}), so nothing "
                          "changed; try again in a moment", code="storage") from None
        interp = interp or runtime.interp
        outcome = interp.command(verb, args, seat=seat, ts=ts)
        if interp is not runtime.interp:  # it took the new game: the table's from now on
            runtime.interp = interp
            runtime.rules_json = None
            runtime.sent_seats.clear()
        answer = GameAnswer(
            table=runtime.name,
            game_id=interp.game_id,
            status=interp.status.value,
            actions=[dict(a.to_wire()) for a in outcome.actions],
            instructions=list(outcome.instructions),
            undone=outcome.undone_text,
            undone_codes=[dict(c) for c in outcome.undone_codes],  # for the pages' languages
            steps=[dict(s) for s in outcome.undo_steps],
            prompt=Prompt.model_validate(interp.prompt()),
        )
        if not self._store_command(runtime, ts, outcome, verb, dump(args), seat, observed,
                                   dump(answer)):
            runtime.reload()  # it ran before (another engine, a race): what it answered then
            stored = runtime.store.stored_answer(runtime.transaction or "")
            if stored is None:
                raise Refused(f"{verb}: not stored, so nothing changed; try again",
                              code="storage")
            return StoredAnswer(stored)
        self.stats["commands"] += 1
        if runtime.degraded is not None and runtime.degraded.startswith("cannot write"):
            self._heal(runtime)
        self.publish_views(runtime, outcome)
        return answer

    @staticmethod
    def _hint(interp: Interpreter, args: HintArgs, seat: int | None) -> HintAnswer:
        """What a bot suggests to `seat`, seeing only what that seat sees (the game's bots)."""
        if interp.status is not TableStatus.PLAYING:
            raise Refused("no game is in progress: there is nothing to hint", code="no_game")
        if seat is None:
            raise Refused("hint: say which seat asks (the request's seat)", code="bad_args")
        try:
            suggestion = interp.hint(seat, args.level, args.lang)
        except Refused as exc:  # its own turn with nothing to choose (a refill): no_choice_now
            raise Refused(f"hint: {exc.message}", code=exc.code, rule=exc.rule) from None
        return HintAnswer.model_validate(suggestion)

    @staticmethod
    def _history(runtime: TableRuntime) -> list[GameEvents]:
        """The current game's `GameEvents` from its start, as a follower that missed them
        (a restarted bot, an audit) would have received them: public events only, in
        messages within the model's size limits."""
        interp = runtime.interp
        stream = interp.history()
        messages: list[GameEvents] = []
        actions: list[dict[str, Any]] = []
        events: list[dict[str, Any]] = []
        start: Followed = stream[0]

        def flush(index: int) -> None:
            first = not messages
            messages.append(GameEvents(
                table=runtime.name, game=interp.plays, game_id=interp.game_id,
                status=interp.status.value, index=index, actions=list(actions),
                events=list(events), config=start.config if first else None,
                grid=start.grid if first else None))
            actions.clear()
            events.clear()

        index = 0
        for step in stream:
            if actions and (len(actions) + len(step.actions) > HISTORY_ACTIONS
                            or len(events) + len(step.events) > HISTORY_EVENTS):
                flush(index)
                index = step.index
            actions.extend(step.actions)
            events.extend(step.events)
        flush(index)
        return messages

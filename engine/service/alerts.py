"""Alerts: ``game/alert`` raised and cleared as the interpreter says, and a table's
``degraded`` state (a log that cannot be written, a hub waiting for the host) said on its
``engine/state`` and taken back when healed."""

from __future__ import annotations

import logging

from engine.games.base import Outcome
from engine.service.runtime import ServiceBase, TableRuntime
from engine.wire.contract import GameAlert, TableAlert

log = logging.getLogger("cauldron.engine")


class Alerts(ServiceBase):
    """Alerts and a table's degraded state."""

    def _publish_alerts(self, runtime: TableRuntime, outcome: Outcome, now: float) -> None:
        game_id = runtime.interp.game_id
        for alert in outcome.cleared:
            self._publish(runtime.topics.game_alert,
                          self._alert(TableAlert.model_validate(alert.wire()), False, game_id,
                                      now))
        for alert in outcome.raised:
            self._publish(runtime.topics.game_alert,
                          self._alert(TableAlert.model_validate(alert.wire()), True, game_id,
                                      now))

    @staticmethod
    def _alert(alert: TableAlert, active: bool, game_id: str | None, now: float) -> GameAlert:
        return GameAlert(**{**dict(alert), "ts": now}, active=active, game_id=game_id)

    def _degrade(self, runtime: TableRuntime, reason: str) -> None:
        if runtime.degraded != reason:
            runtime.degraded = reason
            log.error("table %s degraded: %s", runtime.name, reason)
            self._publish(runtime.topics.engine_state,
                          self._state("online", runtime.topics, reason, runtime), retain=True)

    def _heal(self, runtime: TableRuntime) -> None:
        if runtime.degraded is not None:
            log.warning("table %s healed (was: %s)", runtime.name, runtime.degraded)
            runtime.degraded = None
            self._publish(runtime.topics.engine_state,
                          self._state("online", runtime.topics), retain=True)

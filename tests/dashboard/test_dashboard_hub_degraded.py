"""The hub says it is degraded (hub/health ``degraded``: its disk is full, its readers'
bus fails): the table view and the host page show why, and stop showing it once the hub
says it is sound again."""

from __future__ import annotations

import time
from typing import Any

from dashkit import Dash, wait_until

from engine.wire.contract import HubDegraded, HubHealth


def _health(degraded: HubDegraded | None) -> HubHealth:
    return HubHealth(hub_id="hub-t", ts=time.time(), backend="spi", readers=[],
                     degraded=degraded)


def test_a_degraded_hub_is_shown_with_its_reason_until_it_heals(dash: Dash, page: Any) -> None:
    full = HubDegraded(code="disk_full", reason="the hub cannot store its events (the disk "
                       "is full): database or disk is full")
    dash.publisher.publish(dash.topics.hub_health, _health(full), retain=True)
    wait_until(lambda: dash.bridge.status().hub_degraded == full.reason, 10,
               "the dashboard to hear the hub is degraded")
    for path in ("/?lang=en", "/host?lang=en"):
        page.goto(dash.url + path)
        banner = page.locator('[data-banner="hub-degraded"]')
        banner.wait_for()
        text = banner.inner_text()
        assert "the disk is full" in text and "retrying" in text, text
    dash.publisher.publish(dash.topics.hub_health, _health(None), retain=True)
    wait_until(lambda: page.locator('[data-banner="hub-degraded"]').count() == 0, 10,
               "the banner gone once the hub heals")
    assert dash.bridge.status().hub_degraded is None

"""The deal guidance reaches the dashboard's public table state over the wire (2 players):
the removed colour's 8 cards named, the 32 cells, what happens next. (How the table view
shows it is the browser tests'.)"""

from __future__ import annotations

from typing import Any

import httpx
from dashkit import PIN, Dash, wait_until

from engine.games.glastonbury.rules.cards import CARDS


def test_two_player_deal_guidance_on_the_public_table_state(dash: Dash,
                                                            engine_service: Any) -> None:
    with httpx.Client(base_url=dash.url, timeout=15) as http:
        started = http.post("/api/host/new_game", headers={"X-Host-Pin": PIN},
                            json={"colours": ["blue", "red"], "first_seat": 1, "deal": "table",
                                  "removed_colour": "yellow"})
        assert started.status_code == 200, started.text

        def dealing() -> Any:
            game = http.get("/api/table").json().get("game") or {}
            return ((game.get("view") or {}).get("table") or {}).get("dealing")

        guide = wait_until(dealing, 10, "the dealing state on the table")
    aside = guide["set_aside"]
    assert aside["colour"] == "yellow" and len(aside["cards"]) == 8
    assert all(CARDS[c["card"]].colour == "yellow" and c["name"] for c in aside["cards"])
    assert guide["counts"] == {"read": 0, "missing": 32, "wrong": 0}
    assert len(guide["cells"]) == 32 and guide["cells"][0]["name"] == "row 1, column 2"
    assert guide["next"]["code"] == "set_aside" and "Seat 2 (red) plays first" in (
        guide["next"]["text"])

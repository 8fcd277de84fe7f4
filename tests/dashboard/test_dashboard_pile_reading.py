"""A seat's phone reading the whole pile at its refill (issue 24 item 2): draw, lay on its
own pad, lift, drop, read its hand after each draw. Through the virtual table's HTTP
gestures with the seat's credential, against the real engine and the simulated hub."""

from __future__ import annotations

from typing import Any

from dashkit import PIN, Stack, seat_auth, wait_until
from fastapi.testclient import TestClient

HOST = {"X-Host-Pin": PIN}
LOOP = ({"action": "draw"}, {"action": "lay", "where": "pad:{seat}"},
        {"action": "lift", "where": "pad:{seat}"}, {"action": "drop"})


def test_a_seat_reads_at_most_one_pile_card_at_its_refill(table_stack: Stack) -> None:
    bridge = table_stack.dash.bridge
    with TestClient(table_stack.dash.app, headers=HOST) as host:
        reply = host.post("/api/host/new_game", json={"colours": ["yellow", "red"], "seed": 7},
                          headers=HOST)
        assert reply.status_code == 200, reply.text
        state = wait_until(lambda: (s := host.get("/api/table").json())["game"] and s["game"][
            "view"]["table"]["status"] == "playing" and s, 10, "the game to start")
        seat = state["game"]["view"]["turn"]
        cell = state["game"]["view"]["expected"]["take"][0]
        params = {"seat": seat}
        secret = bridge.secrets.secret(bridge.game_id or "", seat)
        # The same client as the seat's phone: a second `with` would stop the app's lifespan
        # (the bridge's connection) and start it again, and its first request could find
        # the bridge not connected yet.
        phone = host
        phone.headers = seat_auth(secret)
        took = phone.post(f"/api/seats/{seat}/play", json={"action": "take", "where": cell})
        assert took.status_code == 200, took.text
        wait_until(lambda: phone.get("/api/table").json()["game"]["view"]["expected"]
                   ["phase"] == "refill", 10, "the refill")
        seen: set[str] = set()
        refused = 0
        for _ in range(50):
            for step in LOOP:
                body: dict[str, Any] = {k: v.format(seat=seat) for k, v in step.items()}
                reply = phone.post("/api/virtual/gesture", json=body, params=params)
                refused += reply.status_code == 409
                hand = phone.get("/api/virtual").json()["hands"].get(str(seat))
                if hand and hand["origin"] == "pile":
                    seen.add(hand["card"])
        assert len(seen) == 1 and refused >= 150  # every lay on the pad and drop refused
        wrong = phone.post("/api/virtual/gesture", params=params,
                           json={"action": "lay", "where": "2,2" if cell != "2,2" else "3,3"})
        assert wrong.status_code == 409 and "goes into the hole" in wrong.json()["detail"]
        laid = phone.post("/api/virtual/gesture", json={"action": "lay", "where": cell},
                          params=params)
        assert laid.status_code == 200, laid.text
        wait_until(lambda: phone.get("/api/table").json()["game"]["view"]["turns"] >= 2, 10,
                   "the refill to end the turn")
        assert bridge.table_state().alerts == []

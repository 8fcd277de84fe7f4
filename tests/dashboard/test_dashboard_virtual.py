"""The virtual table against the real engine service and a real hub on the simulated table."""

from __future__ import annotations

import time
from typing import Any

from dashkit import PIN, Stack, wait_until
from fastapi.testclient import TestClient
from virtual_player import expected_inputs, inputs, next_step

HOST = {"X-Host-Pin": PIN}


def start_game(client: Any, stack: Stack, colours: list[str], **extra: Any) -> None:
    reply = client.post("/api/host/new_game", json={"colours": colours, "seed": 7, **extra},
                        headers=HOST)
    assert reply.status_code == 200, reply.text
    wait_until(lambda: (client.get("/api/table").json()["game"] or {}).get("view", {})
               .get("table", {}).get("status") == "playing", 10, "the game to start")


def test_turns_through_the_virtual_table_api(table_stack: Stack) -> None:
    """Ten turns of gestures on the virtual table; the engine follows each (the whole game
    is played in the browser test)."""
    dash = table_stack.dash
    with TestClient(dash.app, headers=HOST) as client:
        start_game(client, table_stack, ["yellow", "red"], memory_aid=True)
        state = client.get("/api/table").json()
        assert state["virtual"]["dealt"] and len(state["virtual"]["cells"]) == 32
        assert state["virtual"]["pile_size"] == 76 - 32
        steps = 0
        deadline = time.monotonic() + 90
        while state["game"]["view"]["turns"] < 10:
            assert time.monotonic() < deadline, f"stuck after {steps} steps: {state}"
            assert not state["alerts"], state["alerts"]
            kind, body = next_step(state)
            if kind == "gesture":
                reply = client.post("/api/virtual/gesture", json=body)
                assert reply.status_code == 200, (body, reply.text)
            elif kind in ("pass", "keep"):
                assert client.post(f"/api/virtual/{kind}").status_code == 200
            target = expected_inputs(state, kind, body)
            before = state
            state = wait_until(
                lambda b=before, n=target: (s := client.get("/api/table").json()) != b
                and inputs(s) >= n and s, 5, f"the engine to see {kind} {body}")
            steps += 1
        engine_game = table_stack.engine.tables[dash.table].interp.game
        virtual = state["virtual"]
        grid = {f"{r},{c}": card for r, row in enumerate(state["game"]["view"]["grid"])
                for c, card in enumerate(row) if card and not card.startswith("corner")}
        assert virtual["cells"] == grid  # the engine sees exactly what lies on the table
        assert virtual["pile_size"] == state["game"]["view"]["pile_size"]
        tops = [c[-1] if c else None for c in engine_game.cauldrons]
        assert [virtual["tops"][str(s)] for s in range(2)] == tops
        assert [virtual["sizes"][str(s)] for s in range(2)] == [
            len(c) for c in engine_game.cauldrons]

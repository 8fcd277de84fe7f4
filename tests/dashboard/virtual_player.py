"""A scripted player for the virtual table: reads the table state and says which gesture
comes next, like a person following the table screen's instructions."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from waiting import wait_until

from engine.games.glastonbury.rules.board import cell_name

MOVE_WAIT = 30.0  # one step seen by the engine, on a loaded 2-core machine
Step = tuple[str, dict[str, Any]]  # ("gesture", body) | ("pass"|"keep", {}) | ("wait", {})


def next_step(state: dict[str, Any]) -> Step:
    game = state["game"]
    virtual = state["virtual"]
    if game is None or virtual is None:
        return ("wait", {})
    view = game["view"]
    info = view.get("table") or {}
    if view["over"] or info.get("status") != "playing":
        return ("wait", {})
    expected = view["expected"]
    seat = view["turn"]
    pads = virtual["pads"]
    if virtual["hand"] is not None:
        if virtual["hand_from"] == "pile":
            return ("gesture", {"action": "lay", "where": expected["refill_cell"]})
        return ("gesture", {"action": "lay", "where": f"pad:{seat}"})
    if pads:
        pad_seat = int(next(iter(pads)))
        return ("gesture", {"action": "slide", "seat": pad_seat})
    if info.get("vanesco_wait"):
        return ("gesture", {"action": "tap", "seat": info["vanesco_wait"][0]["seat"]})
    if expected["phase"] == "last_card":
        return ("keep", {})
    if expected["phase"] == "refill":
        return ("gesture", {"action": "draw"})
    if expected["can_pass"]:
        return ("pass", {})
    if expected["take"]:
        return ("gesture", {"action": "lift", "where": expected["take"][0]})
    return ("wait", {})


# Sensor events (hence engine inputs) each gesture makes on the simulated table.
EVENTS = {"lift": 1, "lay": 1, "slide": 1, "tap": 2, "draw": 0, "drop": 0}


def inputs(state: dict[str, Any]) -> int:
    game = state["game"]
    info = game["view"].get("table") if game else None
    return int(info["inputs"]) if info else 0


def expected_inputs(state: dict[str, Any], kind: str, body: dict[str, Any]) -> int:
    """The engine's input count once it has seen the step (commands count one)."""
    if kind == "gesture":
        return inputs(state) + EVENTS[body["action"]]
    return inputs(state) + 1


# ---------------------------------------------------------------- playing it through the API

Read = Callable[[], dict[str, Any]]


def make_step(client: Any, kind: str, body: dict[str, Any]) -> None:
    """The step through the virtual table's API (host PIN on `client`); a refusal fails
    with what the table answered (a 409 says why the gesture could not be done)."""
    if kind == "gesture":
        reply = client.post("/api/virtual/gesture", json=body)
    elif kind in ("pass", "keep"):
        reply = client.post(f"/api/virtual/{kind}")
    else:
        raise AssertionError(f"no step to make: {kind} {body}")
    assert reply.status_code == 200, f"{kind} {body}: HTTP {reply.status_code} {reply.text}"


def play_step(client: Any, state: dict[str, Any], read: Read) -> dict[str, Any]:
    """The next step from `state`, made; the table state (`read()`) once the engine saw it.
    `state` must be settled: its input count is every input the engine has had."""
    kind, body = next_step(state)
    make_step(client, kind, body)
    target = expected_inputs(state, kind, body)
    seen: dict[str, Any] = wait_until(
        lambda: (s := read()) != state and inputs(s) >= target and s, MOVE_WAIT,
        f"the engine to see {kind} {body}", report=lambda: moment(read()))
    return seen


def play_until(client: Any, done: Callable[[dict[str, Any]], bool], what: str,
               read: Read | None = None, timeout: float = 120.0) -> dict[str, Any]:
    """The scripted player's steps, each seen by the engine, until `done(state)`; the state.
    A moment with nothing to do (the table catching up) is waited out, not failed."""
    read = read or (lambda: dict(client.get("/api/table").json()))
    deadline = time.monotonic() + timeout
    state = read()
    while not done(state):
        assert time.monotonic() < deadline, f"not reached in {timeout} s: {what}; " \
            f"where it stood: {moment(state)}"
        if next_step(state)[0] == "wait":
            state = wait_until(lambda: (s := read()) and (done(s) or next_step(s)[0] != "wait")
                               and s, MOVE_WAIT, f"a step to make towards {what}",
                               report=lambda: moment(read()))
            continue
        state = play_step(client, state, read)
    return state


def settled(state: dict[str, Any], interp: Any) -> bool:
    """The table is still and agrees with the game (after an undo: its restore carried out),
    as the dashboard's `state` shows it and the engine (in-process `interp`) holds it: the
    dashboard shows the engine's game and every input it had; the simulated table shows the
    game's square, and the engine senses it; no hand, pad, Vanesco or alert in the way (the
    undo's own notice aside). Read the engine's side between two moves only."""
    game = state["game"]
    virtual = state["virtual"] or {}
    engine = interp.game
    if game is None or engine is None or virtual.get("hands") or virtual.get("pads"):
        return False
    view = game["view"]
    square = {f"{r},{c}": card for r, row in enumerate(view["grid"])
              for c, card in enumerate(row) if card and not card.startswith("corner")}
    sensed = {cell_name(c): card for c, card in dict(interp.cells).items()}  # a copy: live
    wrong = [a for a in [*dict(interp.alerts).values(), *state["alerts"]]
             if (a.severity if hasattr(a, "severity") else a.get("severity")) != "info"]
    return (view["grid"] == engine.view_public()["grid"] and inputs(state) == interp.inputs
            and virtual.get("cells") == square == sensed and not wrong
            and interp.held is None and not interp.vanesco_wait
            and not (view.get("table") or {}).get("vanesco_wait"))


def moment(state: dict[str, Any]) -> str:
    """The table's moment in one line (a timeout's report)."""
    game = state.get("game") or {}
    view = game.get("view") or {}
    virtual = state.get("virtual") or {}
    return (f"turn {view.get('turn')} phase {view.get('phase')}, {inputs(state)} inputs, "
            f"expected {view.get('expected')}, hands {virtual.get('hands')}, pads "
            f"{virtual.get('pads')}, alerts {state.get('alerts')}, status {state.get('status')}")

"""A scripted player for the virtual table: reads the table state and says which gesture
comes next, like a person following the table screen's instructions."""

from __future__ import annotations

from typing import Any

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

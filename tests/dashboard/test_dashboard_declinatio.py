"""Declinatio onto a line of Vanesco/Perluceo only ends the game (G7): no card lift says so,
so the seat's phone and the virtual table have a button for it. Against the real engine
service (in-process, fed hub events; seed 24 reaches that corner by random play)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from dashkit import PIN, Dash, drive_engine, seat_auth, wait_until
from fastapi.testclient import TestClient

from engine.games.glastonbury.rules.actions import UseDeclinatio
from engine.games.glastonbury.rules.names import seat_name


@pytest.fixture
def client(dash_app: Dash) -> Iterator[TestClient]:
    with TestClient(dash_app.app) as test_client:
        wait_until(lambda: dash_app.bridge.connected, 10, "broker connection")
        yield test_client


HOST = {"X-Host-Pin": PIN}


def table(client: TestClient) -> dict[str, Any]:
    state: dict[str, Any] = client.get("/api/table").json()
    return state


def shown(client: TestClient, interp: Any) -> dict[str, Any]:
    """The table state once the dashboard shows the engine's latest view."""
    return wait_until(lambda: (s := table(client))["game"] is not None
                      and s["game"]["view"]["table"]["inputs"] == interp.inputs
                      and s["game"]["view"]["over"] == interp.game.is_over() and s,
                      5, "the dashboard to show the engine's view")


def as_seat(dash: Dash, seat: int) -> dict[str, str]:
    game_id = dash.bridge.game_id
    assert game_id is not None
    return seat_auth(dash.bridge.secrets.secret(game_id, seat))


def snapshot(interp: Any) -> tuple[Any, ...]:
    game = interp.game
    return (interp.status, interp.inputs, len(game.actions), interp.prompt(), game.spells)


def blocked(client: TestClient, engine_service: Any, table_id: str) -> tuple[Any, int]:
    interp = drive_engine(engine_service, table_id, seed=24, until="corner_blocked")
    seat = interp.turn
    state = shown(client, interp)
    prompt = state["game"]["view"]["table"]["prompt"]
    assert (prompt["code"], prompt["seat"]) == ("corner_blocked", seat)
    return interp, seat


def assert_ended_by_declinatio(client: TestClient, interp: Any, seat: int) -> dict[str, Any]:
    assert interp.game.is_over() and interp.game.actions[-1] == UseDeclinatio()
    view = shown(client, interp)["game"]["view"]
    assert view["over"] and view["end"]["reason"] == "declinatio_blocked"
    assert view["turn"] == seat or view["turn"] is None
    return view


def test_seat_uses_declinatio_from_its_phone_and_the_game_ends_G7(
    client: TestClient, dash_app: Dash, engine_service: Any, table_id: str
) -> None:
    interp, seat = blocked(client, engine_service, table_id)
    other = 1 - seat
    mine = client.get(f"/api/seats/{seat}", headers=as_seat(dash_app, seat)).json()
    assert mine["can_declinatio"] is True
    assert client.get(f"/api/seats/{other}",
                      headers=as_seat(dash_app, other)).json()["can_declinatio"] is False
    # The other seat's button: refused by the engine (not its turn), nothing changes.
    before = snapshot(interp)
    refused = client.post(f"/api/seats/{other}/declinatio", headers=as_seat(dash_app, other))
    assert refused.status_code == 409 and f"it is {seat_name(seat)} (" in refused.json()["detail"]
    assert snapshot(interp) == before
    # Another seat's secret cannot press this seat's button.
    forged = client.post(f"/api/seats/{seat}/declinatio", headers=as_seat(dash_app, other))
    assert forged.status_code == 403 and snapshot(interp) == before
    # The seat's own button ends the game, scored.
    ok = client.post(f"/api/seats/{seat}/declinatio", headers=as_seat(dash_app, seat))
    assert ok.status_code == 200 and ok.json()["ok"] is True, ok.text
    assert_ended_by_declinatio(client, interp, seat)
    assert client.get(f"/api/seats/{seat}",
                      headers=as_seat(dash_app, seat)).json()["can_declinatio"] is False
    again = client.post(f"/api/seats/{seat}/declinatio", headers=as_seat(dash_app, seat))
    assert again.status_code == 409


def test_virtual_table_declinatio_button_ends_the_game_G7(
    client: TestClient, dash_app: Dash, engine_service: Any, table_id: str
) -> None:
    interp, seat = blocked(client, engine_service, table_id)
    ok = client.post("/api/virtual/declinatio", headers=HOST)
    assert ok.status_code == 200 and ok.json()["ok"] is True, ok.text
    assert_ended_by_declinatio(client, interp, seat)
    late = client.post("/api/virtual/declinatio", headers=HOST)
    assert late.status_code == 409 and "G7" in late.json()["detail"]


def test_declinatio_buttons_are_refused_at_a_plain_corner_G7(
    client: TestClient, dash_app: Dash, engine_service: Any, table_id: str
) -> None:
    """At a corner where Declinatio can take a card (prompt ``corner``), it is used by taking
    that card: both buttons are refused and nothing changes."""
    interp = drive_engine(engine_service, table_id, seed=24, until="corner")
    seat = interp.turn
    state = shown(client, interp)
    assert state["game"]["view"]["table"]["prompt"]["code"] == "corner"
    assert client.get(f"/api/seats/{seat}",
                      headers=as_seat(dash_app, seat)).json()["can_declinatio"] is False
    before = snapshot(interp)
    virtual = client.post("/api/virtual/declinatio", headers=HOST)
    assert virtual.status_code == 409 and "G7" in virtual.json()["detail"]
    phone = client.post(f"/api/seats/{seat}/declinatio", headers=as_seat(dash_app, seat))
    assert phone.status_code == 409
    assert "only when Declinatio would face a line of Vanesco/Perluceo" in phone.json()["detail"]
    # The engine's refusal keeps its stable code and rule id, through MQTT and HTTP.
    assert phone.json()["error"] == {"code": "declinatio_not_blocked", "rule": "G7",
                                     "message": phone.json()["detail"]}
    assert snapshot(interp) == before
    assert shown(client, interp)["game"] == state["game"]


def test_declinatio_button_on_the_pages(client: TestClient) -> None:
    """The seat page and the virtual table carry the button, hidden until the scripts see
    ``corner_blocked`` (shown and pressed in the browser test), in each language."""
    from dashboard.i18n import strings

    for lang in ("fr", "en", "de"):
        words = strings(lang)
        page = client.get(f"/seat/0?lang={lang}").text
        # the phone builds its controls (this button among them) from the seat's state
        assert '<section id="seat-action" class="seat-action" aria-live="polite" hidden>' in page
        assert words["declinatio_end"] in page and "G7" in words["declinatio_end_help"]
        virtual = client.get(f"/virtual?lang={lang}").text
        assert 'id="declinatio-btn" class="btn" hidden' in virtual
        assert words["declinatio_end"] in virtual
        assert "{line}" in words["prompt_corner_blocked"] and "G7" in words[
            "prompt_corner_blocked"]

"""API tests (FastAPI TestClient) against a real broker: every endpoint and refused access."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from dashkit import PIN, Dash, new_game, play, seat_auth, wait_until
from fastapi.testclient import TestClient
from hidden import covered

from dashboard.config import Settings
from dashboard.main import create_app
from engine.games.glastonbury.rules import Game
from engine.wire.contract import HubHealth, ReaderHealthSeen, ServiceState, Topics

HOST = {"X-Host-Pin": PIN}


@pytest.fixture
def client(dash_app: Dash) -> Iterator[TestClient]:
    with TestClient(dash_app.app) as test_client:
        wait_until(lambda: dash_app.bridge.connected, 10, "broker connection")
        yield test_client


def published(dash: Dash, game: Game, game_id: str = "g1") -> None:
    dash.publish_game(game, game_id)
    wait_until(lambda: dash.bridge.public is not None and dash.bridge.public.game_id == game_id
               and dash.bridge.public.view.turns == game.turns, 5, "game/public")


def secret(dash: Dash, seat: int) -> str:
    game_id = dash.bridge.game_id
    assert game_id is not None
    return dash.bridge.secrets.secret(game_id, seat)


# ---------------------------------------------------------------- table


def test_table_state_before_any_game(client: TestClient, dash_app: Dash) -> None:
    body = client.get("/api/table").json()
    assert body["game"] is None
    assert body["table"] == dash_app.table
    assert body["status"]["broker"] is True
    assert body["virtual"]["enabled"] is True and body["virtual"]["dealt"] is False


def test_table_state_is_whitelisted_and_has_no_covered_card(
    client: TestClient, dash_app: Dash
) -> None:
    game = play(new_game(players=4, seed=5), 40)
    hidden = covered(game)
    assert hidden, "the game must have covered cards for this test to mean anything"
    view = game.view_public()
    leaky = {**view, "leak": {"stacks": [list(c) for c in game.cauldrons]}}
    from pydantic import ValidationError

    from engine.wire.contract import GamePublic

    with pytest.raises(ValidationError, match="leak"):  # the typed view has no such field
        GamePublic(table=dash_app.table, game_id="g1", turn=game.seat, view=leaky)
    # A forged payload carrying it is refused at the wire; the real one follows.
    forged = {"schema_version": 1, "table": dash_app.table, "game_id": "g0", "view": leaky}
    dash_app.publisher.publish_raw(dash_app.topics.game_public, json.dumps(forged).encode())
    dash_app.publisher.publish(
        dash_app.topics.game_public,
        GamePublic(table=dash_app.table, game_id="g1", turn=game.seat, ts=time.time(), view=view),
        retain=True,
    )
    wait_until(lambda: dash_app.bridge.public is not None, 5, "game/public")
    assert dash_app.bridge.public is not None and dash_app.bridge.public.game_id == "g1"
    text = client.get("/api/table").text
    body = json.loads(text)
    assert "leak" not in body["game"]["view"]
    assert body["game"]["view"]["grid"] == view["grid"]
    assert [s["top"] for s in body["game"]["view"]["seats"]] == [
        c[-1] if c else None for c in game.cauldrons
    ]
    for card in hidden:
        assert f'"{card}"' not in text


def test_alerts_appear_and_clear(client: TestClient, dash_app: Dash) -> None:
    published(dash_app, new_game())
    dash_app.publish_alert("a1")
    wait_until(lambda: client.get("/api/table").json()["alerts"], 5, "alert")
    alert = client.get("/api/table").json()["alerts"][0]
    assert (alert["rule"], alert["instruction"]) == ("G4", "Put it back on 1,2.")
    dash_app.publish_alert("a1", active=False)
    wait_until(lambda: not client.get("/api/table").json()["alerts"], 5, "alert cleared")


def test_hub_and_engine_status(client: TestClient, dash_app: Dash) -> None:
    dash_app.publish_state("hub", "offline")
    dash_app.publish_state("engine", "online")
    wait_until(lambda: client.get("/api/table").json()["status"]["hub"] == "offline", 5, "hub")
    assert client.get("/api/table").json()["status"]["engine"] == "online"


def test_a_many_table_engine_crash_shows_through_its_liveness_topic(
    client: TestClient, dash_app: Dash
) -> None:
    # The engine's last will is on its own topic, named by the table's engine/state.
    process = Topics(f"{dash_app.topics.table}-engine").engine_state
    dash_app.publisher.publish(process, ServiceState(state="online"), retain=True)
    dash_app.publisher.publish(
        dash_app.topics.engine_state,
        ServiceState(state="online", liveness_topic=process), retain=True)

    def engine() -> str:
        return str(client.get("/api/table").json()["status"]["engine"])

    wait_until(lambda: engine() == "online", 5, "engine online")
    dash_app.publisher.publish(process, ServiceState(state="offline"), retain=True)  # the will
    wait_until(lambda: engine() == "offline", 5, "engine offline through its liveness topic")
    dash_app.publisher.publish(process, ServiceState(state="online"), retain=True)
    wait_until(lambda: engine() == "online", 5, "engine back")
    # A single-table engine (no liveness topic): the process topic is no longer followed.
    dash_app.publish_state("engine", "online")
    dash_app.publisher.publish(process, ServiceState(state="offline"), retain=True)
    time.sleep(0.3)
    assert engine() == "online"


def test_table_websocket_sends_state_and_updates(client: TestClient, dash_app: Dash) -> None:
    game = new_game(players=2)
    published(dash_app, game)
    with client.websocket_connect("/ws/table") as ws:
        first = json.loads(ws.receive_text())
        assert first["type"] == "table" and first["game"]["game_id"] == "g1"
        play(game, 1)
        dash_app.publish_game(game)
        nxt = json.loads(ws.receive_text())
        assert nxt["game"]["view"]["turns"] == game.turns or nxt["game"]["view"]["grid"]


# ---------------------------------------------------------------- seats


def test_join_link_and_qr_then_locked_after_joining(client: TestClient, dash_app: Dash) -> None:
    screen = TestClient(dash_app.app, client=("127.0.0.1", 4000))  # the table's own screen
    assert screen.get("/api/seats/0/join").status_code == 404  # no game yet
    published(dash_app, new_game(players=3))
    link = screen.get("/api/seats/1/join").json()
    assert "/join/1?token=" in link["url"] and secret(dash_app, 1) not in link["url"]
    svg = screen.get("/api/seats/1/qr.svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert "<svg" in svg.text
    assert screen.get("/api/seats/3/join").status_code == 404  # 3 players: no seat 3
    # The code is traded once for the secret, which only that phone gets, in its cookie.
    path = link["url"][link["url"].index("/join/"):]
    joined = client.get(path + "&lang=en", follow_redirects=False)
    assert joined.status_code == 303
    assert joined.headers["location"] == "/seat/1?lang=en"
    assert f"cauldron-seat-1={secret(dash_app, 1)};" in joined.headers["set-cookie"]
    assert client.get(path, follow_redirects=False).status_code == 403  # used: never again
    assert client.get("/api/seats/1").status_code == 200  # the phone's cookie
    assert screen.get("/api/seats/1/join").status_code == 403  # joined: host only
    assert screen.get("/api/seats/1/qr.svg").status_code == 403
    assert client.get("/api/seats/1/join", headers=HOST).status_code == 200
    assert client.get("/api/seats/1/qr.svg", headers=HOST).status_code == 200
    assert client.get("/api/table").json()["joined"][:3] == [False, True, False]


def test_seat_view_refuses_wrong_or_other_seats_secret(client: TestClient, dash_app: Dash) -> None:
    published(dash_app, new_game(players=3))
    assert client.get("/api/seats/0").status_code == 403
    assert client.get("/api/seats/0", headers=seat_auth("nope")).status_code == 403
    assert client.get("/api/seats/0", headers=seat_auth(secret(dash_app, 1))).status_code == 403
    assert client.post("/api/seats/0/keep",
                       headers=seat_auth(secret(dash_app, 2))).status_code == 403
    assert client.get("/api/seats/0", headers=seat_auth(secret(dash_app, 0))).status_code == 200
    assert client.get("/api/seats/7", headers=seat_auth("x")).status_code == 422


@pytest.mark.parametrize("memory_aid", [True, False])
def test_seat_view_stack_only_with_memory_aid(
    client: TestClient, dash_app: Dash, memory_aid: bool
) -> None:
    game = play(new_game(players=2, memory_aid=memory_aid), 30)
    published(dash_app, game)
    for seat in (0, 1):
        dash_app.publish_seat(game, seat)
    wait_until(lambda: len(dash_app.bridge.seat_views) == 2, 5, "seat views")
    body = client.get("/api/seats/0", headers=seat_auth(secret(dash_app, 0))).json()
    assert body["memory_aid"] is memory_aid
    assert body["stack"] == (game.cauldrons[0] if memory_aid else None)
    other = set(game.cauldrons[1][:-1])
    assert not any(f'"{c}"' in json.dumps(body) for c in other)


def test_perluceo_reveal_is_shown_until_dismissed(client: TestClient, dash_app: Dash) -> None:
    game = play(new_game(players=2), 10)
    published(dash_app, game)
    dash_app.publish_seat(game, 1, extra={"reveal": list(game.cauldrons[1])})
    dash_app.publish_seat(game, 1)  # the retained view without it follows at once
    wait_until(lambda: 1 in dash_app.bridge.reveals, 5, "reveal")
    own = seat_auth(secret(dash_app, 1))
    assert client.get("/api/seats/1", headers=own).json()["reveal"] == list(game.cauldrons[1])
    dismiss = "/api/seats/1/reveal/dismiss"
    assert client.post(dismiss, headers=own).status_code == 204
    assert client.get("/api/seats/1", headers=own).json()["reveal"] is None
    assert client.post(dismiss, headers=own).status_code == 404


def test_keep_and_discard_go_to_the_engine_with_the_seat(
    client: TestClient, dash_app: Dash
) -> None:
    published(dash_app, new_game(players=2))
    dash_app.answer_commands()
    ok = client.post("/api/seats/1/keep", headers=seat_auth(secret(dash_app, 1)))
    assert ok.status_code == 200 and ok.json()["ok"] is True
    verb, request = dash_app.requests[-1]
    assert (verb, request.seat, request.args) == ("keep", 1, {"seat": 1})
    dash_app.refuse["discard"] = "no last card to discard now (G10a)"
    refused = client.post("/api/seats/1/discard", headers=seat_auth(secret(dash_app, 1)))
    assert refused.status_code == 409 and "G10a" in refused.json()["detail"]


def test_seat_websocket_refuses_wrong_secret_and_keeps_its_seat_in_the_next_game(
    client: TestClient, dash_app: Dash
) -> None:
    from starlette.websockets import WebSocketDisconnect

    published(dash_app, new_game(players=2))
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(
        "/ws/seat/0", headers=seat_auth("wrong")
    ) as ws:
        ws.receive_text()
    assert refused.value.code == 4403
    with client.websocket_connect("/ws/seat/0", headers=seat_auth(secret(dash_app, 0))) as ws:
        assert json.loads(ws.receive_text())["type"] == "seat"
        old = secret(dash_app, 0)
        published(dash_app, new_game(players=2, seed=9), game_id="g2")
        # The phone stays seated in the next game (issue 18); a seat nobody held does not.
        assert json.loads(ws.receive_text())["game_id"] == "g2"
    assert client.get("/api/seats/0", headers=seat_auth(old)).status_code == 200
    wait_until(lambda: not dash_app.bridge.phones()[0], 10, "the closed page to count as gone")
    published(dash_app, new_game(players=2, seed=10), game_id="g3")  # the phone left: not kept
    assert client.get("/api/seats/0", headers=seat_auth(old)).status_code == 403


def test_table_state_says_which_seat_pages_are_connected(
    client: TestClient, dash_app: Dash
) -> None:
    # The table view says "Seat 1's phone is not connected" from this (hand test M5).
    published(dash_app, new_game(players=2))
    assert client.get("/api/table").json()["phones"] == [False] * 4
    with client.websocket_connect("/ws/seat/0", headers=seat_auth(secret(dash_app, 0))) as ws:
        assert json.loads(ws.receive_text())["type"] == "seat"
        state = client.get("/api/table").json()
        assert state["phones"] == [True, False, False, False] and state["joined"][0]
    wait_until(lambda: client.get("/api/table").json()["phones"] == [False] * 4, 10,
               "the closed page to count as gone")
    assert client.get("/api/table").json()["joined"][0]  # joined, but its phone is gone


# ---------------------------------------------------------------- host


def test_host_pin_is_required(client: TestClient, dash_app: Dash) -> None:
    guard = dash_app.app.state.pin_guard
    assert client.post("/api/host/login").status_code == 401
    assert client.post("/api/host/login", headers={"X-Host-Pin": "0000"}).status_code == 403
    assert client.post("/api/host/login", headers=HOST).status_code == 204
    for method, path in [("POST", "/api/host/undo"), ("POST", "/api/host/confirm"),
                         ("POST", "/api/host/end"), ("GET", "/api/host/readers"),
                         ("GET", "/api/host/enrolment"), ("GET", "/api/host/seats"),
                         ("POST", "/api/host/seats/0/reissue"), ("GET", "/api/host/colours")]:
        assert client.request(method, path, headers={"X-Host-Pin": "9999"}).status_code == 403
        guard.reset()  # (a few wrong PINs in a row lock the client out: test_dashboard_trust)
    bad = client.post("/api/host/new_game", json={"colours": ["red", "blue"]},
                      headers={"X-Host-Pin": "1"})
    assert bad.status_code == 403


def test_host_commands_reach_the_engine(client: TestClient, dash_app: Dash) -> None:
    dash_app.answer_commands()
    form = {"colours": ["red", "blue", "green"], "first_seat": 2, "memory_aid": True,
            "recipes": True, "second_player_bonus": True, "deal": "table", "seed": 4}
    reply = client.post("/api/host/new_game", json=form, headers=HOST)
    assert reply.status_code == 200, reply.text
    verb, request = dash_app.requests[-1]
    assert verb == "new_game"
    assert request.args["colours"] == ["red", "blue", "green"]
    assert request.args["first_seat"] == 2 and request.args["memory_aid"] is True
    assert request.args["second_player_bonus"] is True
    # No seat's recipe cards on the broker: the engine deals them (G11).
    assert request.args["recipes"] is True and "recipe_cards" not in request.args
    for verb in ("undo", "confirm", "end"):
        assert client.post(f"/api/host/{verb}", headers=HOST).json()["ok"] is True
        assert dash_app.requests[-1][0] == verb
    dash_app.refuse["undo"] = "nothing to undo"
    refused = client.post("/api/host/undo", headers=HOST)
    assert refused.status_code == 409 and refused.json()["detail"] == "nothing to undo"


def test_new_game_form_is_checked_before_the_engine(client: TestClient, dash_app: Dash) -> None:
    dash_app.answer_commands()
    same = client.post("/api/host/new_game", json={"colours": ["red", "red"]}, headers=HOST)
    assert same.status_code == 422 and "G2" in same.json()["detail"]
    purple = client.post("/api/host/new_game", json={"colours": ["red", "violet"]}, headers=HOST)
    assert purple.status_code == 422
    one = client.post("/api/host/new_game", json={"colours": ["red"]}, headers=HOST)
    assert one.status_code == 422
    assert dash_app.requests == []


def test_commands_without_an_engine_answer_503(mqtt_broker: str, table_id: str) -> None:
    settings = Settings(mqtt=mqtt_broker, table=table_id, pin=PIN, command_timeout=0.3)
    app = create_app(settings)
    with TestClient(app) as client:
        wait_until(lambda: app.state.bridge.connected, 10, "broker")
        reply = client.post("/api/host/undo", headers=HOST)
        assert reply.status_code == 503 and "no answer" in reply.json()["detail"]


def test_dashboard_comes_up_without_a_broker() -> None:
    from engine.wire.broker import free_port

    settings = Settings(mqtt=f"mqtt://127.0.0.1:{free_port()}", table="t-nobroker", pin=PIN)
    app = create_app(settings)
    with TestClient(app) as client:
        body = client.get("/api/table").json()
        assert body["status"]["broker"] is False
        reply = client.post("/api/host/end", headers=HOST)
        assert reply.status_code == 503 and "not connected" in reply.json()["detail"]
        assert client.get("/").status_code == 200


def test_reader_health_and_enrolment(client: TestClient, dash_app: Dash) -> None:
    empty = client.get("/api/host/readers", headers=HOST).json()
    assert empty["readers"] == []
    assert client.get("/api/host/enrolment", headers=HOST).json()["active"] is False
    health = HubHealth(
        hub_id="h", ts=time.time(), backend="sim",
        readers=[ReaderHealthSeen(reader=0, cell="0,1", health="ok", occupied=True),
                 ReaderHealthSeen(reader=1, cell="0,2", health="flicker"),
                 ReaderHealthSeen(reader=32, seat=0, health="silent")],
        enrolment={"done": 5, "total": 80, "next": "blue-a-2"},
    )
    dash_app.publisher.publish(dash_app.topics.hub_health, health, retain=True)
    wait_until(lambda: dash_app.bridge.health is not None, 5, "hub health")
    body = client.get("/api/host/readers", headers=HOST).json()
    assert [(r["place"], r["health"], r["occupied"]) for r in body["readers"]] == [
        ("cell 0,1", "ok", True), ("cell 0,2", "flicker", False), ("pad 0", "silent", False)]
    assert body["counts"] == {"ok": 1, "flicker": 1, "silent": 1}
    enrol = client.get("/api/host/enrolment", headers=HOST).json()
    assert (enrol["active"], enrol["done"], enrol["total"], enrol["next"]) == (
        True, 5, 80, "blue-a-2")


def test_host_seat_links_and_reissue(client: TestClient, dash_app: Dash) -> None:
    published(dash_app, new_game(players=2))
    links = client.get("/api/host/seats", headers=HOST).json()
    assert [link["seat"] for link in links] == [0, 1]
    old = secret(dash_app, 0)
    old_code = links[0]["url"][links[0]["url"].index("/join/"):]
    assert client.get("/api/seats/0", headers=seat_auth(old)).status_code == 200
    # The host frees the seat (a lost phone, a seat taken by someone else).
    fresh = client.post("/api/host/seats/0/free", headers=HOST).json()
    assert old not in fresh["url"] and "/join/0?token=" in fresh["url"]
    assert client.get("/api/seats/0", headers=seat_auth(old)).status_code == 403
    assert client.get(old_code, follow_redirects=False).status_code == 403
    code = fresh["url"][fresh["url"].index("/join/"):]
    assert f"cauldron-seat-0={secret(dash_app, 0)};" in client.get(
        code, follow_redirects=False).headers["set-cookie"]
    assert client.post("/api/host/seats/3/reissue", headers=HOST).status_code == 404
    assert client.get("/api/host/colours", headers=HOST).json() == [
        "yellow", "red", "green", "blue"]


# ---------------------------------------------------------------- scores, pages, OpenAPI


def test_scores_only_when_the_game_is_over(client: TestClient, dash_app: Dash) -> None:
    game = new_game(players=3, seed=2)
    published(dash_app, game)
    assert client.get("/api/scores").status_code == 404
    play(game, 10_000)
    assert game.is_over()
    published(dash_app, game)
    body = client.get("/api/scores").json()
    truth = game.scores().to_json()
    assert body["winners"] == truth["winners"]
    assert [s["total"] for s in body["seats"]] == [s["total"] for s in truth["seats"]]
    assert body["seats"][0]["families"] == truth["seats"][0]["families"]


@pytest.mark.parametrize("path", ["/", "/virtual", "/host", "/scores", "/seat/0"])
@pytest.mark.parametrize("lang", ["fr", "en", "de"])
def test_pages_in_each_language(client: TestClient, path: str, lang: str) -> None:
    page = client.get(f"{path}?lang={lang}")
    assert page.status_code == 200
    assert f'<html lang="{lang}">' in page.text
    assert page.cookies.get("lang") == lang


def test_language_from_browser_then_cookie(client: TestClient) -> None:
    client.cookies.clear()
    assert '<html lang="fr">' in client.get("/").text  # French by default
    german = client.get("/", headers={"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"})
    assert '<html lang="de">' in german.text
    english = client.get("/", headers={"Accept-Language": "it, en;q=0.8"})
    assert '<html lang="en">' in english.text
    client.get("/?lang=de")
    assert '<html lang="de">' in client.get("/", headers={"Accept-Language": "en"}).text


def test_openapi_documents_every_endpoint(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    paths: dict[str, Any] = spec["paths"]
    expected = {
        "/api/table", "/api/seats/{seat}", "/api/seats/{seat}/join", "/api/seats/{seat}/qr.svg",
        "/api/seats/{seat}/keep", "/api/seats/{seat}/discard", "/api/seats/{seat}/reveal/dismiss",
        "/api/seats/{seat}/declinatio", "/api/virtual/declinatio", "/api/virtual/pass",
        "/api/host/login", "/api/host/new_game", "/api/host/undo", "/api/host/confirm",
        "/api/host/end", "/api/host/readers", "/api/host/enrolment", "/api/host/seats",
        "/api/host/seats/{seat}/reissue", "/api/virtual", "/api/virtual/gesture",
        "/api/virtual/keep", "/api/virtual/discard", "/api/scores",
    }
    assert expected <= set(paths)
    for path, methods in paths.items():
        for method, op in methods.items():
            assert op.get("tags") and op.get("summary"), f"{method} {path} undocumented"
    table = paths["/api/table"]["get"]["responses"]["200"]["content"]["application/json"]
    assert table["schema"]["$ref"].endswith("/TableState")

"""A seat asks for a hint on its phone: the engine's bot suggests a card and says why."""

from __future__ import annotations

from dashkit import Stack, seat_auth
from fastapi.testclient import TestClient
from test_dashboard_virtual import start_game


def test_the_seat_to_play_gets_a_hint_in_its_language_and_others_are_refused(
    table_stack: Stack,
) -> None:
    dash = table_stack.dash
    with TestClient(dash.app) as client:
        start_game(client, table_stack, ["yellow", "red"])
        view = client.get("/api/table").json()["game"]["view"]
        game_id = dash.bridge.game_id
        assert game_id
        turn = view["turn"]
        own = dash.bridge.secrets.secret(game_id, turn)
        other = dash.bridge.secrets.secret(game_id, 1 - turn)

        reply = client.post(f"/api/seats/{turn}/hint?lang=fr", headers=seat_auth(own))
        assert reply.status_code == 200, reply.text
        hint = reply.json()["data"]
        assert hint["seat"] == turn and hint["reason"] == hint["reasons"]["fr"]
        legal = set(view["expected"]["take"]) | set(view["expected"]["accio"])
        assert hint["cell"] in legal and hint["card"] == view["grid"][
            int(hint["cell"][0])][int(hint["cell"][2])]

        assert client.post(f"/api/seats/{turn}/hint",
                           headers=seat_auth(other)).status_code == 403
        refused = client.post(f"/api/seats/{1 - turn}/hint", headers=seat_auth(other))
        assert refused.status_code == 409 and "hint" in refused.json()["detail"]
        # Asking changes nothing at the table.
        assert client.get("/api/table").json()["game"]["view"] == view

"""The virtual table against the real engine service and a real hub on the simulated table."""

from __future__ import annotations

from typing import Any

from dashkit import PIN, Stack, seat_auth, wait_until
from fastapi.testclient import TestClient
from virtual_player import MOVE_WAIT, play_until

HOST = {"X-Host-Pin": PIN}


def start_game(client: Any, stack: Stack, colours: list[str], **extra: Any) -> None:
    reply = client.post("/api/host/new_game", json={"colours": colours, "seed": 7, **extra},
                        headers=HOST)
    assert reply.status_code == 200, reply.text
    wait_until(lambda: (client.get("/api/table").json()["game"] or {}).get("view", {})
               .get("table", {}).get("status") == "playing", MOVE_WAIT, "the game to start")


def test_turns_through_the_virtual_table_api(table_stack: Stack) -> None:
    """Ten turns of gestures on the virtual table; the engine follows each (the whole game
    is played in the browser test)."""
    dash = table_stack.dash
    with TestClient(dash.app, headers=HOST) as client:
        start_game(client, table_stack, ["yellow", "red"], memory_aid=True)
        state = client.get("/api/table").json()
        assert state["virtual"]["dealt"] and len(state["virtual"]["cells"]) == 32
        assert state["virtual"]["pile_size"] == 76 - 32
        # every step's state is checked on the way: no alert, ever
        state = play_until(client, lambda s: bool(s["alerts"]) or s["game"]["view"]["turns"] >= 10,
                           "ten turns")
        assert not state["alerts"], state["alerts"]
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


# ---------------------------------------------------------------- who may touch the cards


def as_seat(stack: Stack, seat: int) -> dict[str, Any]:
    """A seat's request: which seat (``?seat=``, for /api/virtual) and its secret (a header;
    a phone sends its cookie), with the client's host PIN blanked."""
    bridge = stack.dash.bridge
    secret = bridge.secrets.secret(bridge.game_id or "", seat)
    return {"params": {"seat": seat}, "headers": {"X-Host-Pin": "", **seat_auth(secret)}}


def _inputs(stack: Stack) -> int:
    public = stack.dash.bridge.public
    assert public is not None and public.view.table is not None
    return public.view.table.inputs


def test_a_public_client_can_do_nothing_on_the_virtual_table(table_stack: Stack) -> None:
    with TestClient(table_stack.dash.app, headers=HOST) as host:
        start_game(host, table_stack, ["yellow", "red"])
    before = _inputs(table_stack)
    with TestClient(table_stack.dash.app) as public:
        assert public.get("/api/virtual").status_code == 200  # looking is public
        for path, body in [("/api/virtual/gesture", {"action": "lift", "where": "0,1"}),
                           ("/api/virtual/gesture", {"action": "draw"}),
                           ("/api/virtual/keep", None), ("/api/virtual/discard", None),
                           ("/api/virtual/pass", None), ("/api/virtual/declinatio", None),
                           ("/api/virtual/waiting", {"seat": 0, "reason": "x"})]:
            assert public.post(path, json=body).status_code == 401, path
        wrong = public.post("/api/virtual/gesture", json={"action": "lift", "where": "0,1"},
                            headers={"X-Host-Pin": "000000"})
        assert wrong.status_code == 403
        forged = public.post("/api/virtual/gesture", json={"action": "lift", "where": "0,1"},
                             params={"seat": 0}, headers=seat_auth("guessed"))
        assert forged.status_code == 403
        assert public.post("/api/seats/0/play", json={"action": "take", "where": "0,1"},
                           headers=seat_auth("guessed")).status_code == 403
    assert _inputs(table_stack) == before  # nothing moved


def test_pile_order_harvesting_is_refused(table_stack: Stack) -> None:
    """Drawing to peek at the pile's order, then putting the card back unseen: the pile is
    only for the refill the engine expects, and a drawn card goes into that hole."""
    with TestClient(table_stack.dash.app, headers=HOST) as client:
        start_game(client, table_stack, ["yellow", "red"])
        draw = client.post("/api/virtual/gesture", json={"action": "draw"})
        assert draw.status_code == 409 and "only for refilling a hole" in draw.json()["detail"]
        state = client.get("/api/table").json()
        seat = state["game"]["view"]["turn"]
        cell = state["game"]["view"]["expected"]["take"][0]
        took = client.post("/api/virtual/gesture",
                           json={"action": "take", "where": cell, "seat": seat, "as_seat": seat})
        assert took.status_code == 200, took.text
        wait_until(lambda: client.get("/api/table").json()["game"]["view"]["expected"]["phase"]
                   == "refill", MOVE_WAIT, "the refill")
        elsewhere = next(c for c in ("1,1", "2,2", "3,3") if c != cell)
        wrong_hole = client.post("/api/virtual/gesture",
                                 json={"action": "refill", "where": elsewhere})
        assert wrong_hole.status_code == 409 and "hole to refill" in wrong_hole.json()["detail"]
        drawn = client.post("/api/virtual/gesture", json={"action": "draw", "as_seat": seat})
        assert drawn.status_code == 200, drawn.text
        second = client.post("/api/virtual/gesture", json={"action": "draw"})
        assert second.status_code == 409 and "already in" in second.json()["detail"]
        back = client.post("/api/virtual/gesture", json={"action": "drop", "as_seat": seat})
        assert back.status_code == 409 and "not back on the pile" in back.json()["detail"]
        laid = client.post("/api/virtual/gesture",
                           json={"action": "lay", "where": cell, "as_seat": seat})
        assert laid.status_code == 200, laid.text


def test_a_covered_card_tap_is_refused(table_stack: Stack) -> None:
    """Tapping a cauldron's top on its pad is a Vanesco's: a seat may not tap to look at
    (and reveal) cards, its own or another seat's, when no Vanesco waits for it."""
    with TestClient(table_stack.dash.app, headers=HOST) as client:
        start_game(client, table_stack, ["yellow", "red"])
        state = client.get("/api/table").json()
        seat = state["game"]["view"]["turn"]
        cell = state["game"]["view"]["expected"]["take"][0]
        took = client.post(f"/api/seats/{seat}/play", json={"action": "take", "where": cell},
                           headers=as_seat(table_stack, seat)["headers"])
        assert took.status_code == 200 and took.json()["status"] == "ok", took.text
        for actor in (seat, 1 - seat):
            tap = client.post("/api/virtual/gesture", json={"action": "tap", "seat": seat},
                              **as_seat(table_stack, actor))
            assert tap.status_code == 409 and "Vanesco" in tap.json()["detail"]
        play = client.post(f"/api/seats/{1 - seat}/play", json={"action": "vanesco"},
                           headers=as_seat(table_stack, 1 - seat)["headers"])
        assert play.status_code == 409 and play.json()["status"] == "error"
        assert play.json()["error"]["message"]


def test_a_seat_uses_its_own_hand_only(table_stack: Stack) -> None:
    with TestClient(table_stack.dash.app, headers=HOST) as client:
        start_game(client, table_stack, ["yellow", "red"])
        state = client.get("/api/table").json()
        seat = state["game"]["view"]["turn"]
        cell = state["game"]["view"]["expected"]["take"][0]
        out_of_turn = client.post("/api/virtual/gesture", **as_seat(table_stack, 1 - seat),
                                  json={"action": "lift", "where": cell})
        assert out_of_turn.status_code == 409 and "not Seat" in out_of_turn.json()["detail"]
        lifted = client.post("/api/virtual/gesture", **as_seat(table_stack, seat),
                             json={"action": "lift", "where": cell})
        assert lifted.status_code == 200, lifted.text
        host = client.post("/api/virtual/gesture", json={"action": "lift", "where": cell})
        assert host.status_code == 409
        assert f"is in Seat {seat + 1}'s hand" in host.json()["detail"]


def test_the_host_acting_with_a_seats_hand_is_held_to_that_seats_moment(
        table_stack: Stack) -> None:
    """`as_seat` (the demo's bots) acts as that seat would: not out of its turn, not on
    another seat's pad; the host's own hand stays free (it puts a wrong square right)."""
    with TestClient(table_stack.dash.app, headers=HOST) as client:
        start_game(client, table_stack, ["yellow", "red"])
        state = client.get("/api/table").json()
        seat = state["game"]["view"]["turn"]
        cell = state["game"]["view"]["expected"]["take"][0]
        for body in ({"action": "lift", "where": cell, "as_seat": 1 - seat},
                     {"action": "take", "where": cell, "seat": 1 - seat, "as_seat": 1 - seat}):
            refused = client.post("/api/virtual/gesture", json=body)
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"]["code"] == "not_your_turn", refused.text
        other_pad = client.post("/api/virtual/gesture",
                                json={"action": "lay", "where": f"pad:{seat}",
                                      "as_seat": 1 - seat})
        assert other_pad.status_code == 409 and other_pad.json()["error"]["code"] == "own_pad_only"
        own = client.post("/api/virtual/gesture", json={"action": "lift", "where": cell})
        assert own.status_code == 200, own.text


# ---------------------------------------------------------------- the view in time order


class QuietBridge:
    """What `VirtualTable` uses of the bridge: the hub answers every gesture with the view
    after it (`answer`); ``hub/sim`` messages are delivered by the test (`deliver`)."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        from dashboard.config import Settings

        self.settings = Settings(table="t-quiet", pin=PIN)
        self.topics = SimpleNamespace(hub_sim="hub/sim")
        self.deliver: Any = None
        self.client = SimpleNamespace(subscribe=self._subscribe)
        self.answer: dict[str, Any] = {}
        self.timeouts: list[float | None] = []

    def _subscribe(self, topic: str, handler: Any) -> None:
        self.deliver = handler

    def broadcast(self) -> None:
        pass

    def hub_command(self, verb: str, args: dict[str, Any], timeout: float | None) -> Any:
        from dashboard.models import CommandResult

        self.timeouts.append(timeout)
        return CommandResult(ok=True, data={"card": "red-a-1", "view": self.answer})


def sim_view(ts: float, hands: dict[str, Any], hub: str = "hub-1") -> Any:
    from engine.wire.contract import SimTablePublic

    return SimTablePublic(hub_id=hub, ts=ts, dealt=True, hands=hands)


def test_an_earlier_hub_sim_never_takes_the_view_back_in_time() -> None:
    """A gesture's answer (read at once on the MQTT network thread) carries the view after
    it; the ``hub/sim`` of the gesture before may be delivered after it (the dispatcher's
    queue). The lifted card must stay in hand: the next lift was refused (CI, HTTP 409)."""
    from dashboard.virtual import VirtualTable

    bridge = QuietBridge()
    virtual = VirtualTable(bridge)  # type: ignore[arg-type]
    held = {"host": {"card": "red-a-1", "origin": "2,0"}}
    bridge.answer = sim_view(10.0, held).model_dump()
    virtual.gesture("lift", "2,0")
    assert virtual.public().hand == "red-a-1"
    bridge.deliver("hub/sim", sim_view(9.0, {}))  # the view before the lift, late
    assert virtual.public().hand == "red-a-1"
    bridge.deliver("hub/sim", sim_view(10.5, held))  # the lift's own hub/sim: in order
    bridge.deliver("hub/sim", sim_view(11.0, {}))  # the card laid back: newer
    assert virtual.public().hand is None
    bridge.deliver("hub/sim", sim_view(1.0, held, hub="hub-2"))  # another hub: its own clock
    assert virtual.public().hand == "red-a-1"
    # A gesture waits long enough for the hub to start it at its deadline and then wait for
    # its readers (up to 3 s): more than the usual command's 5 s.
    assert bridge.timeouts == [2 * bridge.settings.command_timeout]

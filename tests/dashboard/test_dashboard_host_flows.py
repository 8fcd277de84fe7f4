"""The host's flows with bots running, end to end: a real Chromium on the host page, the
virtual table and the table view; the whole demo in-process (the session's real broker, the
simulated hub, the engine service, the dashboard and the bots at a fast pace).

Each test ends with the game on its score screen (the table view's podium) and no alert
standing. A situation (a refill, a Vanesco or Perluceo taken, the last card to take) is
reached by construction: a seeded deal, the bots held (`BotDriver.pause`), and the moves that
lead there, planned on the rules engine, played with the seats' hands (`scenarios.reach`);
a bot's card mid-take by stepping the held bot one gesture at a time (`bot_mid_take`).
What is still left to the bots (playing on to the end) says, when its wait times out,
where the game stood. Waits are on conditions, never fixed sleeps.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import scenarios
from dashkit import seat_auth, wait_until
from scenarios import EXPIRED, Situation, last_card_to_take, refilled, spell_taken, turns
from virtual_player import MOVE_WAIT, settled

from engine.app.demo.stack import DemoOptions, DemoStack
from engine.games.glastonbury.rules import GameLog, Refill, Take, replay
from engine.games.glastonbury.rules.board import parse_cell
from engine.games.glastonbury.rules.cards import CARDS, PLAYER_COLOURS
from engine.games.glastonbury.rules.observer import expected_view
from engine.games.glastonbury.table.interpreter import TableInterpreter

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
PIN = "246810"
GAME_TIME = 240.0  # a whole bot game on a busy 2-core machine
SEED = 3  # the seeded deals' shuffle (host API): the planned moves are the same every run


class Flow:
    """The demo, its host page, virtual table page and table view, in one browser."""

    def __init__(self, stack: DemoStack, browser: Any) -> None:
        self.stack = stack
        self.browser = browser
        self.url = stack.url.rstrip("/")
        self.http = httpx.Client(base_url=self.url, timeout=20, headers={"X-Host-Pin": PIN})
        # One window each, as on three screens: a background tab gets no animation frames,
        # and each Playwright action on it then waits ~2 s for the element to be stable.
        self.contexts = [browser.new_context(viewport={"width": 1400, "height": 900},
                                             locale="en-GB") for _ in range(3)]
        for context in self.contexts:
            context.add_init_script(f"sessionStorage.setItem('cauldron-host-pin', '{PIN}')")
        self.host, self.table, self.virtual = (c.new_page() for c in self.contexts)
        self.phones: list[Any] = []  # the test's phones (`join`), closed after each test
        self.host.set_default_timeout(20000)
        self.host.on("dialog", lambda dialog: dialog.accept())  # "End the game?" -> yes
        self.host.goto(self.url + "/host?lang=en")  # logged in: the PIN is in this tab
        self.host.wait_for_selector("#host", state="visible")
        self.table.goto(self.url + "/?lang=en")
        self.virtual.goto(self.url + "/virtual?lang=en")

    def close(self) -> None:
        for context in self.contexts:
            context.close()
        self.http.close()

    # ------------------------------------------------------------ looking

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = self.http.get("/api/table").json()
        return data

    @property
    def interp(self) -> TableInterpreter:
        interp: TableInterpreter = self.stack.engine.tables[self.stack.options.table].interp
        return interp

    def status(self) -> str:
        game = self.state()["game"]
        return str(game["view"]["table"]["status"]) if game else "idle"

    # ------------------------------------------------------------ the bots

    def report(self) -> str:
        return scenarios.where_it_stands(self.stack, self.http)

    def hold_bots(self) -> None:
        scenarios.hold_bots(self.stack)

    def release_bots(self) -> None:
        self.stack.driver.pause(False)

    def seeded_game(self, situation: Situation | None = None, players: int = 2) -> str:
        """A seeded deal (bots held), played on to `situation` by construction; its id.
        The bots stay held."""
        game_id = scenarios.start_game(self.stack, self.http, players, seed=SEED)
        if situation is not None:
            scenarios.reach(self.stack, self.http, situation)
        return game_id

    # ------------------------------------------------------------ the host page

    def press(self, button: str, done: Callable[[], bool], what: str,
              timeout: float = 30) -> None:
        """Press a host page button until `done()`. A command the busy engine let expire
        (it did nothing, and the page says to send it again) is sent again, as a host
        would: on a loaded 2-core machine the 5 s deadline can pass."""
        page = self.host
        for _ in range(3):
            page.evaluate("document.getElementById('host-msg').textContent = ''")
            page.click(button)

            def outcome() -> str | None:
                if done():
                    return "done"
                return "expired" if EXPIRED in page.inner_text("#host-msg") else None

            try:
                if wait_until(outcome, timeout, what, report=self.report) == "done":
                    return
            except AssertionError as exc:  # what the host page said, at the end of the wait
                raise AssertionError(f"{exc} (host page: {page.inner_text('#host-msg')!r})"
                                     ) from None
        raise AssertionError(f"{what}: the command expired 3 times; {self.report()}")

    def end_current(self) -> None:
        if self.status() in ("dealing", "playing"):
            self.press("#end", lambda: self.status() not in ("dealing", "playing"), "the end")

    def new_game(self, players: int = 2, colours: list[str] | None = None, first: int = 0,
                 removed: str | None = None, recipes: bool = False, bonus: bool = False,
                 memory: bool = False, starts: list[int] | None = None,
                 check: Callable[[], None] | None = None) -> str:
        """End what is on, fill in the host's form, start; returns the new game's id.
        `check` runs once the game started, before the bots play on."""
        self.hold_bots()
        before = (self.state()["game"] or {}).get("game_id")
        self.end_current()
        page = self.host
        page.evaluate("document.getElementById('new-game-box').open = true")
        page.select_option("#players", str(players))
        for seat, colour in enumerate(colours or []):
            page.select_option(f"#colour-{seat}", colour)
        for seat, position in enumerate(starts or []):
            page.select_option(f"#start-{seat}", str(position))
        page.select_option("#first", str(first))
        if removed is not None:
            page.select_option("#removed", removed)
        for box_id, on in (("#recipes", recipes), ("#bonus", bonus), ("#memory", memory)):
            page.set_checked(box_id, on)
        page.select_option("#deal", "virtual")
        self.press("#start", lambda: (self.state()["game"] or {}).get("game_id") not in (
            None, before) and self.status() == "playing", "the host's game to start")
        if check is not None:
            check()
        self.release_bots()
        return str(self.state()["game"]["game_id"])

    def undo(self, times: int = 1) -> None:
        for _ in range(times):
            actions = len(self.interp.game.actions) if self.interp.game else 0

            def undone(a: int = actions) -> bool:
                return self.interp.game is not None and len(self.interp.game.actions) < a

            self.press("#undo", undone, "the undo")
        self.restored()

    def restored(self) -> None:
        """The undo carried out on the virtual table (the engine's restore): the dashboard
        shows the undone game, and the cards lie, and are sensed, where it holds them; only
        then may the bots play on (they would play the table as it was before)."""
        wait_until(lambda: settled(self.state(), self.interp), MOVE_WAIT,
                   "the undo laid out on the virtual table", report=self.report)

    def standing(self) -> list[dict[str, Any]]:
        return [a for a in self.state()["alerts"] if a.get("severity") != "info"]

    def score_screen(self, game_id: str) -> None:
        """The game reaches its end: the podium on the table view, no alert standing."""
        wait_until(lambda: (self.state()["game"] or {}).get("game_id") == game_id
                   and self.state()["game"]["view"]["over"], GAME_TIME, "the end of the game",
                   report=self.report)
        self.table.wait_for_selector("#podium", state="visible")
        wait_until(lambda: self.state()["alerts"] == [], 20, "no alert standing")
        assert not (self.state()["virtual"] or {}).get("waiting")


@pytest.fixture(scope="module")
def demo(mqtt_broker: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    data = Path(tmp_path_factory.mktemp("flows"))
    stack = DemoStack(DemoOptions(port=0, mqtt=mqtt_broker, table=f"flows-{uuid.uuid4().hex[:6]}",
                                  pace=0, players=2, seed=11, linger=3600, pin=PIN,
                                  data_dir=data), say=lambda _: None)
    try:
        yield stack.start()
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def module_flow(demo: DemoStack, browser: Any) -> Iterator[Flow]:
    f = Flow(demo, browser)
    try:
        yield f
    finally:
        f.close()


@pytest.fixture
def flow(module_flow: Flow) -> Iterator[Flow]:
    yield module_flow
    # A failed test never leaves the next one without bots, nor a phone playing a seat.
    for phone in module_flow.phones:
        if not phone.is_closed():
            phone.close()
    module_flow.phones.clear()
    module_flow.release_bots()


def config(flow: Flow) -> dict[str, Any]:
    game = flow.interp.game
    assert game is not None
    return game.config.to_wire()


# ---------------------------------------------------------------- new game, every option


def test_host_new_game_3_players(flow: Flow) -> None:
    game_id = flow.new_game(players=3)
    assert len(config(flow)["colours"]) == 3
    flow.score_screen(game_id)


def test_host_new_game_4_players_colours_first_player(flow: Flow) -> None:
    colours = [PLAYER_COLOURS[i] for i in (3, 2, 1, 0)]
    game_id = flow.new_game(players=4, colours=colours, first=2)
    assert config(flow)["colours"] == colours and config(flow)["first_seat"] == 2
    flow.score_screen(game_id)


def test_host_new_game_recipes(flow: Flow) -> None:
    game_id = flow.new_game(players=2, recipes=True)
    assert config(flow)["recipes"] is True  # kept: the bots follow it, no default game
    flow.score_screen(game_id)
    assert flow.state()["game"]["game_id"] == game_id


def test_host_new_game_memory_aid_and_bonus(flow: Flow) -> None:
    game_id = flow.new_game(players=3, memory=True, bonus=True)
    assert config(flow)["memory_aid"] is True and config(flow)["second_player_bonus"] is True
    flow.score_screen(game_id)


def test_host_new_game_removed_colour(flow: Flow) -> None:
    """2 players: the host picks the unused colour whose cards are left out (G2)."""
    game_id = flow.new_game(players=2, colours=["yellow", "red"], removed="blue")
    assert config(flow)["removed_colour"] == "blue"
    offered = flow.host.eval_on_selector_all("#removed option", "os => os.map(o => o.value)")
    assert offered == ["", "green", "blue"]  # a colour in play cannot be left out
    flow.score_screen(game_id)


def test_host_new_game_start_corners_g2(flow: Flow) -> None:
    """The form offers each seat the corners a pawn may start beside (G2), named for people;
    the pawns stand there on the table view when the game starts, and the bots play it out."""
    offered = flow.host.eval_on_selector_all("#start-0 option", "os => os.map(o => o.value)")
    assert offered == ["0", "5", "10", "15"]
    labels = flow.host.eval_on_selector_all("#start-1 option", "os => os.map(o => o.text)")
    assert labels[1] == "top-right corner (position 6)", labels
    starts = [10, 5, 5]  # two pawns may share a corner (G2)

    def pawns_there() -> None:
        # Seat 1 plays first: its pawn has moved 2 on from its corner (empty cauldron, G4).
        for seat, position in enumerate([12, 5, 5]):
            flow.table.wait_for_selector(f"#board .pos[data-pos='{position}'] "
                                         f".pawn[data-pawn='{seat}']")

    game_id = flow.new_game(players=3, starts=starts, check=pawns_there)
    assert config(flow)["start_positions"] == starts
    flow.score_screen(game_id)


def test_host_new_game_refuses_a_start_beside_no_corner_g2(flow: Flow) -> None:
    """The API names the allowed corners, counted from 1 as the form shows them."""
    answer = flow.http.post("/api/host/new_game", json={
        "colours": ["yellow", "red"], "start_positions": [5, 7], "deal": "virtual"})
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert "position 1 (top-left), 6 (top-right), 11 (bottom-right) or 16" in detail, detail


# ---------------------------------------------------------------- undo, every situation


def taken(interp: TableInterpreter) -> str | None:
    """The card of the game's last take (a refill after it aside), None if the last
    action is no take or the table is mid-move."""
    game = interp.game
    if game is None or interp.held or interp.vanesco_wait or not game.actions:
        return None
    actions = list(game.actions)
    back = 2 if isinstance(actions[-1], Refill) else 1
    if len(actions) < back:
        return None
    take = actions[-back]
    if not isinstance(take, Take):
        return None
    before = replay(GameLog.of(game).without_last(back))
    return before.grid[take.cell]


def after_spell(spell: str) -> Callable[[TableInterpreter], bool]:
    def check(interp: TableInterpreter) -> bool:
        card = taken(interp)
        return card is not None and CARDS[card].spell == spell
    return check


def after_refill(interp: TableInterpreter) -> bool:
    game = interp.game
    return (game is not None and bool(game.actions) and isinstance(game.actions[-1], Refill)
            and not interp.held and not interp.vanesco_wait)


def test_host_undo_mid_gesture(flow: Flow) -> None:
    """The host lifts a card on the virtual table and presses Undo before laying it."""
    game_id = flow.seeded_game(turns(3))
    assert flow.interp.game is not None and len(flow.interp.game.actions) >= 4
    take = expected_view(flow.interp.game).take[0]
    flow.virtual.click(f"[data-where='{take}']")
    wait_until(lambda: "host" in (flow.state()["virtual"]["hands"] or {}), 10, "the lift")
    flow.undo()
    assert not flow.state()["virtual"]["hands"]  # the card went back where the game says
    flow.release_bots()
    flow.score_screen(game_id)


def test_host_undo_after_a_refill(flow: Flow) -> None:
    game_id = flow.seeded_game(refilled())
    assert after_refill(flow.interp)
    flow.undo()
    flow.release_bots()
    flow.score_screen(game_id)


def test_host_undo_after_a_vanesco(flow: Flow) -> None:
    game_id = flow.seeded_game(spell_taken("vanesco"))
    assert after_spell("vanesco")(flow.interp)
    flow.undo()
    flow.release_bots()
    flow.score_screen(game_id)


def test_host_undo_after_a_perluceo(flow: Flow) -> None:
    game_id = flow.seeded_game(spell_taken("perluceo"))
    assert after_spell("perluceo")(flow.interp)
    flow.undo()
    flow.release_bots()
    flow.score_screen(game_id)


def last_card(interp: TableInterpreter) -> str | None:
    """A cell the active seat may take now whose card would end the game (G10a), between
    two gestures; None otherwise."""
    game = interp.game
    if game is None or interp.held or interp.vanesco_wait or game.phase.value != "take":
        return None
    expected = expected_view(game)
    for key in (*expected.take, *expected.accio):
        if TableInterpreter._ends_game(game, parse_cell(key)):
            return str(key)
    return None


def test_host_undo_at_the_last_card(flow: Flow) -> None:
    """The game's last card in hand, then Undo. The bots are held just before that take (a
    bot's lift and lay follow each other too fast to be caught between), and the host lifts
    the card, as a player's hand would."""
    game_id = flow.seeded_game(last_card_to_take())
    cell = last_card(flow.interp)
    assert cell is not None
    flow.virtual.click(f"[data-where='{cell}']")
    wait_until(lambda: flow.interp.held is not None and flow.interp.held.ends_game, 20,
               "the last card in hand")
    flow.press("#undo", lambda: flow.interp.held is None, "the undo")
    flow.restored()
    flow.release_bots()
    flow.score_screen(game_id)


def test_lift_during_bot_turn(flow: Flow) -> None:
    """The host lifts a card while a bot is to play: the bot never uses it, waits and says
    why on the table view, and goes on once the card is back."""
    game_id = flow.seeded_game(turns(3))
    assert flow.interp.game is not None and flow.interp.game.phase.value == "take"
    take = flow.state()["game"]["view"]["expected"]["take"][0]
    flow.virtual.click(f"[data-where='{take}']")
    wait_until(lambda: "host" in (flow.state()["virtual"]["hands"] or {}), 10, "the lift")
    flow.release_bots()
    flow.table.wait_for_selector(".bot-waiting")
    assert "bot is waiting" in flow.table.inner_text(".bot-waiting")
    flow.virtual.click(f"[data-where='{take}']")  # laid back where it was
    wait_until(lambda: not flow.state()["virtual"]["waiting"], 30, "the bot to go on",
               report=flow.report)
    flow.score_screen(game_id)


def person_plays(flow: Flow, seat: int, secret: str, game_id: str) -> None:
    """A person plays `seat` from their phone (one tap each) until the game ends."""
    refused: list[str] = []

    def play(**body: Any) -> None:
        reply = flow.http.post(f"/api/seats/{seat}/play", json=body,
                               headers={"X-Host-Pin": "", **seat_auth(secret)})
        assert reply.status_code in (200, 409), reply.text  # 409: the moment moved on
        if reply.status_code == 409:
            refused[:] = [f"{body}: {reply.text}"]

    def step() -> bool:
        state = flow.state()
        view = state["game"]["view"]
        if state["game"]["game_id"] != game_id or view["over"]:
            return True
        table, expected = view["table"], view["expected"]
        if any(w["seat"] == seat for w in table["vanesco_wait"]):
            play(action="vanesco")
        elif view["turn"] == seat and not table["vanesco_wait"]:
            if expected["phase"] == "refill":
                play(action="refill", where=expected["refill_cell"])
            elif expected["phase"] == "last_card":
                play(action="keep")
            elif expected["take"] or expected["accio"]:
                play(action="take", where=(expected["take"] or expected["accio"])[0])
            elif expected["can_pass"]:
                play(action="pass")
        return False

    wait_until(step, GAME_TIME, "the person's game to end",
               report=lambda: f"seat {seat}, last refused {refused}; {flow.report()}")


def bot_mid_take(flow: Flow, where: str) -> int:
    """Step the bots, held, one gesture at a time at the demo's own pace (`make demo`: lift,
    lay, slide; each step is the bot's own `tick`) until the seat to play's taken card is
    `where` ("hand": lifted; "pad": laid on its pad, not slid on). By construction: no
    race with a running bot. Returns the seat."""
    driver = flow.stack.driver
    flow.hold_bots()
    fast = driver.config
    driver.config = dataclasses.replace(fast, pace=0.3)
    steps: list[str] = []
    try:
        for _ in range(12):
            view = flow.state()["game"]["view"]
            seat = view["turn"]
            assert seat is not None and view["phase"] != "last_card", flow.report()
            driver.tick()
            virtual = flow.state()["virtual"] or {}
            hand = (virtual.get("hands") or {}).get(str(seat))
            steps.append(f"Seat {seat + 1}: hand {hand}, pads {virtual.get('pads')}")
            if where == "hand" and hand and "," in hand["origin"]:
                return int(seat)
            if where == "pad" and str(seat) in (virtual.get("pads") or {}):
                return int(seat)
    finally:
        driver.config = fast
    raise AssertionError(f"no bot's card in its {where} after 12 steps: {steps}; "
                         f"{flow.report()}")


def join(flow: Flow, seat: int) -> tuple[Any, str]:
    """Open `seat`'s link (the host's "Open Seat N", the QR code's one-time code traded for
    the seat's secret, which the phone keeps in a cookie): the phone page and the secret."""
    link = next(x for x in flow.http.get("/api/host/seats").json() if x["seat"] == seat)
    phone = flow.browser.new_page()  # a phone of its own (closing it closes its context)
    flow.phones.append(phone)
    phone.goto(link["url"])
    wait_until(lambda: f"/seat/{seat}" in phone.url, 20, "the seat's page")
    assert "secret" not in phone.url
    wait_until(lambda: flow.state()["joined"][seat], 20, "the seat to be joined")
    return phone, next(c["value"] for c in phone.context.cookies()
                       if c["name"] == f"cauldron-seat-{seat}")


def test_join_mid_gesture(flow: Flow) -> None:
    """Hand test B1: a visitor opens a seat's link just after its bot lifted a card (it is
    in the seat's hand). The phone's one button lays it on the pad and slides it on, in one
    tap; the game goes on to its end with no alert."""
    game_id = flow.seeded_game()
    seat = bot_mid_take(flow, "hand")
    held = flow.state()["virtual"]["hands"][str(seat)]
    phone, secret = join(flow, seat)
    flow.release_bots()
    button = phone.locator("#seat-action [data-play][data-kind='take']")
    button.wait_for()
    assert phone.locator("#seat-action [data-play]").count() == 1
    # A short button shows the card and its place; its accessible name is the whole step.
    assert "Lay " in (button.get_attribute("aria-label") or button.inner_text())
    assert (flow.state()["virtual"]["hands"] or {}).get(str(seat)) == held  # no bot used it
    button.click()

    def done() -> str | bool:
        error: str = phone.locator("#play-msg").inner_text()
        if error:
            return error
        virtual = flow.state()["virtual"] or {}
        return not (virtual.get("hands") or virtual.get("pads")) and flow.interp.held is None

    outcome = wait_until(done, 30, "the phone's tap to lay and slide the card")
    assert outcome is True, f"the phone said {outcome!r}"
    assert not flow.standing()
    person_plays(flow, seat, secret, game_id)
    phone.close()
    flow.score_screen(game_id)


def test_join_with_the_bots_card_on_the_pad(flow: Flow) -> None:
    """A visitor joins just after the seat's bot laid its card on the pad (the take is done;
    the slide onto the cauldron is not): the bot finishes its own gesture, so the person's
    next take is not refused and the other bots do not wait for that pad."""
    game_id = flow.seeded_game()
    seat = bot_mid_take(flow, "pad")
    phone, secret = join(flow, seat)
    flow.release_bots()
    wait_until(lambda: str(seat) not in ((flow.state()["virtual"] or {}).get("pads") or {}),
               30, "the bot to slide the card it laid", report=flow.report)
    person_plays(flow, seat, secret, game_id)
    phone.close()
    flow.score_screen(game_id)


def test_restart_with_standing_alert(flow: Flow) -> None:
    """A card lifted where no take is allowed raises an alert; the engine restarts (and a
    dashboard that missed the alert gets it again); it stands until the card is back."""
    game_id = flow.seeded_game(turns(2))
    assert flow.interp.game is not None and flow.interp.game.phase.value == "take"
    view = flow.state()["game"]["view"]
    allowed = set(view["expected"]["take"]) | set(view["expected"]["accio"])
    cells = flow.state()["virtual"]["cells"]
    where = next(c for c in sorted(cells) if c not in allowed)
    flow.virtual.click(f"[data-where='{where}']")
    wait_until(lambda: flow.standing(), 20, "the alert")
    alert = flow.standing()[0]
    stack = flow.stack
    stack.engine.stop()
    bridge = stack.server.config.app.state.bridge
    with bridge._lock:
        bridge.alerts.clear()  # as a restarted dashboard would start
    stack._start_engine()
    wait_until(lambda: any(a["rule"] == alert["rule"] for a in flow.standing()), 30,
               "the standing alert again after the restart")
    flow.virtual.click(f"[data-where='{where}']")  # laid back
    wait_until(lambda: not flow.standing(), 20, "the alert to clear")
    flow.release_bots()
    flow.score_screen(game_id)


def test_phone_gone_then_the_host_gives_the_seat_back_to_the_bot(flow: Flow) -> None:
    """Hand test M5: a person joins a seat, then closes the phone page. At that seat's turn
    the table view says it waits for that phone (not "No alert"); the host presses "Give
    Seat N back to the bot" and the bot plays on to the end."""
    game_id = flow.seeded_game()
    seat = 1
    phone, _ = join(flow, seat)
    phone.wait_for_selector("#seat-head")
    wait_until(lambda: flow.state()["phones"][seat], 20, "the phone page's socket")
    phone.close()
    wait_until(lambda: not flow.state()["phones"][seat], 20, "the phone to go")
    flow.release_bots()
    wait_until(lambda: flow.state()["game"]["view"]["turn"] == seat, GAME_TIME,
               "the joined seat's turn", report=flow.report)
    waiting = flow.table.locator(f".phone-waiting[data-phone='{seat}'][data-connected='0']")
    waiting.wait_for()
    assert "Seat 2" in waiting.inner_text() and "phone is not connected" in waiting.inner_text()
    assert flow.table.locator(".no-alerts").count() == 0
    wait_until(lambda: "phone is not connected" in flow.host.inner_text("#host-status"), 20,
               "the host page to say so too")
    inputs = flow.state()["game"]["view"]["table"]["inputs"]
    flow.host.evaluate("document.getElementById('links').dataset.key = ''")  # redraw now
    button = flow.host.locator(f"[data-free='{seat}']")
    button.wait_for()
    assert button.inner_text().startswith("Give Seat 2") and "back to the bot" in \
        button.inner_text()
    button.click()
    wait_until(lambda: not flow.state()["joined"][seat], 20, "the seat to be the bot's again")
    wait_until(lambda: "is the bot's again" in flow.host.inner_text("#host-msg"), 20,
               "the host page to say what it did")
    wait_until(lambda: flow.state()["game"]["view"]["table"]["inputs"] > inputs, 30,
               "the bot to play the seat's move", report=flow.report)
    flow.table.locator(".phone-waiting").wait_for(state="detached")
    flow.score_screen(game_id)

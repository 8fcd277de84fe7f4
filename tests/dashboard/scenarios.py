"""Game situations reached by construction, never by waiting for what random bots happen
to do (issue 25).

A situation (a spell taken, a refill, an Accio or a Declinatio at a corner to choose, the
game's last card to take) is planned on the rules engine with every card known, then played
move by move on the demo's virtual table, with the bots held:

- ``plan(game, situation, seed=0)``: the moves from a full-information `Game` (its pile
  order known) that lead to `situation`: the shortest of a few hundred playouts of a seeded
  RNG, each taking the situation's move as soon as one is legal. Pure rules, no table: the
  same deal and seed give the same moves; a situation no playout reaches raises
  `Unreachable` naming it (the deal's seed must then change, never the wait).
- Situations (`Situation`): ``spell_taken("perluceo" | "vanesco" | "accio" | ...)``,
  ``refilled()`` (a take and its refill), ``turns(n)`` (n turns started, a card to take),
  ``accio_to_choose()``, ``declinatio_at_corner()``, ``last_card_to_take()``; ``seat=``
  asks for that seat to be the one playing (a phone's seat).
- ``start_game(stack, http, players=2, seed=...)``: holds the bots, then deals a seeded game
  on the virtual table through the host API (`/api/host/new_game`, `deal: virtual`).
- ``reach(stack, http, situation, seed=0)``: right after `start_game` (no move made yet),
  plans from the engine's dealt square and the simulated table's pile order (its
  `physical()` truth), then plays each move with the seat's hand (`as_seat`, host PIN):
  one-tap take, the Vanesco taps, the refill, a pass or Declinatio button, the last card
  lifted and laid. After each move the table's public view must equal the plan's (turn,
  phase, square), else it fails saying where the game stood. Returns the moves played; the
  bots stay held. ``play_to(http, interp, pile, situation)`` is the same for any table
  whose engine is in-process; ``saved_pile(hub_data_dir, table)`` reads the pile of a
  simulated hub running apart (`table_stack`: ``tmp_path / "hub"``) from the physical
  truth it saves after every change.
- ``where_it_stands(stack, http)``: the table's moment in one line (game, turn, phase,
  actions, hands, pads, waiting bots, alerts, bots held or not): the report a wait for the
  bots gives when it times out (`waiting.wait_until(report=...)`).

Used by the host-flow tests (tests/dashboard/test_dashboard_host_flows.py); a phone test
reaches its Accio/Declinatio/Vanesco/Perluceo the same way, then joins the seat.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from waiting import wait_until

from engine.app.demo.driver import GESTURE_INPUTS
from engine.games.glastonbury.rules import Game
from engine.games.glastonbury.rules.actions import Action, Discard, Keep, Pass, Take, UseDeclinatio
from engine.games.glastonbury.rules.board import LINES, cell_name
from engine.games.glastonbury.rules.cards import CARDS, PLAYER_COLOURS
from engine.games.glastonbury.rules.game import Phase

MOVE_WAIT = 30.0  # one scripted move seen by the engine, on a loaded 2-core machine
SYNC_KEYS = ("turns", "turn", "phase", "grid")  # what the table's view and the plan share
EXPIRED = "the command expired"  # a command refused unseen: nothing was done (engine.wire.auth)


class Unreachable(AssertionError):
    """No playout of the deal reaches the situation."""


@dataclass(frozen=True)
class Situation:
    """`now(game)`: holds before the seat to play decides; `by(game, action)`: that
    decision makes it (the refill and Vanesco taps after it follow)."""

    what: str
    now: Callable[[Game], bool] | None = None
    by: Callable[[Game, Action], bool] | None = None
    seat: int | None = None

    def reached_now(self, game: Game) -> bool:
        return self.now is not None and self._seat_ok(game) and self.now(game)

    def reached_by(self, game: Game, action: Action) -> bool:
        return self.by is not None and self._seat_ok(game) and self.by(game, action)

    def _seat_ok(self, game: Game) -> bool:
        return self.seat is None or game.seat == self.seat


def _ends_game(game: Game, action: Action) -> bool:
    probe = game.copy()
    probe.play(action)
    return probe.phase in (Phase.LAST_CARD, Phase.OVER)


def spell_taken(spell: str, seat: int | None = None) -> Situation:
    """A card of `spell` taken (with the pile not empty: the game goes on)."""

    def by(game: Game, action: Action) -> bool:
        if not isinstance(action, Take) or not game.pile.size:
            return False
        card = game.grid[action.cell]
        return card is not None and CARDS[card].spell == spell

    return Situation(f"a {spell.capitalize()} taken", by=by, seat=seat)


def refilled(seat: int | None = None) -> Situation:
    """A card taken and its hole refilled from the pile."""
    return Situation("a take and its refill", seat=seat, by=lambda game, action: isinstance(
        action, Take) and game.pile.size > 0 and not _ends_game(game, action))


def turns(count: int, seat: int | None = None) -> Situation:
    """`count` turns started, and a card to take (not the last one)."""

    def now(game: Game) -> bool:
        return game.turns >= count and game.phase is Phase.TAKE and any(
            isinstance(a, Take) and not _ends_game(game, a) for a in game.legal_actions())

    return Situation(f"{count} turns, then a card to take", now=now, seat=seat)


def accio_to_choose(seat: int | None = None) -> Situation:
    """The seat to play may take with Accio (a card outside its faced line, G6)."""

    def now(game: Game) -> bool:
        line = game.faced_line()
        return game.phase is Phase.TAKE and line is not None and any(
            isinstance(a, Take) and a.cell not in LINES[line] for a in game.legal_actions())

    return Situation("an Accio to choose", now=now, seat=seat)


def declinatio_at_corner(seat: int | None = None) -> Situation:
    """The seat to play stands at a corner holding a Declinatio: use it or pass (G7)."""
    return Situation("a Declinatio at a corner", seat=seat, now=lambda game: (
        game.phase is Phase.TAKE and any(isinstance(a, UseDeclinatio)
                                         for a in game.legal_actions())))


def last_card_to_take(seat: int | None = None) -> Situation:
    """The seat to play may take a card that ends the game (G10a)."""
    return Situation("the last card to take", seat=seat, now=lambda game: (
        game.phase is Phase.TAKE and not game.pile.size and any(
            isinstance(a, Take) and _ends_game(game, a) for a in game.legal_actions())))


# ---------------------------------------------------------------- planning (pure rules)


def plan(game: Game, situation: Situation, seed: int = 0, tries: int = 300) -> list[Action]:
    """The shortest sequence of decisions from `game` (pile order known) to `situation`
    among `tries` seeded playouts; raises `Unreachable`."""
    if game.pile.size and not game.pile.known:
        raise ValueError("plan() needs the pile's order (Game.from_deal(..., pile=...))")
    rng = random.Random(seed)
    best: list[Action] | None = None
    for _ in range(tries):
        probe, moves = game.copy(), []
        while not probe.is_over() and (best is None or len(moves) < len(best)):
            if situation.reached_now(probe):
                best = moves
                break
            legal = probe.legal_actions()
            hit = next((a for a in legal if situation.reached_by(probe, a)), None)
            if hit is not None:
                best = [*moves, hit]
                break
            action = rng.choice(legal)
            moves.append(action)
            probe.play(action)
    if best is None:
        raise Unreachable(f"no playout of this deal reaches {situation.what} "
                          f"({tries} tries, seed {seed})")
    return best


# ---------------------------------------------------------------- the demo table


def where_it_stands(stack: Any, http: Any) -> str:
    """The table's moment in one line, for a wait's timeout message."""
    try:
        state = http.get("/api/table").json()
    except Exception as exc:  # the report must never hide the timeout itself
        return f"(the table's state could not be read: {exc})"
    game = state.get("game") or {}
    view = game.get("view") or {}
    table = view.get("table") or {}
    virtual = state.get("virtual") or {}
    engine = _interp(stack).game if stack.engine is not None else None
    actions = [str(a) for a in engine.actions[-4:]] if engine is not None else []
    driver = stack.driver
    bots = ("held" if not driver.resumed.is_set() else "playing") if driver else "none"
    return (f"game {game.get('game_id')} {table.get('status')}, turn {view.get('turn')} "
            f"phase {view.get('phase')}, {table.get('inputs')} inputs, engine actions "
            f"{len(engine.actions) if engine is not None else None} (last {actions}), "
            f"pile {virtual.get('pile_size')}, expected {view.get('expected')}, vanesco "
            f"{table.get('vanesco_wait')}, hands {virtual.get('hands')}, pads "
            f"{virtual.get('pads')}, waiting bots {virtual.get('waiting')}, alerts "
            f"{state.get('alerts')}, bots {bots} (their game {getattr(driver, '_game_id', None)}"
            f", awaiting {getattr(driver, '_awaiting', None)}), status {state.get('status')}")


def _interp(stack: Any) -> Any:
    return stack.engine.tables[stack.options.table].interp


def send(http: Any, path: str, body: dict[str, Any] | None) -> Any:
    """POST; a command the busy engine or hub let expire (nothing was done, "send it again")
    is sent again, up to 3 times: on a loaded 2-core machine the 5 s deadline can pass."""
    for _ in range(3):
        answer = http.post(path, json=body)
        if answer.status_code != 409 or EXPIRED not in answer.text:
            return answer
    return answer


def hold_bots(stack: Any) -> None:
    stack.driver.pause()
    wait_until(stack.driver.idle.is_set, 30, "the bots to hold")


def start_game(stack: Any, http: Any, players: int = 2, seed: int = 1,
               **options: Any) -> str:
    """Hold the bots, end any game, deal a seeded one on the virtual table; its id."""
    hold_bots(stack)
    state = http.get("/api/table").json()
    before = (state.get("game") or {}).get("game_id")
    if (((state.get("game") or {}).get("view") or {}).get("table") or {}).get(
            "status") in ("dealing", "playing"):
        ended = http.post("/api/host/end")
        assert ended.status_code < 300, ended.text
    body = {"colours": list(PLAYER_COLOURS[:players]), "deal": "virtual", "seed": seed,
            **options}
    answer = send(http, "/api/host/new_game", body)
    assert answer.status_code < 300, answer.text

    def started() -> str | None:
        game = http.get("/api/table").json().get("game") or {}
        status = ((game.get("view") or {}).get("table") or {}).get("status")
        return game.get("game_id") if game.get("game_id") not in (None, before) \
            and status == "playing" else None

    return str(wait_until(started, 30, "the seeded game to start",
                          report=lambda: where_it_stands(stack, http)))


def saved_pile(hub_data_dir: Path, table: str) -> list[str]:
    """The draw pile, top first, of a simulated hub in another process
    (`cauldron hub --backend sim --data-dir DIR`)."""
    from hub.config import HubConfig

    path = HubConfig(table=table, data_dir=hub_data_dir).sim_state_path
    return [str(card) for card in json.loads(path.read_text(encoding="utf-8"))["pile"]]


def full_game(engine: Game | None, pile: list[str]) -> Game:
    """The engine's game just dealt (real-table mode) with the table's pile order known."""
    assert engine is not None and not engine.actions, "plan from a game with no move yet"
    return Game.from_deal(engine.config, list(engine.deal.grid), pile=pile,
                          recipes=engine.deal.recipes)


def reach(stack: Any, http: Any, situation: Situation, seed: int = 0) -> list[Action]:
    """On the demo (`DemoStack`, bots held), play the planned moves of a game just dealt
    until `situation`; the pile's order is the simulated table's own (in-process)."""
    return play_to(http, lambda: _interp(stack), stack.hub.backend.physical()["pile"],
                   situation, seed, report=lambda: where_it_stands(stack, http))


def play_to(http: Any, interp: Callable[[], Any], pile: list[str], situation: Situation,
            seed: int = 0, report: Callable[[], str] | None = None) -> list[Action]:
    """Any table with a virtual table and the host PIN on `http`: `interp()` is the
    engine's `TableInterpreter` (in-process), `pile` the cards of the draw pile, top first.
    Nobody else may play meanwhile."""
    game = full_game(interp().game, pile)
    moves = plan(game, situation, seed)
    table = _Table(http, interp, report or (lambda: "(no report)"))
    for action in moves:
        table.play(game, action)
        game.play(action)
        if game.phase in (Phase.TAKE, Phase.OVER):  # not mid-Declinatio, no last card in hand
            table.in_step_with(game, situation.what)
    return moves


class _Table:
    """The seat's hand on the virtual table (host PIN, `as_seat`)."""

    def __init__(self, http: Any, interp: Callable[[], Any], report: Callable[[], str]
                 ) -> None:
        self.http = http
        self._interp = interp
        self.report = report
        self.seen: int | None = None  # the engine's inputs as last read, nothing done since

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = self.http.get("/api/table").json()
        return data

    def inputs(self) -> int:
        return int(self.state()["game"]["view"]["table"]["inputs"])

    @property
    def interp(self) -> Any:
        return self._interp()

    def post(self, path: str, body: dict[str, Any] | None, inputs: int) -> None:
        before = self.inputs() if self.seen is None else self.seen
        self.seen = None
        answer = send(self.http, path, body)
        assert answer.status_code < 300, f"{path} {body}: {answer.text}; {self.report()}"

        def counted() -> bool:
            now = self.inputs()
            self.seen = now if now >= before + inputs else None
            return self.seen is not None

        if inputs:
            wait_until(counted, MOVE_WAIT, f"the engine to see {path} {body}", slowest=0.02,
                       report=self.report)

    def gesture(self, **body: Any) -> None:
        self.post("/api/virtual/gesture", body, GESTURE_INPUTS[str(body["action"])])

    def play(self, game: Game, action: Action) -> None:
        seat = game.seat
        if isinstance(action, UseDeclinatio):
            probe = game.copy()
            probe.play(action)
            if probe.is_over():  # Declinatio onto Vanesco/Perluceo only (G7): the button
                self.post("/api/virtual/declinatio", None, 1)
            return  # otherwise the take from the newly faced line says it
        if isinstance(action, Pass):
            self.post("/api/virtual/pass", None, 1)
        elif isinstance(action, Keep):
            self.gesture(action="lay", where=f"pad:{seat}", as_seat=seat)
        elif isinstance(action, Discard):
            self.post("/api/virtual/discard", None, 1)
            self.gesture(action="drop", as_seat=seat)
        elif isinstance(action, Take):
            where = cell_name(action.cell)
            if _ends_game(game, action):  # the last card: in hand, then keep or discard
                self.gesture(action="lift", where=where, as_seat=seat)
                return
            self.gesture(action="take", where=where, seat=seat, as_seat=seat)
            self.follow_up(seat)
        else:
            raise AssertionError(f"no gesture plays {action}")

    def follow_up(self, seat: int) -> None:
        """After a take: each Vanesco victim taps its top card, then the refill."""
        interp = self.interp
        for victim, _ in list(interp.vanesco_wait):
            self.gesture(action="vanesco", seat=victim, as_seat=victim)
        game = interp.game
        if game is not None and game.phase is Phase.REFILL and game.refill_cell is not None:
            self.gesture(action="refill", where=cell_name(game.refill_cell), as_seat=seat)

    def in_step_with(self, game: Game, what: str) -> None:
        """The table's public view is the plan's, every card where it goes."""
        want = {k: game.view_public()[k] for k in SYNC_KEYS}

        def same() -> bool:
            state = self.state()
            view = (state.get("game") or {}).get("view") or {}
            virtual = state.get("virtual") or {}
            self.seen = int(view["table"]["inputs"]) if view.get("table") else None
            return all(view.get(k) == v for k, v in want.items()) and not virtual.get(
                "hands") and not virtual.get("pads") and self.interp.held is None

        wait_until(same, MOVE_WAIT, f"the table to follow the plan towards {what} "
                   f"(turn {want['turn']}, phase {want['phase']})", slowest=0.02,
                   report=self.report)

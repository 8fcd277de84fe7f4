"""Unknown-deck mode (a real table, G4 refill): the pile's order is unknown, each refill is
an action carrying the card seen in the hole; both modes share one model."""

from __future__ import annotations

import random

import pytest
import rules_deals as D

from engine.games.glastonbury.rules import Game, GameLog, IllegalAction, Phase, Refill, Take, replay
from engine.games.glastonbury.rules.board import TAKEABLE_CELLS
from engine.games.glastonbury.rules.events import Refilled


def test_G4_unknown_pile_replays_a_known_game_card_for_card() -> None:
    config = D.config(4)
    known = Game.new(config, random.Random(21))
    table = Game.from_deal(config, known.deal.grid, None)
    assert not table.pile.known and len(table.pile) == len(known.pile) == 52
    rng = random.Random(21)
    refills = 0
    while not known.is_over():
        action = rng.choice(known.legal_actions())
        events = known.apply(action)
        table.apply(action)
        for event in D.of_type(events, Refilled):
            assert table.phase is Phase.REFILL
            assert Refill(event.card) in table.legal_actions()  # type: ignore[attr-defined]
            table.apply(Refill(event.card))  # type: ignore[attr-defined]
            refills += 1
        assert table.grid == known.grid and table.cauldrons == known.cauldrons
    assert refills > 0 and table.is_over()
    assert table.end_reason == known.end_reason
    assert table.scores() == known.scores()
    assert replay(GameLog.of(table)) == table


@pytest.mark.parametrize(("players", "seed"), [(2, 31), (3, 32), (4, 33)])
def test_G4_unknown_pile_game_with_random_refills_ends_and_replays(players: int, seed: int) -> None:
    config = D.config(players)
    table = D.game(config, unknown=True)
    rng = random.Random(seed)
    for _ in range(400):
        if table.is_over():
            break
        table.apply(rng.choice(table.legal_actions()))
    assert table.is_over()
    assert any(isinstance(a, Refill) for a in table.actions)
    log = GameLog.from_wire(GameLog.of(table).to_wire())
    assert log.deal.pile is None
    assert replay(log) == table


def test_G4_wrong_refill_is_refused_and_the_game_is_unchanged() -> None:
    table = D.game(D.config(2), {"1,2": "orange-a-3"}, unknown=True)
    D.take(table, "1,2")
    assert table.phase is Phase.REFILL and table.refill_cell == D.cell("1,2")
    expected = table.view_public()["expected"]
    assert expected["refill_cell"] == "1,2" and expected["phase"] == "refill"
    on_table = table.grid[TAKEABLE_CELLS[0]]
    before = table.state_key()
    wrong = [
        Refill(on_table),  # type: ignore[arg-type]  # lies on the table
        Refill("orange-a-3"),  # in seat 0's cauldron
        Refill("green-a-1"),  # removed with 2 players
        Refill("corner-1"),
        Refill("no-such-card"),
    ]
    for action in wrong:
        with pytest.raises(IllegalAction) as err:
            table.apply(action)
        assert err.value.rule == "G4"
        assert table.state_key() == before
    for action in (Take(D.cell("2,2")),):
        with pytest.raises(IllegalAction) as err:
            table.apply(action)
        assert err.value.rule == "G4" and "refill the hole at row 2, column 3" in err.value.message
    legal = table.legal_actions()
    assert len(legal) == 44 and all(isinstance(a, Refill) for a in legal)
    events = table.apply(legal[5])
    assert events[0] == Refilled(D.cell("1,2"), legal[5].card, 43)  # type: ignore[union-attr]
    assert table.grid[D.cell("1,2")] == legal[5].card  # type: ignore[union-attr]

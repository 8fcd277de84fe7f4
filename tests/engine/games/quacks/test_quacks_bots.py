"""The Quacks bots: legal choices only, from their own seat view; push-your-luck beats
random; the tournament's numbers and `cauldron tournament --game quacks`."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from engine.app.cli import main
from engine.games.quacks.bots.policies import BotError, PushBot, make_bot
from engine.games.quacks.bots.tournament import play_game, run_tournament
from engine.games.quacks.rules import Draw, Game, QuacksConfig, Stop
from engine.games.quacks.rules.observer import seat_view


class Watching:
    """Wraps a bot: checks every choice is legal and the view shows no other seat's hand."""

    def __init__(self, label: str) -> None:
        self.bot = make_bot(label)
        self.name = label
        self.calls = 0

    def choose(self, view: dict[str, Any], legal: Any, rng: random.Random) -> Any:
        me = view["me"]
        assert all(s["hand_size"] >= 0 and "hand" not in s for s in view["seats"])
        action = self.bot.choose(view, legal, rng)
        assert action in legal and action.seat == me
        self.calls += 1
        return action


@pytest.mark.parametrize("label", ["random", "greedy", "push", "push:margin=0.5"])
def test_bots_choose_legal_actions_from_their_own_view(label: str) -> None:
    bots = [Watching(label), Watching("push"), Watching("greedy")]
    game = play_game(bots, seed=11)
    assert game.is_over() and game.winners and all(b.calls for b in bots)


def test_push_draws_while_the_expected_value_beats_stopping() -> None:
    game = Game(QuacksConfig(players=2, fortune_cards=False), [], random.Random(1))
    bot = PushBot(margin=0.0)  # the plain comparison: one draw against stopping
    view = seat_view(game, 0)
    assert bot.choose(view, game.legal_actions(0), random.Random(0)) == Draw(0)  # no risk yet
    for chip in sorted(game.players[0].bag):
        if chip.startswith("white-3") or chip.startswith("white-2"):
            game.apply(Draw(0, chip))
    assert game.white_sum(0) == 7  # any white now explodes: 4 of 6 chips
    game.round = 9  # VP matter most: an explosion costs them (in round 1 it costs little)
    assert bot.choose(seat_view(game, 0), game.legal_actions(0), random.Random(0)).TYPE == "flask"
    game.players[0].flask = False
    now, expected = bot.draw_value(seat_view(game, 0))
    assert expected < now
    assert bot.choose(seat_view(game, 0), game.legal_actions(0), random.Random(0)) == Stop(0)


def test_push_and_greedy_beat_random() -> None:
    result = run_tournament(["random", "greedy", "push"], make_bot, 9, players=3, seed=2)
    by = {s.label: s for s in result.standings}
    assert by["push"].wins + by["greedy"].wins == 9 and by["random"].wins == 0
    low, high = by["random"].interval()
    assert low == 0.0 and 0 < high < 0.5


def test_unknown_bots_and_options_are_refused() -> None:
    for label in ("nope", "push:depth=3", "greedy:x=1", "push:margin=abc"):
        with pytest.raises(BotError):
            make_bot(label)


def test_cauldron_tournament_game_quacks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "--game", "quacks", "--games", "3", "--players", "2",
                 "--bots", "greedy,push", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "quacks" and out["games"] == 3
    assert sum(s["wins"] for s in out["standings"]) == pytest.approx(3)
    assert main(["tournament", "--game", "quacks", "--bots", "nope"]) == 2

"""Hints: a legal action, the card and cell, and a reason in plain words (fr/en/de)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from people_words import leaks

from engine.games.glastonbury.bots import BotError, GreedyBot, hint, observe_game
from engine.games.glastonbury.rules import Game, GameConfig, Take
from engine.games.glastonbury.rules.board import parse_cell
from engine.games.glastonbury.rules.names import card_name, cell_label


def _game_in_progress(moves: int, players: int = 2) -> Game:
    game = Game.new(GameConfig(colours=("blue", "yellow", "red")[:players]), random.Random(31))
    bot = GreedyBot()
    for _ in range(moves):
        game.apply(bot.choose(observe_game(game, game.seat), random.Random(1)))
    return game


@pytest.mark.parametrize("level", ["greedy", "search"])
def test_hint_is_legal_and_explained(level: str) -> None:
    game = _game_in_progress(12)
    result = hint(game, game.seat, level, "en", simulations=24)  # type: ignore[arg-type]
    assert result.action in game.legal_actions()
    assert result.reason.strip()
    assert set(result.reasons) == {"fr", "en", "de"}
    assert all(text.strip() for text in result.reasons.values())
    assert result.reasons["fr"] != result.reasons["en"]
    if isinstance(result.action, Take):
        assert result.cell is not None
        assert result.card == game.grid[parse_cell(result.cell)]
    assert result.to_json()["action"] == result.action.to_wire()


def test_hint_in_french_for_a_three_player_game() -> None:
    game = _game_in_progress(7, players=3)
    result = hint(game, game.seat, "greedy", "fr")
    assert result.reason == result.reasons["fr"]
    assert result.action in game.legal_actions()


def test_hint_refuses_when_it_is_not_the_seats_turn() -> None:
    game = _game_in_progress(3)
    with pytest.raises(BotError, match="turn") as refused:
        hint(game, 1 - game.seat, "greedy")
    # Said for people (the seat page shows it): 1-based seats with their colours.
    colours = game.config.colours
    assert str(refused.value) == (
        f"it is Seat {game.seat + 1} ({colours[game.seat]})'s turn, "
        f"not Seat {2 - game.seat} ({colours[1 - game.seat]})'s")
    with pytest.raises(BotError, match="level"):
        hint(game, game.seat, "clever")  # type: ignore[arg-type]


def test_hint_does_not_change_the_game() -> None:
    game = _game_in_progress(5)
    before = game.state_key()
    hint(game, game.seat, "search", simulations=12)
    assert game.state_key() == before


def test_hint_command_reads_a_game_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.app.cli import main
    from engine.games.glastonbury.rules.log import GameLog

    game = _game_in_progress(6)
    log = tmp_path / "game.json"
    log.write_text(json.dumps(GameLog.of(game).to_wire()), encoding="utf-8")
    assert main(["hint", str(log), "--level", "greedy", "--lang", "de", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["seat"] == game.seat
    assert data["reason"] == data["reasons"]["de"]
    # The text output names the seat, the card and the cell for people (issue 11).
    assert main(["hint", str(log), "--level", "greedy"]) == 0
    out = capsys.readouterr().out.strip()
    seat = f"Seat {game.seat + 1} ({game.config.colours[game.seat]}): "
    assert out.startswith(seat), out
    assert not leaks(out), leaks(out)
    if data["action"]["type"] == "take":
        cell = parse_cell(data["cell"])
        card = game.grid[cell]
        assert card is not None
        assert f"take {card_name(card)} from {cell_label(cell)} — " in out
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["hint", str(bad)]) == 2
    assert "is not JSON" in capsys.readouterr().err
    assert main(["hint", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err

"""A game's set-up options are ONE model (`GameDefinition.options`): the host form
(dashboard `NewGameIn`), the engine's ``cmd/new_game`` arguments and the demo's carried-over
options all derive from it, so a new option reaches the engine from each without being
listed anywhere else (issue 22: "a new option is silently dropped by the demo")."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from pydantic import Field

from dashboard.models import NewGameForm, new_game_in
from dashboard.routers.host import game_config
from engine import games
from engine.app.demo.driver import BotDriver
from engine.games.glastonbury.definition import GlastonburyDefinition, GlastonburyOptions
from engine.wire import api


class LanternOptions(GlastonburyOptions):
    """Glastonbury with one more option, as a developer adds one."""

    lantern: bool = Field(default=False, description="a new house rule")


class LanternGlastonbury(GlastonburyDefinition):
    options = LanternOptions

    def check(self, options: Mapping[str, object]) -> LanternOptions:
        plain = super().check({k: v for k, v in options.items() if k != "lantern"})
        return LanternOptions.model_validate({**plain.wire(), "lantern": options["lantern"]})


@pytest.fixture
def lantern_game(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(games._loaded, "glastonbury", LanternGlastonbury())
    yield


@pytest.mark.usefixtures("lantern_game")
def test_G2_a_new_option_reaches_the_engine_from_the_host_form() -> None:
    form_model = new_game_in()
    form = form_model.model_validate({"colours": ["yellow", "red", "blue"], "lantern": True})
    assert isinstance(form, NewGameForm)
    wire = game_config(form)
    assert wire["lantern"] is True
    args = api.new_game_args("glastonbury").model_validate(wire)
    assert args.config_wire()["lantern"] is True
    assert form_model.model_json_schema()["properties"]["lantern"]["description"] == (
        "a new house rule")


@pytest.mark.usefixtures("lantern_game")
def test_G2_a_new_option_the_host_chose_is_kept_by_the_demos_next_games() -> None:
    config: dict[str, Any] = {"colours": ["green", "blue", "red"], "first_seat": 2,
                              "start_positions": [0, 5, 10], "removed_colour": None,
                              "recipes": False, "second_player_bonus": False,
                              "memory_aid": False, "lantern": True}
    kept = BotDriver._options_of(config)
    assert kept is not None and kept["lantern"] is True
    assert "first_seat" not in kept and "start_positions" not in kept  # PER_GAME


def test_an_option_the_game_does_not_have_is_refused_not_dropped() -> None:
    with pytest.raises(api.BadArgs) as err:
        api.NEW_GAME.parse({"colours": ["yellow", "red"], "lantern": True})
    assert err.value.code == "bad_config" and "lantern" in err.value.message
    with pytest.raises(ValueError, match="lantern"):
        new_game_in().model_validate({"colours": ["yellow", "red"], "lantern": True})


def test_an_unknown_game_is_refused_by_the_new_game_command() -> None:
    with pytest.raises(api.BadArgs) as err:
        api.NEW_GAME.parse({"game": "chess", "colours": ["yellow", "red"]})
    assert err.value.code == "unknown_game" and "this table offers glastonbury" in err.value.message

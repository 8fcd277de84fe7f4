"""The score screen's data: the finished game's score breakdown, as its game types it
(`GameViews.scores`, found through the registry): the table's game once over, else the last
finished game while the next one runs."""

from __future__ import annotations

import operator
from functools import reduce
from typing import Any

from fastapi import APIRouter, status

from dashboard.deps import BridgeDep
from dashboard.models import GameOtherOut, GamePublicOut
from dashboard.routers import Refusal
from engine import games
from engine.games.base import final_scores

router = APIRouter(tags=["scores"])

# Every offered game's breakdown type (the response's schema names each).
SCORES_OUT: Any = reduce(operator.or_, [g.views.scores for g in games.games()
                                         if g.views.scores is not None])


def finished(game: GamePublicOut | GameOtherOut | None) -> object | None:
    """The final scores ``game``'s view holds (None: no game, or not over)."""
    if game is None or game.game not in games.game_ids():
        return None
    return final_scores(games.get(game.game).views, game.view)


@router.get(
    "/api/scores",
    summary="The final scores with their breakdown",
    responses={404: {"description": "no finished game"}},
    response_model=SCORES_OUT,
)
def scores(bridge: BridgeDep) -> object:
    state = bridge.table_state()
    found = finished(state.game)
    if found is None:
        found = finished(state.last_game)
    if found is None:
        raise Refusal(status.HTTP_404_NOT_FOUND, "no finished game yet", "no_scores")
    return found

"""The score screen's data."""

from __future__ import annotations

from fastapi import APIRouter, status

from dashboard.deps import BridgeDep
from dashboard.models import SCORES_PUBLIC, GamePublicOut
from dashboard.routers import Refusal

router = APIRouter(tags=["scores"])


@router.get(
    "/api/scores",
    summary="The final scores with their breakdown",
    responses={404: {"description": "no finished game"}},
    response_model=SCORES_PUBLIC,
)
def scores(bridge: BridgeDep) -> object:
    state = bridge.table_state()
    game = state.game if isinstance(state.game, GamePublicOut) else None  # (Glastonbury's)
    end = game.view.end if game else None
    if (end is None or end.scores is None) and state.last_game is not None:
        end = state.last_game.view.end  # the last finished game, while the next one runs
    if end is None or end.scores is None:
        raise Refusal(status.HTTP_404_NOT_FOUND, "no finished game yet", "no_scores")
    return end.scores

"""Enrolment from the host page (PIN protected): the running hub enrols, this only asks it.

``POST /api/host/enrol`` sends ``hub/cmd/enrol`` (start on a seat's pad, undo, skip, stop;
or a spare: a lost piece's new tag, at any time, a game running or not);
the progress comes back in the hub's retained ``hub/health`` (``GET /api/host/enrolment``).
No second process reads the pad or writes the hub's topics.
"""

from __future__ import annotations

from fastapi import APIRouter, status

from dashboard.deps import BridgeDep, HostDep
from dashboard.models import CommandResult, EnrolIn
from dashboard.routers import Refusal, answered, host
from engine.wire import api
from engine.wire.api import EnrolArgs

router = APIRouter(prefix=host.router.prefix, tags=["host"], responses={
    **host.router.responses,
    409: {"description": "refused by the hub (the reason says why)"},
    503: {"description": "the broker or the hub does not answer"},
})


@router.post(
    "/enrol",
    summary="Start, undo, skip or stop the hub's enrolment of the box's tags, or enrol a spare",
    description="Asks the running hub (`hub/cmd/enrol`). While it enrols, each tag laid on "
    "the chosen seat's pad becomes the next card of the box; the answer and "
    "`GET /api/host/enrolment` say which card comes next. `spare` (with `piece`: a piece, "
    "or a kind of a game that enrols by kind) may be asked during a game: the next tag "
    "laid on that pad becomes the piece's, its old tag retired.",
)
def enrol(_: HostDep, bridge: BridgeDep, form: EnrolIn) -> CommandResult:
    args = EnrolArgs(action=form.action)
    if form.action == "start":
        if bridge.game_in_progress() is not None:
            # While enrolling, the chosen pad's taps are enrolment, not play.
            raise Refusal(status.HTTP_409_CONFLICT, "a game is in progress: end it first "
                          "(enrolment takes over a seat's pad)", "game_in_progress")
        args = EnrolArgs(action="start", pad=form.seat - 1, write=form.write)
    elif form.action == "spare":  # one tap on one pad: allowed at any time (issue 23)
        args = EnrolArgs(action="spare", pad=form.seat - 1, piece=form.piece)
    return answered(bridge.hub_command(api.ENROL, args))

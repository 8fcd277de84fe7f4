"""The virtual table: clicks that move cards on the simulated hub (``hub/cmd/sim``)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status

from dashboard.deps import BridgeDep, VirtualDep
from dashboard.models import CommandResult, SimIn, VirtualPublic
from dashboard.routers import answered
from dashboard.virtual import VirtualError

router = APIRouter(
    prefix="/api/virtual",
    tags=["virtual table"],
    responses={404: {"description": "the virtual table is off"},
               409: {"description": "the gesture cannot be done (reason given)"}},
)


@router.get("", summary="The virtual table's public state")
def get_virtual(virtual: VirtualDep) -> VirtualPublic:
    return virtual.public()


@router.post(
    "/gesture",
    summary="Move a card on the virtual table",
    description="lift / lay / draw / drop / slide / tap, as a person would at a real table; "
    "the simulated hub turns it into sensor events. A wrong gesture is allowed: the engine "
    "raises the alert, as it would for real cards.",
)
def gesture(virtual: VirtualDep, body: SimIn) -> VirtualPublic:
    try:
        return virtual.apply(body.action, body.where, body.seat)
    except VirtualError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None


def _decide(bridge: BridgeDep, verb: str) -> CommandResult:
    state = bridge.table_state()
    seat = state.game.view.expected.seat if state.game else None
    if state.game is None or state.game.view.phase != "last_card" or seat is None:
        raise HTTPException(status.HTTP_409_CONFLICT, "no last card to keep or discard now (G10a)")
    return answered(bridge.command(verb, {"seat": seat}, seat=seat, source="virtual"))


@router.post("/keep", summary="Keep the last card (for the seat whose turn it is)")
def keep(virtual: VirtualDep, bridge: BridgeDep) -> CommandResult:
    return _decide(bridge, "keep")


@router.post("/discard", summary="Discard the last card (for the seat whose turn it is)")
def discard(virtual: VirtualDep, bridge: BridgeDep) -> CommandResult:
    return _decide(bridge, "discard")


@router.post("/pass", summary="Pass at a corner instead of using Declinatio (the seat's button)")
def pass_turn(virtual: VirtualDep, bridge: BridgeDep) -> CommandResult:
    state = bridge.table_state()
    if state.game is None or not state.game.view.expected.pass_:
        raise HTTPException(status.HTTP_409_CONFLICT, "nobody can pass now (G4, G7)")
    return answered(bridge.command("confirm", source="virtual"))

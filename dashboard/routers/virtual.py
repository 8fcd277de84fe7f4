"""The virtual table: clicks that move cards on the simulated hub (``hub/cmd/sim``)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel, ConfigDict, Field

from dashboard.bridge import corner_blocked
from dashboard.deps import BridgeDep, HostDep, VirtualDep
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
    if state.game is None or not state.game.view.expected.can_pass:
        raise HTTPException(status.HTTP_409_CONFLICT, "nobody can pass now (G4, G7)")
    return answered(bridge.command("confirm", source="virtual"))


@router.post(
    "/declinatio",
    summary="Use Declinatio onto a line of Vanesco/Perluceo only: ends the game (G7)",
    description="For the seat whose turn it is, only when its pawn stands at a corner and "
    "Declinatio would face a line holding only Vanesco/Perluceo (the table's prompt "
    "`corner_blocked`). At a real table the seat taps its Declinatio card on its pad.",
)
def use_declinatio(virtual: VirtualDep, bridge: BridgeDep) -> CommandResult:
    seat = corner_blocked(bridge.table_state().game)
    if seat is None:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            "Declinatio cannot end the game now: only at a corner where it would face a line "
            "of Vanesco/Perluceo only (G7); otherwise use it by taking a card from the line "
            "it reaches",
        )
    return answered(bridge.command("declinatio", {"seat": seat}, seat=seat, source="virtual"))


class PawnIn(BaseModel):
    """One pawn moved on the virtual table: ``{"from": 3, "to": 5}`` (perimeter positions
    0..19)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: int = Field(alias="from", ge=0, lt=20)
    target: int = Field(alias="to", ge=0, lt=20)


@router.post(
    "/pawn",
    summary="Move a pawn on the virtual table (a table with pawn sensors)",
    description="The simulated table's Hall switches see it as a real table's would; a pawn "
    "moved to the wrong place gets the engine's alert (G3/G4) before the card is taken. "
    "Host PIN required.",
)
def move_pawn(_: HostDep, virtual: VirtualDep, bridge: BridgeDep,
              body: PawnIn) -> CommandResult:
    return answered(bridge.hub_command("sim", {"action": "pawn", "from": body.source,
                                               "to": body.target}))

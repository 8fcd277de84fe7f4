"""A venue's stale engine is ignored: a word (game/public, engine/state) from an engine
whose claim of the table is older than one already heard does not replace the owner's
(issue 21 item 2: a zombie's retained game/public stood on the big screen)."""

from __future__ import annotations

from dashkit import Dash
from waiting import wait_until

from engine.games.glastonbury.table.interpreter import TableInterpreter
from engine.wire.contract import GamePublic, ServiceState, Topics


def test_a_stale_engines_public_view_and_state_are_ignored(dash: Dash) -> None:
    view = TableInterpreter(dash.table).public_view()
    t = Topics(dash.table)
    owner = GamePublic(table=dash.table, game_id="owner-game", view=view, fence=7)
    dash.publisher.publish(t.game_public, owner, retain=True)
    wait_until(lambda: dash.bridge.public is not None
               and dash.bridge.public.game_id == "owner-game", 10, "the owner's view")
    dash.publisher.publish(t.engine_state, ServiceState(state="online", client_id="owner",
                                                        fence=7), retain=True)
    zombie = GamePublic(table=dash.table, game_id="zombie-game", view=view, fence=6)
    dash.publisher.publish(t.game_public, zombie, retain=True)
    dash.publisher.publish(t.engine_state, ServiceState(state="online", client_id="zombie",
                                                        degraded="database lost", fence=6),
                           retain=True)
    # a later word of the owner's shows both stale ones went by (one broker, in order)
    dash.publisher.publish(t.game_public, GamePublic(table=dash.table, game_id="owner-game",
                                                     turn=1, view=view, fence=7), retain=True)
    wait_until(lambda: dash.bridge.public is not None and dash.bridge.public.turn == 1, 10,
               "the owner's next view")
    assert dash.bridge.public.game_id == "owner-game"
    assert dash.bridge.engine_degraded is None

"""The tables' keys (engine.wire.auth): made once, shared by every process of the table."""

from __future__ import annotations

import multiprocessing
import stat
from pathlib import Path

from engine.wire.auth import ensure_key, key_path, load_key


def _make(folder: str, table: str) -> str:
    return ensure_key(Path(folder), table, "cmd").key.hex()


def test_processes_making_a_tables_key_at_the_same_moment_all_get_one_key(
        tmp_path: Path) -> None:
    """An engine and a dashboard starting together for a new table: each may find no key
    and make one; the first written is the table's, and every process uses it."""
    context = multiprocessing.get_context("spawn")
    for round_ in range(3):
        table = f"t-{round_}"
        with context.Pool(6) as pool:
            keys = pool.starmap(_make, [(str(tmp_path), table)] * 12)
        stored = load_key(tmp_path, table, "cmd")
        assert stored is not None and set(keys) == {stored.key.hex()}
        assert stat.S_IMODE(key_path(tmp_path, table, "cmd").stat().st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no leftovers


def test_a_hub_key_for_another_hub_is_replaced(tmp_path: Path) -> None:
    first = ensure_key(tmp_path, "t", "hub", "hub-1")
    again = ensure_key(tmp_path, "t", "hub", "hub-1")
    other = ensure_key(tmp_path, "t", "hub", "hub-2")
    assert again.key == first.key and other.hub_id == "hub-2" and other.key != first.key
    stored = load_key(tmp_path, "t", "hub")
    assert stored is not None and stored.hub_id == "hub-2"


def test_the_signed_form_made_from_the_fields_is_pydantics_dump() -> None:
    """A hub event's and a command's signed form is made from their fields (the hot path:
    every hub event's MAC); it must be what the models' JSON dump gives, or a hub and an
    engine of different versions would disagree on every MAC."""
    import json

    from engine.wire import auth
    from engine.wire.contract import CommandRequest, HubEvent

    samples = [
        HubEvent(hub_id="hub-é", epoch="e1", seq=7, ts=1733500000.125, kind="cell",
                 action="placed", cell="2,3", uid="04AABBCCDDEEFF", card_id="blue-a-4",
                 mac="0" * 64),
        HubEvent(hub_id="h", epoch="e", seq=1, ts=0, kind="button", action="pressed",
                 button="undo"),
        HubEvent(hub_id="h", epoch="e", seq=3, ts=2.5, kind="unknown_tag", action="placed", seat=1,
                 uid="04AABBCCDDEE01", tag="retired"),  # a field added later, set
        HubEvent(hub_id="h", epoch="e", seq=2, ts=1e-7, kind="reader_health", reader=3,
                 health="silent"),
        CommandRequest(transaction="t-1", args={"seat": 2, "nested": {"a": [1, 2.5, None]},
                                                "text": "ça"}, source="engine",
                       deadline=1733500030.5, auth="x"),
        CommandRequest(transaction="t-2"),
    ]
    for model in samples:
        without = "mac" if isinstance(model, HubEvent) else "auth"
        unset = {name for name in model.LATER if getattr(model, name) is None}  # (LATER)
        slow = json.dumps(model.model_dump(mode="json", exclude={without, *unset}),
                          sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
        assert auth._canonical(model, without) == slow

"""`cauldron games export/import`: one table's whole log as JSON lines, between any stores
(a single table's SQLite file into a venue's PostgreSQL, and back).

The first line is a header (``format``, ``version``, ``table``, the games' summary rows);
each next line is one input, in order, with the actions it produced. Importing writes them
all in one transaction into an empty table, so a failed import leaves nothing behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from typing import IO, Any

from engine.service.errors import StoreError
from engine.service.store.base import ExportedInput, GameRow, Store
from engine.wire.contract import TopicError, check_table_id

FORMAT = "cauldron-table-log"
VERSION = 1


def export_table(store: Store, table: str, out: IO[str]) -> int:
    """Write `table`'s log to `out`; how many inputs."""
    log = store.table(table)
    try:
        games = [asdict(g) for g in log.games()]
        out.write(json.dumps({"format": FORMAT, "version": VERSION, "table": table,
                              "games": games}) + "\n")
        count = 0
        for row in log.export():
            out.write(json.dumps(asdict(row)) + "\n")
            count += 1
        return count
    finally:
        log.close()


def import_table(store: Store, lines: Iterable[str], rename: str | None = None
                 ) -> tuple[str, int]:
    """Load an export into `store` (as table `rename` if given); (table, inputs)."""
    it = iter(lines)
    try:
        header = json.loads(next(it))
    except StopIteration:
        raise StoreError("the file is empty; give a file written by `cauldron games "
                         "export`") from None
    except ValueError as exc:
        raise StoreError(f"line 1 is not JSON ({exc}); give a file written by "
                         "`cauldron games export`") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise StoreError("this is not a table log written by `cauldron games export`")
    if header.get("version") != VERSION:
        raise StoreError(f"export format version {header.get('version')!r} is not "
                         f"{VERSION}; use the cauldron-table version that wrote it")
    try:
        table = check_table_id(rename or header["table"])
        games = [GameRow(**{**g, "table": table}) for g in header["games"]]
        inputs = []
        for number, line in enumerate(it, start=2):
            if line.strip():
                inputs.append(_input(json.loads(line), number))
    except (KeyError, TypeError, ValueError, TopicError) as exc:
        raise StoreError(f"the export is damaged: {exc}") from None
    log = store.table(table)
    try:
        count = log.import_inputs(inputs, games)
    finally:
        log.close()
    venue = store.venue_tables()
    if venue is not None and table not in venue and store.claims:
        store.set_venue_tables(add=[table])  # a venue's engines serve it from now on
    return table, count


def _input(data: dict[str, Any], number: int) -> ExportedInput:
    if not isinstance(data, dict):
        raise ValueError(f"line {number} is not an input")
    actions = [(str(g), str(a)) for g, a in data.pop("actions")]
    return ExportedInput(**data, actions=actions)

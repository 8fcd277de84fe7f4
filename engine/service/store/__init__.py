"""Where games are kept: the store interface (`base`) and its back-ends, chosen by URL.

- ``sqlite:///path/to/data-dir`` or a plain path (the default: the engine's data dir):
  `SqliteStore`, one log file per table; for one table or one machine.
- ``postgresql://user@host/db``: `PostgresStore`, a venue's tables in one database, owned
  by engines through advisory locks (`engine.service.ownership`).
"""

from __future__ import annotations

from pathlib import Path

from engine.service.errors import StoreError
from engine.service.store.base import (
    ExportedInput,
    GameRow,
    PreparedInput,
    Store,
    StoredInput,
    TableLog,
    replay_input,
    sensor_input,
    snapshot_state,
)
from engine.service.store.sqlite import (
    SqliteStore,
    TableStore,
    default_data_dir,
    stored_tables,
    table_path,
)

__all__ = [
    "ExportedInput", "GameRow", "PreparedInput", "SqliteStore", "Store", "StoredInput",
    "TableLog", "TableStore",
    "default_data_dir", "is_postgres", "open_store", "replay_input", "sensor_input",
    "snapshot_state", "stored_tables", "table_path",
]


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def open_store(url: str | Path | None) -> Store:
    """The store at `url`: a ``postgresql://`` URL, ``sqlite:///data-dir``, or a data dir
    (None: the default data dir)."""
    if url is None or url == "":
        return SqliteStore(default_data_dir())
    if isinstance(url, Path):
        return SqliteStore(url)
    if is_postgres(url):
        from engine.service.store.postgres import PostgresStore

        return PostgresStore(url)
    if url.startswith("sqlite://"):
        path = url[len("sqlite://"):]
        if not path:
            raise StoreError(f"store {url!r}: give the data dir, e.g. sqlite:///var/lib/cauldron")
        return SqliteStore(Path(path).expanduser())
    if "://" in url:
        raise StoreError(f"store {url!r}: use postgresql://user@host/db, sqlite:///data-dir "
                         "or a folder")
    return SqliteStore(Path(url).expanduser())

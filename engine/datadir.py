"""Where Cauldron keeps its data: one owner of the XDG rule for every process.

``$XDG_DATA_HOME/cauldron/<part>``, or ``~/.local/share/cauldron/<part>`` when the variable
is unset or empty (the XDG Base Directory specification). The hub uses the top folder,
the engine ``engine``, the dashboard ``dashboard``, the demo ``demo``.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir(part: str = "") -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    root = Path(base) / "cauldron"
    return root / part if part else root

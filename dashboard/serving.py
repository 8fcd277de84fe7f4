"""How a dashboard app is served: the one owner of uvicorn's settings, used by every
command that serves one (`cauldron dashboard`, `cauldron demo`, `cauldron count`) and by
the tests, so that what is tested and measured is what is deployed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

# Live updates are sent uncompressed: per-message deflate compresses every message once per
# viewer (its own zlib context each), which costs more than the bytes it saves on a LAN;
# browsers offer it, so the server must decline it.
# A WebSocket message is never bigger than a request body may be (dashboard.guard.MAX_BODY).
UVICORN_OPTIONS: dict[str, Any] = {
    "log_level": "warning",
    "ws_per_message_deflate": False,
    "ws_max_size": 64 * 1024,
}


def uvicorn_config(app: Any, host: str, port: int, **extra: Any) -> uvicorn.Config:
    """A `uvicorn.Config` for `app` on host:port with the dashboard's options (`extra`:
    anything a caller adds, such as a graceful-shutdown timeout)."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, **{**UVICORN_OPTIONS, **extra})

"""What the dashboard refuses before any router runs, and the host PIN's brute-force guard.

- `BodyLimit`: a request body over `MAX_BODY` bytes gets 413 before it is read (by its
  ``Content-Length``, or while a chunked body streams in), so no request can make the
  dashboard hold megabytes.
- `SameOrigin`: a request that changes anything (not GET/HEAD/OPTIONS) from another site is
  refused (403): a browser says where a request comes from (``Sec-Fetch-Site``, ``Origin``),
  so a page elsewhere cannot make a player's or the host's browser post a form here.
  Programs that are no browser (the bots, curl) send neither header and are let through:
  they still need the PIN or a seat's secret like anyone. A WebSocket handshake whose
  ``Origin`` is another site is refused too (403, before the socket opens): browsers let any
  page open a socket anywhere, so a page elsewhere could otherwise read a seat's socket with
  a link it got hold of. Same origin is the ``Host`` the browser asked for, or the
  configured ``public_url`` (a proxy in front).
- `PinGuard`: wrong host PINs are counted per client and overall. After a few, that client
  waits (doubling, up to `MAX_LOCK`); after many from everywhere, every PIN check waits a
  minute. While locked out even the right PIN is refused (429, ``Retry-After``), so guessing
  cannot outrun it; each failure is logged.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("cauldron.dashboard")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 64 * 1024
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


async def _reply(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """413 for a body over `limit` bytes, before it is read."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = f"the request body is over {self.limit // 1024} KB; nothing was read"
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await _reply(send, 413, too_big)
            return
        received = 0
        answered = False

        async def limited() -> Message:
            nonlocal received, answered
            if answered:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:  # a chunked body with no length said
                    answered = True
                    await _reply(send, 413, too_big)
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: Message) -> None:
            if not answered:  # the app's own answer after our 413 goes nowhere
                await send(message)

        await self.app(scope, limited, guarded)


class SameOrigin:
    """403 for a cross-site request that would change something, and for a cross-site
    WebSocket handshake."""

    def __init__(self, app: ASGIApp, trusted: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.trusted = trusted  # origins ("http://host:port") let in besides the Host's

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and scope.get("method", "GET") not in SAFE_METHODS:
            reason = cross_site(headers, self.trusted)
            if reason is not None:
                log.warning("refused a cross-site %s %s: %s", scope.get("method"),
                            scope.get("path", "")[:200], reason)
                await _reply(send, 403, f"cross-site request refused ({reason}): use this "
                             "dashboard's own pages")
                return
        if scope["type"] == "websocket":
            reason = cross_site(headers, self.trusted, fetch_site=False)
            if reason is not None:
                log.warning("refused a cross-site WebSocket %s: %s",
                            scope.get("path", "")[:200], reason)
                await receive()  # websocket.connect; a close before accept answers 403
                await send({"type": "websocket.close", "code": 1008,
                            "reason": "cross-site WebSocket refused"})
                return
        await self.app(scope, receive, send)


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower case (how a browser's Origin says it)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def cross_site(headers: dict[bytes, bytes], trusted: frozenset[str] = frozenset(),
               fetch_site: bool = True) -> str | None:
    """Why the request comes from another site, or None. `fetch_site`: also trust the
    browser's ``Sec-Fetch-Site`` (a WebSocket handshake is judged by its Origin alone)."""
    site = headers.get(b"sec-fetch-site")
    if fetch_site and site is not None and site not in (b"same-origin", b"none"):
        return f"Sec-Fetch-Site: {site.decode(errors='replace')[:32]}"
    origin = headers.get(b"origin")
    if origin is None:
        return None
    said = origin.decode(errors="replace")
    host = headers.get(b"host", b"").decode(errors="replace").lower()
    parts = urlsplit(said)
    if parts.scheme in ("http", "https") and (parts.netloc.lower() == host
                                              or origin_of(said) in trusted):
        return None
    return f"Origin {said[:100]} is not {host}"


class PinGuard:
    """Per-client and global backoff for wrong host PINs."""

    FREE_TRIES = 5  # per client before it must wait
    FIRST_LOCK = 30.0  # seconds, doubling with each further failure
    MAX_LOCK = 15 * 60.0
    GLOBAL_WINDOW = 60.0
    GLOBAL_FAILURES = 30  # wrong PINs from everywhere within the window ...
    GLOBAL_LOCK = 60.0  # ... lock every PIN check this long

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}  # client -> (count, locked until)
        self._recent: deque[float] = deque()
        self._global_until = 0.0

    def wait(self, client: str) -> float:
        """Seconds `client` must wait before its PIN is checked (0: check it now)."""
        now = self.clock()
        with self._lock:
            own = self._failures.get(client, (0, 0.0))[1]
            return max(0.0, own - now, self._global_until - now)

    def failed(self, client: str) -> float:
        """Count a wrong PIN from `client`; returns how long it is now locked out."""
        now = self.clock()
        with self._lock:
            count, _ = self._failures.get(client, (0, 0.0))
            count += 1
            lock = 0.0
            if count >= self.FREE_TRIES:
                lock = min(self.MAX_LOCK, self.FIRST_LOCK * 2 ** (count - self.FREE_TRIES))
            if len(self._failures) > 10_000:  # bounded: forget the oldest clients
                for old in list(self._failures)[:5_000]:
                    del self._failures[old]
            self._failures[client] = (count, now + lock)
            self._recent.append(now)
            while self._recent and self._recent[0] < now - self.GLOBAL_WINDOW:
                self._recent.popleft()
            if len(self._recent) >= self.GLOBAL_FAILURES:
                self._global_until = now + self.GLOBAL_LOCK
                self._recent.clear()
                lock = max(lock, self.GLOBAL_LOCK)
        log.warning("wrong host PIN from %s (%d in a row)%s", client, count,
                    f"; PIN checks locked for {lock:.0f} s" if lock else "")
        return lock

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)

    def reset(self) -> None:
        with self._lock:
            self._failures.clear()
            self._recent.clear()
            self._global_until = 0.0


def secure(app: Any) -> None:
    """Give a FastAPI app the PIN guard, the body limit and the same-origin check."""
    app.state.pin_guard = PinGuard()
    app.add_middleware(BodyLimit, limit=MAX_BODY)
    public_url = getattr(getattr(app.state, "settings", None), "public_url", None)
    trusted = frozenset({origin_of(public_url)} if public_url else ())
    app.add_middleware(SameOrigin, trusted=trusted)

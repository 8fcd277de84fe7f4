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
- `AllowedHosts`: a request for a name that is not this dashboard's is refused (421), so
  DNS rebinding cannot make another site's page same-origin with it.
- `PinGuard`: holds the host PIN; its `check` is the only comparison. Wrong PINs are
  counted per client: after a few, that client waits (doubling, up to `MAX_LOCK`; failures
  fade). While it waits even the right PIN is refused (429, ``Retry-After``), so guessing
  cannot outrun it; other clients are not held up. Each failure is logged.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
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


def host_allowed(host_header: str, allowed: frozenset[str]) -> bool:
    """Whether a request's ``Host`` names this dashboard. DNS rebinding points a name the
    attacker controls in public DNS at this machine, so that a page of theirs is "same
    origin" with it: such a name has dots. Let in: an IP literal (a page at an address is
    its own origin), a name with no dot (``localhost``, this machine's name: only the local
    network answers for it), ``*.localhost`` and ``*.local`` (mDNS, the local network only),
    and the configured names (`public_url`, ``--allowed-host``)."""
    host = host_header.strip().lower()
    if host.startswith("["):  # [v6]:port
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    host = host.rstrip(".")
    if not host:
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    return ("." not in host or host.endswith((".localhost", ".local")) or host in allowed)


class AllowedHosts:
    """421 for a request whose ``Host`` is not this dashboard's (`host_allowed`), and a
    closed handshake for such a WebSocket: DNS rebinding gets nothing."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            host = dict(scope.get("headers") or []).get(b"host", b"").decode(errors="replace")
            if not host_allowed(host, self.allowed):
                log.warning("refused a request for host %r (not this dashboard's name)",
                            host[:100])
                if scope["type"] == "http":
                    await _reply(send, 421, f"this dashboard does not answer to the name "
                                 f"{host[:100]!r}: open it by its address, or give the name "
                                 "with --allowed-host")
                else:
                    await receive()
                    await send({"type": "websocket.close", "code": 1008,
                                "reason": "unknown host name"})
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


class PinLocked(Exception):
    """The client must wait this many seconds before its next PIN is checked."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"wait {seconds:.0f} s")
        self.seconds = seconds


def client_key(host: str | None) -> str:
    """Whom wrong PINs are counted against: an IPv4 address, or an IPv6 address's /64 (one
    machine may hold a whole /64, so counting its addresses one by one would not slow it)."""
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return (host or "unknown")[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        if not address.is_loopback:
            return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


class PinGuard:
    """The host PIN and the only way to compare one (`check`): wrong PINs are counted per
    client and slow that client down, never the others.

    A client has `FREE_TRIES` wrong PINs, then waits before each next check: `FIRST_LOCK`,
    doubling with each further failure up to `MAX_LOCK`. Failures fade: one is forgotten
    for every `FORGIVE` seconds without another, and the right PIN forgets them all. While
    wrong PINs come from many clients at once (`ALARM_FAILURES` within `ALARM_WINDOW`),
    every client that has guessed wrong even once waits as if it had used up its free tries:
    a distributed guesser gets one guess per address, while a client that has not guessed
    wrong (the host) is still checked at once; the right PIN always gets in there.
    Every failure is logged, at most `LOG_BURST` lines per `LOG_WINDOW` (the rest counted
    and said in the next line), never the PIN itself."""

    FREE_TRIES = 5  # per client before it must wait
    FIRST_LOCK = 30.0  # seconds, doubling with each further failure
    MAX_LOCK = 15 * 60.0
    FORGIVE = 20 * 60.0  # one failure forgotten per this many seconds
    ALARM_WINDOW = 60.0
    ALARM_FAILURES = 20  # wrong PINs from everywhere within the window raise the alarm ...
    ALARM_TIME = 10 * 60.0  # ... for this long
    MAX_CLIENTS = 10_000
    LOG_WINDOW = 10.0
    LOG_BURST = 20

    def __init__(self, pin: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._pin = pin.encode()
        self.clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}  # client -> (count, last at)
        self._recent: deque[float] = deque()
        self._alarm_until = 0.0
        self._log_start = -1e18
        self._logged = 0
        self._unlogged = 0

    def _count(self, client: str, now: float) -> int:
        count, at = self._failures.get(client, (0, now))
        return max(0, count - int((now - at) // self.FORGIVE))

    def _lock_for(self, count: int, now: float) -> float:
        free = 1 if now < self._alarm_until else self.FREE_TRIES
        over = count - free
        if over < 0:
            return 0.0
        return min(self.MAX_LOCK, self.FIRST_LOCK * float(2 ** min(over, 30)))

    def wait(self, client: str) -> float:
        """Seconds `client` must wait before its PIN is checked (0: check it now)."""
        now = self.clock()
        with self._lock:
            if client not in self._failures:
                return 0.0
            _, at = self._failures[client]
            lock = self._lock_for(self._count(client, now), now)
            return max(0.0, at + lock - now)

    def check(self, client: str, pin: str) -> bool:
        """Whether `pin` is the host PIN (constant time). Raises `PinLocked` while `client`
        must wait; a wrong PIN counts against `client` and is logged."""
        seconds = self.wait(client)
        if seconds > 0:
            raise PinLocked(seconds)
        if hmac.compare_digest(self._pin, pin.encode()):
            with self._lock:
                self._failures.pop(client, None)
            return True
        self._failed(client)
        return False

    def _failed(self, client: str) -> None:
        now = self.clock()
        with self._lock:
            count = self._count(client, now) + 1
            self._failures.pop(client, None)  # re-inserted last: the dict is oldest-first
            if len(self._failures) >= self.MAX_CLIENTS:  # bounded: forget the oldest
                for old in list(self._failures)[: self.MAX_CLIENTS // 2]:
                    del self._failures[old]
            self._failures[client] = (count, now)
            self._recent.append(now)
            while self._recent and self._recent[0] < now - self.ALARM_WINDOW:
                self._recent.popleft()
            alarm = len(self._recent) >= self.ALARM_FAILURES
            if alarm:
                if now >= self._alarm_until:
                    log.warning("wrong host PINs from many clients: %d in %.0f s; every "
                                "client that guessed wrong now waits before each PIN",
                                len(self._recent), self.ALARM_WINDOW)
                self._alarm_until = now + self.ALARM_TIME
            lock = self._lock_for(count, now)
            if now - self._log_start >= self.LOG_WINDOW:
                self._log_start, self._logged = now, 0
            say = self._logged < self.LOG_BURST
            unlogged = 0
            if say:
                self._logged += 1
                unlogged, self._unlogged = self._unlogged, 0
            else:
                self._unlogged += 1
        if say:
            log.warning("wrong host PIN from %s (%d recent)%s%s", client, count,
                        f"; it waits {lock:.0f} s before the next" if lock else "",
                        f" (and {unlogged} more wrong PINs not logged one by one)"
                        if unlogged else "")

    def reset(self) -> None:
        with self._lock:
            self._failures.clear()
            self._recent.clear()
            self._alarm_until = 0.0
            self._log_start, self._logged, self._unlogged = -1e18, 0, 0


def secure(app: Any) -> None:
    """Give a FastAPI app the PIN guard, the body limit and the same-origin check."""
    app.state.pin_guard = PinGuard(app.state.settings.pin)
    app.state.screen_key = secrets.token_urlsafe(32)  # dashboard.deps.sees_table_screen
    app.add_middleware(BodyLimit, limit=MAX_BODY)
    settings = app.state.settings
    public_url = settings.public_url
    trusted = frozenset({origin_of(public_url)} if public_url else ())
    app.add_middleware(SameOrigin, trusted=trusted)
    names = {name.lower().rstrip(".") for name in settings.allowed_hosts}
    if public_url:
        names.add((urlsplit(public_url).hostname or "").lower())
    app.add_middleware(AllowedHosts, allowed=frozenset(names))  # outermost: checked first

"""Per-game seat secrets: random, made by the dashboard when it first sees a game id, kept
in the data dir (when set) so a dashboard restart does not lock the phones out.

A secret is never shown: a seat's QR code carries a short-lived one-time join token
instead, which `redeem` trades for the secret once (the seat is then joined, and its code
shows no more but to the host). The host frees a seat with `rotate`: a new secret, the old
one dead. A new game keeps the secrets of the seats that joined the last one, so the phones
stay seated game after game."""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from engine.wire.contract import N_SEATS

log = logging.getLogger("cauldron.dashboard")

MAX_GAMES_KEPT = 20
# A join code is short-lived: a photo of the screen, or a code seen over a shoulder, is
# soon worth nothing. The table view fetches a new one every JOIN_TOKEN_FRESH seconds
# (dashboard/static/table.js), and each stays valid JOIN_TOKEN_TTL (time to scan it).
JOIN_TOKEN_TTL = 3 * 60.0
JOIN_TOKEN_FRESH = 60.0


class SeatSecrets:
    """game id -> one secret per seat, and which seats have joined with theirs."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._secrets: dict[str, list[str]] = {}
        self._joined: dict[str, set[int]] = {}
        # one-time join codes per (game, seat): (code, made at), the newest last
        self._tokens: dict[tuple[str, int], list[tuple[str, float]]] = {}
        # The seats whose phone has its page open (set by the bridge).
        self.staying: Callable[[], set[int]] = set
        self._load()

    def _load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            for game_id, entry in data.items():
                keys = entry["secrets"]
                if isinstance(keys, list) and len(keys) == N_SEATS:
                    self._secrets[str(game_id)] = [str(k) for k in keys]
                    self._joined[str(game_id)] = {int(s) for s in entry.get("joined", [])}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("seat secrets file %s unreadable (%s); making new ones", self.path, exc)

    def _save(self) -> None:
        if self.path is None:
            return
        data = {
            g: {"secrets": s, "joined": sorted(self._joined.get(g, ()))}
            for g, s in self._secrets.items()
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            tmp.chmod(0o600)
            tmp.replace(self.path)
        except OSError as exc:
            log.warning("cannot save seat secrets to %s: %s", self.path, exc)

    def ensure(self, game_id: str) -> list[str]:
        """The secrets of `game_id`, made on first sight."""
        with self._lock:
            keys = self._secrets.get(game_id)
            if keys is None:
                keys = [secrets.token_urlsafe(16) for _ in range(N_SEATS)]
                # The phones that joined the last game and are still open keep their seats
                # (one session, game after game); a seat the host freed is not joined any
                # more, and a phone that left does not hold its seat for the next players.
                last = next(reversed(self._secrets), None)
                kept = (self._joined.get(last, set()) & self.staying()
                        if last is not None else set())
                for seat in kept:
                    keys[seat] = self._secrets[last][seat]  # type: ignore[index]
                self._secrets[game_id] = keys
                self._joined[game_id] = set(kept)
                while len(self._secrets) > MAX_GAMES_KEPT:
                    oldest = next(iter(self._secrets))
                    del self._secrets[oldest]
                    self._joined.pop(oldest, None)
                self._save()
            return list(keys)

    def secret(self, game_id: str, seat: int) -> str:
        return self.ensure(game_id)[seat]

    def check(self, game_id: str | None, seat: int, given: str | None) -> bool:
        """True when `given` is `seat`'s secret for `game_id` (constant-time compare)."""
        if game_id is None or not given or not 0 <= seat < N_SEATS:
            return False
        with self._lock:
            keys = self._secrets.get(game_id)
        if keys is None:
            return False
        return hmac.compare_digest(keys[seat].encode(), given.encode())

    def mark_joined(self, game_id: str, seat: int) -> bool:
        """Record that `seat` joined; True when this is the first time."""
        with self._lock:
            joined = self._joined.setdefault(game_id, set())
            if seat in joined:
                return False
            joined.add(seat)
            self._save()
            return True

    def joined(self, game_id: str | None) -> list[bool]:
        with self._lock:
            seats = self._joined.get(game_id or "", set())
        return [s in seats for s in range(N_SEATS)]

    def current(self, game_id: str | None, seat: int) -> str | None:
        """The seat's secret for `game_id` now, or None (never made)."""
        with self._lock:
            keys = self._secrets.get(game_id or "")
            return keys[seat] if keys is not None and 0 <= seat < N_SEATS else None

    def join_token(self, game_id: str, seat: int) -> str:
        """The seat's current one-time join code: a new one once the last is
        `JOIN_TOKEN_FRESH` old (the older ones stay valid until their `JOIN_TOKEN_TTL`)."""
        self.ensure(game_id)
        now = time.monotonic()
        with self._lock:
            live = [t for t in self._tokens.get((game_id, seat), []) if t[1] + JOIN_TOKEN_TTL > now]
            if not live or live[-1][1] + JOIN_TOKEN_FRESH <= now:
                live.append((secrets.token_urlsafe(16), now))
            self._tokens[(game_id, seat)] = live
            if len(self._tokens) > 4 * N_SEATS * MAX_GAMES_KEPT:
                for old in [k for k, v in self._tokens.items() if v[-1][1] + JOIN_TOKEN_TTL < now]:
                    del self._tokens[old]
            return live[-1][0]

    def redeem(self, game_id: str | None, seat: int, token: str | None) -> str | None:
        """Trade a join code for the seat's secret, once; None when it is wrong, used or
        too old. Every code of the seat dies with it, and the seat is joined from then on."""
        if game_id is None or not token or not 0 <= seat < N_SEATS:
            return None
        keys = self.ensure(game_id)
        now = time.monotonic()
        with self._lock:
            live = self._tokens.get((game_id, seat), [])
            if not any(made + JOIN_TOKEN_TTL > now
                       and hmac.compare_digest(code.encode(), token.encode())
                       for code, made in live):
                return None
            del self._tokens[(game_id, seat)]
            self._joined.setdefault(game_id, set()).add(seat)
            self._save()
        return keys[seat]

    def rotate(self, game_id: str, seat: int) -> str:
        """A new secret for `seat`: the host frees it (a lost phone, a seat taken by
        someone else); the old secret opens nothing any more."""
        with self._lock:
            self._tokens.pop((game_id, seat), None)
            keys = self._secrets.setdefault(
                game_id, [secrets.token_urlsafe(16) for _ in range(N_SEATS)]
            )
            keys[seat] = secrets.token_urlsafe(16)
            self._joined.setdefault(game_id, set()).discard(seat)
            self._save()
            return keys[seat]

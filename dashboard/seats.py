"""Per-game seat secrets: random, made by the dashboard when it first sees a game id, kept
in the data dir (when set) so a dashboard restart does not lock the phones out."""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import threading
from pathlib import Path

from engine.wire.contract import N_SEATS

log = logging.getLogger("cauldron.dashboard")

MAX_GAMES_KEPT = 20


class SeatSecrets:
    """game id -> one secret per seat, and which seats have joined with theirs."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._secrets: dict[str, list[str]] = {}
        self._joined: dict[str, set[int]] = {}
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
                self._secrets[game_id] = keys
                self._joined[game_id] = set()
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

    def rotate(self, game_id: str, seat: int) -> str:
        """A new secret for `seat` (the host re-issues a lost or leaked QR code)."""
        with self._lock:
            keys = self._secrets.setdefault(
                game_id, [secrets.token_urlsafe(16) for _ in range(N_SEATS)]
            )
            keys[seat] = secrets.token_urlsafe(16)
            self._joined.setdefault(game_id, set()).discard(seat)
            self._save()
            return keys[seat]

"""What `Game.apply()` reports: one event type, a `code` and its parameters (texts for
people are rendered from codes by the pages, in en/fr/de). `private` events concern what
only their seat sees: the chips of a blue offer or a card draw in that seat's hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Event:
    code: str
    seat: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    private: bool = False

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        return default

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "seat": self.seat}
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in self.params})
        if self.private:
            out["private"] = True
        return out


def event(code: str, seat: int | None = None, private: bool = False, **params: Any) -> Event:
    return Event(code, seat, tuple(sorted(params.items())), private)

"""The simulated table's pawn sensors: a Hall switch at each of the 20 perimeter positions.

The simulated table (`hub.backends.sim.SimulatedTable`, with ``perimeter = true`` in the
config) keeps one `SimPawns`: how many pawns stand on each position. A switch sees a magnet,
not which pawn, so what is reported is the set of positions holding at least one pawn, as
the firmware's ``PAWNS`` line does. Gestures: `place`, `lift`, `move` (the virtual table and
the bots move pawns through ``hub/cmd/sim`` ``{"action": "pawn", "from": 3, "to": 5}``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable

from engine.wire.contract import N_PERIMETER
from hub.errors import BackendError
from hub.game import place_name


def check_position(value: object) -> int:
    """A perimeter position 0..19, or `BackendError` naming the bad value."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < N_PERIMETER:
        raise BackendError(f"perimeter position {value!r} is not 0..{N_PERIMETER - 1}")
    return value


class SimPawns:
    def __init__(self, positions: Iterable[int] = ()) -> None:
        self._lock = threading.Lock()
        self._count: Counter[int] = Counter(check_position(p) for p in positions)
        self._reported: frozenset[int] | None = None

    def sensed(self) -> frozenset[int]:
        with self._lock:
            return frozenset(p for p, n in self._count.items() if n > 0)

    def positions(self) -> list[int]:
        """Where each pawn stands (one entry per pawn, sorted): what the simulated table
        saves."""
        with self._lock:
            return sorted(p for p, n in self._count.items() for _ in range(n))

    def place(self, position: int) -> None:
        with self._lock:
            self._count[check_position(position)] += 1

    def lift(self, position: int) -> None:
        with self._lock:
            at = check_position(position)
            if self._count[at] <= 0:
                raise BackendError(f"no pawn stands on perimeter {place_name(f'pos:{at}')}")
            self._count[at] -= 1

    def move(self, source: int, target: int) -> None:
        with self._lock:
            at, to = check_position(source), check_position(target)
            if self._count[at] <= 0:
                raise BackendError(f"no pawn stands on perimeter {place_name(f'pos:{at}')}")
            self._count[at] -= 1
            self._count[to] += 1

    def set(self, positions: Iterable[int]) -> None:
        """Every pawn where ``positions`` says (a game's start positions)."""
        count = Counter(check_position(p) for p in positions)
        with self._lock:
            self._count = count

    def change(self) -> frozenset[int] | None:
        """The sensed positions when they changed since the last call (the first call
        always reports), else None."""
        now = self.sensed()
        with self._lock:
            if now == self._reported:
                return None
            self._reported = now
            return now

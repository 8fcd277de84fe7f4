# ruff: noqa: UP031 -- MicroPython: %-formatting works on every port
"""Pawn sensors: a DRV5032 Hall switch at each of the 20 perimeter positions,
read through three 74HC165 shift registers (Pico + CPython).

Each pawn carries a magnet; a switch drives its input low while a magnet is
over it (DRV5032FA: push-pull output; the 10 kOhm pull-up on the 74HC165 input
only keeps an unplugged sensor's input high).
Inputs 20..23 of the chain are strapped to a fixed pattern (``SIGNATURE``):
with no sensor board the data line floats high (pull-up) and the pattern does
not match, so the firmware knows pawns are not sensed and says nothing about
them (the table works as without sensors).

Reading the chain is 24 clock pulses (~0.2 ms in MicroPython); a change is
reported once two reads in a row agree (a pawn sliding past a sensor gives
no event)."""

N_POSITIONS = 20
BITS = 24
# Inputs 20..23 strapped to GND, VCC, GND, VCC: bit i set = input i high.
SIGNATURE = 0b1010 << N_POSITIONS
SIGNATURE_MASK = 0b1111 << N_POSITIONS
POSITIONS_MASK = (1 << N_POSITIONS) - 1


class PawnSensors:
    """``load`` (/PL of all three), ``clock`` (CP) and ``data`` (QH of the last
    chip): ``machine.Pin``-like objects. ``read()`` gives the bit mask of the
    positions with a pawn, or None when no sensor board answers."""

    def __init__(self, load: object, clock: object, data: object) -> None:
        self.load = load
        self.clock = clock
        self.data = data
        self.load.value(1)
        self.clock.value(0)

    def raw(self) -> int:
        """The 24 input levels, bit i = input Di of the chain (position i)."""
        self.load.value(0)  # parallel load
        self.load.value(1)
        value = 0
        for bit in range(BITS - 1, -1, -1):  # QH shows the highest input first
            if self.data.value():
                value |= 1 << bit
            self.clock.value(1)
            self.clock.value(0)
        return value

    def read(self) -> int | None:
        raw = self.raw()
        if raw & SIGNATURE_MASK != SIGNATURE:
            return None
        return ~raw & POSITIONS_MASK  # a magnet pulls its input low


class PawnTracker:
    """Debounced pawn positions: a new mask counts once read twice in a row."""

    def __init__(self) -> None:
        self.mask = None  # confirmed mask, None = no sensors (yet)
        self._candidate = None

    def update(self, mask: object) -> bool:
        """Feed one read; True when the confirmed mask changed."""
        if mask is None:
            self._candidate = None
            return False
        if mask == self.mask:
            self._candidate = None
            return False
        if mask != self._candidate:
            self._candidate = mask
            return False
        self.mask = mask
        self._candidate = None
        return True


def mask_hex(mask: int) -> str:
    return "%05X" % mask


def positions(mask: int) -> list:
    return [p for p in range(N_POSITIONS) if mask >> p & 1]

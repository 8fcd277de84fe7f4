"""Register-level MFRC522 simulator (CPython only).

What the firmware talks to when there is no hardware: the exact SPI byte
streams a real MFRC522 sees, a chip-select demultiplexer (3 x 74HC154, 48
active-low outputs, up to 40 readers used), per-reader MISO tri-state buffers
(74HC125), and NTAG213 tags in each reader's field. Time is a virtual clock
advanced by datasheet timings; nothing sleeps.

Timing model (all in microseconds, see ``Timings``):
- SPI: ``8 / spi_hz`` per bit plus an inter-byte gap, plus a fixed host cost
  per ``spi.*`` call (MicroPython call overhead) and per GPIO write.
- RF, ISO/IEC 14443A at 106 kbit/s: one bit = 128 / 13.56 MHz = 9.44 us.
  PCD frame = start bit + 9 bits per byte (8 + parity; a short frame has 7
  bits) + end of communication (2 bit periods). PICC frame = start + 9 per byte
  (4 bits for an ACK/NAK) + end (1).
- Frame delay time PCD -> PICC: (9*128 + 84)/fc = 91.15 us when the last bit
  sent was 1, (9*128 + 20)/fc = 86.43 us when it was 0.
- MFRC522 timer (TAuto): starts at the end of transmission and stops after the
  5th received bit (datasheet 8.5); period = (2*TPrescaler + 1) * (TReload + 1)
  / 13.56 MHz. An answer whose 5th bit comes after the timer fired is lost.
- TxCRCEn (TxModeReg bit 7): the chip appends CRC_A to every frame it sends.
- CRC coprocessor: ``crc_byte_us`` per byte. Soft reset: ``soft_reset_us``.
- A tag answers only once the field has been on for ``tag_power_up_us``; a
  field off for longer than ``tag_reset_off_us`` resets the tag (HALT is lost).

Faults (``Faults``, per reader): dropped replies (probability, seeded RNG),
flicker (the tag is out of the field on every other field-on period), stuck
(registers frozen: writes ignored, reads stale), misread (one bit of an answer
flipped in the air: anticollision answers get a consistent but wrong UID,
CRC-protected answers a parity error), vanished (no chip: MISO reads
0x00/0xFF), and an unbuffered MISO line (drives MISO while not selected).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from firmware.mfrc522 import crc_a  # one CRC_A, the firmware's

__all__ = ["crc_a"]  # re-exported: the tests take it from the simulator

FC_MHZ = 13.56
BIT_US = 128 / FC_MHZ  # 9.44 us at 106 kbit/s
FDT_LAST_1_US = (9 * 128 + 84) / FC_MHZ  # 91.15 us
FDT_LAST_0_US = (9 * 128 + 20) / FC_MHZ  # 86.43 us

# Register reset values (datasheet table 20 and per-register sections).
_RESET_VALUES = {
    0x01: 0x20,  # CommandReg: RcvOff... Idle
    0x02: 0x80,
    0x04: 0x14,  # ComIrqReg
    0x07: 0x21,  # Status1Reg
    0x0B: 0x08,  # WaterLevelReg
    0x0C: 0x10,  # ControlReg
    0x0E: 0xA0,  # CollReg
    0x11: 0x3F,  # ModeReg
    0x14: 0x80,  # TxControlReg: antenna off
    0x16: 0x10,
    0x17: 0x84,
    0x18: 0x84,
    0x19: 0x4D,
    0x1C: 0x62,
    0x21: 0xFF,
    0x22: 0xFF,
    0x26: 0x48,
    0x27: 0x88,
    0x28: 0x20,
    0x29: 0x08,
}

NTAG213_PAGES = 45
NTAG213_USER_PAGES = range(4, 40)


class BusContention(RuntimeError):
    """More than one device drove MISO during an SPI transaction."""


class VirtualClock:
    """Microsecond clock that only moves when the simulation says so."""

    def __init__(self) -> None:
        self.now_us = 0.0

    def advance(self, us: float) -> None:
        self.now_us += us

    def sleep_us(self, us: float) -> None:
        if us > 0:
            self.now_us += us

    def ticks_us(self) -> int:
        return int(self.now_us)


@dataclass
class Timings:
    spi_hz: int = 4_000_000
    spi_byte_gap_us: float = 0.25  # RP2040 PL022 FIFO refill between bytes
    host_call_us: float = 8.0  # one machine.SPI call from MicroPython (native emitter)
    gpio_write_us: float = 3.0  # one Pin.value() from MicroPython
    # A tag is ready this long after field-on: ISO/IEC 14443-3 allows a PICC up
    # to 5 ms; NXP's reader library waits 5.1 ms. The worst case is the default.
    tag_power_up_us: float = 5100.0
    tag_reset_off_us: float = 1000.0
    soft_reset_us: float = 1000.0
    crc_byte_us: float = 0.6
    # SimBus: the C side of each further transaction of a batch (firmware.bus ``txs``:
    # strobe edges and the PL022 loop in viper, no Python between them).
    batch_txn_us: float = 0.5

    def spi_us(self, n_bytes: int, call_us: float | None = None) -> float:
        call = self.host_call_us if call_us is None else call_us
        return call + n_bytes * (8e6 / self.spi_hz + self.spi_byte_gap_us)


@dataclass
class Faults:
    drop_probability: float = 0.0
    flicker: bool = False
    stuck: bool = False
    misread_probability: float = 0.0
    vanished: bool = False
    vanished_value: int = 0x00
    unbuffered_miso: bool = False


# ------------------------------------------------------------------------- tags


@dataclass
class SimTag:
    """An NTAG213 (or a 4-byte-UID Type A tag) with the ISO 14443-3 states."""

    uid: bytes
    pages: bytearray = field(default_factory=bytearray)
    state: str = "OFF"  # OFF, IDLE, READY1, READY2, ACTIVE, HALT
    from_halt: bool = False

    @classmethod
    def ntag213(cls, uid: bytes) -> SimTag:
        if len(uid) not in (4, 7):
            raise ValueError("UID must be 4 or 7 bytes")
        pages = bytearray(NTAG213_PAGES * 4)
        if len(uid) == 7:
            pages[0:4] = bytes((uid[0], uid[1], uid[2], 0x88 ^ uid[0] ^ uid[1] ^ uid[2]))
            pages[4:8] = uid[3:7]
            pages[8:12] = bytes((uid[3] ^ uid[4] ^ uid[5] ^ uid[6], 0x48, 0x00, 0x00))
        else:
            pages[0:4] = uid
        pages[12:16] = b"\xe1\x10\x12\x00"  # capability container: NDEF, 144 bytes
        pages[16:20] = b"\x03\x00\xfe\x00"  # empty NDEF message
        return cls(uid=bytes(uid), pages=pages)

    def _fail(self) -> None:
        # Any unexpected frame sends the tag back to where it came from.
        self.state = "HALT" if self.from_halt else "IDLE"

    def _cascade_part(self, level: int) -> bytes:
        if len(self.uid) == 4:
            return self.uid
        return (b"\x88" + self.uid[:3]) if level == 1 else self.uid[3:]

    def receive(self, frame: bytes, last_bits: int) -> tuple[bytes, int] | None:
        """Handle one PCD frame; the answer ``(bytes, bits_in_last_byte)`` or None."""
        if self.state == "OFF":
            return None
        short = len(frame) == 1 and last_bits == 7
        if short and frame[0] in (0x26, 0x52):
            wake_all = frame[0] == 0x52
            if self.state == "IDLE" or (self.state == "HALT" and wake_all):
                self.from_halt = self.state == "HALT"
                self.state = "READY1"
                return b"\x44\x00", 0
            if self.state in ("READY1", "READY2", "ACTIVE"):
                self._fail()
            return None
        if self.state in ("IDLE", "HALT"):
            return None
        if self.state in ("READY1", "READY2"):
            level = 1 if self.state == "READY1" else 2
            sel = 0x93 if level == 1 else 0x95
            if len(frame) == 2 and frame[0] == sel and frame[1] == 0x20:
                part = self._cascade_part(level)
                return part + bytes((part[0] ^ part[1] ^ part[2] ^ part[3],)), 0
            if len(frame) == 9 and frame[0] == sel and frame[1] == 0x70:
                part = self._cascade_part(level)
                bcc = part[0] ^ part[1] ^ part[2] ^ part[3]
                if frame[2:7] == part + bytes((bcc,)) and frame[7:9] == crc_a(frame[:7]):
                    cascade = len(self.uid) == 7 and level == 1
                    sak = 0x04 if cascade else 0x00
                    self.state = "READY2" if cascade else "ACTIVE"
                    return bytes((sak,)) + crc_a(bytes((sak,))), 0
            self._fail()
            return None
        # ACTIVE
        if len(frame) >= 2 and frame[-2:] != crc_a(frame[:-2]):
            self._fail()
            return None
        if len(frame) == 4 and frame[0] == 0x50 and frame[1] == 0x00:
            self.state = "HALT"
            self.from_halt = True
            return None
        if len(frame) == 4 and frame[0] == 0x30:
            page = frame[1]
            if page >= NTAG213_PAGES:
                self._fail()
                return b"\x00", 4  # NAK: invalid argument
            data = b"".join(
                bytes(self.pages[((page + i) % NTAG213_PAGES) * 4 :][:4]) for i in range(4)
            )
            return data + crc_a(data), 0
        if len(frame) == 8 and frame[0] == 0xA2:
            page = frame[1]
            if page not in NTAG213_USER_PAGES:
                self._fail()
                return b"\x00", 4
            self.pages[page * 4 : page * 4 + 4] = frame[2:6]
            return b"\x0a", 4  # ACK
        self._fail()
        return None


# ------------------------------------------------------------------------- chip


@dataclass
class _Exchange:
    tx_end: float
    rx_start: float | None
    rx_end: float | None
    answer: bytes
    answer_bits: int
    error: int
    timer_fire: float | None
    done: bool = False


class SimChip:
    """One MFRC522 with the tags lying on its antenna."""

    def __init__(
        self,
        index: int,
        clock: VirtualClock,
        timings: Timings,
        rng: random.Random,
        on_field: Callable[[int, bool], None] | None = None,
    ) -> None:
        self.index = index
        self.clock = clock
        self.timings = timings
        self.rng = rng
        self.faults = Faults()
        self.tags: list[SimTag] = []
        self._on_field = on_field
        self.regs = bytearray(64)
        self.fifo = bytearray()
        self._frozen: tuple[bytearray, bytearray] | None = None
        self._exchange: _Exchange | None = None
        self._busy_until = 0.0
        self._crc_done_at: float | None = None
        self._crc_value = b"\xff\xff"
        self.field_on_since: float | None = None
        self.field_off_since: float = -1e12
        self._flicker_phase = False
        self._reset_registers()

    # -- state helpers

    def _reset_registers(self) -> None:
        self.regs = bytearray(64)
        for reg, value in _RESET_VALUES.items():
            self.regs[reg] = value
        self.regs[0x37] = 0x92  # VersionReg: MFRC522 v2.0
        self.fifo = bytearray()
        self._exchange = None
        self._crc_done_at = None
        self._set_field(False)

    @property
    def field_on(self) -> bool:
        return self.field_on_since is not None

    def _set_field(self, on: bool) -> None:
        now = self.clock.now_us
        if on and self.field_on_since is None:
            retained = now - self.field_off_since < self.timings.tag_reset_off_us
            self.field_on_since = now
            self._flicker_phase = not self._flicker_phase
            for tag in self.tags:
                if not retained:
                    tag.state = "OFF"
            if self._on_field:
                self._on_field(self.index, True)
        elif not on and self.field_on_since is not None:
            self.field_on_since = None
            self.field_off_since = now
            if self._on_field:
                self._on_field(self.index, False)

    def _tags_powered(self) -> list[SimTag]:
        if self.field_on_since is None:
            return []
        if self.faults.flicker and self._flicker_phase:
            return []
        powered = []
        up = self.clock.now_us - self.field_on_since >= self.timings.tag_power_up_us
        for tag in self.tags:
            if tag.state == "OFF" and up:
                tag.state = "IDLE"
                tag.from_halt = False
            if tag.state != "OFF":
                powered.append(tag)
        return powered

    def _timer_period_us(self) -> float:
        prescaler = ((self.regs[0x2A] & 0x0F) << 8) | self.regs[0x2B]
        reload = (self.regs[0x2C] << 8) | self.regs[0x2D]
        return (2 * prescaler + 1) * (reload + 1) / FC_MHZ

    def _sync(self) -> None:
        """Apply everything scheduled up to now."""
        now = self.clock.now_us
        if self.regs[0x01] & 0x0F == 0x0F and now >= self._busy_until:
            self.regs[0x01] = 0x20  # soft reset done: Idle
        if self._crc_done_at is not None and now >= self._crc_done_at:
            self.regs[0x22], self.regs[0x21] = self._crc_value[0], self._crc_value[1]
            self.regs[0x05] |= 0x04
            self._crc_done_at = None
        ex = self._exchange
        if ex is None or ex.done:
            return
        if now >= ex.tx_end:
            self.regs[0x04] |= 0x40  # TxIRq
        if ex.rx_end is not None and now >= ex.rx_end:
            self.fifo = bytearray(ex.answer)
            self.regs[0x06] = (self.regs[0x06] & ~0x1F) | ex.error
            self.regs[0x0C] = (self.regs[0x0C] & 0xF8) | ex.answer_bits
            self.regs[0x04] |= 0x20 | (0x02 if ex.error else 0)  # RxIRq (+ErrIRq)
            ex.done = True
        elif ex.timer_fire is not None and now >= ex.timer_fire:
            self.regs[0x04] |= 0x01  # TimerIRq
            ex.done = True

    # -- RF

    def _start_transmission(self, frame: bytes, last_bits: int) -> None:
        now = self.clock.now_us
        if self.regs[0x12] & 0x80 and frame:  # TxCRCEn
            frame = frame + crc_a(frame)
        n = len(frame)
        if n == 0:
            return
        bits = 1 + (9 * n if last_bits == 0 else 9 * (n - 1) + last_bits) + 2
        tx_end = now + bits * BIT_US
        last_byte = frame[-1]
        if last_bits:
            last_sent = (last_byte >> (last_bits - 1)) & 1
        else:  # odd parity bit is the last one sent
            last_sent = 1 - (bin(last_byte).count("1") & 1)
        fdt = FDT_LAST_1_US if last_sent else FDT_LAST_0_US
        answers = []
        for tag in self._tags_powered():
            answer = tag.receive(frame, last_bits)
            if answer is not None:
                answers.append(answer)
        error = 0
        if answers and self.rng.random() < self.faults.drop_probability:
            answers = []
        answer, answer_bits = answers[0] if answers else (b"", 0)
        if len(answers) > 1 and any(a != answers[0] for a in answers[1:]):
            error |= 0x08  # CollErr
        if answers and self.rng.random() < self.faults.misread_probability:
            answer = self._misread(frame, answer)
            if answer is None:
                answer, error = answers[0][0], error | 0x02  # ParityErr
        timer = self._timer_period_us() if self.regs[0x2A] & 0x80 else None
        if answers and timer is not None and tx_end + fdt + 5 * BIT_US > tx_end + timer:
            answers = []  # the timer fired before it could stop: the answer is lost
        if answers:
            rx_bits = 1 + (9 * len(answer) if answer_bits == 0 else answer_bits) + 1
            rx_start = tx_end + fdt
            self._exchange = _Exchange(
                tx_end, rx_start, rx_start + rx_bits * BIT_US, answer, answer_bits, error, None
            )
        else:
            fire = tx_end + timer if timer is not None else None
            self._exchange = _Exchange(tx_end, None, None, b"", 0, 0, fire)

    def _misread(self, frame: bytes, answer: bytes) -> bytes | None:
        """One bit flipped in the air. Anticollision answers (UID + BCC) get a
        wrong but self-consistent UID; anything else fails its parity."""
        if len(answer) == 5 and len(frame) == 2 and frame[1] == 0x20:
            flipped = bytearray(answer)
            byte = self.rng.randrange(1, 4)
            flipped[byte] ^= 1 << self.rng.randrange(8)
            flipped[4] = flipped[0] ^ flipped[1] ^ flipped[2] ^ flipped[3]
            return bytes(flipped)
        if len(answer) == 2 and not frame[1:]:
            return bytes((answer[0] ^ (1 << self.rng.randrange(8)), answer[1]))
        return None

    # -- register access

    def _read(self, reg: int) -> int:
        if reg == 0x09:
            return self.fifo.pop(0) if self.fifo else 0x00
        if reg == 0x0A:
            return min(len(self.fifo), 64)
        return self.regs[reg]

    def _write(self, reg: int, value: int) -> None:
        now = self.clock.now_us
        if reg == 0x09:
            if len(self.fifo) >= 64:
                self.regs[0x06] |= 0x10  # BufferOvfl
            else:
                self.fifo.append(value)
            return
        if reg == 0x0A:
            if value & 0x80:
                self.fifo = bytearray()
                self.regs[0x06] &= ~0x10
            return
        if reg in (0x04, 0x05):  # ComIrqReg / DivIrqReg: Set1 bit selects set or clear
            if value & 0x80:
                self.regs[reg] |= value & 0x7F
            else:
                self.regs[reg] &= ~value & 0xFF
            return
        if reg == 0x01:
            command = value & 0x0F
            if command == 0x0F:
                self._reset_registers()
                self.regs[0x01] = 0x0F | 0x10
                self._busy_until = now + self.timings.soft_reset_us
                return
            self.regs[0x01] = value & 0x3F
            if command == 0x03:  # CalcCRC over the FIFO content
                data = bytes(self.fifo)
                self.fifo = bytearray()
                self._crc_value = crc_a(data)
                self._crc_done_at = now + self.timings.crc_byte_us * max(1, len(data))
            elif command == 0x04:  # Transmit: send now, no reception
                self._start_transmission(bytes(self.fifo), self.regs[0x0D] & 0x07)
                self.fifo = bytearray()
            elif command == 0x00:
                self._exchange = None
            return
        if reg == 0x0D:
            self.regs[0x0D] = value & 0x7F
            if value & 0x80 and self.regs[0x01] & 0x0F == 0x0C:  # StartSend in Transceive
                frame = bytes(self.fifo)
                self.fifo = bytearray()
                self.regs[0x06] &= ~0x1F
                self._start_transmission(frame, value & 0x07)
            return
        if reg == 0x14:
            self.regs[0x14] = value
            self._set_field(bool(value & 0x03))
            return
        if reg == 0x37:
            return  # VersionReg is read-only
        self.regs[reg] = value

    def transfer(self, mosi: bytes) -> bytes:
        """One SPI transaction with this chip selected (MOSI in, MISO out)."""
        if self.faults.vanished:
            return bytes([self.faults.vanished_value]) * len(mosi)
        if self.faults.stuck:
            if self._frozen is None:
                self._frozen = (bytearray(self.regs), bytearray(self.fifo))
            regs, fifo = self._frozen
            miso = bytearray(len(mosi))
            if mosi and mosi[0] & 0x80:
                for i, address in enumerate(mosi[:-1]):
                    reg = (address >> 1) & 0x3F
                    value = (fifo[0] if fifo else 0) if reg == 0x09 else regs[reg]
                    if reg == 0x0A:
                        value = len(fifo)
                    miso[i + 1] = value
            return bytes(miso)
        self._frozen = None
        self._sync()
        miso = bytearray(len(mosi))
        if not mosi:
            return bytes(miso)
        if mosi[0] & 0x80:  # read: every byte but the last is an address
            for i, address in enumerate(mosi[:-1]):
                miso[i + 1] = self._read((address >> 1) & 0x3F)
        else:
            reg = (mosi[0] >> 1) & 0x3F
            for value in mosi[1:]:
                self._write(reg, value)
        return bytes(miso)


# ------------------------------------------------------------------------- demux + bus


class SimPin:
    """A GPIO output as MicroPython's ``machine.Pin`` (``value()``/``on()``/``off()``)."""

    def __init__(self, name: str, clock: VirtualClock, timings: Timings, level: int = 1) -> None:
        self.name = name
        self._clock = clock
        self._timings = timings
        self.level = level

    def value(self, level: int | None = None) -> int:
        if level is None:
            return self.level
        self._clock.advance(self._timings.gpio_write_us)
        self.level = 1 if level else 0
        return self.level

    def on(self) -> None:
        self.value(1)

    def off(self) -> None:
        self.value(0)


class Demux74HC154:
    """``banks`` x 74HC154 (4-to-16, active-low outputs). Address A0..A3 is
    shared; each bank's /E1 has its own pin; all /E2 share one strobe pin,
    so a chip-select pulse is one pin write. Output ``16*bank + address``
    is low (reader selected) when its bank's /E1 and the strobe are low."""

    def __init__(self, clock: VirtualClock, timings: Timings, banks: int = 3) -> None:
        self.address = [SimPin("A%d" % i, clock, timings, 0) for i in range(4)]  # noqa: UP031
        self.bank_enable = [SimPin("E1_%d" % b, clock, timings, 1) for b in range(banks)]  # noqa: UP031
        self.strobe = SimPin("E2", clock, timings, 1)
        self.banks = banks

    def selected(self) -> list[int]:
        if self.strobe.level:
            return []
        address = sum(pin.level << i for i, pin in enumerate(self.address))
        return [16 * b + address for b, pin in enumerate(self.bank_enable) if pin.level == 0]


class SimPort:
    """``machine.mem32`` at the SIO's GPIO_OUT_XOR, as ``Demux(port=...)`` uses it:
    ``port[address] = mask`` flips every output in ``mask`` at once (one store).
    ``pins``: GPIO number -> SimPin."""

    def __init__(self, pins: dict[int, SimPin], clock: VirtualClock, timings: Timings) -> None:
        self.pins = pins
        self._clock = clock
        self._timings = timings
        self.stores = 0

    def __setitem__(self, address: int, mask: int) -> None:
        self._clock.advance(self._timings.gpio_write_us)
        self.stores += 1
        for gpio, pin in self.pins.items():
            if mask >> gpio & 1:
                pin.level ^= 1


class SimSPI:
    """``machine.SPI`` look-alike on the shared SCK/MOSI/MISO bus."""

    def __init__(
        self, chips: list[SimChip], demux: Demux74HC154, clock: VirtualClock, timings: Timings
    ) -> None:
        self.chips = chips
        self.demux = demux
        self.clock = clock
        self.timings = timings
        self.contentions = 0
        self.strict = True
        self.transactions = 0
        self.bytes = 0

    def _transfer(self, mosi: bytes, call_us: float | None = None) -> bytes:
        self.clock.advance(self.timings.spi_us(len(mosi), call_us))
        self.transactions += 1
        self.bytes += len(mosi)
        selected = [i for i in self.demux.selected() if i < len(self.chips)]
        drivers = set(selected)
        drivers.update(c.index for c in self.chips if c.faults.unbuffered_miso)
        miso = b"\xff" * len(mosi)  # pulled up, nobody driving
        for index in selected:
            miso = self.chips[index].transfer(mosi)
        if len(drivers) > 1:
            self.contentions += 1
            if self.strict:
                raise BusContention("MISO driven by readers %s at once" % sorted(drivers))  # noqa: UP031
        return miso

    def write(self, buf: bytes) -> None:
        self._transfer(bytes(buf))

    def readinto(self, buf: bytearray, write: int = 0x00) -> None:
        buf[:] = self._transfer(bytes([write]) * len(buf))

    def write_readinto(self, tx: bytes, rx: bytearray) -> None:
        rx[:] = self._transfer(bytes(tx))


class SimBus:
    """``firmware.bus``'s three functions as the Pico's viper bus (firmware.picobus)
    makes them: one machine call per transaction or batch, the strobe edges inside
    it (no pin write of their own); a call costs ``host_call_us``, each further
    transaction of a batch ``batch_txn_us``, every byte its time on the wire."""

    def __init__(self, spi: SimSPI, strobe: SimPin) -> None:
        self.spi = spi
        self.strobe = strobe

    def _one(self, mosi: bytes, call_us: float | None = None) -> bytes:
        self.strobe.level = 0
        try:
            return self.spi._transfer(mosi, call_us)
        finally:
            self.strobe.level = 1

    def tx(self, buf: bytes) -> None:
        self._one(bytes(buf))

    def txs(self, batch: bytes) -> None:
        from firmware.bus import batch_split

        for i, mosi in enumerate(batch_split(bytes(batch))):
            self._one(mosi, None if i == 0 else self.spi.timings.batch_txn_us)

    def xfer(self, tx: bytes, rx: bytearray) -> None:
        rx[:] = self._one(bytes(tx))


class SimTable:
    """A complete simulated reader rig: clock, demux, bus, ``n_readers`` chips."""

    def __init__(self, n_readers: int = 36, timings: Timings | None = None, seed: int = 0) -> None:
        if not 1 <= n_readers <= 48:
            raise ValueError("3 x 74HC154 select at most 48 readers")
        self.timings = timings or Timings()
        self.clock = VirtualClock()
        self.rng = random.Random(seed)
        self.demux = Demux74HC154(self.clock, self.timings, banks=3)
        self.fields_on: set[int] = set()
        self.max_fields_on = 0
        # Pairs of readers too close to have their fields on together (set by
        # the caller from the table geometry, hub.layout); counted in crosstalk.
        self.neighbours: set[frozenset[int]] = set()
        self.crosstalk = 0
        self.field_log: list[tuple[float, int, bool]] = []
        self.chips = [
            SimChip(i, self.clock, self.timings, self.rng, self._field_changed)
            for i in range(n_readers)
        ]
        self.spi = SimSPI(self.chips, self.demux, self.clock, self.timings)
        # The A0..A3 and /E1 lines as GPIOs 0..6 of a port (numbers of the model's own).
        lines = self.demux.address + self.demux.bank_enable
        self.port = SimPort(dict(enumerate(lines)), self.clock, self.timings)
        self.bus = SimBus(self.spi, self.demux.strobe)

    def demux_port(self, address: int) -> tuple:
        """``Demux(port=...)`` for this rig: one store selects a reader."""
        return (self.port, address, tuple(range(len(self.port.pins))))

    def _field_changed(self, index: int, on: bool) -> None:
        if on:
            if any(frozenset((index, other)) in self.neighbours for other in self.fields_on):
                self.crosstalk += 1
            self.fields_on.add(index)
        else:
            self.fields_on.discard(index)
        self.max_fields_on = max(self.max_fields_on, len(self.fields_on))
        self.field_log.append((self.clock.now_us, index, on))

    def place(self, reader: int, uid: bytes | str) -> SimTag:
        raw = bytes.fromhex(uid) if isinstance(uid, str) else bytes(uid)
        tag = SimTag.ntag213(raw)
        self.chips[reader].tags.append(tag)
        return tag

    def put(self, reader: int, tag: SimTag) -> None:
        tag.state = "OFF"
        self.chips[reader].tags.append(tag)

    def remove(self, reader: int) -> list[SimTag]:
        tags, self.chips[reader].tags = self.chips[reader].tags, []
        for tag in tags:
            tag.state = "OFF"
        return tags

    def faults(self, reader: int) -> Faults:
        return self.chips[reader].faults


# ------------------------------------------------------------------------- pawn sensors


class _HookPin(SimPin):
    """An output pin that tells the board when its level changes."""

    def __init__(
        self, name: str, clock: VirtualClock, timings: Timings, level: int,
        hook: Callable[[int, int], None],
    ) -> None:
        super().__init__(name, clock, timings, level)
        self._hook = hook

    def value(self, level: int | None = None) -> int:
        old = self.level
        result = super().value(level)
        if level is not None and old != self.level:
            self._hook(old, self.level)
        return result


class _InputPin:
    def __init__(self, read: Callable[[], int], clock: VirtualClock, timings: Timings) -> None:
        self._read = read
        self._clock = clock
        self._timings = timings

    def value(self, level: int | None = None) -> int:
        self._clock.advance(self._timings.gpio_write_us)
        return self._read()


class SimPawnBoard:
    """Three 74HC165 in a chain with a DRV5032 Hall switch on inputs 0..19 (low
    while a pawn's magnet is over it) and inputs 20..23 strapped to GND, VCC,
    GND, VCC. ``fitted=False``: no board, the data line reads its pull-up (1)."""

    def __init__(self, clock: VirtualClock, timings: Timings, fitted: bool = True) -> None:
        self.fitted = fitted
        self.magnets: set[int] = set()
        self._shift = 0
        self.load = _HookPin("PL", clock, timings, 1, self._on_load)
        self.clock = _HookPin("CP", clock, timings, 0, self._on_clock)
        self.data = _InputPin(self._qh, clock, timings)

    def _inputs(self) -> int:
        value = 0b1010 << 20
        for position in range(20):
            if position not in self.magnets:
                value |= 1 << position
        return value

    def _on_load(self, old: int, new: int) -> None:
        if new == 0:  # /PL low: parallel load
            self._shift = self._inputs()

    def _on_clock(self, old: int, new: int) -> None:
        if new == 1 and self.load.level == 1:  # rising edge shifts towards QH
            self._shift = (self._shift << 1) & 0xFFFFFF | 1  # DS (serial in) tied high

    def _qh(self) -> int:
        if not self.fitted:
            return 1
        if self.load.level == 0:
            return (self._inputs() >> 23) & 1
        return (self._shift >> 23) & 1

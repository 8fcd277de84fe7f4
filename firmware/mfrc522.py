# ruff: noqa: UP031 -- MicroPython: %-formatting works on every port
"""Minimal register-level MFRC522 driver (MicroPython style, also CPython).

Takes a bus (``firmware.bus``: one call per SPI transaction, ``tx``, ``txs``
and ``xfer``; on the Pico ``firmware.picobus``, viper code on the registers),
or an ``spi`` object with MicroPython's ``machine.SPI`` methods and a chip
select (a Pin, active low, or a callable ``cs(active)``: True = NSS low, the
demultiplexer output of this reader is enabled), and a ``clock`` with
``ticks_us()`` and ``sleep_us(us)`` (``time`` on the Pico, a virtual clock in
the simulator).

Only what the table needs: ISO 14443A activation of NTAG21x tags (WUPA,
anticollision and SELECT at cascade levels 1 and 2, HLTA), NTAG READ/WRITE
for the card id, and the chip's CRC coprocessor. Register addresses and
commands are those of the NXP MFRC522 datasheet (rev. 3.9).

SPI framing (datasheet 8.1.2): address byte = ``(reg << 1) & 0x7E``, bit 7 set
for a read. A write transaction sends the address then any number of data
bytes, all into the same register (used to fill the FIFO in one go). A read
transaction sends a list of addresses and a final 0x00; the chip returns each
register's value one byte later (used to read several registers, or the
FIFO, in one transaction).
"""

from firmware.native import const, native

# Registers
CommandReg = const(0x01)
ComIEnReg = const(0x02)
DivIEnReg = const(0x03)
ComIrqReg = const(0x04)
DivIrqReg = const(0x05)
ErrorReg = const(0x06)
Status1Reg = const(0x07)
Status2Reg = const(0x08)
FIFODataReg = const(0x09)
FIFOLevelReg = const(0x0A)
ControlReg = const(0x0C)
BitFramingReg = const(0x0D)
CollReg = const(0x0E)
ModeReg = const(0x11)
TxModeReg = const(0x12)
RxModeReg = const(0x13)
TxControlReg = const(0x14)
TX_CRC_ON = const(0x80)  # TxModeReg TxCRCEn: the chip appends CRC_A to what it sends
TxASKReg = const(0x15)
CRCResultRegH = const(0x21)
CRCResultRegL = const(0x22)
TModeReg = const(0x2A)
TPrescalerReg = const(0x2B)
TReloadRegH = const(0x2C)
TReloadRegL = const(0x2D)
VersionReg = const(0x37)

# Commands (CommandReg bits 3..0)
CMD_IDLE = const(0x00)
CMD_CALC_CRC = const(0x03)
CMD_TRANSMIT = const(0x04)
CMD_TRANSCEIVE = const(0x0C)
CMD_SOFT_RESET = const(0x0F)
POWER_DOWN = const(0x10)  # CommandReg bit 4: set while the chip is (still) powered down

# ComIrqReg bits
IRQ_TX = const(0x40)
IRQ_RX = const(0x20)
IRQ_IDLE = const(0x10)
IRQ_ERR = const(0x02)
IRQ_TIMER = const(0x01)
IRQ_ALL = const(0x7F)
# DivIrqReg bits
IRQ_CRC = const(0x04)
# ErrorReg bits
ERR_BUFFER_OVFL = const(0x10)
ERR_COLL = const(0x08)
ERR_CRC = const(0x04)
ERR_PARITY = const(0x02)
ERR_PROTOCOL = const(0x01)

# TxControlReg: Tx2RFEn | Tx1RFEn drive the antenna; bit 7 (InvTx2RFOn) is the
# reset value kept as is. Written directly (no read-modify-write: one SPI
# transaction instead of two on every poll).
ANTENNA_ON = const(0x83)
ANTENNA_OFF = const(0x80)

# ISO 14443A / NTAG21x commands
PICC_REQA = const(0x26)
PICC_WUPA = const(0x52)
PICC_SEL_CL1 = const(0x93)
PICC_SEL_CL2 = const(0x95)
PICC_CASCADE_TAG = const(0x88)
PICC_HLTA = const(0x50)
NTAG_READ = const(0x30)
NTAG_WRITE = const(0xA2)
NTAG_ACK = const(0x0A)
SAK_CASCADE = const(0x04)

# Versions seen in the wild: 0x91/0x92 NXP v1/v2, 0x88 FM17522 clone, 0x12 and
# 0xB2 counterfeits that still work. Any other value is accepted too (the
# prepare() read-back catches a chip that does not behave); only 0x00/0xFF
# mean "nothing on the bus".
KNOWN_VERSIONS = (0x88, 0x90, 0x91, 0x92, 0x12, 0xB2)

# Timer: TPrescaler = 169 -> f_timer = 13.56 MHz / (2*169+1) = 40 kHz (25 us).
# The timer runs (TReload + 1) ticks (datasheet 8.5), so a window of N ticks
# loads TReload = N - 1.
TIMER_PRESCALER = const(169)
TIMER_TICK_US = (2 * TIMER_PRESCALER + 1) / 13.56
# WUPA answer window. With TAuto the timer starts at the end of transmission
# and stops only after the 5th received bit (start bit + 4 data bits,
# datasheet 8.5): it must outlast FDT 91.15 us + 5 x 9.44 us = 138.4 us.
# 6 ticks = 150.0 us leaves 11.6 us.
PROBE_TIMEOUT_US = const(150)
# Data exchanges (anticollision, select, read): ISO max FDT for these is small,
# the brief asks for a ~1-2 ms ceiling.
DATA_TIMEOUT_US = const(1500)
# NTAG WRITE: EEPROM programming, datasheet TTimeOut 10 ms.
WRITE_TIMEOUT_US = const(10000)

# Interrupt polling gives up (chip stuck) after the timer should have fired
# plus this margin.
_IRQ_MARGIN_US = const(3000)
_MAX_READ = const(64)  # the FIFO: the longest multi-register read
_RESET_WAIT_US = const(50000)
_CRC_CACHE_SIZE = const(12)


from firmware.bus import Bus, batch_of  # noqa: E402 - after the register table

_IRQ_LEVEL = (ComIrqReg, FIFOLevelReg)
_POLL_REGS = (ComIrqReg, ErrorReg, FIFOLevelReg, ControlReg)
_CRC_RESULT = (CRCResultRegL, CRCResultRegH)
# Preallocated SPI buffers shared by every driver (one bus, one transaction at
# a time): the poll path allocates nothing, so the Pico's garbage collector
# has little to do. Index = transaction length; ~4 KB in all.
_W2 = bytearray(2)


def _read_tx(regs: tuple) -> bytearray:
    """The transmit buffer that reads ``regs`` in one transaction."""
    return bytearray([((reg << 1) & 0x7E) | 0x80 for reg in regs] + [0])


def _write_tx(reg: int, value: int) -> bytes:
    return bytes((((reg << 1) & 0x7E), value & 0xFF))


# The WUPA poll is the hot path (~36 times a sweep): its transactions are built
# once. Idle, clear the interrupt flags, flush the FIFO, load WUPA, 7-bit frame, arm
# Transceive; then StartSend; then field off.
# One batch: the bus sends its 6 transactions in one call (firmware.bus).
_WUPA_LOAD = batch_of((
    _write_tx(CommandReg, CMD_IDLE),  # Idle first: stop what the last exchange left running
    _write_tx(ComIrqReg, IRQ_ALL),
    _write_tx(FIFOLevelReg, 0x80),
    _write_tx(FIFODataReg, PICC_WUPA),
    _write_tx(BitFramingReg, 0x07),
    _write_tx(CommandReg, CMD_TRANSCEIVE),
))
_TX_IRQ_LEVEL = _read_tx(_IRQ_LEVEL)
_TX_POLL = _read_tx(_POLL_REGS)
_RX_POLL = bytearray(len(_POLL_REGS) + 1)
_ANTENNA_ON_TX = _write_tx(TxControlReg, ANTENNA_ON)
_RX_IRQ_LEVEL = bytearray(len(_IRQ_LEVEL) + 1)
_IDLE_TX = _write_tx(CommandReg, CMD_IDLE)
_CLEAR_IRQ_TX = _write_tx(ComIrqReg, IRQ_ALL)
_FLUSH_TX = _write_tx(FIFOLevelReg, 0x80)
_TRANSCEIVE_TX = _write_tx(CommandReg, CMD_TRANSCEIVE)
_START_SEND_TX = tuple(_write_tx(BitFramingReg, 0x80 | bits) for bits in range(8))
WUPA_BYTES = bytes((PICC_WUPA,))
_ANTENNA_OFF_TX = _write_tx(TxControlReg, ANTENNA_OFF)
# Send -> first interrupt poll: nothing can have happened sooner, so the
# interpreter does not spin on the bus meanwhile. WUPA: 94 us on air, FDT
# 86 us, the 2-byte ATQA 189 us: an answer is complete 370 us after StartSend,
# and without one the timer has fired at 244 us; one poll at 375 us sees
# either. Data frames: ~85 us a byte on air + FDT.
WUPA_FIRST_POLL_US = const(375)
FRAME_BYTE_US = const(85)
FDT_US = const(86)
# prepare()'s batch around the frame: Idle, clear the IRQs, flush the FIFO; then the
# frame into the FIFO; then BitFraming (per last-byte bits) and Transceive. The timer
# reload and TxCRCEn, when they change, go first in the same batch: one bus call.
_PREPARE_HEAD = batch_of((_IDLE_TX, _CLEAR_IRQ_TX, _FLUSH_TX))
_PREPARE_TAIL = tuple(batch_of((_write_tx(BitFramingReg, bits), _TRANSCEIVE_TX))
                      for bits in range(8))
_FIFO_WRITE = (FIFODataReg << 1) & 0x7E
_TX_CRC_BATCH = {on: batch_of((_write_tx(TxModeReg, TX_CRC_ON if on else 0),))
                 for on in (False, True)}
# Reading n FIFO bytes in one transaction (n + 1 bytes: the addresses, then 0).
_FIFO_TX = [bytes(_read_tx((FIFODataReg,) * n)) for n in range(_MAX_READ + 1)]
_TX = [bytearray(n) for n in range(_MAX_READ + 2)]
_RX = [bytearray(n) for n in range(_MAX_READ + 2)]


class ReaderError(Exception):
    """Communication with the reader chip failed (``kind``: "silent" when the
    chip does not behave, "absent" when nothing answers on the bus)."""

    def __init__(self, message: str, kind: str = "silent") -> None:
        super().__init__(message)
        self.kind = kind


class TagError(Exception):
    """The tag answered badly (collision, CRC/parity error, NAK)."""


def ticks_diff(end: int, start: int) -> int:
    """time.ticks_diff without wrap handling (the virtual clock never wraps;
    main.py passes MicroPython's own ticks_diff)."""
    return end - start


def crc_a(data: bytes) -> bytes:
    """ISO/IEC 14443-3 CRC_A (init 0x6363, reflected 0x8408), LSB first (its Annex B)."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = ((crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)) & 0xFFFF
    return bytes((crc & 0xFF, crc >> 8))


def timer_reload_for_us(timeout_us: float) -> int:
    """TReload for a window of at least ``timeout_us`` (the timer runs TReload + 1 ticks)."""
    ticks = int(timeout_us / TIMER_TICK_US + 0.999)
    return max(1, min(0xFFFF, ticks - 1))


class MFRC522:
    def __init__(self, spi: object, cs: object, clock: object, diff: object = None) -> None:
        # ``cs`` None: ``spi`` is a bus already (firmware.bus / firmware.picobus).
        bus = spi if cs is None else Bus(spi, cs)
        self.bus = bus
        self._tx = bus.tx
        self._txs = bus.txs
        self._xfer = bus.xfer
        self.clock = clock
        self._diff = diff or ticks_diff
        self._reload = -1  # cached TReload value, -1 = unknown
        self._timeout_set = -1  # the timeout_us that gave _reload
        self._started = 0  # ticks at StartSend
        self.armed = False  # WUPA loaded and Transceive armed ahead of this reader's poll
        self._tx_crc = -1  # cached TxModeReg, -1 = unknown
        self._crc_cache = {}
        self.version = 0
        self._w2 = _W2
        self._tx_bufs = _TX
        self._rx_bufs = _RX

    # ---------------------------------------------------------------- raw SPI

    @native
    def write_reg(self, reg: int, value: int) -> None:
        buf = self._w2
        buf[0] = (reg << 1) & 0x7E
        buf[1] = value & 0xFF
        self._tx(buf)

    def write_fifo(self, data: bytes) -> None:
        self._tx(bytes(((FIFODataReg << 1) & 0x7E,)) + bytes(data))

    @native
    def transfer(self, tx: bytearray, rx: bytearray) -> bytearray:
        """One prebuilt read transaction (``tx`` from ``_read_tx``) into ``rx``."""
        self._xfer(tx, rx)
        return rx

    def read_regs(self, regs: list) -> memoryview:
        """Read several registers in one transaction. The answer lives in a
        preallocated buffer: valid until the next read (copy what you keep)."""
        n = len(regs) + 1
        tx = self._tx_bufs[n]
        rx = self._rx_bufs[n]
        for i, reg in enumerate(regs):
            tx[i] = ((reg << 1) & 0x7E) | 0x80
        tx[n - 1] = 0
        self.transfer(tx, rx)
        return memoryview(rx)[1:]

    def read_reg(self, reg: int) -> int:
        return self.read_regs([reg])[0]

    # ---------------------------------------------------------------- set-up

    def read_version(self) -> int:
        self.version = self.read_reg(VersionReg)
        return self.version

    def init(self) -> int:
        """Soft reset and configure. Returns VersionReg; raises ReaderError
        ("absent") when nothing answers, ("silent") when the reset hangs."""
        version = self.read_version()
        if version in (0x00, 0xFF):
            raise ReaderError(
                "VersionReg reads 0x%02X: no reader on this select line" % version, "absent"
            )
        self.write_reg(CommandReg, CMD_SOFT_RESET)
        start = self.clock.ticks_us()
        while True:
            command = self.read_reg(CommandReg)
            if not command & POWER_DOWN and command & 0x0F != CMD_SOFT_RESET:
                break
            if self._diff(self.clock.ticks_us(), start) > _RESET_WAIT_US:
                raise ReaderError("soft reset did not finish within 50 ms")
            self.clock.sleep_us(200)
        self._reload = -1
        self._timeout_set = -1
        self._tx_crc = -1
        # TAuto: the timer starts at the end of each transmission and stops
        # after the 5th received bit, so "no tag" ends after the timeout alone.
        self.write_reg(TModeReg, 0x80 | (TIMER_PRESCALER >> 8))
        self.write_reg(TPrescalerReg, TIMER_PRESCALER & 0xFF)
        self.set_timeout_us(PROBE_TIMEOUT_US)
        self.write_reg(TxASKReg, 0x40)  # force 100 % ASK (ISO 14443A)
        self.write_reg(ModeReg, 0x3D)  # CRC preset 0x6363 (CRC_A)
        self.write_reg(CollReg, 0x80)  # clear received bits after a collision
        self.antenna_off()
        return version

    @native
    def set_timeout_us(self, timeout_us: float) -> None:
        if timeout_us == self._timeout_set:
            return
        self._timeout_set = timeout_us
        reload = timer_reload_for_us(timeout_us)
        if reload != self._reload:
            self.write_reg(TReloadRegH, reload >> 8)
            self.write_reg(TReloadRegL, reload & 0xFF)
            self._reload = reload

    @native
    def set_tx_crc(self, on: bool) -> None:
        """Let the chip append CRC_A to sent frames (TxCRCEn): no coprocessor
        round trip (6 SPI transactions) for a new SELECT, READ, WRITE or HLTA."""
        value = TX_CRC_ON if on else 0x00
        if value != self._tx_crc:
            self.write_reg(TxModeReg, value)
            self._tx_crc = value

    @native
    def antenna_on(self) -> None:
        self._tx(_ANTENNA_ON_TX)

    @native
    def antenna_off(self) -> None:
        self._tx(_ANTENNA_OFF_TX)

    # ---------------------------------------------------------------- exchange

    @native
    def prepare(
        self,
        data: bytes,
        tx_last_bits: int = 0,
        timeout_us: float = DATA_TIMEOUT_US,
        tx_crc: bool = False,
        answer_bytes: int = 0,
    ) -> None:
        """Load a frame and arm Transceive without sending it yet (split from
        ``send`` so the scan loop can do this while the antenna settles).
        ``tx_crc``: the chip appends CRC_A to the frame. ``answer_bytes``: the
        shortest answer expected; the first interrupt poll waits until it can be
        complete (each poll before that is Python for nothing)."""
        self.armed = False
        head = b""
        if timeout_us != self._timeout_set:
            reload = timer_reload_for_us(timeout_us)
            if reload != self._reload:
                head = batch_of((_write_tx(TReloadRegH, reload >> 8),
                                 _write_tx(TReloadRegL, reload & 0xFF)))
                self._reload = reload
            self._timeout_set = timeout_us
        crc = TX_CRC_ON if tx_crc else 0x00
        if crc != self._tx_crc:
            head += _TX_CRC_BATCH[bool(tx_crc)]
            self._tx_crc = crc
        if not head and tx_last_bits == 7 and data == WUPA_BYTES:
            self._txs(_WUPA_LOAD)  # the hot path: prebuilt transactions
        else:
            self._txs(head + _PREPARE_HEAD + bytes((1 + len(data), _FIFO_WRITE)) + bytes(data)
                      + _PREPARE_TAIL[tx_last_bits & 0x07])
        # Health check in the same breath: a stuck or vanished chip cannot show
        # exactly our bytes in its FIFO with no interrupt pending.
        rx = self.transfer(_TX_IRQ_LEVEL, _RX_IRQ_LEVEL)
        irq, level = rx[1], rx[2]
        if level & 0x7F != len(data) or irq & (IRQ_RX | IRQ_TIMER | IRQ_ERR):
            version = self.read_version()
            if version in (0x00, 0xFF):
                raise ReaderError("VersionReg reads 0x%02X: reader vanished" % version, "absent")
            raise ReaderError(
                "reader stuck: FIFO level %d (want %d), ComIrq 0x%02X" % (level, len(data), irq)
            )
        self._tx_last_bits = tx_last_bits & 0x07
        self._timeout_us = timeout_us
        self._start_tx = _START_SEND_TX[self._tx_last_bits]
        self._first_poll_us = (
            WUPA_FIRST_POLL_US if tx_last_bits == 7 else
            FDT_US + FRAME_BYTE_US * (len(data) + (2 if tx_crc else 0) + answer_bytes)
        )

    def send(self) -> tuple:
        """Start the armed frame; wait for the answer. Returns ``(data,
        valid_bits_in_last_byte)``, or ``None`` when no tag answered in time."""
        self.start()
        return self.answer()

    @native
    def arm_wupa(self) -> None:
        """Load WUPA ahead of this reader's poll (while another reader's tag answers).
        The steady case (timer and TxCRC already right) in one go; else ``prepare``."""
        if self._timeout_set != PROBE_TIMEOUT_US or self._tx_crc != 0:
            self.prepare(WUPA_BYTES, 7, PROBE_TIMEOUT_US)
            self.armed = True
            return
        self.armed = False
        self._txs(_WUPA_LOAD)
        rx = _RX_IRQ_LEVEL
        self._xfer(_TX_IRQ_LEVEL, rx)
        if rx[2] & 0x7F != 1 or rx[1] & (IRQ_RX | IRQ_TIMER | IRQ_ERR):
            self.prepare(WUPA_BYTES, 7, PROBE_TIMEOUT_US)  # the full check and its error
        self._tx_last_bits = 7
        self._timeout_us = PROBE_TIMEOUT_US
        self._start_tx = _START_SEND_TX[7]
        self._first_poll_us = WUPA_FIRST_POLL_US
        self.armed = True

    @native
    def start(self) -> None:
        """StartSend. The chip goes on with the exchange while deselected: the
        scan loop switches the next field on meanwhile, then calls ``answer``."""
        self.armed = False
        self._tx(self._start_tx)
        self._started = self.clock.ticks_us()

    def answer(self) -> tuple:
        """The answer to the frame ``start`` sent (this reader selected again):
        ``(data, valid_bits_in_last_byte)``, or None when no tag answered in time."""
        if self._wait_irq():
            return None
        return self._received(_RX_POLL)

    @native
    def _wait_irq(self) -> bool:
        """Poll the interrupt flags until the exchange ended; True: the timer fired
        (no answer). The first poll waits until an answer (or the timer) can be
        there, less the time already spent (fewer polls per exchange)."""
        clock = self.clock
        start = self._started
        first = self._first_poll_us
        left = first - self._diff(clock.ticks_us(), start)
        if 0 < left <= first:
            clock.sleep_us(left)
        limit = self._timeout_us + _IRQ_MARGIN_US
        rx = _RX_POLL
        xfer = self._xfer
        while True:
            xfer(_TX_POLL, rx)
            irq = rx[1]
            if irq & (IRQ_RX | IRQ_IDLE):
                return False
            if irq & IRQ_TIMER:
                return True
            if self._diff(clock.ticks_us(), start) > limit:
                raise ReaderError("no interrupt from the reader: stuck")

    @native
    def answered(self) -> int:
        """Like ``answer``, but only the number of bytes received (0: no answer),
        without reading them: the WUPA probe only needs to know a 2-byte ATQA came.
        (``_wait_irq`` inlined: this runs once a poll.)"""
        clock = self.clock
        start = self._started
        first = self._first_poll_us
        left = first - self._diff(clock.ticks_us(), start)
        if 0 < left <= first:
            clock.sleep_us(left)
        rx = _RX_POLL
        xfer = self._xfer
        while True:
            xfer(_TX_POLL, rx)
            irq = rx[1]
            if irq & (IRQ_RX | IRQ_IDLE):
                break
            if irq & IRQ_TIMER:
                return 0
            if self._diff(clock.ticks_us(), start) > self._timeout_us + _IRQ_MARGIN_US:
                raise ReaderError("no interrupt from the reader: stuck")
        error = rx[2]
        if error & ERR_COLL:
            raise TagError("collision: more than one tag on the reader")
        if error & (ERR_BUFFER_OVFL | ERR_PARITY | ERR_PROTOCOL):
            raise TagError("receive error 0x%02X" % error)
        return rx[3] & 0x7F

    def _received(self, rx: bytearray) -> tuple:
        error, level, control = rx[2], rx[3], rx[4]
        if error & ERR_COLL:
            raise TagError("collision: more than one tag on the reader")
        if error & (ERR_BUFFER_OVFL | ERR_PARITY | ERR_PROTOCOL):
            raise TagError("receive error 0x%02X" % error)
        level &= 0x7F
        bits = control & 0x07
        if not level:
            return b"", bits
        fifo = self._rx_bufs[level + 1]
        self._xfer(_FIFO_TX[level], fifo)
        return bytes(fifo[1:]), bits

    def transceive(
        self,
        data: bytes,
        tx_last_bits: int = 0,
        timeout_us: float = DATA_TIMEOUT_US,
        tx_crc: bool = False,
        answer_bytes: int = 0,
    ) -> tuple:
        self.prepare(data, tx_last_bits, timeout_us, tx_crc, answer_bytes)
        return self.send()

    def calc_crc(self, data: bytes) -> bytes:
        """CRC_A of ``data`` by the chip's coprocessor (2 bytes, LSB first)."""
        self.write_reg(CommandReg, CMD_IDLE)
        self.set_tx_crc(False)
        self.write_reg(DivIrqReg, IRQ_CRC)  # clear CRCIRq
        self.write_reg(FIFOLevelReg, 0x80)
        self.write_fifo(data)
        self.write_reg(CommandReg, CMD_CALC_CRC)
        start = self.clock.ticks_us()
        while not self.read_reg(DivIrqReg) & IRQ_CRC:
            if self._diff(self.clock.ticks_us(), start) > _IRQ_MARGIN_US:
                raise ReaderError("CRC coprocessor did not finish: stuck")
        low, high = self.read_regs(_CRC_RESULT)
        self.write_reg(CommandReg, CMD_IDLE)
        return bytes((low, high))

    def crc(self, data: bytes) -> bytes:
        """CRC_A through a small cache, to check answers (the SAK answers repeat),
        computed here: cheaper than the coprocessor's round trip (6 SPI transactions
        and a poll), which the first acquisition on each reader used to pay. Sent
        frames use TxCRCEn instead."""
        key = bytes(data)
        value = self._crc_cache.get(key)
        if value is None:
            value = crc_a(key)
            if len(self._crc_cache) >= _CRC_CACHE_SIZE:
                self._crc_cache.clear()
            self._crc_cache[key] = value
        return value

    def with_crc(self, data: bytes) -> bytes:
        return bytes(data) + self.crc(data)

    def _check_crc(self, data: bytes) -> bytes:
        if len(data) < 3 or self.crc(data[:-2]) != bytes(data[-2:]):
            raise TagError("CRC_A error in the tag's answer")
        return data[:-2]

    # ---------------------------------------------------------------- ISO 14443A

    def wupa(self) -> bytes | None:
        """WUPA (wakes IDLE and HALT tags): ATQA, or None when no tag."""
        return self._request(PICC_WUPA)

    def reqa(self) -> bytes | None:
        """REQA (wakes IDLE tags only)."""
        return self._request(PICC_REQA)

    def _request(self, command: int) -> bytes | None:
        answer = self.transceive(bytes((command,)), 7, PROBE_TIMEOUT_US)
        if answer is None:
            return None
        data, _bits = answer
        if len(data) != 2:
            raise TagError("ATQA of %d bytes" % len(data))
        return bytes(data)

    def anticollision(self, level_cmd: int) -> bytes:
        """ANTICOLLISION at one cascade level: 4 UID bytes (or CT + 3), BCC checked."""
        answer = self.transceive(bytes((level_cmd, 0x20)), 0, DATA_TIMEOUT_US, False, 5)
        if answer is None:
            raise TagError("no answer to anticollision")
        data, _bits = answer
        if len(data) != 5:
            raise TagError("anticollision answer of %d bytes" % len(data))
        if data[0] ^ data[1] ^ data[2] ^ data[3] != data[4]:
            raise TagError("BCC error in the UID")
        return bytes(data[:4])

    def select_level(self, level_cmd: int, part: bytes) -> int | None:
        """SELECT one cascade level with 4 UID bytes: SAK, or None if no tag
        with these bytes answered."""
        bcc = part[0] ^ part[1] ^ part[2] ^ part[3]
        frame = bytes((level_cmd, 0x70)) + bytes(part) + bytes((bcc,))
        answer = self.transceive(frame, 0, DATA_TIMEOUT_US, True, 3)  # SAK + CRC_A
        if answer is None:
            return None
        data, _bits = answer
        if len(data) != 3:
            raise TagError("SAK of %d bytes" % len(data))
        return self._check_crc(data)[0]

    def read_uid(self, select_last: bool = True) -> bytes:
        """After WUPA: anticollision + select through the cascade levels;
        returns the 4- or 7-byte UID (tag ends ACTIVE).

        ``select_last`` False (the scan loop, whose field goes off right after):
        the second level's UID bytes come from its anticollision answer (BCC
        checked, a collision refused) without the SELECT that would only make the
        tag ACTIVE: one exchange (~1.2 ms) less per acquisition. A third cascade
        level (its cascade tag 0x88 at level 2) is still refused."""
        uid = b""
        for level_cmd in (PICC_SEL_CL1, PICC_SEL_CL2):
            part = self.anticollision(level_cmd)
            if not select_last and level_cmd == PICC_SEL_CL2:
                if part[0] == PICC_CASCADE_TAG:
                    raise TagError("10-byte UIDs are not supported")
                return uid + part
            sak = self.select_level(level_cmd, part)
            if sak is None:
                raise TagError("tag left during select")
            if sak & SAK_CASCADE:
                if part[0] != PICC_CASCADE_TAG:
                    raise TagError("cascade bit without cascade tag")
                uid += part[1:]
                continue
            return uid + part
        raise TagError("10-byte UIDs are not supported")

    def select_known(self, uid: bytes) -> bool:
        """After WUPA: SELECT a tag whose UID we already know, skipping the
        anticollision loop. True when exactly that tag answered every level."""
        if len(uid) == 4:
            levels = ((PICC_SEL_CL1, uid),)
        elif len(uid) == 7:
            levels = (
                (PICC_SEL_CL1, bytes((PICC_CASCADE_TAG,)) + uid[:3]),
                (PICC_SEL_CL2, uid[3:]),
            )
        else:
            raise ValueError("UID must be 4 or 7 bytes")
        for level_cmd, part in levels:  # noqa: SIM110 - no all(generator): this runs every sweep
            if self.select_level(level_cmd, part) is None:
                return False
        return True

    def halt(self) -> None:
        """HLTA: the tag goes to HALT (only WUPA wakes it). No answer expected;
        an answer means the tag did not understand. The scan loop does not
        send it: the field goes off right after a poll, which resets the tag
        anyway, so an HLTA there would cost ~0.5 ms for nothing."""
        answer = self.transceive(bytes((PICC_HLTA, 0x00)), 0, PROBE_TIMEOUT_US, True)
        if answer is not None:
            raise TagError("tag answered HLTA")

    # ---------------------------------------------------------------- NTAG pages

    def ntag_read(self, page: int) -> bytes:
        """READ: 16 bytes (pages page..page+3) of the selected tag."""
        answer = self.transceive(bytes((NTAG_READ, page)), 0, DATA_TIMEOUT_US, True, 18)
        if answer is None:
            raise TagError("no answer to READ of page %d" % page)
        data, bits = answer
        if len(data) == 1 and bits == 4:
            raise TagError("NAK 0x%X to READ of page %d" % (data[0], page))
        if len(data) != 18:
            raise TagError("READ answer of %d bytes" % len(data))
        if self.calc_crc(data[:-2]) != bytes(data[-2:]):
            raise TagError("CRC_A error in READ of page %d" % page)
        return bytes(data[:-2])

    def ntag_write(self, page: int, four: bytes) -> None:
        if len(four) != 4:
            raise ValueError("an NTAG page is 4 bytes")
        answer = self.transceive(
            bytes((NTAG_WRITE, page)) + bytes(four), 0, WRITE_TIMEOUT_US, True
        )
        if answer is None:
            raise TagError("no answer to WRITE of page %d" % page)
        data, bits = answer
        if not (len(data) == 1 and bits == 4 and data[0] & 0x0F == NTAG_ACK):
            raise TagError("WRITE of page %d refused (NAK)" % page)


# -------------------------------------------------------------------- card id on the tag
# The card id is stored from page 4 as an NFC Forum Type 2 NDEF message with
# one Text record ("en", ASCII id), so a phone can read it too:
# 03 <len> D1 01 <plen> 54 02 65 6E <id...> FE, zero-padded to whole pages.

USER_PAGE = const(4)
NTAG213_LAST_USER_PAGE = const(39)


def card_id_pages(card_id: str) -> list:
    text = card_id.encode()
    record = bytes((0xD1, 0x01, 3 + len(text), 0x54, 0x02, 0x65, 0x6E)) + text
    tlv = bytes((0x03, len(record))) + record + bytes((0xFE,))
    tlv += bytes((-len(tlv)) % 4)
    pages = [tlv[i : i + 4] for i in range(0, len(tlv), 4)]
    if USER_PAGE + len(pages) - 1 > NTAG213_LAST_USER_PAGE:
        raise ValueError("card id too long for an NTAG213")
    return pages


def parse_card_id(memory: bytes) -> str | None:
    """Card id from user memory read from page 4, or None when not ours."""
    if len(memory) < 9 or memory[0] != 0x03:
        return None
    length = memory[1]
    record = memory[2 : 2 + length]
    if len(record) != length or len(record) < 7 or record[:2] != b"\xd1\x01" or record[3] != 0x54:
        return None
    text = bytes(record[7 : 4 + record[2]])
    try:
        card_id = text.decode()
    except UnicodeError:
        return None
    return card_id or None


def write_card_id(reader: MFRC522, card_id: str) -> None:
    """Selected tag: write ``card_id`` from page 4 and read it back."""
    pages = card_id_pages(card_id)
    for offset, page in enumerate(pages):
        reader.ntag_write(USER_PAGE + offset, page)
    if read_card_id(reader, len(pages)) != card_id:
        raise TagError("card id read back differs")


def read_card_id(reader: MFRC522, pages: int = 12) -> str | None:
    memory = b""
    page = USER_PAGE
    while page < USER_PAGE + pages:
        memory += reader.ntag_read(page)
        page += 4
    return parse_card_id(memory)

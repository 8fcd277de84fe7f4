"""The bus of ``firmware.bus`` on the RP2040's registers, in viper code (Pico only).

One Python call per SPI transaction (``tx``, ``xfer``) or per batch of them
(``txs``): the strobe (the demultiplexers' /E2, the selected reader's NSS) is
pulled low and high through the SIO's GPIO_OUT_CLR/SET, and the bytes go
through the PL022's data register, the way the Pico SDK's
``spi_write_read_blocking`` does it: at most 8 bytes ahead of what came back
(the FIFO depth), every byte read back (the receive FIFO stays empty), and the
strobe goes high only once the PL022 is idle. ``machine.SPI`` sets the
peripheral up (clock, mode, pins) first; only the transfers bypass it.

A transfer that does not complete (a peripheral that is not clocking) raises
``OSError`` after ``_SPINS`` status reads, as ``machine.SPI`` would fail, and the
strobe is left high.

The transfer loop is written out in each of the three on purpose: a call from one
viper function to another goes through the interpreter, the very cost this module cuts.

``configure`` takes the register blocks: the real ones on the Pico (``main.py``),
fake ones (bytearrays) in tests/firmware/test_fw_picobus.py on the unix port,
where the same viper code runs on x86-64.
"""

import micropython
from micropython import const

SIO_BASE = 0xD0000000  # SIO; word 5 GPIO_OUT_SET, word 6 GPIO_OUT_CLR
SPI0_BASE = 0x4003C000  # PL022 SPI0; word 2 SSPDR, word 3 SSPSR
SPI1_BASE = 0x40040000
# SSPSR bits: TNF (transmit FIFO not full), RNE (receive FIFO not empty), BSY.
_SPINS = const(100000)

_sio = SIO_BASE
_spi = SPI0_BASE
_mask = 0


def configure(sio: object, spi: object, strobe_gpio: int) -> None:
    """Register blocks (addresses, or buffers standing in for them) and the strobe."""
    global _sio, _spi, _mask
    _sio = sio
    _spi = spi
    _mask = 1 << strobe_gpio


@micropython.viper
def tx(buf):
    sio = ptr32(_sio)  # noqa: F821 - viper builtins
    spi = ptr32(_spi)  # noqa: F821
    mask = int(_mask)
    b = ptr8(buf)  # noqa: F821
    n = int(len(buf))  # noqa: RUF046 - viper: object -> machine int
    sio[6] = mask
    sent = 0
    got = 0
    spins = 0
    while got < n:
        status = spi[3]
        if sent < n and (status & 2) and sent - got < 8:
            spi[2] = b[sent]
            sent += 1
        if status & 4:
            drained = spi[2]  # noqa: F841 - drain the receive FIFO
            got += 1
        spins += 1
        if spins > _SPINS:
            sio[5] = mask
            raise OSError(5)
    while spi[3] & 0x10:
        spins += 1
        if spins > _SPINS:
            break
    sio[5] = mask


@micropython.viper
def txs(batch):
    sio = ptr32(_sio)  # noqa: F821
    spi = ptr32(_spi)  # noqa: F821
    mask = int(_mask)
    b = ptr8(batch)  # noqa: F821
    end = int(len(batch))  # noqa: RUF046
    i = 0
    spins = 0
    while i < end:
        n = b[i]
        start = i + 1
        sio[6] = mask
        sent = 0
        got = 0
        while got < n:
            status = spi[3]
            if sent < n and (status & 2) and sent - got < 8:
                spi[2] = b[start + sent]
                sent += 1
            if status & 4:
                drained = spi[2]  # noqa: F841
                got += 1
            spins += 1
            if spins > _SPINS:
                sio[5] = mask
                raise OSError(5)
        while spi[3] & 0x10:
            spins += 1
            if spins > _SPINS:
                break
        sio[5] = mask
        i = start + n


@micropython.viper
def xfer(tx, rx):
    sio = ptr32(_sio)  # noqa: F821
    spi = ptr32(_spi)  # noqa: F821
    mask = int(_mask)
    t = ptr8(tx)  # noqa: F821
    r = ptr8(rx)  # noqa: F821
    n = int(len(tx))  # noqa: RUF046
    sio[6] = mask
    sent = 0
    got = 0
    spins = 0
    while got < n:
        status = spi[3]
        if sent < n and (status & 2) and sent - got < 8:
            spi[2] = t[sent]
            sent += 1
        if status & 4:
            r[got] = spi[2]
            got += 1
        spins += 1
        if spins > _SPINS:
            sio[5] = mask
            raise OSError(5)
    while spi[3] & 0x10:
        spins += 1
        if spins > _SPINS:
            break
    sio[5] = mask


class PicoBus:
    """``firmware.bus.Bus``'s three functions, as viper code on the registers."""

    def __init__(self, sio: object = SIO_BASE, spi: object = SPI0_BASE,
                 strobe_gpio: int = 9) -> None:
        configure(sio, spi, strobe_gpio)
        self.tx = tx
        self.txs = txs
        self.xfer = xfer

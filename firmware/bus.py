"""One SPI transaction per call: chip select low, the bytes, chip select high.

The MFRC522 driver talks to the bus through three functions only:

- ``tx(buf)``: one write transaction;
- ``txs(batch)``: several write transactions in one call; ``batch`` is a flat
  buffer of length-prefixed transactions (``batch_of``), so the Pico's viper
  code walks it without Python objects;
- ``xfer(tx, rx)``: one read transaction, ``len(rx) == len(tx)``.

``Bus`` here is the plain one (CPython: the simulator and the tests; any
``machine.SPI``-like object and a strobe ``Pin`` or ``cs(active)`` callable).
On the Pico, ``firmware.picobus`` does the same with the RP2040's registers
from viper code: one Python call per transaction instead of three (strobe low,
``spi.write``, strobe high), or one per batch (hardware/timing.md).
"""


def batch_of(buffers: tuple) -> bytes:
    """The flat form ``txs`` takes: each transaction as its length, then its bytes."""
    out = bytearray()
    for buf in buffers:
        if not 0 < len(buf) < 256:
            raise ValueError("a batched transaction is 1..255 bytes")
        out.append(len(buf))
        out += bytes(buf)
    return bytes(out)


def batch_split(batch: bytes) -> list:
    """The transactions of a flat batch (the inverse of ``batch_of``)."""
    out = []
    i = 0
    while i < len(batch):
        n = batch[i]
        out.append(bytes(batch[i + 1:i + 1 + n]))
        i += 1 + n
    return out


class Bus:
    """Transactions over a ``machine.SPI``-like ``spi`` with ``cs`` as chip select:
    a Pin (the demultiplexers' strobe, active low: written directly) or any
    callable ``cs(active)``."""

    def __init__(self, spi: object, cs: object) -> None:
        level = getattr(cs, "value", None)
        self._nss = level if level is not None else (lambda value: cs(not value))
        self._write = spi.write
        self._write_readinto = spi.write_readinto

    def tx(self, buf: bytes) -> None:
        nss = self._nss
        nss(0)
        try:
            self._write(buf)
        finally:
            nss(1)

    def txs(self, batch: bytes) -> None:
        nss = self._nss
        write = self._write
        i = 0
        try:  # one handler for the lot
            while i < len(batch):
                n = batch[i]
                nss(0)
                write(memoryview(batch)[i + 1:i + 1 + n])
                nss(1)
                i += 1 + n
        except BaseException:  # the bus failed mid-transaction: deselect, then report
            nss(1)
            raise

    def xfer(self, tx: bytes, rx: bytearray) -> None:
        nss = self._nss
        nss(0)
        try:
            self._write_readinto(tx, rx)
        finally:
            nss(1)

"""USB desktop NFC readers (ACR122U, ACR1252U, ...) through PC/SC (``pcscd``).

Each PC/SC reader is one scan pad: the first reader found (or the one named in
``[pcsc] readers``) is pad 0, the next pad 1, and so on; grid cells have no reader here, so
they always read empty. Presence is confirmed like every raw back-end (two equal reads to
place, two empty sweeps to remove: `RawBackend`).

The PC/SC boundary is a factory, like gpiozero's pin factories: `PyscardFactory` talks to
``pcscd`` through ``pyscard`` (the ``pcsc`` extra, imported only when the back-end opens),
`MockPcscFactory` is a drivable fake (plug and unplug readers, lay and lift tags, make a
read fail) that answers the same APDUs, so everything above it is tested without hardware;
``CAULDRON_PCSC_FACTORY=mock`` runs a whole command on it (one empty reader).

Per reader and sweep: connect (no card: empty), GET UID (``FF CA 00 00 00``), and for a tag
not seen before READ BINARY of pages 4.. (``FF B0 00 p 10``, 16 bytes) until its NDEF message
is whole: the card id it carries (`hub.ndef`), offered through `tag_memory`. A reader that
vanished reads ``absent``; a failed exchange reads ``silent`` (says nothing about the tag).
`write_tag` writes the card id page by page (UPDATE BINARY ``FF D6 00 p 04``) and reads it back.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from hub import ndef
from hub.backends.base import RawBackend, ReaderRead
from hub.errors import BackendError, ConfigError
from hub.layout import Layout


def venv_hint(package: str) -> str:
    """What makes Debian's ``package`` visible here: nothing outside a venv or in one made
    with --system-site-packages; else the command that turns that on (it keeps what the
    venv holds). Without it `apt install` changes nothing for this program."""
    if sys.prefix == sys.base_prefix:
        return ""
    cfg = Path(sys.prefix) / "pyvenv.cfg"
    with contextlib.suppress(OSError):
        if "include-system-site-packages = true" in cfg.read_text(encoding="utf-8"):
            return ""
    return (f"; this program's venv ({sys.prefix}) does not see Debian's {package}: "
            f"`sudo python3 -m venv --system-site-packages {sys.prefix}` (on the existing "
            "venv: it keeps what is installed)")


PCSC_HINT = (
    "install the PC/SC stack: `sudo apt install pcscd libccid python3-pyscard`, then "
    "`sudo systemctl enable --now pcscd.socket`" + venv_hint("python3-pyscard")
    + "; see hardware/usb-reader.md"
)
FACTORY_ENV = "CAULDRON_PCSC_FACTORY"
MOCK_READER = "Mock PC/SC reader 00 00"
GET_UID = [0xFF, 0xCA, 0x00, 0x00, 0x00]
SW_OK = (0x90, 0x00)
READ_PAGES = 4  # READ BINARY returns 16 bytes: 4 pages
MAX_PAGES = ndef.NTAG213_USER_PAGES
ERASED_PAGE = bytes((0x03, 0x00, 0xFE, 0x00))  # an empty NDEF message, then the terminator


class PcscError(Exception):
    """Any failure at the PC/SC boundary."""


class NoCard(PcscError):
    """The reader is there but no card lies on it."""


class ReaderGone(PcscError):
    """The reader is not (any more) known to pcscd: unplugged."""


class CardError(PcscError):
    """The card did not answer, answered an error status, or was lifted mid-exchange."""


class PcscUnavailable(PcscError):
    """No PC/SC at all: pyscard missing or pcscd not running."""


class PcscConnection(Protocol):
    def transmit(self, apdu: list[int]) -> tuple[list[int], int, int]: ...

    def disconnect(self) -> None: ...


class PcscFactory(Protocol):
    def reader_names(self) -> list[str]:
        """Names of the readers pcscd knows now (raises PcscUnavailable)."""

    def connect(self, name: str) -> PcscConnection:
        """A connection to the card on reader ``name`` (NoCard, ReaderGone, CardError)."""


# ------------------------------------------------------------------ the real one: pyscard


class _PyscardConnection:
    def __init__(self, connection: Any, errors: tuple[type[BaseException], ...]) -> None:
        self.connection = connection
        self.errors = errors

    def transmit(self, apdu: list[int]) -> tuple[list[int], int, int]:
        try:
            data, sw1, sw2 = self.connection.transmit(apdu)
        except self.errors as exc:
            raise CardError(str(exc)) from None
        return list(data), int(sw1), int(sw2)

    def disconnect(self) -> None:
        with contextlib.suppress(*self.errors):
            self.connection.disconnect()


class PyscardFactory:
    """PC/SC through ``pyscard`` and ``pcscd``."""

    def __init__(self) -> None:
        try:
            from smartcard import Exceptions
            from smartcard.pcsc import PCSCExceptions
            from smartcard.System import readers
        except ImportError:
            raise PcscUnavailable(f"pyscard is not installed; {PCSC_HINT}") from None
        self._readers = readers
        self._no_card = Exceptions.NoCardException
        self._context = (PCSCExceptions.EstablishContextException,)
        self._list = (PCSCExceptions.ListReadersException,)
        self._errors: tuple[type[BaseException], ...] = (Exceptions.SmartcardException,)

    def _find(self) -> list[Any]:
        try:
            return list(self._readers())
        except self._context as exc:
            raise PcscUnavailable(f"pcscd does not answer ({exc}); {PCSC_HINT}") from None
        except self._list:  # SCARD_E_NO_READERS_AVAILABLE on some versions: none plugged
            return []

    def reader_names(self) -> list[str]:
        return [str(reader) for reader in self._find()]

    def connect(self, name: str) -> PcscConnection:
        reader = next((r for r in self._find() if str(r) == name), None)
        if reader is None:
            raise ReaderGone(name)
        connection = reader.createConnection()
        try:
            connection.connect()
        except self._no_card:
            raise NoCard(name) from None
        except self._errors as exc:
            if name not in self.reader_names():
                raise ReaderGone(name) from None
            raise CardError(str(exc)) from None
        return _PyscardConnection(connection, self._errors)


# ------------------------------------------------------------------ the drivable fake


@dataclass
class MockTag:
    uid: str
    memory: bytearray = field(default_factory=lambda: bytearray(MAX_PAGES * ndef.PAGE_SIZE))


@dataclass
class _MockReader:
    tag: MockTag | None = None
    fail_reads: int = 0  # the next exchanges that fail (a read error)
    fail_writes: int = 0  # the next page writes the tag refuses (63 00)


class _MockConnection:
    def __init__(self, factory: MockPcscFactory, name: str) -> None:
        self.factory, self.name = factory, name

    def transmit(self, apdu: list[int]) -> tuple[list[int], int, int]:
        return self.factory._transmit(self.name, apdu)

    def disconnect(self) -> None:
        pass


class MockPcscFactory:
    """A PC/SC stack in memory, driven by tests (like gpiozero's ``MockFactory``):
    ``plug``/``unplug`` readers, ``lay``/``lift`` tags, ``fail`` the next exchanges."""

    def __init__(self, *names: str) -> None:
        self._lock = threading.Lock()
        self.readers: dict[str, _MockReader] = {}
        self.transmits = 0
        for name in names:
            self.plug(name)

    def plug(self, name: str) -> None:
        with self._lock:
            self.readers.setdefault(name, _MockReader())

    def unplug(self, name: str) -> None:
        with self._lock:
            self.readers.pop(name, None)

    def lay(self, name: str, uid: str, card_id: str | None = None) -> MockTag:
        """Lay a tag on reader ``name`` (with ``card_id`` written in its memory)."""
        tag = MockTag(uid.upper())
        if card_id is not None:
            data = ndef.encode_card_id(card_id)
            tag.memory[:len(data)] = data
        with self._lock:
            self.readers[name].tag = tag
        return tag

    def lay_again(self, name: str, tag: MockTag) -> None:
        """Lay a tag lifted before (`lift`) back on reader ``name``: what it carries stays."""
        with self._lock:
            self.readers[name].tag = tag

    def lift(self, name: str) -> MockTag | None:
        with self._lock:
            reader = self.readers[name]
            tag, reader.tag = reader.tag, None
        return tag

    def fail(self, name: str, exchanges: int = 1) -> None:
        """Make the next ``exchanges`` exchanges with the card on ``name`` fail."""
        with self._lock:
            self.readers[name].fail_reads += exchanges

    def fail_write(self, name: str, writes: int = 1) -> None:
        """Make the tag on ``name`` refuse the next ``writes`` page writes."""
        with self._lock:
            self.readers[name].fail_writes += writes

    def reader_names(self) -> list[str]:
        with self._lock:
            return list(self.readers)

    def connect(self, name: str) -> PcscConnection:
        with self._lock:
            reader = self.readers.get(name)
            if reader is None:
                raise ReaderGone(name)
            if reader.tag is None:
                raise NoCard(name)
        return _MockConnection(self, name)

    def _transmit(self, name: str, apdu: list[int]) -> tuple[list[int], int, int]:
        with self._lock:
            self.transmits += 1
            reader = self.readers.get(name)
            if reader is None:
                raise CardError("reader removed")
            if reader.tag is None:
                raise CardError("card removed")
            if reader.fail_reads:
                reader.fail_reads -= 1
                raise CardError("transaction failed")
            tag = reader.tag
            cla, ins = apdu[0], apdu[1]
            if cla != 0xFF:
                return [], 0x6E, 0x00
            if ins == 0xCA:
                return list(bytes.fromhex(tag.uid)), *SW_OK
            page = apdu[3]
            start = (page - ndef.USER_PAGE) * ndef.PAGE_SIZE
            if not 0 <= start < len(tag.memory):
                return [], 0x6A, 0x82
            if ins == 0xB0:
                return list(tag.memory[start:start + apdu[4]]), *SW_OK
            if ins == 0xD6 and apdu[4] == ndef.PAGE_SIZE:
                if reader.fail_writes:
                    reader.fail_writes -= 1
                    return [], 0x63, 0x00
                tag.memory[start:start + ndef.PAGE_SIZE] = bytes(apdu[5:9])
                return [], *SW_OK
            return [], 0x6D, 0x00


# ------------------------------------------------------------------ the back-end


def _exchange(connection: PcscConnection, apdu: list[int]) -> list[int]:
    data, sw1, sw2 = connection.transmit(apdu)
    if (sw1, sw2) != SW_OK:
        raise CardError(f"the reader answered {sw1:02X} {sw2:02X} to {bytes(apdu[:2]).hex()}")
    return data


class PcscBackend(RawBackend):
    """Scan pads on USB PC/SC readers."""

    name: ClassVar[str] = "pcsc"
    capabilities = frozenset({"write_tag"})
    # Said when the enrolment pad's reader vanishes (`Enrolment.pad_health`).
    absent_hint: ClassVar[str] = (" (if it does not come back: `pcsc_scan` shows the readers "
                                  "pcscd sees; `sudo systemctl restart pcscd` once it is "
                                  "plugged in)")

    def __init__(self, layout: Layout, factory: PcscFactory | None = None,
                 names: list[str] | None = None) -> None:
        super().__init__(layout)
        self._factory = factory
        self._wanted = list(names or [])  # name fragments, one per pad; [] = in found order
        self._pads: dict[int, str] = {}  # pad reader index -> PC/SC reader name
        self._memory: dict[str, str | None] = {}  # UID -> card id read from its memory
        self._pad_readers = [layout.pad_reader(seat) for seat in range(layout.pads)]

    @classmethod
    def from_config(cls, layout: Layout, config: dict[str, Any]) -> PcscBackend:
        names = config.get("readers", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError('[pcsc] readers must be a list of reader names, e.g. '
                              '["ACS ACR122U"] (see `cauldron readers --backend pcsc`)')
        return cls(layout, names=names)

    @property
    def factory(self) -> PcscFactory:
        if self._factory is None:
            # Like GPIOZERO_PIN_FACTORY=mock: the whole command runs on the fake (one empty
            # reader), for trying the tools and testing them without a reader.
            if os.environ.get(FACTORY_ENV) == "mock":
                self._factory = MockPcscFactory(MOCK_READER)
            else:
                self._factory = PyscardFactory()
        return self._factory

    def open(self) -> None:
        try:
            found = self.factory.reader_names()
        except PcscUnavailable as exc:
            raise BackendError(str(exc)) from None
        if not found:
            raise BackendError("no PC/SC reader found: plug the USB reader in (check it with "
                               f"`pcsc_scan`); {PCSC_HINT}")
        self._assign(found)

    def reader_names(self) -> dict[int, str]:
        """Pad reader index -> the PC/SC reader assigned to it."""
        return dict(self._pads)

    def _assign(self, found: list[str]) -> None:
        """Give each pad without a reader one of the readers found (kept once assigned, so
        an unplugged reader comes back on its own pad)."""
        taken = set(self._pads.values())
        free = [n for n in found if n not in taken]
        for seat, reader in enumerate(self._pad_readers):
            if reader in self._pads or not free:
                continue
            if seat < len(self._wanted):
                match = next((n for n in free if self._wanted[seat] in n), None)
                if match is None:
                    continue
            else:
                match = free[0]
            self._pads[reader] = match
            free.remove(match)

    def sweep(self) -> list[ReaderRead]:
        try:
            found = self.factory.reader_names()
        except PcscUnavailable:
            found = []
        if len(self._pads) < len(self._pad_readers):
            self._assign(found)
        reads = [ReaderRead() for _ in range(self.n_readers)]
        for reader in self._pad_readers:
            name = self._pads.get(reader)
            if name is None or name not in found:
                reads[reader] = ReaderRead(fault="absent")
            else:
                reads[reader] = self._read(name)
        return reads

    def _read(self, name: str) -> ReaderRead:
        try:
            connection = self.factory.connect(name)
        except NoCard:
            return ReaderRead()
        except ReaderGone:
            return ReaderRead(fault="absent")
        except PcscError:
            return ReaderRead(fault="silent")
        try:
            uid = bytes(_exchange(connection, GET_UID)).hex().upper()
            if not uid:
                return ReaderRead(fault="silent")
            if uid not in self._memory:
                self._memory[uid] = ndef.decode_card_id(self._read_memory(connection))
            return ReaderRead(uid=uid)
        except PcscError:
            return ReaderRead(fault="silent")
        finally:
            connection.disconnect()

    @staticmethod
    def _read_memory(connection: PcscConnection) -> bytes:
        memory = b""
        for page in range(ndef.USER_PAGE, ndef.USER_PAGE + MAX_PAGES, READ_PAGES):
            memory += bytes(_exchange(connection, [0xFF, 0xB0, 0x00, page, 16]))
            if ndef.message_complete(memory):
                break
        return memory

    def tag_memory(self, uid: str) -> str | None:
        """The card id written in tag ``uid`` (read when it was laid), if any."""
        return self._memory.get(uid.upper())

    def write_tag(self, reader: int, card_id: str) -> None:
        try:
            pages = ndef.encode_pages(card_id)
        except ndef.NdefError as exc:
            raise BackendError(str(exc)) from None
        self._write(reader, pages, card_id)

    def erase_tag(self, reader: int) -> None:
        """Leave the tag on ``reader`` carrying no card id (an empty NDEF message): an undone
        enrolment takes back what `write_tag` wrote."""
        self._write(reader, [ERASED_PAGE], None)

    def _write(self, reader: int, pages: list[bytes], card_id: str | None) -> None:
        name = self._pads.get(reader)
        if name is None:
            raise BackendError(f"no USB reader on {self.layout.place(reader).label()}")
        try:
            connection = self.factory.connect(name)
        except NoCard:
            raise BackendError(f"no tag on the reader {name} to write to") from None
        except PcscError as exc:
            raise BackendError(f"cannot reach the reader {name}: {exc}") from None
        try:
            uid = bytes(_exchange(connection, GET_UID)).hex().upper()
            for offset, page in enumerate(pages):
                _exchange(connection, [0xFF, 0xD6, 0x00, ndef.USER_PAGE + offset, 4, *page])
            back = ndef.decode_card_id(self._read_memory(connection))
        except PcscError as exc:
            what = f"writing {card_id}" if card_id else "erasing the tag"
            raise BackendError(f"{what} failed ({exc}): hold the tag still on the reader and "
                               "try again") from None
        finally:
            connection.disconnect()
        if back != card_id:
            raise BackendError(f"the tag reads back {back!r}, not {card_id!r}: try again")
        self._memory[uid] = card_id

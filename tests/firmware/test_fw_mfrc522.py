"""The MFRC522 driver against the register-level simulator."""

import pytest

from firmware import mfrc522
from firmware.mfrc522 import MFRC522, ReaderError, TagError
from firmware.mfrc522_sim import (
    BIT_US,
    FDT_LAST_0_US,
    BusContention,
    SimTable,
    SimTag,
    Timings,
    crc_a,
)
from firmware.scan import Demux

UID7 = bytes.fromhex("04A1B2C3D4E5F6")


def rig(n: int = 2, **timing: float) -> tuple[SimTable, Demux, list[MFRC522]]:
    table = SimTable(n, Timings(**timing))  # type: ignore[arg-type]
    demux = Demux(table.demux.address, table.demux.bank_enable, table.demux.strobe)
    readers = [MFRC522(table.spi, demux.cs, table.clock) for _ in range(n)]
    return table, demux, readers


def ready(table: SimTable, demux: Demux, driver: MFRC522, reader: int = 0) -> None:
    demux.select(reader)
    driver.init()
    driver.antenna_on()
    table.clock.advance(table.timings.tag_power_up_us)


def test_crc_a_matches_the_known_hlta_frame() -> None:
    assert crc_a(b"\x50\x00") == b"\x57\xcd"


def test_init_reads_version_and_configures_timer() -> None:
    table, demux, (driver, _) = rig()
    demux.select(0)
    assert driver.init() == 0x92
    chip = table.chips[0]
    assert chip.regs[mfrc522.TModeReg] & 0x80  # TAuto
    assert chip.regs[mfrc522.TxASKReg] == 0x40
    assert not chip.field_on
    assert table.clock.now_us >= table.timings.soft_reset_us  # waited for the reset


def test_spi_address_byte_framing() -> None:
    table, demux, (driver, _) = rig()
    demux.select(0)
    sent: list[bytes] = []
    real = table.spi._transfer

    def transfer(mosi: bytes, call_us: float | None = None) -> bytes:
        sent.append(mosi)
        return real(mosi)

    table.spi._transfer = transfer  # type: ignore[method-assign]
    driver.write_reg(mfrc522.TxControlReg, 0x83)
    driver.read_regs([mfrc522.ComIrqReg, mfrc522.VersionReg])
    assert sent[0] == bytes(((0x14 << 1) & 0x7E, 0x83))
    assert sent[1] == bytes((0x80 | (0x04 << 1), 0x80 | (0x37 << 1), 0x00))


def test_wupa_on_empty_reader_times_out_after_the_timer() -> None:
    table, demux, (driver, _) = rig()
    ready(table, demux, driver)
    start = table.clock.now_us
    assert driver.wupa() is None
    elapsed = table.clock.now_us - start
    tx = (1 + 7 + 2) * BIT_US
    assert tx + mfrc522.PROBE_TIMEOUT_US <= elapsed
    assert elapsed < mfrc522.WUPA_FIRST_POLL_US + 250  # one interrupt poll, at the first moment


def test_wupa_answer_timing_and_atqa() -> None:
    table, demux, (driver, _) = rig()
    table.place(0, UID7)
    ready(table, demux, driver)
    start = table.clock.now_us
    assert driver.wupa() == b"\x44\x00"
    elapsed = table.clock.now_us - start
    rf = (1 + 7 + 2) * BIT_US + FDT_LAST_0_US + (1 + 18 + 1) * BIT_US
    assert rf < elapsed < rf + 250  # + load (Idle first) and the poll granularity


def test_tag_needs_the_field_to_settle() -> None:
    table, demux, (driver, _) = rig(tag_power_up_us=500)
    table.place(0, UID7)
    demux.select(0)
    driver.init()
    driver.antenna_on()
    assert driver.wupa() is None  # too early: the tag has no power yet
    table.clock.advance(500)
    assert driver.wupa() == b"\x44\x00"


def test_read_7_byte_uid_and_4_byte_uid() -> None:
    table, demux, (driver, other) = rig()
    table.place(0, UID7)
    table.place(1, b"\xde\xad\xbe\xef")
    ready(table, demux, driver)
    assert driver.wupa() is not None
    assert driver.read_uid() == UID7
    driver.antenna_off()
    ready(table, demux, other, 1)
    assert other.wupa() is not None
    assert other.read_uid() == b"\xde\xad\xbe\xef"


def test_halt_then_reqa_is_ignored_but_wupa_wakes() -> None:
    table, demux, (driver, _) = rig()
    tag = table.place(0, UID7)
    ready(table, demux, driver)
    assert driver.wupa() is not None
    assert driver.select_known(UID7)
    assert tag.state == "ACTIVE"
    driver.halt()
    assert tag.state == "HALT"
    assert driver.reqa() is None
    assert driver.wupa() == b"\x44\x00"


def test_field_off_resets_a_halted_tag() -> None:
    table, demux, (driver, _) = rig()
    tag = table.place(0, UID7)
    ready(table, demux, driver)
    driver.wupa()
    driver.select_known(UID7)
    driver.halt()
    driver.antenna_off()
    table.clock.advance(table.timings.tag_reset_off_us + 1)
    driver.antenna_on()
    table.clock.advance(table.timings.tag_power_up_us)
    assert driver.reqa() == b"\x44\x00"  # powered up afresh: IDLE again
    assert tag.state == "READY1"


def test_select_known_rejects_another_uid() -> None:
    table, demux, (driver, _) = rig()
    table.place(0, UID7)
    ready(table, demux, driver)
    driver.wupa()
    assert not driver.select_known(bytes.fromhex("04A1B2C3D4E5F7"))


def test_card_id_write_and_read_back() -> None:
    table, demux, (driver, _) = rig()
    tag = table.place(0, UID7)
    ready(table, demux, driver)
    driver.wupa()
    assert driver.select_known(UID7)
    mfrc522.write_card_id(driver, "declinatio-2")
    assert mfrc522.read_card_id(driver) == "declinatio-2"
    assert tag.pages[16:18] == b"\x03\x13"  # NDEF TLV from page 4, 19-byte record
    with pytest.raises(TagError, match="NAK"):
        driver.ntag_read(45)


def test_card_id_encoding_rejects_oversize() -> None:
    with pytest.raises(ValueError):
        mfrc522.card_id_pages("x" * 200)
    assert mfrc522.parse_card_id(b"\x00" * 16) is None


def test_two_tags_collide() -> None:
    table, demux, (driver, _) = rig()
    table.place(0, UID7)
    table.place(0, bytes.fromhex("04A1B2C3D4E5F7"))
    ready(table, demux, driver)
    assert driver.wupa() == b"\x44\x00"  # identical ATQAs do not collide
    with pytest.raises(TagError, match="collision"):
        driver.read_uid()


def test_vanished_reader_is_absent() -> None:
    table, demux, (driver, _) = rig()
    table.faults(0).vanished = True
    demux.select(0)
    with pytest.raises(ReaderError) as caught:
        driver.init()
    assert caught.value.kind == "absent"
    table.faults(0).vanished_value = 0xFF
    with pytest.raises(ReaderError):
        driver.prepare(b"\x52", 7)


def test_stuck_reader_is_detected_not_read_stale() -> None:
    table, demux, (driver, _) = rig()
    table.place(0, UID7)
    ready(table, demux, driver)
    assert driver.wupa() is not None
    table.faults(0).stuck = True  # registers freeze with the last answer in them
    with pytest.raises(ReaderError) as caught:
        driver.wupa()
    assert caught.value.kind == "silent"


def test_two_selected_readers_would_contend_on_miso() -> None:
    table, demux, readers = rig(17)
    driver = readers[0]
    table.demux.bank_enable[0].value(0)
    table.demux.bank_enable[1].value(0)  # a wiring fault: two banks enabled
    demux.select(0)
    with pytest.raises(BusContention):
        driver.read_reg(mfrc522.VersionReg)


def test_unbuffered_module_contends_even_when_idle() -> None:
    table, demux, (driver, _) = rig()
    table.faults(1).unbuffered_miso = True
    demux.select(0)
    with pytest.raises(BusContention):
        driver.read_reg(mfrc522.VersionReg)


def test_power_up_reset_state_of_a_new_tag() -> None:
    tag = SimTag.ntag213(UID7)
    assert tag.state == "OFF"
    assert tag.receive(b"\x52", 7) is None  # no field, no answer


def test_prepare_writes_idle_before_loading_the_frame() -> None:
    """Issue 20: a Transceive left running from the last exchange is stopped (Idle) before
    the FIFO is flushed and loaded, for the hot WUPA path and any other frame."""
    table, demux, (driver, _) = rig()
    ready(table, demux, driver)
    sent: list[bytes] = []
    real = table.spi._transfer

    def transfer(mosi: bytes, call_us: float | None = None) -> bytes:
        sent.append(mosi)
        return real(mosi)

    table.spi._transfer = transfer  # type: ignore[method-assign]
    idle = bytes(((mfrc522.CommandReg << 1) & 0x7E, mfrc522.CMD_IDLE))
    flush = bytes(((mfrc522.FIFOLevelReg << 1) & 0x7E, 0x80))
    for frame, bits in ((bytes((mfrc522.PICC_WUPA,)), 7), (b"\x93\x20", 0)):
        sent.clear()
        driver.prepare(frame, bits)
        writes = [m for m in sent if not m[0] & 0x80]
        assert idle in writes and writes.index(idle) < writes.index(flush)


def test_read_uid_without_the_last_select_reads_the_same_uid() -> None:
    """The scan loop's acquisition skips the level-2 SELECT (the field goes off next):
    the same UID with one exchange less; a 4-byte UID (one level) reads as before."""
    table, demux, readers = rig()
    table.place(0, UID7)
    table.place(1, b"\xde\xad\xbe\xef")
    for reader, uid in ((0, UID7), (1, b"\xde\xad\xbe\xef")):
        driver = readers[reader]
        counts = []
        for select_last in (True, False):
            ready(table, demux, driver, reader)
            assert driver.wupa() is not None
            before = table.spi.transactions
            assert driver.read_uid(select_last) == uid
            counts.append(table.spi.transactions - before)
            driver.antenna_off()
            table.clock.advance(6000)
        assert counts[1] < counts[0] if len(uid) == 7 else counts[1] == counts[0]

"""Card ids in tag memory (hub.ndef, with ndeflib): the same bytes as the firmware writes,
and tags written by other tools (phone apps) are read too."""

from __future__ import annotations

import ndef as ndeflib
from hypothesis import given
from hypothesis import strategies as st

from engine.games.glastonbury.rules.cards import PLAYING_CARDS
from firmware.mfrc522 import card_id_pages, parse_card_id
from hub import ndef


def test_every_card_id_encodes_as_the_firmware_writes_it_and_decodes_back() -> None:
    for card in PLAYING_CARDS:
        data = ndef.encode_card_id(card)
        assert data == b"".join(card_id_pages(card))
        assert ndef.decode_card_id(data) == card
        assert parse_card_id(data) == card
        assert len(data) % 4 == 0


def test_the_documented_bytes_for_blue_a_4() -> None:
    assert ndef.encode_card_id("blue-a-4").hex(" ") == (
        "03 0f d1 01 0b 54 02 65 6e 62 6c 75 65 2d 61 2d 34 fe 00 00")


def test_a_phone_written_tag_with_other_tlvs_and_records_is_read() -> None:
    message = b"".join(ndeflib.message_encoder([
        ndeflib.UriRecord("https://example.org/cauldron"),
        ndeflib.TextRecord("grey-b-1", "de"),
    ]))
    memory = (b"\x01\x03\xa0\x0c\x34" + b"\x00" + b"\x03" + bytes((len(message),)) + message
              + b"\xfe" + bytes(20))
    assert ndef.decode_card_id(memory) == "grey-b-1"
    assert ndef.message_complete(memory)


def test_blank_foreign_and_cut_tags_carry_no_card_id() -> None:
    assert ndef.decode_card_id(bytes(64)) is None
    assert ndef.decode_card_id(b"\x03\x00\xfe\x00") is None
    assert ndef.decode_card_id(ndef.encode_card_id("hello world")) is None
    assert ndef.decode_card_id(ndef.encode_card_id("corner-1")) is None
    assert ndef.decode_card_id(ndef.encode_card_id("blue-a-4")[:10]) is None
    assert not ndef.message_complete(ndef.encode_card_id("blue-a-4")[:10])
    assert ndef.message_complete(b"\x03\x00\xfe\x00")


@given(st.binary(max_size=160))
def test_any_memory_decodes_to_a_card_id_or_none_never_raises(memory: bytes) -> None:
    card = ndef.decode_card_id(memory)
    assert card is None or card in PLAYING_CARDS
    ndef.message_complete(memory)

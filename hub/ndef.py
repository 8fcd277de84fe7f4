"""A card id in a tag's memory: an NFC Forum Type 2 NDEF message with one Text record.

Encoding (hardware/tags.md, "Card id in the tag"): user memory from page 4 holds the TLV
``03 <len> <NDEF message> FE``, the message being one well-known Text record ("en", UTF-8)
whose text is the card id, zero-padded to whole 4-byte pages. The firmware writes exactly
these bytes (`firmware.mfrc522.card_id_pages`, MicroPython, no ndeflib there); the hub reads
with ``ndeflib``, so it also accepts tags written by a phone app: other TLVs before the
message (lock/memory control, NULL), a 3-byte length, other records before the Text record,
any language code.
"""

from __future__ import annotations

from typing import Final

import ndef

from hub.game import is_tagged_piece

USER_PAGE: Final[int] = 4  # first user page of an NTAG21x
PAGE_SIZE: Final[int] = 4
NTAG213_USER_PAGES: Final[int] = 36  # pages 4..39: 144 bytes
_NDEF_TLV, _NULL_TLV, _TERMINATOR_TLV = 0x03, 0x00, 0xFE


class NdefError(ValueError):
    """A card id that cannot be written (too long, not text)."""


def encode_card_id(card_id: str) -> bytes:
    """The bytes to write from page 4: TLV + message + terminator, padded to whole pages."""
    if not card_id:
        raise NdefError("an empty card id cannot be written")
    message = b"".join(ndef.message_encoder([ndef.TextRecord(card_id, "en")]))
    length = (bytes((len(message),)) if len(message) < 0xFF
              else b"\xff" + len(message).to_bytes(2, "big"))
    tlv = bytes((_NDEF_TLV,)) + length + message + bytes((_TERMINATOR_TLV,))
    tlv += bytes(-len(tlv) % PAGE_SIZE)
    if len(tlv) > NTAG213_USER_PAGES * PAGE_SIZE:
        raise NdefError(f"card id {card_id!r} is too long for an NTAG213 (144 bytes)")
    return tlv


def encode_pages(card_id: str) -> list[bytes]:
    """`encode_card_id` cut into 4-byte pages (the first goes to page 4)."""
    data = encode_card_id(card_id)
    return [data[i:i + PAGE_SIZE] for i in range(0, len(data), PAGE_SIZE)]


def _walk(memory: bytes) -> tuple[bool, bytes | None]:
    """(whole, message): ``whole`` once ``memory`` is enough to tell (a message, an empty
    one, a terminator or bytes that are no TLV); ``message`` the first non-empty NDEF message,
    or None."""
    i = 0
    while i < len(memory):
        kind = memory[i]
        if kind == _NULL_TLV:
            i += 1
            continue
        if kind == _TERMINATOR_TLV:
            return True, None
        if kind not in (0x01, 0x02, _NDEF_TLV, 0xFD):  # lock/memory control, NDEF, proprietary
            return True, None
        if i + 1 >= len(memory):
            return False, None
        length, start = memory[i + 1], i + 2
        if length == 0xFF:
            if i + 3 >= len(memory):
                return False, None
            length, start = int.from_bytes(memory[i + 2:i + 4], "big"), i + 4
        if kind == _NDEF_TLV:
            body = memory[start:start + length]
            if len(body) < length:
                return False, None
            return True, (bytes(body) if length else None)
        i = start + length
    return False, None


def message_complete(memory: bytes) -> bool:
    """True once ``memory`` holds a whole NDEF message, or shows it holds none (read no
    further pages)."""
    return _walk(memory)[0]


def decode_text(memory: bytes) -> str | None:
    """The text of the first Text record of the NDEF message in ``memory`` (user memory
    read from page 4), or None when there is none or it cannot be decoded."""
    message = _walk(memory)[1]
    if message is None:
        return None
    try:
        for record in ndef.message_decoder(message, errors="relax"):
            if isinstance(record, ndef.TextRecord):
                return str(record.text)
    except (ndef.DecodeError, ValueError, UnicodeError):
        return None
    return None


def decode_card_id(memory: bytes) -> str | None:
    """The card id the tag carries, or None (no NDEF text, or text that is not a card id:
    a tag reused from something else is treated as carrying nothing)."""
    text = decode_text(memory)
    if text is None:
        return None
    text = text.strip()
    return text if is_tagged_piece(text) else None

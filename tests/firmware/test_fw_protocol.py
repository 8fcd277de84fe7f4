"""The USB-serial line protocol: round trips, every rejection, fuzzing."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.protocol import (
    FROM_FIRMWARE,
    FROM_HUB,
    MAX_LINE,
    Frame,
    ProtocolError,
    Sender,
    crc16,
    decode_frame,
    encode_frame,
    full_part,
    parse_pairs,
    seq_gap,
)


def sealed(body: str) -> str:
    """A line with a correct checksum, to reach the checks after the CRC."""
    return f"{body}*{crc16(body.encode()):04X}\n"


def test_crc16_ccitt_false_check_value() -> None:
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF


@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        ("HELLO", ["1.0.0", "36"]),
        ("P", ["3", "04A1B2C3D4E5F6"]),
        ("R", ["35", "DEADBEEF"]),
        ("FULL", ["1/1", "0=-", "1=04A1B2C3D4E5F6"]),
        ("HEALTH", ["0=ok", "1=silent", "2=flicker", "3=absent"]),
        ("ERR", ["reader", "12", "stuck"]),
        ("SYNC", []),
        ("WRITE", ["7", "blue-a-4"]),
        ("ACK", ["65535"]),
        ("NAK", ["12", "no", "tag"]),
        ("PING", []),
        ("PONG", []),
    ],
)
def test_round_trip_every_kind(kind: str, fields: list[str]) -> None:
    line = encode_frame(65535, kind, fields)
    assert line.endswith("\n") and len(line) <= MAX_LINE + 1
    assert decode_frame(line) == Frame(65535, kind, fields)
    assert decode_frame(line.encode()) == Frame(65535, kind, fields)
    assert decode_frame(line.rstrip("\n") + "\r\n") == Frame(65535, kind, fields)


def test_uid_is_normalised_to_upper_case() -> None:
    frame = decode_frame(sealed("4 P 2 04a1b2c3d4e5f6"))
    assert frame.fields == ["2", "04A1B2C3D4E5F6"]
    full = decode_frame(sealed("5 FULL 1/1 0=04a1b2c3d4e5f6 1=-"))
    assert parse_pairs(full) == {0: "04A1B2C3D4E5F6", 1: None}


def test_known_line_is_stable() -> None:
    # Pinned so that the firmware and the hub can never drift apart silently.
    assert encode_frame(0, "P", ["3", "04A1B2C3D4E5F6"]) == "0 P 3 04A1B2C3D4E5F6*57D5\n"


@pytest.mark.parametrize(
    ("line", "code", "words"),
    [
        ("1 P 3 04A1B2C3*0000", "checksum", "bad checksum"),
        ("1 P 3 04A1B2C3", "checksum", "no '*<crc>'"),
        ("1 PING*29b1", "checksum", "upper-case"),
        (sealed("1 BOGUS 3"), "unknown-kind", "unknown frame kind"),
        (sealed("1 P 3"), "field-count", "P takes 2"),
        (sealed("1 PING 3"), "field-count", "PING takes 0"),
        (sealed("1 FULL 1/1"), "field-count", "at least 2"),
        (sealed("1 P 3 04A1ZZ"), "bad-uid", "hex digits"),
        (sealed("1 P 3 04A1B2C"), "bad-uid", "hex digits"),
        (sealed("1 FULL 1/1 0=XYZ"), "bad-uid", "hex digits"),
        ("9" * (MAX_LINE + 1), "oversize", "limit is 512"),
        ("1 P 3 caf\u00e9*0000", "garbage", "non-ASCII"),
        (b"1 P \xff\xfe*0000", "garbage", "non-ASCII"),
        ("1 P\x00 3*0000", "garbage", "control character"),
        ("", "garbage", "empty line"),
        (sealed("1  PING"), "garbage", "double space"),
        (sealed("70000 PING"), "bad-seq", "above 65535"),
        (sealed("x PING"), "bad-seq", "decimal"),
        (sealed("1 P 99 04A1B2C3"), "bad-field", "reader index"),
        (sealed("1 P 01 04A1B2C3"), "bad-field", "leading zero"),
        (sealed("1 HEALTH 0=tired"), "bad-field", "HEALTH state"),
        (sealed("1 HEALTH 0=ok 0=ok"), "bad-field", "twice"),
        (sealed("1 FULL 2/1 0=-"), "bad-field", "part must be"),
        (sealed("1 FULL 0=- 1=-"), "bad-field", "<part>/<parts>"),
        (sealed("1 WRITE 3 bad/id"), "bad-field", "card id"),
        (sealed("1 HELLO 1.0 0"), "bad-field", "reader count"),
    ],
)
def test_every_rejection_names_the_problem(line: str | bytes, code: str, words: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_frame(line)
    assert caught.value.code == code
    assert words in caught.value.reason


def test_direction_filter() -> None:
    line = encode_frame(1, "SYNC", [])
    assert decode_frame(line, FROM_HUB).kind == "SYNC"
    with pytest.raises(ProtocolError, match="not expected"):
        decode_frame(line, FROM_FIRMWARE)


def test_encoder_refuses_what_the_decoder_would_reject() -> None:
    with pytest.raises(ProtocolError):
        encode_frame(1, "P", ["3", "nothex"])
    with pytest.raises(ProtocolError):
        encode_frame(1, "ERR", ["two words"])
    with pytest.raises(ProtocolError):
        encode_frame(70000, "PING", [])
    with pytest.raises(ProtocolError, match="limit"):
        encode_frame(1, "ERR", ["x" * 600])


def test_sender_wraps_seq_and_splits_full_state() -> None:
    sender = Sender(first_seq=65534)
    state = {reader: f"04A1B2C3D4E5{reader:02X}" for reader in range(40)}
    lines = sender.full(state, 40)
    assert len(lines) >= 2 and all(len(line) <= MAX_LINE + 1 for line in lines)
    frames = [decode_frame(line) for line in lines]
    assert [f.seq for f in frames] == [(65534 + i) % 65536 for i in range(len(frames))]
    assert [full_part(f) for f in frames] == [(i + 1, len(frames)) for i in range(len(frames))]
    merged: dict[int, str | None] = {}
    for frame in frames:
        merged.update(parse_pairs(frame))
    assert merged == state
    assert seq_gap(frames[0].seq, frames[1].seq) == 0
    assert seq_gap(65535, 2) == 2


def test_sender_full_state_marks_empty_readers() -> None:
    (line,) = Sender().full({1: "DEADBEEF"}, 3)
    assert parse_pairs(decode_frame(line)) == {0: None, 1: "DEADBEEF", 2: None}


def test_sender_health_is_split_and_complete() -> None:
    states = {reader: "flicker" for reader in range(64)}
    frames = [decode_frame(line) for line in Sender().health(states)]
    merged: dict[int, str | None] = {}
    for frame in frames:
        merged.update(parse_pairs(frame))
    assert merged == states


@given(st.one_of(st.text(max_size=600), st.binary(max_size=600)))
def test_fuzz_any_line_gives_frame_or_protocol_error(line: str | bytes) -> None:
    try:
        frame = decode_frame(line)
    except ProtocolError as error:
        assert error.reason and error.code
    else:
        assert isinstance(frame, Frame)


@given(
    st.lists(
        st.sampled_from(["1", "P", "FULL", "HEALTH", "0=ok", "04A1B2C3", "3", "1/1", "0=-", "x"]),
        max_size=8,
    )
)
def test_fuzz_sealed_token_soup(tokens: list[str]) -> None:
    # Correct checksums, so the field validation itself is what gets fuzzed.
    line = sealed(" ".join(tokens))
    try:
        frame = decode_frame(line)
    except ProtocolError:
        return
    assert encode_frame(frame.seq, frame.kind, frame.fields) == line


@given(st.integers(0, 65535), st.integers(0, 63), st.binary(min_size=7, max_size=7))
def test_fuzz_round_trip_placed(seq: int, reader: int, uid: bytes) -> None:
    line = encode_frame(seq, "P", [str(reader), uid.hex().upper()])
    assert decode_frame(line) == Frame(seq, "P", [str(reader), uid.hex().upper()])

# ruff: noqa: UP031, RUF005 -- MicroPython: %-formatting and list concatenation work on every port
"""USB-serial line protocol between the Pico firmware and the hub.

Runs unchanged on MicroPython and CPython (no typing imports, no dataclasses,
no f-strings; annotations only in signatures, which MicroPython ignores).

Frame (one ASCII line, terminated by ``\\n``; a ``\\r`` before it is tolerated)::

    <seq> <KIND> <field> <field> ...*<crc>

- ``seq``: decimal 0..65535, a wrapping counter per sender.
- ``crc``: CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of every byte before
  the ``*``, as 4 upper-case hex digits.
- Tokens are separated by exactly one space; a line (without its terminator)
  is at most ``MAX_LINE`` characters of printable ASCII.

Firmware -> hub:

- ``HELLO <fw_version> <n_readers>``            sent on boot
- ``P <reader> <uid>``                          tag placed (confirmed)
- ``R <reader> <uid>``                          tag removed (confirmed)
- ``FULL <part>/<parts> <reader>=<uid|-> ...``  full state of every reader, on boot
  and on ``SYNC``; split over ``parts`` consecutive frames so that a line stays
  under ``MAX_LINE`` (36 occupied readers with 7-byte UIDs need ~650 chars).
  Every reader appears in exactly one part; ``-`` means empty.
- ``HEALTH <reader>=<ok|silent|flicker|absent> ...``  each frame self-contained,
  split like FULL when long (no part marker needed).
- ``ACK <seq>`` / ``NAK <seq> <reason...>``     answer to a hub ``WRITE``
- ``PAWNS <mask>``                              positions with a pawn (pawn sensors fitted
  only): 5 upper-case hex digits, bit p = perimeter position p; on change (debounced),
  after every FULL report
- ``STATS <name>=<integer> ...``                the firmware's own timing: sweeps counted,
  sweep mean and max (us), us per poll by kind (empty, probe, verify, acquire), CPU MHz;
  every ``HEALTH_EVERY`` sweeps and on ``SYNC``
- ``PONG``                                      answer to ``PING``
- ``ERR <text...>``                             firmware-side problem, free text

Hub -> firmware: ``SYNC`` (send FULL now), ``WRITE <reader> <card_id>``,
``PING``.

A reader index is a decimal 0..63. A UID is 4, 7 or 10 bytes as hex
(8, 14 or 20 hex digits); decoding normalises it to upper case.
"""

MAX_LINE = 512
SEQ_MODULO = 65536
MAX_READER = 63

HEALTH_STATES = ("ok", "silent", "flicker", "absent")
EMPTY = "-"

FROM_FIRMWARE = ("HELLO", "P", "R", "FULL", "HEALTH", "PAWNS", "STATS", "ACK", "NAK", "PONG",
                 "ERR")
FROM_HUB = ("SYNC", "WRITE", "PING")

# kind -> (minimum field count, maximum field count or -1 for "no limit")
_FIELD_COUNTS = {
    "HELLO": (2, 2),
    "P": (2, 2),
    "R": (2, 2),
    "FULL": (2, -1),
    "HEALTH": (1, -1),
    "PAWNS": (1, 1),
    "STATS": (1, -1),
    "ACK": (1, 1),
    "NAK": (2, -1),
    "PONG": (0, 0),
    "ERR": (1, -1),
    "SYNC": (0, 0),
    "WRITE": (2, 2),
    "PING": (0, 0),
}
KINDS = tuple(_FIELD_COUNTS)

_HEX = "0123456789ABCDEF"
_HEX_ANY = "0123456789ABCDEFabcdef"
_DIGITS = "0123456789"
_UID_HEX_LENGTHS = (8, 14, 20)
_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-+"
MAX_CARD_ID = 40
_CARD_ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-"


class ProtocolError(ValueError):
    """A line that is not a valid frame. ``code`` is a short category for
    counting rejects (checksum, unknown-kind, field-count, bad-uid, oversize,
    garbage, bad-seq, bad-field); ``reason`` is the human-readable message."""

    def __init__(self, reason: str, code: str = "bad-field") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code

    def __str__(self) -> str:
        return self.reason


class Frame:
    """A decoded frame: ``seq`` (int), ``kind`` (str), ``fields`` (list of str)."""

    def __init__(self, seq: int, kind: str, fields: list) -> None:
        self.seq = seq
        self.kind = kind
        self.fields = fields

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Frame)
            and self.seq == other.seq
            and self.kind == other.kind
            and list(self.fields) == list(other.fields)
        )

    def __hash__(self) -> int:
        return hash((self.seq, self.kind, tuple(self.fields)))

    def __repr__(self) -> str:
        return "Frame(%d, %r, %r)" % (self.seq, self.kind, list(self.fields))

    def text(self) -> str:
        """Free text of ERR (all fields) or NAK (fields after the seq)."""
        if self.kind == "NAK":
            return " ".join(self.fields[1:])
        return " ".join(self.fields)


# ---------------------------------------------------------------- CRC-16/CCITT-FALSE


def _make_crc_table() -> list:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table.append(crc)
    return table


_CRC_TABLE = _make_crc_table()


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, xorout 0.
    ``crc16(b"123456789") == 0x29B1``."""
    crc = 0xFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ byte) & 0xFF]
    return crc


# ---------------------------------------------------------------- field checks


def next_seq(seq: int) -> int:
    return (seq + 1) % SEQ_MODULO


def seq_gap(previous: int, current: int) -> int:
    """Frames missing between two received seqs (0 when consecutive), wrap-aware."""
    return (current - previous - 1) % SEQ_MODULO


def is_hex_uid(text: str) -> bool:
    if len(text) not in _UID_HEX_LENGTHS:
        return False
    return all(ch in _HEX_ANY for ch in text)


def _parse_reader(text: str) -> int:
    if not text or len(text) > 2 or not all(ch in _DIGITS for ch in text):
        raise ProtocolError("reader index %r is not a number 0..%d" % (text, MAX_READER))
    if len(text) > 1 and text[0] == "0":
        raise ProtocolError("reader index %r has a leading zero" % text)
    value = int(text)
    if value > MAX_READER:
        raise ProtocolError("reader index %d is above %d" % (value, MAX_READER))
    return value


def _check_uid(text: str) -> str:
    if not is_hex_uid(text):
        raise ProtocolError(
            "uid %r is not 8, 14 or 20 hex digits (a 4, 7 or 10 byte UID)" % text, "bad-uid"
        )
    return text.upper()


def _check_token(text: str, what: str) -> None:
    if not text or not all(ch in _TOKEN_CHARS for ch in text):
        raise ProtocolError("%s %r has characters outside [A-Za-z0-9._:-+]" % (what, text))


def check_card_id(card_id: str) -> str:
    if not card_id or len(card_id) > MAX_CARD_ID:
        raise ProtocolError("card id %r must be 1..%d characters" % (card_id, MAX_CARD_ID))
    for ch in card_id:
        if ch not in _CARD_ID_CHARS:
            raise ProtocolError("card id %r has a character outside [A-Za-z0-9._:-]" % card_id)
    return card_id


def parse_pawn_mask(text: str) -> int:
    """``PAWNS`` field -> bit mask of the 20 perimeter positions."""
    if len(text) != 5 or not all(ch in _HEX for ch in text):
        raise ProtocolError("pawn mask %r is not 5 upper-case hex digits" % text)
    value = int(text, 16)
    if value >> 20:
        raise ProtocolError("pawn mask %r sets a position above 19" % text)
    return value


def _split_pair(text: str) -> tuple:
    eq = text.find("=")
    if eq <= 0 or eq == len(text) - 1 or text.find("=", eq + 1) >= 0:
        raise ProtocolError("field %r is not <reader>=<value>" % text)
    return _parse_reader(text[:eq]), text[eq + 1 :]


def _parse_seq(text: str) -> int:
    if not text or len(text) > 5 or not all(ch in _DIGITS for ch in text):
        raise ProtocolError("sequence number %r is not a decimal 0..65535" % text, "bad-seq")
    value = int(text)
    if value >= SEQ_MODULO:
        raise ProtocolError("sequence number %d is above 65535" % value, "bad-seq")
    return value


def _parse_part(text: str) -> tuple:
    slash = text.find("/")
    if slash <= 0:
        raise ProtocolError("FULL part %r is not <part>/<parts>" % text)
    part_text, parts_text = text[:slash], text[slash + 1 :]
    if not (part_text.isdigit() and parts_text.isdigit()) or len(text) > 5:
        raise ProtocolError("FULL part %r is not <part>/<parts>" % text)
    part, parts = int(part_text), int(parts_text)
    if not 1 <= part <= parts:
        raise ProtocolError("FULL part %r: part must be 1..parts" % text)
    return part, parts


def _check_fields(kind: str, fields: list) -> list:
    """Validate the fields of ``kind``; return them normalised (UIDs upper-cased)."""
    low, high = _FIELD_COUNTS[kind]
    count = len(fields)
    if count < low or (high >= 0 and count > high):
        if high == low:
            want = "%d" % low
        elif high < 0:
            want = "at least %d" % low
        else:
            want = "%d..%d" % (low, high)
        raise ProtocolError("%s takes %s field(s), got %d" % (kind, want, count), "field-count")
    out = list(fields)
    if kind in ("P", "R"):
        _parse_reader(fields[0])
        out[1] = _check_uid(fields[1])
    elif kind == "HELLO":
        _check_token(fields[0], "firmware version")
        n = fields[1]
        if not n.isdigit() or not 1 <= int(n) <= MAX_READER + 1 or len(n) > 2:
            raise ProtocolError("HELLO reader count %r is not 1..%d" % (n, MAX_READER + 1))
    elif kind == "FULL":
        _parse_part(fields[0])
        seen = {}
        for i in range(1, count):
            reader, value = _split_pair(fields[i])
            if reader in seen:
                raise ProtocolError("FULL lists reader %d twice" % reader)
            seen[reader] = True
            if value != EMPTY:
                out[i] = "%d=%s" % (reader, _check_uid(value))
    elif kind == "HEALTH":
        seen = {}
        for field in fields:
            reader, value = _split_pair(field)
            if reader in seen:
                raise ProtocolError("HEALTH lists reader %d twice" % reader)
            seen[reader] = True
            if value not in HEALTH_STATES:
                raise ProtocolError(
                    "HEALTH state %r of reader %d is not one of %s"
                    % (value, reader, "/".join(HEALTH_STATES))
                )
    elif kind == "PAWNS":
        parse_pawn_mask(fields[0])
    elif kind == "STATS":
        for field in fields:
            name, _, value = field.partition("=")
            if not name or not value.isdigit():
                raise ProtocolError("STATS field %r is not name=integer" % field, "bad-field")
    elif kind in ("ACK", "NAK"):
        _parse_seq(fields[0])
    elif kind == "WRITE":
        _parse_reader(fields[0])
        check_card_id(fields[1])
    return out


# ---------------------------------------------------------------- encode / decode


def encode_frame(seq: int, kind: str, fields: list | tuple = ()) -> str:
    """Build one frame, ``\\n`` included. Raises ProtocolError for anything
    ``decode_frame`` would reject, so a sender can never emit a bad line."""
    if not isinstance(seq, int) or not 0 <= seq < SEQ_MODULO:
        raise ProtocolError("sequence number %r is not 0..65535" % (seq,), "bad-seq")
    if kind not in _FIELD_COUNTS:
        raise ProtocolError("unknown frame kind %r" % (kind,), "unknown-kind")
    fields = [str(f) for f in fields]
    for field in fields:
        if not field or " " in field:
            raise ProtocolError("field %r is empty or contains a space" % field, "garbage")
    fields = _check_fields(kind, fields)
    body = " ".join(["%d" % seq, kind] + fields)
    _check_printable(body)
    line = "%s*%04X" % (body, crc16(body.encode()))
    if len(line) > MAX_LINE:
        raise ProtocolError(
            "frame is %d characters, the limit is %d" % (len(line), MAX_LINE), "oversize"
        )
    return line + "\n"


def _check_printable(text: str) -> None:
    for i, ch in enumerate(text):
        code = ord(ch)
        if code < 0x20 or code > 0x7E:
            raise ProtocolError(
                "non-ASCII or control character 0x%02X at column %d" % (code, i), "garbage"
            )


def decode_frame(line: object, kinds: tuple = ()) -> Frame:
    """Parse one line (str or bytes, with or without its terminator).

    ``kinds``: when given, only these kinds are accepted (e.g. ``FROM_FIRMWARE``
    on the hub). Raises ProtocolError naming the problem; never anything else."""
    if isinstance(line, (bytes, bytearray)):
        if len(line) > MAX_LINE + 2:
            raise ProtocolError(
                "line is %d bytes, the limit is %d" % (len(line), MAX_LINE), "oversize"
            )
        for i, byte in enumerate(line):
            if byte > 0x7E:
                raise ProtocolError("non-ASCII byte 0x%02X at column %d" % (byte, i), "garbage")
        line = bytes(line).decode()
    elif not isinstance(line, str):
        raise ProtocolError("a frame must be str or bytes, got %s" % type(line).__name__, "garbage")
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    if len(line) > MAX_LINE:
        raise ProtocolError(
            "line is %d characters, the limit is %d" % (len(line), MAX_LINE), "oversize"
        )
    if not line:
        raise ProtocolError("empty line", "garbage")
    _check_printable(line)
    star = line.rfind("*")
    if star < 0:
        raise ProtocolError("no '*<crc>' checksum at the end of the line", "checksum")
    body, crc_text = line[:star], line[star + 1 :]
    if len(crc_text) != 4 or not all(ch in _HEX for ch in crc_text):
        raise ProtocolError("checksum %r is not 4 upper-case hex digits" % crc_text, "checksum")
    expected = crc16(body.encode())
    if int(crc_text, 16) != expected:
        raise ProtocolError(
            "bad checksum: line says %s, content gives %04X" % (crc_text, expected), "checksum"
        )
    tokens = body.split(" ")
    for token in tokens:
        if not token:
            raise ProtocolError("empty token (leading, trailing or double space)", "garbage")
    if len(tokens) < 2:
        raise ProtocolError("a frame needs <seq> <KIND>", "field-count")
    seq = _parse_seq(tokens[0])
    kind = tokens[1]
    if kind not in _FIELD_COUNTS:
        raise ProtocolError("unknown frame kind %r" % kind, "unknown-kind")
    if kinds and kind not in kinds:
        raise ProtocolError(
            "frame kind %s is not expected in this direction" % kind, "unknown-kind"
        )
    return Frame(seq, kind, _check_fields(kind, tokens[2:]))


# ---------------------------------------------------------------- field helpers


def parse_pairs(frame: Frame) -> dict:
    """FULL -> {reader: uid or None}; HEALTH -> {reader: state}."""
    fields = frame.fields[1:] if frame.kind == "FULL" else frame.fields
    result = {}
    for field in fields:
        reader, value = _split_pair(field)
        result[reader] = None if (frame.kind == "FULL" and value == EMPTY) else value
    return result


def full_part(frame: Frame) -> tuple:
    """(part, parts) of a FULL frame, both 1-based."""
    return _parse_part(frame.fields[0])


def _chunk(pairs: list, reserved: int) -> list:
    """Split pair fields into groups whose joined length stays within the line limit."""
    budget = MAX_LINE - reserved
    chunks = []
    current = []
    used = 0
    for pair in pairs:
        cost = len(pair) + 1
        if current and used + cost > budget:
            chunks.append(current)
            current = []
            used = 0
        current.append(pair)
        used += cost
    if current or not chunks:
        chunks.append(current)
    return chunks


# "65535 FULL 99/99 " + "*XXXX" leaves room; also used for HEALTH.
_RESERVED = 32


class Sender:
    """Owns one sender's wrapping seq counter and builds its frames."""

    def __init__(self, first_seq: int = 0) -> None:
        self.seq = first_seq % SEQ_MODULO

    def _take(self) -> int:
        seq = self.seq
        self.seq = next_seq(seq)
        return seq

    def frame(self, kind: str, fields: list | tuple = ()) -> str:
        line = encode_frame(self.seq, kind, fields)  # validate before using the seq
        self._take()
        return line

    def full(self, state: dict, n_readers: int) -> list:
        """FULL frames covering readers 0..n_readers-1 (``state``: reader -> uid or None)."""
        pairs = []
        for reader in range(n_readers):
            uid = state.get(reader)
            pairs.append("%d=%s" % (reader, uid if uid else EMPTY))
        chunks = _chunk(pairs, _RESERVED)
        parts = len(chunks)
        return [
            self.frame("FULL", ["%d/%d" % (i + 1, parts)] + chunk) for i, chunk in enumerate(chunks)
        ]

    def health(self, states: dict) -> list:
        """HEALTH frames for ``states``: reader -> ok/silent/flicker/absent."""
        pairs = ["%d=%s" % (reader, states[reader]) for reader in sorted(states)]
        if not pairs:
            return []
        return [self.frame("HEALTH", chunk) for chunk in _chunk(pairs, _RESERVED)]

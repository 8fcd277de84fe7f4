"""Pawn sensors: DRV5032 Hall switches through three 74HC165 (pin-level simulator)."""

import pytest

from firmware.mfrc522_sim import SimPawnBoard, Timings
from firmware.pawns import PawnSensors, positions
from firmware.protocol import ProtocolError, decode_frame, encode_frame, parse_pawn_mask
from firmware.scan import Scanner
from firmware.sweep import build


def rig(fitted: bool = True) -> tuple[SimPawnBoard, Scanner, list[str]]:
    table, scanner, lines = build(4, Timings(tag_power_up_us=300), "fast", 300, 1)
    board = SimPawnBoard(table.clock, table.timings, fitted=fitted)
    scanner.pawns = PawnSensors(board.load, board.clock, board.data)
    return board, scanner, lines


def sensors(scanner: Scanner) -> PawnSensors:
    assert isinstance(scanner.pawns, PawnSensors)
    return scanner.pawns


def pawn_lines(lines: list[str]) -> list[list[int]]:
    return [positions(parse_pawn_mask(f.fields[0])) for f in map(decode_frame, lines)
            if f.kind == "PAWNS"]


def test_sensors_read_the_magnets_through_the_shift_registers() -> None:
    board, scanner, _lines = rig()
    board.magnets = {0, 7, 19}
    mask = sensors(scanner).read()
    assert mask is not None and positions(mask) == [0, 7, 19]
    board.fitted = False  # no board: the signature is missing
    assert sensors(scanner).read() is None


def test_pawn_moves_are_reported_debounced_and_in_every_full_report() -> None:
    board, scanner, lines = rig()
    board.magnets = {0, 5, 10, 15}
    scanner.boot()
    assert pawn_lines(lines) == [[0, 5, 10, 15]]  # after FULL
    lines.clear()
    board.magnets = {0, 5, 10, 17}
    scanner.sweep()
    assert pawn_lines(lines) == []  # one read is not enough (a pawn sliding past)
    scanner.sweep()
    assert pawn_lines(lines) == [[0, 5, 10, 17]]
    scanner.sweep()
    assert pawn_lines(lines) == [[0, 5, 10, 17]]  # no repeat
    lines.clear()
    scanner.send_full()
    assert pawn_lines(lines) == [[0, 5, 10, 17]]


def test_without_sensors_nothing_about_pawns_is_said() -> None:
    _board, scanner, lines = rig(fitted=False)
    scanner.boot()
    for _ in range(3):
        scanner.sweep()
    assert pawn_lines(lines) == []


def test_pawns_line_is_checked() -> None:
    assert decode_frame(encode_frame(3, "PAWNS", ["08421"])).fields == ["08421"]
    for bad in ("8421", "FFFFFF", "G0000", "1FFFFF", "00a00"):
        with pytest.raises(ProtocolError):
            encode_frame(3, "PAWNS", [bad])

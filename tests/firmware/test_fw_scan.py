"""The firmware scan loop under CPython against the reader simulator."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.mfrc522_sim import Faults, SimTable
from firmware.protocol import Frame, decode_frame, encode_frame, parse_pairs
from firmware.scan import FW_VERSION, MODE_FAST, MODE_FULL, MODE_NAIVE, SETTLE_US, Demux, Scanner
from firmware.sweep import build

N = 8


def uid(reader: int, variant: int = 0) -> str:
    return f"04A1B2C3D4{variant:02X}{reader:02X}"


def rig(mode: str = MODE_FAST, n: int = N) -> tuple[SimTable, Scanner, list[str]]:
    return build(n, SimTable(1).timings, mode, SETTLE_US, 1)


def frames(lines: list[str]) -> list[Frame]:
    return [decode_frame(line) for line in lines]


def changes(lines: list[str]) -> list[tuple[str, int, str]]:
    return [(f.kind, int(f.fields[0]), f.fields[1]) for f in frames(lines) if f.kind in "PR"]


def run(scanner: Scanner, sweeps: int) -> None:
    for _ in range(sweeps):
        scanner.sweep()


def test_boot_announces_then_reports_full_state() -> None:
    table, scanner, lines = rig()
    table.place(2, uid(2))
    scanner.boot()
    kinds = [f.kind for f in frames(lines)]
    assert kinds[:3] == ["HELLO", "FULL", "HEALTH"]
    assert frames(lines)[0].fields == [FW_VERSION, str(N)]
    full = parse_pairs(frames(lines)[1])
    assert full == {r: (uid(2) if r == 2 else None) for r in range(N)}
    assert [f.seq for f in frames(lines)] == list(range(len(lines)))


@pytest.mark.parametrize("mode", [MODE_FAST, MODE_FULL, MODE_NAIVE])
def test_place_remove_and_swap(mode: str) -> None:
    table, scanner, lines = rig(mode)
    scanner.boot()
    lines.clear()
    table.place(1, uid(1))
    table.place(5, uid(5))
    run(scanner, 3)
    table.remove(1)
    run(scanner, 3)
    table.remove(5)
    run(scanner, 1)  # the cell is empty for one poll at least: a human swap
    table.place(5, uid(5, 1))
    run(scanner, 3)
    assert changes(lines) == [
        ("P", 1, uid(1)),
        ("P", 5, uid(5)),
        ("R", 1, uid(1)),
        ("R", 5, uid(5)),
        ("P", 5, uid(5, 1)),
    ]
    assert table.max_fields_on == 1
    assert table.spi.contentions == 0


def test_instant_swap_is_caught_by_round_robin_verification() -> None:
    table, scanner, lines = rig()
    table.place(3, uid(3))
    scanner.boot()
    lines.clear()
    table.remove(3)
    table.place(3, uid(3, 7))  # swapped between two polls: never seen empty
    run(scanner, N + 2)
    assert changes(lines) == [("R", 3, uid(3)), ("P", 3, uid(3, 7))]


def test_only_the_polled_reader_has_its_antenna_on() -> None:
    table, scanner, _lines = rig()
    for reader in range(0, N, 2):
        table.place(reader, uid(reader))
    scanner.boot()
    run(scanner, 3)
    assert table.max_fields_on == 1
    # Every field-on is followed by its own field-off before the next one.
    log = table.field_log
    assert len(log) >= 2 * 5 * N
    for (_t1, on_reader, on), (_t2, off_reader, off) in zip(log[::2], log[1::2], strict=True):
        assert on and not off and on_reader == off_reader
    assert table.spi.contentions == 0


def test_faults_produce_no_false_events() -> None:
    table, scanner, lines = rig()
    for reader in range(N):
        table.place(reader, uid(reader))
    scanner.boot()
    lines.clear()
    table.faults(0).flicker = True  # present/absent on alternate polls
    for sweep in range(60):
        # Isolated single faults: a dropped reply every other sweep on reader 1,
        # a misread every third sweep on readers 2 (probe) and 3 (verified).
        table.faults(1).drop_probability = 1.0 if sweep % 2 else 0.0
        table.faults(2).misread_probability = 1.0 if sweep % 3 == 0 else 0.0
        table.faults(3).misread_probability = 1.0 if sweep % 3 == 1 else 0.0
        scanner.sweep()
    assert changes(lines) == []
    states = {}
    for f in frames(lines):
        if f.kind == "HEALTH":
            states.update(parse_pairs(f))
    assert states.get(0) == "flicker"
    assert scanner.tracker.state() == {r: uid(r) for r in range(N)}


def test_vanished_and_stuck_readers_reported_in_health_and_recover() -> None:
    table, scanner, lines = rig()
    table.place(4, uid(4))
    scanner.boot()
    lines.clear()
    table.faults(4).vanished = True
    table.faults(6).stuck = True
    run(scanner, 3)
    health: dict[int, str | None] = {}
    for f in frames(lines):
        if f.kind == "HEALTH":
            health.update(parse_pairs(f))
    assert health[4] == "absent"
    assert health[6] == "silent"
    assert changes(lines) == []  # a dead reader invents no removal
    table.faults(4).vanished = False
    table.faults(6).stuck = False
    lines.clear()
    run(scanner, 30)  # re-init is retried every REINIT_EVERY sweeps
    health = {}
    for f in frames(lines):
        if f.kind == "HEALTH":
            health.update(parse_pairs(f))
    assert health[4] == "ok" and health[6] == "ok"
    assert scanner.tracker.uid(4) == uid(4)


def test_hub_commands_sync_ping_write() -> None:
    table, scanner, lines = rig()
    tag = table.place(2, uid(2))
    scanner.boot()
    lines.clear()
    scanner.handle_line(encode_frame(10, "PING", []))
    scanner.handle_line(encode_frame(11, "SYNC", []))
    scanner.handle_line(encode_frame(12, "WRITE", ["2", "blue-a-4"]))
    scanner.handle_line(encode_frame(13, "WRITE", ["3", "blue-a-4"]))
    scanner.handle_line("12 WRITE 2 x*0000\n")
    got = frames(lines)
    kinds = [f.kind for f in got]
    assert kinds[0] == "PONG"
    assert "FULL" in kinds
    ack = next(f for f in got if f.kind == "ACK")
    assert ack.fields == ["12"]
    nak = next(f for f in got if f.kind == "NAK")
    assert nak.fields[0] == "13" and "no tag" in nak.text()
    err = next(f for f in got if f.kind == "ERR")
    assert "checksum" in err.text()
    assert b"blue-a-4" in bytes(tag.pages[16:48])
    assert table.max_fields_on == 1


def test_sweeps_stay_deterministic() -> None:
    first = rig()
    second = rig()
    for table, scanner, _ in (first, second):
        table.place(1, uid(1))
        scanner.boot()
        run(scanner, 4)
    assert first[0].clock.now_us == second[0].clock.now_us
    assert first[2] == second[2]


def test_single_reader_rig_does_not_alternate() -> None:
    """With one reader the field is back on within a millisecond; the field
    reset guard makes every poll start from IDLE, so a card left on the
    reader never reads present/absent on alternate polls."""
    table, scanner, lines = build(1, SimTable(1).timings, MODE_FAST, SETTLE_US, 0)  # probes only
    table.place(0, uid(0))
    scanner.boot()
    lines.clear()
    run(scanner, 20)
    assert changes(lines) == []
    assert scanner.tracker.uid(0) == uid(0)
    assert scanner.last_kind == ["probe"]


def test_demux_selects_exactly_one_reader_of_forty() -> None:
    table, scanner, _lines = rig(n=40)
    demux = scanner.demux
    assert isinstance(demux, Demux)
    for reader in [*range(40), 17, 3, 39, 0]:
        demux.select(reader)
        assert table.demux.selected() == []
        demux.cs(True)
        assert table.demux.selected() == [reader]
        demux.cs(False)
    assert table.demux.selected() == []


FAULT_KINDS = ("drop", "misread", "flicker")


@settings(max_examples=max(5, settings().max_examples // 4))
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["place", "remove", "swap"])),
        min_size=1,
        max_size=8,
    ),
    faults=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(FAULT_KINDS), st.integers(0, 3)),
        max_size=8,
    ),
)
def test_property_scan_loop_reports_exactly_the_true_changes(
    steps: list[tuple[int, str]], faults: list[tuple[int, str, int]]
) -> None:
    """Random placements, removals and swaps on 4 readers, each followed by 5
    sweeps, with at most one injected single fault (a dropped reply, a misread,
    a flicker) in one of the first 4 sweeps of each step window, so faults are
    never on consecutive polls: the firmware emits exactly the true changes."""
    table, scanner, lines = rig(n=4)
    scanner.boot()
    lines.clear()
    expected: list[tuple[str, int, str]] = []
    on_reader: dict[int, str] = {}
    variant = 0
    for index, (reader, action) in enumerate(steps):
        old = on_reader.get(reader)
        if action in ("remove", "swap") and old is not None:
            table.remove(reader)
            del on_reader[reader]
            expected.append(("R", reader, old))
            if action == "swap":
                run(scanner, 1)  # a person lifts one card, then lays another
        if action in ("place", "swap") and reader not in on_reader:
            variant += 1
            new = uid(reader, variant)
            table.place(reader, new)
            on_reader[reader] = new
            expected.append(("P", reader, new))
        fault = faults[index] if index < len(faults) else None
        for sweep in range(5):
            if fault is not None and sweep == fault[2]:
                chip = table.chips[fault[0]]
                if fault[1] == "drop":
                    chip.faults.drop_probability = 1.0
                elif fault[1] == "misread":
                    chip.faults.misread_probability = 1.0
                else:
                    chip.faults.flicker = True
                scanner.sweep()
                chip.faults = Faults()
            else:
                scanner.sweep()
    run(scanner, 3)
    assert changes(lines) == expected
    assert scanner.tracker.state() == {r: on_reader.get(r) for r in range(4)}


def test_a_write_between_sweeps_switches_the_warming_fields_off_first() -> None:
    """With 36 readers the next sweep's first fields warm up between sweeps; a WRITE to a
    reader near one of them must not have both fields on."""
    from firmware.scan import SCAN_ORDER
    from hub.layout import Layout

    table, scanner, lines = build(36, SimTable(1).timings, MODE_FAST, SETTLE_US, 1)
    table.neighbours = {frozenset(p) for p in Layout().neighbour_pairs()}
    target = next(r for r in range(32) if any(
        frozenset((r, w)) in table.neighbours for w in SCAN_ORDER[:3]))
    table.place(target, uid(target))
    scanner.boot()
    scanner.sweep()
    assert table.fields_on  # warming for the next sweep
    scanner.handle_line(encode_frame(3, "WRITE", [str(target), "blue-a-4"]))
    assert any(" ACK 3" in line for line in lines)
    assert table.crosstalk == 0

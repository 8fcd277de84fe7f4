"""The wiring as data (hardware/netlist.py): its checks pass, they catch broken wiring,
the generated tables in hardware/ are up to date, the firmware's pins and clock match."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from firmware.scan import SPI_HZ
from hardware import netlist
from hardware.netlist import RAIL, all_problems, build, outputs, spi_margin

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_wiring_passes_every_check() -> None:
    nl = build()
    assert all_problems(nl) == []
    readers = [p for p in nl.parts.values() if p.kind.startswith("MFRC522")]
    assert len(readers) == 36
    assert sum(p.kind.startswith("DRV5032") for p in nl.parts.values()) == 20


def test_generated_tables_are_up_to_date() -> None:
    stale = [str(path.relative_to(ROOT)) for path, text in outputs().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"run `python -m hardware.netlist --write`: {stale} are stale"


def test_firmware_pins_match_the_netlist() -> None:
    tree = ast.parse((ROOT / "firmware" / "main.py").read_text())
    consts: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and "PIN_" in ast.unparse(node.targets[0]):
            target, value = node.targets[0], ast.literal_eval(node.value)
            if isinstance(target, ast.Tuple):
                consts.update(zip([t.id for t in target.elts if isinstance(t, ast.Name)],
                                  value, strict=True))
            elif isinstance(target, ast.Name):
                consts[target.id] = value
    pins = netlist.PICO_PINS
    assert (consts["PIN_SCK"], consts["PIN_MOSI"], consts["PIN_MISO"]) == tuple(
        int(pins[s][2:]) for s in ("SCK", "MOSI", "MISO"))
    assert consts["PIN_ADDRESS"] == tuple(int(pins[f"A{i}"][2:]) for i in range(4))
    assert consts["PIN_BANKS"] == tuple(int(pins[f"/E1_{b}"][2:]) for b in range(3))
    assert consts["PIN_STROBE"] == int(pins["STROBE"][2:])
    assert consts["PIN_RESET"] == int(pins["RST"][2:])
    assert (consts["PIN_PAWN_LOAD"], consts["PIN_PAWN_CLOCK"], consts["PIN_PAWN_DATA"]) == tuple(
        int(pins[s][2:]) for s in ("PAWN_/PL", "PAWN_CP", "PAWN_Q"))


def test_the_chosen_clock_has_margin_and_4_mhz_would_not() -> None:
    chosen = spi_margin(SPI_HZ)
    assert SPI_HZ == 2_000_000 and chosen["margin"] >= 0.4  # 118 ns of 250 on estimates
    assert spi_margin(4_000_000)["margin"] < 0.1  # too thin on estimated figures
    assert netlist.MAX_SPI_HZ.value >= SPI_HZ


STAR = [0.15, 0.22, 0.29, 0.36, 0.43, 0.50]  # the first design: 6 cables on one output


def test_the_old_33_ohm_star_rings_back_through_the_threshold() -> None:
    """Issue 20 item 3: one 33 Ohm output driving 6 cables of 15-50 cm. In the lattice
    model SCK falls back below V_IH after crossing it at several readers."""
    problems = netlist.edge_problems(STAR, 33.0)
    assert len(problems) >= 3, problems
    assert all("falls back to" in p for p in problems)


@pytest.mark.parametrize("length_m", [0.05, 0.15, 0.30, 0.50])
def test_one_terminated_output_per_reader_gives_a_clean_edge(length_m: float) -> None:
    assert netlist.edge_problems([length_m], 68.0) == []
    wave = netlist.waveform(netlist.star_edge([length_m], 68.0)[0], 1.5)
    assert wave[-1] == pytest.approx(3.3, abs=0.05)  # settles at the rail


def test_an_unterminated_single_cable_rings_too() -> None:
    """The check is not a count of readers: one cable with no series resistor rings."""
    assert netlist.edge_problems([0.5], 0.0)


def test_the_lattice_ends_every_reader_of_a_star_at_the_rail() -> None:
    for steps in netlist.star_edge(STAR, 33.0, t_end_ns=400.0):
        assert sum(v for _t, v in steps) == pytest.approx(3.3, abs=0.1)  # waves < 1 mV dropped


def test_the_netlist_fails_with_the_old_sck_star() -> None:
    """Six readers back on one SCK output with its 33 Ohm: the netlist's edge check (and
    its load budget) catch it."""
    nl = build()
    shared = "B0_SCK_J1_S"
    for reader in range(2, 7):
        net = nl.net_of(f"J{reader}", "SCK")
        assert net is not None
        nl.nets[net].remove((f"J{reader}", "SCK"))
        nl.nets[shared].append((f"J{reader}", "SCK"))
    resistor = next(r for r, _p in nl.nets[shared] if r.startswith("R"))
    nl.parts[resistor].value = "33R"
    problems = all_problems(nl)
    assert any("B0_SCK_J1: reader" in p and "falls back to" in p for p in problems), problems
    assert any("6 readers on one buffer output, budget 1" in p for p in problems)


def test_the_bom_in_the_docs_is_the_generated_one_with_its_total() -> None:
    nl = build()
    table = netlist.bom_table(nl)
    doc = (ROOT / "hardware" / "bom.md").read_text(encoding="utf-8")
    assert table in doc  # one source: bom.md's table is the netlist's
    assert doc.count("| qty |") == 1  # and no second, hand-kept table beside it
    total = sum(qty * item.eur for _g, qty, _k, item in netlist.bom_lines(nl))
    assert f"**{total:.2f}**" in table and total > 0
    counted = {kind: qty for _g, qty, kind, _i in netlist.bom_lines(nl)}
    assert counted["MFRC522 reader module (RC522)"] == 36
    assert counted["resistor 68R"] == 36  # one SCK termination per reader
    assert counted["capacitor 100n"] == sum(  # one per IC, module and sensor
        1 for p in nl.parts.values()
        if any(r == "power" for r in p.pins.values()) and p.ref != "U1")
    assert counted["capacitor 10u"] == 36


def test_a_part_with_no_price_is_refused() -> None:
    nl = build()
    nl.add(netlist.Part("U99", "mystery chip", {"VCC": "power"}))
    with pytest.raises(ValueError, match="no CATALOGUE entry"):
        netlist.bom_lines(nl)


def test_every_part_is_on_a_board() -> None:
    boards = {p.board for p in build().parts.values()}
    assert "" not in boards
    assert {"controller", "bank0", "bank1", "bank2", "reader", "pawn board",
            "sensor"} <= boards


def test_the_cable_pinout_has_a_ground_beside_each_fast_line() -> None:
    nl = build()
    pinout = netlist.pinout_table(nl)
    assert "| 3 | SCK | SCK |" in pinout and "| 9 | NSS | SDA | CS0 |" in pinout
    assert netlist.check_cable(nl) == []


def test_a_cable_without_interleaved_grounds_is_caught(
        monkeypatch: pytest.MonkeyPatch) -> None:
    flat = (("+3V3", "3.3V"), ("SCK", "SCK"), ("MOSI", "MOSI"), ("MISO", "MISO"),
            ("NSS", "SDA"), ("RST", "RST"), ("GND", "GND"), ("GND", "GND"), ("GND", "GND"),
            ("GND", "GND"))
    monkeypatch.setattr(netlist, "CABLE", flat)
    problems = netlist.check_cable(build())
    assert any("(MOSI) has no ground beside it" in p for p in problems), problems


def test_a_header_pin_on_the_wrong_net_is_caught() -> None:
    nl = build()
    _swap(nl, ("P4", "3"), ("P4", "5"))  # SCK and MOSI crossed in one cable
    assert any(p.startswith("P4.3: on B0_MOSI0_S") for p in all_problems(nl))



def test_every_number_names_its_source() -> None:
    for number in [*netlist.TIMING.values(), netlist.MAX_SPI_HZ]:
        assert number.source.split(":")[0] in ("datasheet", "estimate", "choice")


def broken(change: str) -> list[str]:
    nl = build()
    if change == "shared chip select":
        nl.nets["CS0"].append(("J2", "SDA"))
        nl.nets["CS1"].remove(("J2", "SDA"))
    elif change == "miso ungated":
        nl.nets["MISO_BUS"].append(("J5", "MISO"))
    elif change == "reader on 5 V":
        nl.nets[RAIL].remove(("J7", "3.3V"))
        nl.nets["+5V"].append(("J7", "3.3V"))
    elif change == "no strobe pull-up":
        nl.nets["PICO_STROBE"] = [(r, p) for r, p in nl.nets["PICO_STROBE"]
                                  if not r.startswith("R")]
        nl.nets["STROBE"] = [(r, p) for r, p in nl.nets["STROBE"] if not r.startswith("U2")]
    elif change == "sck straight from the pico":
        net = nl.net_of("J3", "SCK")
        assert net is not None
        nl.nets[net].remove(("J3", "SCK"))
        nl.nets["PICO_SCK"].append(("J3", "SCK"))
    elif change == "too many readers on one output":
        for reader in range(6, 9):  # readers 6..8 moved onto the first MOSI output
            net = nl.net_of(f"J{reader + 1}", "MOSI")
            assert net is not None
            nl.nets[net].remove((f"J{reader + 1}", "MOSI"))
            nl.nets["B0_MOSI0_S"].append((f"J{reader + 1}", "MOSI"))
    elif change == "pico drives a HC input":
        nl.nets["PICO_A0"].append(("U4", "A0"))
    return all_problems(nl)


@pytest.mark.parametrize("change, expected", [
    ("shared chip select", "share a chip select"),
    ("miso ungated", "raw MISO reaches something"),
    ("reader on 5 V", "one logic domain"),
    ("no strobe pull-up", "no driver and no pull resistor"),
    ("sck straight from the pico", "SCK does not come from a bank buffer"),
    ("too many readers on one output", "9 readers on one buffer output, budget 6"),
    ("pico drives a HC input", "no Ioff"),
])
def test_the_checks_catch_broken_wiring(change: str, expected: str) -> None:
    problems = broken(change)
    assert any(expected in p for p in problems), problems


def _swap(nl: netlist.Netlist, a: tuple[str, str], b: tuple[str, str]) -> None:
    """Swap the nets of two pins (a wiring mistake at one place)."""
    net_a, net_b = nl.net_of(*a), nl.net_of(*b)
    assert net_a and net_b
    nl.nets[net_a].remove(a)
    nl.nets[net_b].remove(b)
    nl.nets[net_a].append(b)
    nl.nets[net_b].append(a)


def _drop_resistor_on(nl: netlist.Netlist, net: str) -> None:
    """Leave out the pull resistor on ``net`` (both its pins)."""
    ref = next(r for r, _p in nl.nets[net] if nl.parts[r].kind.startswith("resistor"))
    for pins in nl.nets.values():
        pins[:] = [(r, p) for r, p in pins if r != ref]
    del nl.parts[ref]


def mutated(change: str) -> list[str]:
    nl = build()
    if change == "strobe pull-up left out":
        _drop_resistor_on(nl, "PICO_STROBE")
    elif change == "RST pull-down left out":
        _drop_resistor_on(nl, "PICO_RST")
    elif change == "SCK and MOSI swapped at a reader":
        _swap(nl, ("J5", "SCK"), ("J5", "MOSI"))
    elif change == "a bank's SCK fed from MOSI":
        buffer, pin = next((r, p) for r, p in nl.nets["PICO_SCK"] if r == "U8")
        nl.nets["PICO_SCK"].remove((buffer, pin))
        nl.nets["PICO_MOSI"].append((buffer, pin))
    elif change == "A0 and A1 crossed at a decoder":
        _swap(nl, ("U5", "A0"), ("U5", "A1"))
    elif change == "A0 and A1 crossed at the control buffer":
        ref_a0 = next((r, p) for r, p in nl.nets["PICO_A0"] if r != "U1")
        ref_a1 = next((r, p) for r, p in nl.nets["PICO_A1"] if r != "U1")
        _swap(nl, ref_a0, ref_a1)
    elif change == "gate input pull-down left out":
        _drop_resistor_on(nl, "MISO7")
    return all_problems(nl)


@pytest.mark.parametrize("change, expected", [
    ("strobe pull-up left out", "PICO_STROBE: needs its pull resistor to"),
    ("RST pull-down left out", "PICO_RST: needs its pull resistor to GND"),
    ("SCK and MOSI swapped at a reader", "J5: its SCK pin is fed from PICO_MOSI"),
    ("a bank's SCK fed from MOSI", "its SCK pin is fed from PICO_MOSI"),
    ("A0 and A1 crossed at a decoder", "U5.A0: on A1"),
    ("A0 and A1 crossed at the control buffer", "address lines crossed"),
    ("gate input pull-down left out", "J8: MISO gate input MISO7 floats"),
])
def test_each_wiring_mistake_of_issue_20_is_caught(change: str, expected: str) -> None:
    """The netlist is the build's source: each mistake a maker could make in it is
    found by the checks (issue 20 lists these five; the checks before missed them)."""
    problems = mutated(change)
    assert any(expected in p for p in problems), problems

"""The table's wiring, once, as data: parts (passives, regulator, cable headers, each on
its board), pins and nets, with the checks a board review would do, the SCK edge model,
the SPI timing margin, the BOM with prices and the reader cable's pinout, and the tables
of hardware/wiring.md, hardware/bom.md and hardware/connections.csv generated from it.

    python -m hardware.netlist            # run the checks, print the timing margin
    python -m hardware.netlist --write    # regenerate connections.csv and the marked
                                          # sections of wiring.md and bom.md
    python -m hardware.netlist --bom      # the whole BOM with prices and its total
    python -m hardware.netlist --pinout   # the reader cable, wire by wire

tests/hardware/test_netlist.py runs the checks and fails when a generated table is stale.

Every number below names its source: ``datasheet`` (the part's datasheet, to be checked
against the revision bought), ``estimate`` (an engineering estimate to measure on the
bench, hardware/bench-test.md) or ``choice`` (a design decision).
"""

from __future__ import annotations

import argparse
import csv
import heapq
import io
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

HERE = Path(__file__).resolve().parent
Role = Literal["in", "out", "tristate", "power", "ground", "passive", "nc"]

N_READERS = 36
READERS_PER_BANK = 16
N_BANKS = 3
N_PAWN_POSITIONS = 20
# Readers per buffer output (choice): SCK/MOSI switch at the SPI clock, RST is static.
SCK_MOSI_LOADS = 6
RST_LOADS = 8
# SCK gets one source-terminated buffer output per reader (issue 20: a star of cables
# behind one series resistor rings back through the input threshold, edge_check below).
SCK_LOADS = 1
SCK_FANOUT_PER_CHIP = 8
RAIL = "+3V3"
# Series resistor of each SCK output: buffer output (~25 Ohm) + 68 Ohm ~ the cable's Z0,
# so the reflection from the reader's open end is absorbed at the source.
SCK_SERIES = "68R"
GND = "GND"


@dataclass(frozen=True)
class Number:
    value: float
    unit: str
    source: str  # "datasheet: ...", "estimate: ...", "choice: ..."


# Timing of one SPI bit through the buffered bus, and the SCK line model (MISO is sampled
# half a clock after SCK falls, in mode 0, so the round trip must fit in half a period).
TIMING: dict[str, Number] = {
    "buffer_out_ohm": Number(25, "Ohm", "estimate: 74LVC244A output at 3.3 V (24 mA class)"),
    "cable_z0_ohm": Number(100, "Ohm", "estimate: 28 AWG ribbon wire beside a ground wire "
                                       "(90-120 Ohm), to measure (TDR or a matching pot)"),
    "cable_ns_per_m": Number(5, "ns/m", "estimate: ribbon, velocity ~0.67 c"),
    "edge_ns": Number(1.5, "ns", "estimate: 74LVC244A output edge at 3.3 V, 10-90 %"),
    "vih_v": Number(2.31, "V", "datasheet: MFRC522 V_IH = 0.7 x VDD at 3.3 V"),
    "lvc_tpd_ns": Number(7, "ns", "estimate: 74LVC244A/74LVC125A t_pd at 3.3 V, datasheet max"),
    "mfrc522_miso_ns": Number(50, "ns", "estimate: MFRC522 SCK-to-MISO delay (datasheet "
                                         "allows 10 Mbit/s SPI, section 8.1.2)"),
    "miso_cable_ns": Number(45, "ns", "estimate: MFRC522 MISO driving 80 cm of cable (a "
                                      "pad's, hardware/box.py)"),
    "pico_setup_ns": Number(10, "ns", "estimate: RP2040 input + MISO bus trace"),
}
MAX_SPI_HZ = Number(10_000_000, "Hz", "datasheet: MFRC522 SPI up to 10 Mbit/s (8.1.2)")


@dataclass
class Part:
    ref: str
    kind: str  # what it is, as in the BOM
    pins: dict[str, Role]
    value: str = ""
    group: str = "readers"  # BOM section: readers, buffers, pawns
    board: str = ""  # where it is soldered: controller, bank0..2, reader, pawn board, sensor


@dataclass
class Netlist:
    parts: dict[str, Part] = field(default_factory=dict)
    nets: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, part: Part) -> Part:
        if part.ref in self.parts:
            raise ValueError(f"part {part.ref} added twice")
        self.parts[part.ref] = part
        return part

    def connect(self, net: str, ref: str, pin: str) -> None:
        if pin not in self.parts[ref].pins:
            raise ValueError(f"{ref} has no pin {pin}")
        self.nets[net].append((ref, pin))

    def net_of(self, ref: str, pin: str) -> str | None:
        for net, pins in self.nets.items():
            if (ref, pin) in pins:
                return net
        return None

    def role(self, ref: str, pin: str) -> Role:
        return self.parts[ref].pins[pin]


# ------------------------------------------------------------------ parts

def _pico() -> Part:
    pins: dict[str, Role] = {f"GP{i}": "nc" for i in range(29)}
    for gp in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 18, 19):
        pins[f"GP{gp}"] = "out"
    pins["GP13"] = "in"
    pins["GP16"] = "in"
    pins.update({"VSYS": "power", "GND": "ground", "RUN": "in", "3V3_OUT": "nc"})
    return Part("U1", "Raspberry Pi Pico (RP2040)", pins, group="controller",
                board="controller")


def _hc154(ref: str) -> Part:
    pins: dict[str, Role] = {f"A{i}": "in" for i in range(4)}
    pins.update({"/E1": "in", "/E2": "in", "VCC": "power", "GND": "ground"})
    pins.update({f"/Y{i}": "out" for i in range(16)})
    return Part(ref, "74HC154 4-to-16 decoder", pins, group="chip selects")


def _lvc244(ref: str) -> Part:
    pins: dict[str, Role] = {"/1OE": "in", "/2OE": "in", "VCC": "power", "GND": "ground"}
    for half in (1, 2):
        for i in range(1, 5):
            pins[f"{half}A{i}"] = "in"
            pins[f"{half}Y{i}"] = "out"
    return Part(ref, "74LVC244A octal buffer", pins, group="buffers")


def _lvc125(ref: str) -> Part:
    pins: dict[str, Role] = {"VCC": "power", "GND": "ground"}
    for gate in range(1, 5):
        pins.update({f"{gate}A": "in", f"{gate}Y": "tristate", f"/{gate}OE": "in"})
    return Part(ref, "74LVC125A quad tri-state buffer", pins, group="miso gates")


def _rc522(ref: str) -> Part:
    return Part(ref, "MFRC522 reader module (RC522)", {
        "SDA": "in", "SCK": "in", "MOSI": "in", "MISO": "out", "IRQ": "nc", "GND": "ground",
        "RST": "in", "3.3V": "power"})


def _hc165(ref: str) -> Part:
    pins: dict[str, Role] = {f"D{i}": "in" for i in range(8)}
    pins.update({"/PL": "in", "CP": "in", "/CE": "in", "DS": "in", "Q7": "out", "/Q7": "nc",
                 "VCC": "power", "GND": "ground"})
    return Part(ref, "74HC165 shift register", pins, group="pawns")


def _hall(ref: str) -> Part:
    return Part(ref, "DRV5032FA Hall switch (3.3 V, omnipolar)",
                {"VCC": "power", "GND": "ground", "OUT": "out"}, group="pawns")


def _resistor(ref: str, value: str, group: str) -> Part:
    return Part(ref, f"resistor {value}", {"1": "passive", "2": "passive"}, value, group)


def _capacitor(ref: str, value: str, group: str) -> Part:
    return Part(ref, f"capacitor {value}", {"1": "passive", "2": "passive"}, value, group)


def _regulator(ref: str) -> Part:
    return Part(ref, "3.3 V step-down regulator module", {
        "VIN": "passive", "GND": "ground", "VOUT": "passive"}, group="power",
        board="controller")


# The reader cable, wire by wire (bank-board header pin = ribbon wire). Every fast line
# (SCK, MOSI, MISO) lies between grounds or a ground and the static rail, so each has its
# own return path beside it (crosstalk and impedance: the edge model's Z0 assumes this).
CABLE: tuple[tuple[str, str], ...] = (
    ("+3V3", "3.3V"), ("GND", "GND"), ("SCK", "SCK"), ("GND", "GND"), ("MOSI", "MOSI"),
    ("GND", "GND"), ("MISO", "MISO"), ("GND", "GND"), ("NSS", "SDA"), ("RST", "RST"),
)
FAST_LINES = ("SCK", "MOSI", "MISO")


def _header(ref: str, bank: int) -> Part:
    pins: dict[str, Role] = {str(i + 1): "passive" for i in range(len(CABLE))}
    return Part(ref, f"1x{len(CABLE)} 2.54 mm pin header (reader cable)", pins,
                group="connectors", board=f"bank{bank}")


# ------------------------------------------------------------------ the table

PICO_PINS: dict[str, str] = {
    "SCK": "GP18", "MOSI": "GP19", "MISO": "GP16",
    "A0": "GP2", "A1": "GP3", "A2": "GP4", "A3": "GP5",
    "/E1_0": "GP6", "/E1_1": "GP7", "/E1_2": "GP8", "STROBE": "GP9", "RST": "GP10",
    "PAWN_/PL": "GP11", "PAWN_CP": "GP12", "PAWN_Q": "GP13",
}
# Control lines that leave the Pico go through 74LVC244 buffers (inputs with Ioff: no
# back-powering of the logic rail through a pin when it is off).
CONTROL_LINES = ["A0", "A1", "A2", "A3", "/E1_0", "/E1_1", "/E1_2", "STROBE",
                 "PAWN_/PL", "PAWN_CP"]


def build(n_readers: int = N_READERS) -> Netlist:
    """The netlist of a table with ``n_readers`` readers (at most 48) and pawn sensors."""
    nl = Netlist()
    nl.add(_pico())
    banks = (n_readers + READERS_PER_BANK - 1) // READERS_PER_BANK
    for net, pin in (("GND", "GND"), ("+5V", "VSYS")):
        nl.connect(net, "U1", pin)
    for signal in ("SCK", "MOSI", "RST", *CONTROL_LINES):
        nl.connect(f"PICO_{signal}", "U1", PICO_PINS[signal])
    nl.connect("MISO_BUS", "U1", PICO_PINS["MISO"])
    nl.connect("PAWN_Q", "U1", PICO_PINS["PAWN_Q"])
    resistors = iter(range(1, 1000))

    capacitors = iter(range(1, 1000))

    def resistor(value: str, a: str, b: str, group: str, board: str = "controller") -> None:
        ref = f"R{next(resistors)}"
        nl.add(_resistor(ref, value, group)).board = board
        nl.connect(a, ref, "1")
        nl.connect(b, ref, "2")

    def capacitor(value: str, a: str, b: str, group: str, board: str) -> None:
        ref = f"C{next(capacitors)}"
        nl.add(_capacitor(ref, value, group)).board = board
        nl.connect(a, ref, "1")
        nl.connect(b, ref, "2")

    def power(ref: str) -> None:
        """Rails for a part, and its 100 nF beside it (every IC, module and sensor)."""
        part = nl.parts[ref]
        for pin, role in part.pins.items():
            if role == "power":
                nl.connect(RAIL, ref, pin)
            elif role == "ground":
                nl.connect(GND, ref, pin)
        capacitor("100n", RAIL, GND, "decoupling", part.board or "controller")

    # Control buffers U2, U3: Pico -> demux address/enables/strobe and pawn /PL, CP.
    control_refs = ["U2", "U3"]
    channels = [f"{h}A{i}" for h in (1, 2) for i in range(1, 5)]
    for ref in control_refs:
        nl.add(_lvc244(ref)).group = "controls"
        nl.parts[ref].board = "controller"
        power(ref)
        for oe in ("/1OE", "/2OE"):
            nl.connect(GND, ref, oe)
    for index, signal in enumerate(CONTROL_LINES):
        ref, channel = control_refs[index // 8], channels[index % 8]
        nl.connect(f"PICO_{signal}", ref, channel)
        nl.connect(signal, ref, channel.replace("A", "Y"))
    # Unused control channels: inputs tied to GND.
    for index in range(len(CONTROL_LINES), 16):
        nl.connect(GND, control_refs[index // 8], channels[index % 8])
    # Pull-ups keep every decoder disabled while the Pico boots (its pins float).
    for signal in ("/E1_0", "/E1_1", "/E1_2", "STROBE"):
        resistor("10k", f"PICO_{signal}", RAIL, "chip selects")
    # RST held low (readers in hard power-down) until the firmware raises it.
    resistor("10k", "PICO_RST", GND, "buffers")
    resistor("100k", "MISO_BUS", GND, "miso gates")  # a vanished reader reads 0x00

    gate_count = 0
    for bank in range(banks):
        board = f"bank{bank}"
        decoder = f"U{4 + bank}"
        nl.add(_hc154(decoder)).board = board
        power(decoder)
        for i in range(4):
            nl.connect(f"A{i}", decoder, f"A{i}")
        nl.connect(f"/E1_{bank}", decoder, "/E1")
        nl.connect("STROBE", decoder, "/E2")
        buffer = f"U{7 + bank}"
        nl.add(_lvc244(buffer)).board = board
        power(buffer)
        nl.connect(GND, buffer, "/1OE")
        nl.connect(GND, buffer, "/2OE")
        in_bank = list(range(bank * READERS_PER_BANK, min(n_readers, (bank + 1) * 16)))
        # Channels: SCK x2 (each feeds one SCK fan-out chip on the same board), MOSI x3
        # and RST x2 (each through its series resistor to its readers), one spare.
        fanouts = max(1, -(-len(in_bank) // SCK_FANOUT_PER_CHIP))
        plan = [("SCK", 2, fanouts), ("MOSI", 3, -(-len(in_bank) // SCK_MOSI_LOADS)),
                ("RST", 2, -(-len(in_bank) // RST_LOADS)), ("", 1, 0)]
        taken = 0
        for signal, outputs, used in plan:
            for k in range(outputs):
                pin = channels[taken]
                taken += 1
                if k >= used:
                    nl.connect(GND, buffer, pin)  # spare channel: input tied low
                    continue
                nl.connect(f"PICO_{signal}", buffer, pin)
                out = f"B{bank}_{signal}{k}"
                nl.connect(out, buffer, pin.replace("A", "Y"))
                if signal != "SCK":
                    resistor("33R", out, f"{out}_S", "buffers", board)
        for k in range(fanouts):
            fanout = f"U{10 + 2 * bank + k}"
            nl.add(_lvc244(fanout)).board = board
            nl.parts[fanout].group = "sck fan-out"
            power(fanout)
            nl.connect(GND, fanout, "/1OE")
            nl.connect(GND, fanout, "/2OE")
            for index, pin in enumerate(channels):
                reader_offset = k * SCK_FANOUT_PER_CHIP + index
                if reader_offset >= len(in_bank):
                    nl.connect(GND, fanout, pin)
                    continue
                nl.connect(f"B{bank}_SCK{k}", fanout, pin)
                out = f"B{bank}_SCK_J{in_bank[reader_offset] + 1}"
                nl.connect(out, fanout, pin.replace("A", "Y"))
                resistor(SCK_SERIES, out, f"{out}_S", "sck fan-out", board)
        for offset, reader in enumerate(in_bank):
            ref = f"J{reader + 1}"
            nl.add(_rc522(ref)).board = "reader"
            power(ref)
            cs = f"CS{reader}"
            nl.connect(cs, decoder, f"/Y{offset}")
            nl.connect(cs, ref, "SDA")
            gate_chip, gate = divmod(gate_count, 4)
            gate_ref = f"U{20 + gate_chip}"
            if gate_ref not in nl.parts:
                nl.add(_lvc125(gate_ref)).board = board
                power(gate_ref)
            gate_count += 1
            nl.connect(cs, gate_ref, f"/{gate + 1}OE")
            nl.connect(f"MISO{reader}", ref, "MISO")
            nl.connect(f"MISO{reader}", gate_ref, f"{gate + 1}A")
            # An unplugged reader must not leave its gate input floating.
            resistor("100k", f"MISO{reader}", GND, "miso gates", board)
            nl.connect("MISO_BUS", gate_ref, f"{gate + 1}Y")
            nl.connect(f"B{bank}_SCK_J{reader + 1}_S", ref, "SCK")
            for signal, budget in (("MOSI", SCK_MOSI_LOADS), ("RST", RST_LOADS)):
                nl.connect(f"B{bank}_{signal}{offset // budget}_S", ref, signal)
            # The module's own decoupling: 10 uF for the antenna's bursts, 100 nF.
            capacitor("10u", RAIL, GND, "readers", "reader")
            # The cable: a bank-board header whose pins sit on the nets the module's do.
            header = nl.add(_header(f"P{reader + 1}", bank))
            for wire, (_name, module_pin) in enumerate(CABLE):
                nl.connect(nl.net_of(ref, module_pin) or "", header.ref, str(wire + 1))
    # Spare MISO gates: inputs low, output enables high (off).
    last = f"U{20 + (gate_count - 1) // 4}"
    for gate in range(gate_count % 4 or 4, 4):
        nl.connect(GND, last, f"{gate + 1}A")
        nl.connect(RAIL, last, f"/{gate + 1}OE")

    # Pawn sensors: 20 DRV5032 into 3 x 74HC165 (D0..D19), D20..D23 strapped.
    chain = ["U30", "U31", "U32"]
    for index, ref in enumerate(chain):
        nl.add(_hc165(ref)).board = "pawn board"
        power(ref)
        nl.connect("PAWN_/PL", ref, "/PL")
        nl.connect("PAWN_CP", ref, "CP")
        nl.connect(GND, ref, "/CE")
        # Q7 of each chip feeds DS of the next towards the Pico; the first chip's DS is high.
        nl.connect(RAIL if index == 0 else f"PAWN_Q{index - 1}", ref, "DS")
        nl.connect("PAWN_Q" if index == len(chain) - 1 else f"PAWN_Q{index}", ref, "Q7")
    for bit in range(24):
        ref, pin = chain[bit // 8], f"D{bit % 8}"
        if bit < N_PAWN_POSITIONS:
            hall = f"H{bit}"
            nl.add(_hall(hall)).board = "sensor"
            power(hall)
            nl.connect(f"PAWN{bit}", hall, "OUT")
            nl.connect(f"PAWN{bit}", ref, pin)
            resistor("10k", f"PAWN{bit}", RAIL, "pawns", "pawn board")
        else:  # signature 0b1010 on D20..D23 (firmware.pawns.SIGNATURE)
            nl.connect(RAIL if (0b1010 >> (bit - 20)) & 1 else GND, ref, pin)
    resistor("10k", "PAWN_Q", RAIL, "pawns", "pawn board")  # no board: reads 1, no signature
    # The logic rail: one regulator from the 5 V input (power.md), bulk capacitance.
    nl.add(_regulator("U40"))
    nl.connect("+5V", "U40", "VIN")
    nl.connect(GND, "U40", "GND")
    nl.connect(RAIL, "U40", "VOUT")
    capacitor("1000u", RAIL, GND, "power", "controller")
    return nl


# ------------------------------------------------------------------ checks

# Pull resistors the design needs: net -> the rail its resistor goes to.
REQUIRED_PULLS = {
    **{f"PICO_/E1_{b}": RAIL for b in range(3)},  # decoders off while the Pico boots
    "PICO_STROBE": RAIL,
    "PICO_RST": GND,  # readers held in hard power-down until the firmware starts
    "MISO_BUS": GND,  # a vanished reader reads 0x00
    "PAWN_Q": RAIL,  # no pawn board fitted: reads 1
}


def _pull(nl: Netlist, net: str) -> str | None:
    """The rail a resistor on ``net`` pulls it to (None: no pull resistor)."""
    for ref, pin in nl.nets.get(net, []):
        if nl.parts[ref].kind.startswith("resistor"):
            other = nl.net_of(ref, "2" if pin == "1" else "1")
            if other in (RAIL, GND):
                return other
    return None


def _buffer_source(nl: Netlist, net: str) -> str | None:
    """The Pico net behind a buffered signal: follow ``net`` back through series
    resistors and 74LVC244 channels (bank buffer, SCK fan-out) to the first PICO_ net."""
    for _hop in range(6):
        if net.startswith("PICO_"):
            return net
        driven = [(r, p) for r, p in nl.nets.get(net, [])
                  if nl.parts[r].kind.startswith("74LVC244") and nl.role(r, p) == "out"]
        if driven:
            ref, pin = driven[0]
            net = nl.net_of(ref, pin.replace("Y", "A")) or ""
            continue
        resistors = [(r, p) for r, p in nl.nets.get(net, [])
                     if nl.parts[r].kind.startswith("resistor")]
        if len(resistors) != 1:
            return None
        ref, pin = resistors[0]
        net = nl.net_of(ref, "1" if pin == "2" else "2") or ""
    return None


def check_identity(nl: Netlist) -> list[str]:
    """Each line carries what its name says: the pull resistors the design needs are there
    (to the right rail), every reader's SCK/MOSI/RST come from the Pico's own SCK/MOSI/RST
    through its bank buffer, every MISO gate input is pulled down, and each decoder's
    A0..A3 is the Pico's A0..A3 (no crossed address lines)."""
    problems = []
    for net, rail in REQUIRED_PULLS.items():
        if _pull(nl, net) != rail:
            problems.append(f"{net}: needs its pull resistor to {rail}")
    for part in nl.parts.values():
        if part.kind.startswith("MFRC522"):
            for signal in ("SCK", "MOSI", "RST"):
                source = _buffer_source(nl, nl.net_of(part.ref, signal) or "")
                if source != f"PICO_{signal}":
                    problems.append(f"{part.ref}: its {signal} pin is fed from {source}, "
                                    f"not PICO_{signal}")
            miso = nl.net_of(part.ref, "MISO") or ""
            if _pull(nl, miso) != GND:
                problems.append(f"{part.ref}: MISO gate input {miso} floats when the reader "
                                "is unplugged (needs its pull-down)")
        if part.kind.startswith("74HC154"):
            for i in range(4):
                net = nl.net_of(part.ref, f"A{i}") or ""
                source = _buffer_source(nl, net)
                if net != f"A{i}" or source != f"PICO_A{i}":
                    problems.append(f"{part.ref}.A{i}: on {net} from {source}, not the "
                                    f"Pico's A{i} (address lines crossed)")
    return problems


def check(nl: Netlist) -> list[str]:
    """Every problem found; empty when the wiring is sound."""
    problems: list[str] = check_identity(nl)
    resistors_on: dict[str, list[str]] = defaultdict(list)
    for net, pins in nl.nets.items():
        for ref, _pin in pins:
            if nl.parts[ref].kind.startswith("resistor"):
                resistors_on[net].append(ref)
    readers = sorted((p for p in nl.parts.values() if p.kind.startswith("MFRC522")),
                     key=lambda p: int(p.ref[1:]))
    cs_nets = []
    for part in readers:
        ref = part.ref
        nets = {pin: nl.net_of(ref, pin) for pin in part.pins}
        if nets["3.3V"] != RAIL or nets["GND"] != GND:
            problems.append(f"{ref}: not on the {RAIL}/{GND} rails")
        cs = nets["SDA"]
        cs_nets.append(cs)
        drivers = [(r, p) for r, p in nl.nets.get(cs or "", []) if nl.role(r, p) == "out"]
        if len(drivers) != 1 or not nl.parts[drivers[0][0]].kind.startswith("74HC154"):
            problems.append(f"{ref}: chip select {cs} is not one decoder output")
        gates = [(r, p) for r, p in nl.nets.get(cs or "", [])
                 if nl.parts[r].kind.startswith("74LVC125") and p.endswith("OE")]
        if len(gates) != 1:
            problems.append(f"{ref}: chip select does not enable exactly one MISO gate")
        else:
            gate_ref, oe = gates[0]
            gate = oe[1]
            if nl.net_of(gate_ref, f"{gate}A") != nets["MISO"]:
                problems.append(f"{ref}: its MISO gate {gate_ref}/{gate} gates another reader")
            if nl.net_of(gate_ref, f"{gate}Y") != "MISO_BUS":
                problems.append(f"{ref}: its MISO gate does not drive the MISO bus")
        miso_users = [(r, p) for r, p in nl.nets.get(nets["MISO"] or "", [])
                      if nl.role(r, p) != "passive"]
        if len(miso_users) != 2:
            problems.append(f"{ref}: raw MISO reaches something besides its gate")
        for signal in ("SCK", "MOSI", "RST"):
            net = nets[signal] or ""
            source = [r for r in resistors_on.get(net, [])]
            behind = [nl.net_of(r, "1") for r in source]
            if len(source) != 1 or not any(
                    d and any(nl.parts[x].kind.startswith("74LVC244") and nl.role(x, p) == "out"
                              for x, p in nl.nets[d]) for d in behind):
                problems.append(f"{ref}: {signal} does not come from a bank buffer through "
                                "its series resistor")
    if len(set(cs_nets)) != len(cs_nets):
        problems.append("two readers share a chip select")
    for part in nl.parts.values():
        for pin, role in part.pins.items():
            on = nl.net_of(part.ref, pin)
            if role == "power" and on not in (RAIL, "+5V"):
                problems.append(f"{part.ref}.{pin}: supply on {on}, not the logic rail")
            if role == "power" and on == "+5V" and part.ref != "U1":
                problems.append(f"{part.ref}: on +5V: one logic domain ({RAIL}) only")
            if role == "in" and on is None and part.ref != "U1":
                problems.append(f"{part.ref}.{pin}: input left floating")
    # Drivers: one per net (the MISO bus: tri-state gates only), within the load budget.
    for net, pins in nl.nets.items():
        if net in (RAIL, GND, "+5V"):
            continue
        drivers = [(r, p) for r, p in pins if nl.role(r, p) == "out"]
        tristate = [(r, p) for r, p in pins if nl.role(r, p) == "tristate"]
        loads = [(r, p) for r, p in pins if nl.role(r, p) == "in"]
        if len(drivers) > 1 or (drivers and tristate):
            problems.append(f"{net}: driven by {drivers + tristate}")
        if not drivers and not tristate and loads and not resistors_on.get(net):
            problems.append(f"{net}: inputs {loads} with no driver and no pull resistor")
        if tristate and not resistors_on.get(net):
            problems.append(f"{net}: a tri-state bus needs a pull resistor")
        for ref, pin in drivers:
            budget = load_budget(nl.parts[ref], net)
            if len(loads) > budget:
                problems.append(f"{net}: {ref}.{pin} drives {len(loads)} inputs, budget {budget}")
    # Pico outputs drive only Ioff-protected (74LVC) inputs: no back-powering of the rail.
    for signal, pin in PICO_PINS.items():
        pico_net = nl.net_of("U1", pin)
        if nl.role("U1", pin) != "out" or pico_net is None:
            continue
        for ref, p in nl.nets[pico_net]:
            if ref != "U1" and nl.role(ref, p) == "in" and "LVC" not in nl.parts[ref].kind:
                problems.append(f"Pico {pin} ({signal}) drives {ref}.{p} (no Ioff)")
    return problems


def load_budget(part: Part, net: str) -> int:
    """How many inputs one output may drive (choice, from the capacitance per cable)."""
    if part.kind.startswith("74LVC244"):
        # Control buffers feed the three decoders or the three shift registers; a bank
        # buffer output feeds only its series resistor (the readers behind it: check_loads).
        # A bank buffer's SCK channel feeds the 8 inputs of one fan-out chip beside it.
        if part.group == "controls":
            return 4
        return SCK_FANOUT_PER_CHIP if re.fullmatch(r"B\d_SCK\d", net) else 1
    if part.kind.startswith("Raspberry Pi Pico"):
        return 8  # LVC inputs (~5 pF) on short traces: under ~60 pF per pin (estimate)
    if part.kind.startswith("74HC154"):
        return 2  # one reader's NSS and its MISO gate's /OE
    if part.kind.startswith("74HC165"):
        return 1
    return 1


def reader_loads(nl: Netlist) -> dict[str, int]:
    """Readers behind each series resistor (one buffer output each)."""
    counts: dict[str, int] = {}
    for net, pins in nl.nets.items():
        if net.endswith("_S"):
            counts[net[:-2]] = sum(1 for r, _p in pins if r.startswith("J"))
    return counts


def check_loads(nl: Netlist) -> list[str]:
    problems = []
    for net, count in reader_loads(nl).items():
        budget = (RST_LOADS if "_RST" in net else SCK_LOADS if "_SCK" in net
                  else SCK_MOSI_LOADS)
        if count > budget:
            problems.append(f"{net}: {count} readers on one buffer output, budget {budget}")
    return problems


def all_problems(nl: Netlist | None = None) -> list[str]:
    nl = nl or build()
    return check(nl) + check_loads(nl) + check_cable(nl) + check_edges(nl)


# ------------------------------------------------------------------ clock edges

def star_edge(lengths_m: list[float], series_ohm: float, vdd: float = 3.3,
              t_end_ns: float = 80.0) -> list[list[tuple[float, float]]]:
    """The rising SCK edge at each reader of a star: one buffer output (its own ~25 Ohm
    plus ``series_ohm``) driving ``len(lengths_m)`` cables that meet at the resistor and
    end at a reader (an open end: its ~10 pF is small beside a 1.5 ns edge on 100 Ohm).

    A lattice (bounce) diagram: waves launched at the junction travel each cable, double
    at its open end and come back; at the junction each sees the source in parallel with
    the other cables, reflects with gamma and passes (1 + gamma) into every other cable.
    Returns, per reader, the steps (arrival time ns, voltage step) of an ideal edge."""
    t = {k: v.value for k, v in TIMING.items()}
    z0, rs = t["cable_z0_ohm"], t["buffer_out_ohm"] + series_ohm
    delays = [length * t["cable_ns_per_m"] for length in lengths_m]
    n = len(lengths_m)
    launch = vdd * (z0 / n) / (rs + z0 / n)
    other = rs if n == 1 else 1 / (1 / rs + (n - 1) / z0)
    gamma = (other - z0) / (other + z0)
    steps: list[list[tuple[float, float]]] = [[] for _ in range(n)]
    # Outgoing waves by (arrival time at the far end, line): amplitude. Rounded times
    # merge coincident waves so the count stays bounded.
    waves: dict[tuple[float, int], float] = {
        (round(delays[i], 3), i): launch for i in range(n)}
    queue = sorted(waves)
    while queue:
        arrive, line = key = heapq.heappop(queue)
        amp = waves.pop(key)
        if arrive > t_end_ns or abs(amp) < 1e-3:
            continue
        steps[line].append((arrive, 2 * amp))
        back = arrive + delays[line]  # the reflected wave reaches the junction
        for other_line in range(n):
            gain = gamma if other_line == line else 1 + gamma
            key = (round(back + delays[other_line], 3), other_line)
            if key not in waves:
                heapq.heappush(queue, key)
            waves[key] = waves.get(key, 0.0) + gain * amp
    return steps


def waveform(steps: list[tuple[float, float]], edge_ns: float) -> list[float]:
    """The voltage at one reader for a driver edge of ``edge_ns`` (a linear ramp), at
    every corner of the piecewise-linear wave (where a ramp starts or ends), in time
    order: exact, since a linear piece has its extremes at its ends."""
    corners = sorted([(at, v / edge_ns) for at, v in steps]
                     + [(at + edge_ns, -v / edge_ns) for at, v in steps])
    out, level, slope, last = [0.0], 0.0, 0.0, 0.0
    for at, change in corners:
        level += slope * (at - last)
        slope += change
        last = at
        out.append(level)
    return out


def edge_problems(lengths_m: list[float], series_ohm: float, vdd: float = 3.3) -> list[str]:
    """An SCK edge is clean at a reader when, once above V_IH, it never falls back below
    it (a re-crossing is a second clock edge), and when it settles above V_IH. The
    falling edge is the mirror image (same lattice), so one check covers both."""
    t = {k: v.value for k, v in TIMING.items()}
    problems = []
    for reader, steps in enumerate(star_edge(lengths_m, series_ohm, vdd)):
        wave = waveform(steps, t["edge_ns"])
        above = [k for k, v in enumerate(wave) if v >= t["vih_v"]]
        where = f"reader {reader + 1} of {len(lengths_m)} ({lengths_m[reader] * 100:.0f} cm)"
        if not above:
            problems.append(f"{where}: SCK never reaches V_IH {t['vih_v']} V")
            continue
        low = min(wave[above[0]:])
        if low < t["vih_v"]:
            problems.append(f"{where}: SCK falls back to {low:.2f} V after crossing V_IH "
                            f"{t['vih_v']} V (not monotonic through the threshold)")
    return problems


# Reader cable lengths an output may see: 15 cm up to the longest limit of hardware/box.py
# (a pad's 80 cm; box.py computes every run and checks it).
CABLE_SPREAD_M = (0.15, 0.80)


def check_edges(nl: Netlist) -> list[str]:
    """The SCK edge at every reader of the netlist, each series resistor's star of
    cables at the worst spread of lengths (shortest to longest cable)."""
    problems = []
    for net, count in sorted(reader_loads(nl).items()):
        series_refs = [r for r, _p in nl.nets[net + "_S"]
                       if nl.parts[r].kind.startswith("resistor")]
        if "_SCK" not in net or not count or len(series_refs) != 1:
            continue  # no SCK star here (a missing resistor is check()'s to report)
        series = float(nl.parts[series_refs[0]].value.rstrip("R"))
        lo, hi = CABLE_SPREAD_M
        for lengths in ([lo + (hi - lo) * i / max(1, count - 1) for i in range(count)],
                        [lo] * count, [hi] * count):
            problems += [f"{net}: {p}" for p in edge_problems(lengths, series)]
    return sorted(set(problems))


# ------------------------------------------------------------------ timing

def spi_margin(spi_hz: float) -> dict[str, float]:
    """Round-trip timing of one bit at ``spi_hz`` (ns). SCK reaches a reader as one
    clean step on its own terminated cable (check_edges): its edge arrives after the
    longest cable's delay plus the buffer's edge, no lumped-RC rise."""
    t = {k: v.value for k, v in TIMING.items()}
    sck = CABLE_SPREAD_M[1] * t["cable_ns_per_m"] + t["edge_ns"]
    round_trip = (t["lvc_tpd_ns"] + t["lvc_tpd_ns"] + sck + t["mfrc522_miso_ns"]
                  + t["miso_cable_ns"] + t["lvc_tpd_ns"] + t["pico_setup_ns"])
    half = 1e9 / spi_hz / 2
    return {"spi_hz": spi_hz, "sck_ns": round(sck, 1),
            "round_trip_ns": round(round_trip, 1), "half_period_ns": half,
            "margin_ns": round(half - round_trip, 1),
            "margin": round((half - round_trip) / half, 3)}


# ------------------------------------------------------------------ generated tables

def connections_csv(nl: Netlist) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["net", "ref", "pin", "part"])
    for net in sorted(nl.nets):
        for ref, pin in sorted(nl.nets[net]):
            writer.writerow([net, ref, pin, nl.parts[ref].kind])
    return out.getvalue()


def pico_table(nl: Netlist) -> str:
    rows = ["| Pico pin | signal | goes to |", "|---|---|---|"]
    for signal, pin in PICO_PINS.items():
        net = nl.net_of("U1", pin)
        if net is None:
            continue
        goes = sorted({f"{r}.{p}" for r, p in nl.nets[net] if r != "U1"})
        shown = ", ".join(goes) if len(goes) <= 4 else f"{', '.join(goes[:3])} … ({len(goes)})"
        rows.append(f"| {pin} | {signal} | {shown} |")
    return "\n".join(rows)


def reader_table(nl: Netlist) -> str:
    from hub.layout import Layout

    layout = Layout()
    rows = ["| reader | place | module | chip select | MISO gate | SCK / MOSI / RST from |",
            "|---|---|---|---|---|---|"]
    for reader in range(N_READERS):
        ref = f"J{reader + 1}"
        cs = nl.net_of(ref, "SDA") or ""
        decoder = next(f"{r}.{p}" for r, p in nl.nets[cs] if r.startswith("U") and
                       nl.parts[r].kind.startswith("74HC154"))
        gate = next(f"{r}/{p[1]}" for r, p in nl.nets[cs] if p.endswith("OE"))
        feeds = " / ".join((nl.net_of(ref, s) or "")[:-2] for s in ("SCK", "MOSI", "RST"))
        place = layout.place(reader).label() if reader < layout.n_readers else "spare"
        rows.append(f"| {reader} | {place} | {ref} | {decoder} | {gate} | {feeds} |")
    return "\n".join(rows)


@dataclass(frozen=True)
class Item:
    """One BOM line's ordering facts: an example part that fits and a unit price (EUR,
    estimate: a typical one-off distributor/marketplace price; check when ordering)."""

    example: str
    eur: float
    note: str = ""


# Every kind of part in the netlist, as ordered. A part kind missing here fails the tests.
CATALOGUE: dict[str, Item] = {
    "Raspberry Pi Pico (RP2040)": Item("Raspberry Pi SC0915 (Pico) or Pico H", 4.50,
                                       "scan controller, USB serial to the hub"),
    "74LVC244A octal buffer": Item("Nexperia/TI 74LVC244A", 0.45,
                                   "2 control buffers, 1 bank buffer per bank, 1 SCK "
                                   "fan-out per 8 readers"),
    "74HC154 4-to-16 decoder": Item("Nexperia 74HC154D / TI CD74HC154E", 0.90,
                                    "chip selects, one per bank"),
    "74LVC125A quad tri-state buffer": Item("Nexperia/TI 74LVC125A", 0.40,
                                            "one gate per reader's MISO"),
    "74HC165 shift register": Item("Nexperia/TI 74HC165", 0.50, "pawn sensor chain"),
    "MFRC522 reader module (RC522)": Item(
        "RFID-RC522 board (NXP MFRC522, e.g. AZ-Delivery, Joy-IT SBC-RFID-RC522)", 2.50,
        "3.3 V only; solder the 1x8 header; IRQ unused; buy 4 spare"),
    "DRV5032FA Hall switch (3.3 V, omnipolar)": Item("TI DRV5032FAQLPG (TO-92)", 0.70,
                                                     "under the top, flat face up"),
    "3.3 V step-down regulator module": Item("Pololu D24V22F3 (3.3 V 2.6 A)", 11.00,
                                             "the one logic rail (power.md)"),
    "resistor 10k": Item("1/4 W 1 %", 0.02, "pull-ups / RST pull-down"),
    "resistor 100k": Item("1/4 W 1 %", 0.02, "MISO pull-downs"),
    "resistor 33R": Item("1/4 W 1 %", 0.02, "MOSI/RST series resistors"),
    "resistor 68R": Item("1/4 W 1 %", 0.02, "SCK source termination, one per reader"),
    "capacitor 100n": Item("X7R 50 V, 2.54 mm", 0.05, "one per IC, module and sensor"),
    "capacitor 10u": Item("X5R/X7R 16 V or electrolytic", 0.10, "at each reader's 3.3 V"),
    "capacitor 1000u": Item("electrolytic 10 V", 0.40, "bulk at the regulator output"),
    f"1x{len(CABLE)} 2.54 mm pin header (reader cable)": Item(
        "2.54 mm male header strip, cut to 10", 0.15, "one per reader on its bank board"),
}

# What the netlist does not model as nets (power path, cables, hub, mechanics): ordered
# here, from one list. (group, qty, part, Item)
EXTRAS: tuple[tuple[str, int, str, Item], ...] = (
    ("connectors", N_READERS, "reader cable: 10-way 28 AWG ribbon, cells <= 50 cm, pads "
     "<= 80 cm (runs: layout.md), "
     "1x10 Dupont housing at the board, 1x8 at the module (the 4 grounds crimped into GND)",
     Item("1.27 mm ribbon + Dupont housings and crimps", 0.60)),
    ("power", 1, "5 V 3 A closed adapter, 2.1/5.5 mm plug",
     Item("Mean Well GST18A05-P1J or any listed double-insulated 5 V >= 3 A", 12.00,
          "no open-frame supply (power.md)")),
    ("power", 1, "panel barrel jack 2.1/5.5 mm", Item("", 1.00)),
    ("power", 1, "fuse T2A 5x20 mm + holder", Item("in-line or panel holder", 1.50,
                                                  "right after the jack")),
    ("power", 3, "PTC resettable fuse, hold 1.35 A", Item("Bourns MF-R135", 0.40,
                                                         "each bank's 3.3 V feed")),
    ("power", 1, "Schottky diode 1 A", Item("1N5819", 0.10, "5 V -> Pico VSYS")),
    ("hub", 1, "Raspberry Pi 4 Model B 2 GB (or Pi 5)", Item("SC0193", 45.00)),
    ("hub", 1, "Pi power supply", Item("official 15 W USB-C", 9.00)),
    ("hub", 1, "microSD 32 GB A1", Item("", 7.00)),
    ("hub", 4, "LED 5 mm, seat colours, + 330 Ohm", Item("", 0.15)),
    ("hub", 1, "active buzzer 5 V + 2N2222 + 1 kOhm", Item("TMB12A05", 1.00)),
    ("hub", 5, "push button", Item("16 mm panel or 12 mm tactile", 0.80)),
    ("hub", 1, "1 kOhm resistor + wire, Pico RUN <- Pi GPIO", Item("", 0.05)),
    ("table", 100, "NFC sticker NTAG213, 25 mm", Item("NXP NTAG213 inlay", 0.15,
                                                      "84 tagged cards + spares")),
    ("table", 1, "table top, 3 mm acrylic or birch ply, 725 x 1005 mm (layout.md)",
     Item("", 40.00)),
    ("table", 1, "reader carrier, 6 mm MDF, as the top", Item("", 15.00)),
    ("table", 4, "magnet 6x3 mm N35", Item("", 0.20, "one per pawn")),
    ("table", 4, "pawn board / bank board / controller perfboard", Item("", 2.00)),
)


def bom_lines(nl: Netlist) -> list[tuple[str, int, str, Item]]:
    """The whole BOM: the netlist's parts counted by kind, then the extras."""
    counts = Counter((p.group, p.kind) for p in nl.parts.values())
    by_kind: Counter[str] = Counter()
    groups: dict[str, str] = {}
    for (group, kind), qty in counts.items():
        by_kind[kind] += qty
        groups.setdefault(kind, group)
    missing = sorted(set(by_kind) - set(CATALOGUE))
    if missing:
        raise ValueError(f"no CATALOGUE entry (example, price) for {missing}")
    lines = [("passives" if k.startswith(("resistor", "capacitor")) else groups[k],
              by_kind[k], k, CATALOGUE[k]) for k in sorted(by_kind)]
    return sorted(lines, key=lambda line: (line[0], line[2])) + list(EXTRAS)


def bom_total(nl: Netlist) -> float:
    return round(sum(qty * item.eur for _g, qty, _k, item in bom_lines(nl)), 2)


def bom_table(nl: Netlist) -> str:
    rows = ["| group | qty | part | example | note | unit EUR | EUR |",
            "|---|---|---|---|---|---|---|"]
    for group, qty, kind, item in bom_lines(nl):
        rows.append(f"| {group} | {qty} | {kind} | {item.example} | {item.note} | "
                    f"{item.eur:.2f} | {qty * item.eur:.2f} |")
    rows.append(f"| **total** | | | | | | **{bom_total(nl):.2f}** |")
    return "\n".join(rows)


def pinout_table(nl: Netlist, reader: int = 0) -> str:
    """The reader cable, wire by wire, read from the netlist (header P<n> pin k sits on
    the net of the module pin it carries)."""
    header, module = f"P{reader + 1}", f"J{reader + 1}"
    rows = ["| wire / header pin | signal | module pin | net (reader 0) |", "|---|---|---|---|"]
    for wire, (name, module_pin) in enumerate(CABLE):
        net = nl.net_of(header, str(wire + 1))
        assert net == nl.net_of(module, module_pin)
        rows.append(f"| {wire + 1} | {name} | {module_pin} | {net} |")
    return "\n".join(rows)


def check_cable(nl: Netlist) -> list[str]:
    """Each reader's header carries its module's nets, and every fast line has a ground
    wire beside it."""
    problems = []
    for part in list(nl.parts.values()):
        if not part.kind.startswith("MFRC522"):
            continue
        header = f"P{part.ref[1:]}"
        if header not in nl.parts:
            problems.append(f"{part.ref}: no cable header")
            continue
        names = []
        for wire, (_name, module_pin) in enumerate(CABLE):
            net = nl.net_of(header, str(wire + 1))
            names.append(net)
            if net != nl.net_of(part.ref, module_pin):
                problems.append(f"{header}.{wire + 1}: on {net}, the module's {module_pin} "
                                f"is on {nl.net_of(part.ref, module_pin)}")
    for wire, (name, _pin) in enumerate(CABLE):
        if name in FAST_LINES:
            beside = {CABLE[w][0] for w in (wire - 1, wire + 1) if 0 <= w < len(CABLE)}
            if GND not in beside:
                problems.append(f"cable wire {wire + 1} ({name}) has no ground beside it")
    return problems


def timing_table() -> str:
    rows = ["| SPI clock | SCK at the farthest reader | round trip | half period | margin |",
            "|---|---|---|---|---|"]
    for hz in (1_000_000, 2_000_000, 4_000_000):
        m = spi_margin(hz)
        rows.append(f"| {hz / 1e6:g} MHz | {m['sck_ns']} ns | {m['round_trip_ns']} ns | "
                    f"{m['half_period_ns']:.0f} ns | {m['margin_ns']:.0f} ns "
                    f"({m['margin']:.0%}) |")
    rows += ["", "| SCK topology | cables | lowest level after crossing V_IH | clean |",
             "|---|---|---|---|"]
    lo, hi = CABLE_SPREAD_M
    spread = [lo + (hi - lo) * i / 5 for i in range(6)]
    for name, lengths, series in (
            ("first design: one output, 33 Ohm, 6 readers", spread, 33.0),
            ("one output per reader, 68 Ohm (built)", [hi], 68.0),
            ("one output per reader, 68 Ohm (built)", [lo], 68.0)):
        levels = [min(w[next(k for k, v in enumerate(w) if v >= TIMING["vih_v"].value):])
                  for w in (waveform(st, TIMING["edge_ns"].value)
                            for st in star_edge(lengths, series))]
        cm = ", ".join(f"{x * 100:.0f}" for x in lengths)
        rows.append(f"| {name} | {cm} cm | {min(levels):.2f} V | "
                    f"{'yes' if not edge_problems(lengths, series) else 'no'} |")
    rows += ["", "| figure | value | source |", "|---|---|---|"]
    for name, number in TIMING.items():
        rows.append(f"| {name} | {number.value:g} {number.unit} | {number.source} |")
    return "\n".join(rows)


def box_table(_nl: Netlist) -> str:
    from hardware.box import box_table as table

    return table()


SECTIONS: dict[str, dict[str, Callable[[Netlist], str] | None]] = {
    "layout.md": {"box": box_table},
    "wiring.md": {"pico": pico_table, "readers": reader_table, "timing": None,
                  "pinout": pinout_table},
    "bom.md": {"bom": bom_table},
}


def render(doc: str, nl: Netlist) -> str:
    """``doc`` (a file in hardware/) with its generated sections filled in."""
    text = (HERE / doc).read_text(encoding="utf-8")
    for name, maker in SECTIONS[doc].items():
        body = timing_table() if maker is None else maker(nl)
        pattern = re.compile(rf"(<!-- netlist:{name} -->)\n(?:.*?\n)?(<!-- /netlist:{name} -->)",
                             re.S)
        if not pattern.search(text):
            raise ValueError(f"{doc} has no <!-- netlist:{name} --> section")

        def fill(m: re.Match[str], b: str = body) -> str:
            return f"{m.group(1)}\n{b}\n{m.group(2)}"

        text = pattern.sub(fill, text)
    return text


def outputs(nl: Netlist | None = None) -> dict[Path, str]:
    nl = nl or build()
    files = {HERE / "connections.csv": connections_csv(nl)}
    for doc in SECTIONS:
        files[HERE / doc] = render(doc, nl)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check the table's wiring (netlist).")
    parser.add_argument("--write", action="store_true", help="regenerate the tables")
    parser.add_argument("--bom", action="store_true", help="print the BOM with its total")
    parser.add_argument("--pinout", action="store_true", help="print the reader cable")
    args = parser.parse_args(argv)
    nl = build()
    if args.bom or args.pinout:
        print(bom_table(nl) if args.bom else pinout_table(nl))
        return 0
    problems = all_problems(nl)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    from firmware.scan import SPI_HZ

    margin = spi_margin(SPI_HZ)
    print(f"{len(nl.parts)} parts, {len(nl.nets)} nets; SPI {SPI_HZ / 1e6:g} MHz: round trip "
          f"{margin['round_trip_ns']} ns of {margin['half_period_ns']:.0f} ns, margin "
          f"{margin['margin']:.0%}")
    if args.write:
        for path, text in outputs(nl).items():
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(HERE.parent)}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

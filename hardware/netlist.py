"""The table's wiring, once, as data: parts, pins and nets, with the checks a board review
would do, the SPI timing margin, and the tables of hardware/wiring.md, hardware/bom.md and
hardware/connections.csv generated from it.

    python -m hardware.netlist            # run the checks, print the timing margin
    python -m hardware.netlist --write    # regenerate connections.csv and the marked
                                          # sections of wiring.md and bom.md

tests/hardware/test_netlist.py runs the checks and fails when a generated table is stale.

Every number below names its source: ``datasheet`` (the part's datasheet, to be checked
against the revision bought), ``estimate`` (an engineering estimate to measure on the
bench, hardware/bench-test.md) or ``choice`` (a design decision).
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from collections import Counter, defaultdict
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
RAIL = "+3V3"
GND = "GND"


@dataclass(frozen=True)
class Number:
    value: float
    unit: str
    source: str  # "datasheet: ...", "estimate: ...", "choice: ..."


# Timing of one SPI bit through the buffered bus (MISO is sampled half a clock after SCK
# falls, in mode 0, so the round trip must fit in half a period).
TIMING: dict[str, Number] = {
    "cable_pf_per_m": Number(100, "pF/m", "estimate: flat ribbon / jumper wire, to measure"),
    "cable_m": Number(0.5, "m", "choice: reader cables at most 50 cm (layout.md)"),
    "reader_input_pf": Number(10, "pF", "estimate: MFRC522 pin + module trace"),
    "buffer_out_ohm": Number(25, "Ohm", "estimate: 74LVC244A output at 3.3 V (24 mA class)"),
    "series_ohm": Number(33, "Ohm", "choice: series resistor at each buffer output"),
    "lvc_tpd_ns": Number(7, "ns", "estimate: 74LVC244A/74LVC125A t_pd at 3.3 V, datasheet max"),
    "mfrc522_miso_ns": Number(50, "ns", "estimate: MFRC522 SCK-to-MISO delay (datasheet "
                                         "allows 10 Mbit/s SPI, section 8.1.2)"),
    "miso_cable_ns": Number(30, "ns", "estimate: MFRC522 MISO driving 50 cm of cable"),
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
    return Part("U1", "Raspberry Pi Pico (RP2040)", pins, group="controller")


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

    def resistor(value: str, a: str, b: str, group: str) -> None:
        ref = f"R{next(resistors)}"
        nl.add(_resistor(ref, value, group))
        nl.connect(a, ref, "1")
        nl.connect(b, ref, "2")

    def power(ref: str) -> None:
        part = nl.parts[ref]
        for pin, role in part.pins.items():
            if role == "power":
                nl.connect(RAIL, ref, pin)
            elif role == "ground":
                nl.connect(GND, ref, pin)

    # Control buffers U2, U3: Pico -> demux address/enables/strobe and pawn /PL, CP.
    control_refs = ["U2", "U3"]
    channels = [f"{h}A{i}" for h in (1, 2) for i in range(1, 5)]
    for ref in control_refs:
        nl.add(_lvc244(ref)).group = "controls"
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
        decoder = f"U{4 + bank}"
        nl.add(_hc154(decoder))
        power(decoder)
        for i in range(4):
            nl.connect(f"A{i}", decoder, f"A{i}")
        nl.connect(f"/E1_{bank}", decoder, "/E1")
        nl.connect("STROBE", decoder, "/E2")
        buffer = f"U{7 + bank}"
        nl.add(_lvc244(buffer))
        power(buffer)
        nl.connect(GND, buffer, "/1OE")
        nl.connect(GND, buffer, "/2OE")
        in_bank = list(range(bank * READERS_PER_BANK, min(n_readers, (bank + 1) * 16)))
        # Channels: SCK x3, MOSI x3, RST x2, each output through its series resistor.
        plan = [("SCK", 3, SCK_MOSI_LOADS), ("MOSI", 3, SCK_MOSI_LOADS), ("RST", 2, RST_LOADS)]
        channel = 0
        for signal, outputs, _budget in plan:
            used = min(outputs, max(1, -(-len(in_bank) // _budget)))
            for k in range(outputs):
                pin = channels[channel]
                channel += 1
                if k >= used:
                    nl.connect(GND, buffer, pin)  # spare channel: input tied low
                    continue
                nl.connect(f"PICO_{signal}", buffer, pin)
                out = f"B{bank}_{signal}{k}"
                nl.connect(out, buffer, pin.replace("A", "Y"))
                resistor("33R", out, f"{out}_S", "buffers")
        for offset, reader in enumerate(in_bank):
            ref = f"J{reader + 1}"
            nl.add(_rc522(ref))
            power(ref)
            cs = f"CS{reader}"
            nl.connect(cs, decoder, f"/Y{offset}")
            nl.connect(cs, ref, "SDA")
            gate_chip, gate = divmod(gate_count, 4)
            gate_ref = f"U{20 + gate_chip}"
            if gate_ref not in nl.parts:
                nl.add(_lvc125(gate_ref))
                power(gate_ref)
            gate_count += 1
            nl.connect(cs, gate_ref, f"/{gate + 1}OE")
            nl.connect(f"MISO{reader}", ref, "MISO")
            nl.connect(f"MISO{reader}", gate_ref, f"{gate + 1}A")
            # An unplugged reader must not leave its gate input floating.
            resistor("100k", f"MISO{reader}", GND, "miso gates")
            nl.connect("MISO_BUS", gate_ref, f"{gate + 1}Y")
            for signal, budget in (("SCK", SCK_MOSI_LOADS), ("MOSI", SCK_MOSI_LOADS),
                                   ("RST", RST_LOADS)):
                nl.connect(f"B{bank}_{signal}{offset // budget}_S", ref, signal)
    # Spare MISO gates: inputs low, output enables high (off).
    last = f"U{20 + (gate_count - 1) // 4}"
    for gate in range(gate_count % 4 or 4, 4):
        nl.connect(GND, last, f"{gate + 1}A")
        nl.connect(RAIL, last, f"/{gate + 1}OE")

    # Pawn sensors: 20 DRV5032 into 3 x 74HC165 (D0..D19), D20..D23 strapped.
    chain = ["U30", "U31", "U32"]
    for index, ref in enumerate(chain):
        nl.add(_hc165(ref))
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
            nl.add(_hall(hall))
            power(hall)
            nl.connect(f"PAWN{bit}", hall, "OUT")
            nl.connect(f"PAWN{bit}", ref, pin)
            resistor("10k", f"PAWN{bit}", RAIL, "pawns")
        else:  # signature 0b1010 on D20..D23 (firmware.pawns.SIGNATURE)
            nl.connect(RAIL if (0b1010 >> (bit - 20)) & 1 else GND, ref, pin)
    resistor("10k", "PAWN_Q", RAIL, "pawns")  # no board fitted: reads 1, no signature
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
    """The Pico net behind a buffered signal: ``net`` is a 74LVC244 output (or a series
    resistor's far side from one); the answer is the net on that channel's input."""
    for _hop in range(2):
        for ref, pin in nl.nets.get(net, []):
            part = nl.parts[ref]
            if part.kind.startswith("74LVC244") and nl.role(ref, pin) == "out":
                return nl.net_of(ref, pin.replace("Y", "A"))
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
                      if not nl.parts[r].kind.startswith("resistor")]
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
            net = nl.net_of(part.ref, pin)
            if role == "power" and net not in (RAIL, "+5V"):
                problems.append(f"{part.ref}.{pin}: supply on {net}, not the logic rail")
            if role == "power" and net == "+5V" and part.ref != "U1":
                problems.append(f"{part.ref}: on +5V: one logic domain ({RAIL}) only")
            if role == "in" and net is None and part.ref != "U1":
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
        net = nl.net_of("U1", pin)
        if nl.role("U1", pin) != "out" or net is None:
            continue
        for ref, p in nl.nets[net]:
            if ref != "U1" and nl.role(ref, p) == "in" and "LVC" not in nl.parts[ref].kind:
                problems.append(f"Pico {pin} ({signal}) drives {ref}.{p} (no Ioff)")
    return problems


def load_budget(part: Part, net: str) -> int:
    """How many inputs one output may drive (choice, from the capacitance per cable)."""
    if part.kind.startswith("74LVC244"):
        # Control buffers feed the three decoders or the three shift registers; a bank
        # buffer output feeds only its series resistor (the readers behind it: check_loads).
        return 4 if part.group == "controls" else 1
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
        budget = RST_LOADS if "_RST" in net else SCK_MOSI_LOADS
        if count > budget:
            problems.append(f"{net}: {count} readers on one buffer output, budget {budget}")
    return problems


def all_problems(nl: Netlist | None = None) -> list[str]:
    nl = nl or build()
    return check(nl) + check_loads(nl)


# ------------------------------------------------------------------ timing

def spi_margin(spi_hz: float, loads: int = SCK_MOSI_LOADS) -> dict[str, float]:
    """Edge and round-trip timing of the buffered bus at ``spi_hz`` (ns)."""
    t = {k: v.value for k, v in TIMING.items()}
    load_pf = loads * (t["cable_pf_per_m"] * t["cable_m"] + t["reader_input_pf"])
    rise = 2.2 * (t["buffer_out_ohm"] + t["series_ohm"]) * load_pf * 1e-3  # ns, 10-90 %
    round_trip = (t["lvc_tpd_ns"] + rise + t["mfrc522_miso_ns"] + t["miso_cable_ns"]
                  + t["lvc_tpd_ns"] + t["pico_setup_ns"])
    half = 1e9 / spi_hz / 2
    return {"spi_hz": spi_hz, "load_pf": load_pf, "rise_ns": round(rise, 1),
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


def bom_table(nl: Netlist) -> str:
    counts = Counter((p.group, p.kind, p.value) for p in nl.parts.values())
    rows = ["| group | part | qty |", "|---|---|---|"]
    for (group, kind, _value), qty in sorted(counts.items()):
        rows.append(f"| {group} | {kind} | {qty} |")
    return "\n".join(rows)


def timing_table() -> str:
    rows = ["| SPI clock | load per output | SCK rise (10-90 %) | round trip | half period "
            "| margin |", "|---|---|---|---|---|---|"]
    for hz in (1_000_000, 2_000_000, 4_000_000):
        m = spi_margin(hz)
        rows.append(f"| {hz / 1e6:g} MHz | {m['load_pf']:.0f} pF | {m['rise_ns']} ns | "
                    f"{m['round_trip_ns']} ns | {m['half_period_ns']:.0f} ns | "
                    f"{m['margin_ns']:.0f} ns ({m['margin']:.0%}) |")
    rows += ["", "| figure | value | source |", "|---|---|---|"]
    for name, number in TIMING.items():
        rows.append(f"| {name} | {number.value:g} {number.unit} | {number.source} |")
    return "\n".join(rows)


SECTIONS = {
    "wiring.md": {"pico": pico_table, "readers": reader_table, "timing": None},
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
        text = pattern.sub(lambda m, b=body: f"{m.group(1)}\n{b}\n{m.group(2)}", text)
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
    args = parser.parse_args(argv)
    nl = build()
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

"""Pico entry point (MicroPython, RP2040). Runs on boot as /main.py.

Everything it calls is tested under CPython against firmware.mfrc522_sim, and
this file itself runs under the MicroPython unix port with stand-in `machine`
pins (tests/firmware/test_fw_micropython.py).

Pin map (see hardware/wiring.md, generated from hardware/netlist.py):
  SPI0  SCK GP18, MOSI GP19, MISO GP16 (through the per-reader 74LVC125A gates)
  demux A0..A3 GP2..GP5, bank /E1 GP6 GP7 GP8 (3 x 74HC154), strobe /E2 GP9
  reader NRSTPD GP10 (through the bank buffers), heartbeat LED "LED"
  pawn sensors (3 x 74HC165): /PL GP11, CLK GP12, QH GP13
"""

import gc
import select
import sys
import time

import micropython
from machine import SPI, WDT, Pin, freq, mem32

from firmware import scan
from firmware.bus import Bus
from firmware.loop import WDT_MS, Loop, Output, from_report, settle_from_report
from firmware.mfrc522 import MFRC522
from firmware.pawns import PawnSensors

N_READERS = 36  # 32 cells + 4 scan pads; up to 48 with the same wiring
SPI_HZ = scan.SPI_HZ
PIN_SCK, PIN_MOSI, PIN_MISO = 18, 19, 16
PIN_ADDRESS = (2, 3, 4, 5)
PIN_BANKS = (6, 7, 8)
PIN_STROBE = 9
PIN_RESET = 10
PIN_PAWN_LOAD, PIN_PAWN_CLOCK, PIN_PAWN_DATA = 11, 12, 13
MAINTENANCE_MS = 1000  # BOOTSEL pressed this soon after boot: no scan, the REPL stays


def maintenance_requested() -> bool:
    try:
        import rp2
    except ImportError:  # not an RP2040 (the unix port in the tests)
        return False
    start = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), start) < MAINTENANCE_MS:
        if rp2.bootsel_button():
            return True
        time.sleep_ms(10)
    return False


def main() -> None:
    if maintenance_requested():
        print("maintenance: BOOTSEL pressed, scan not started")
        return
    # A 0x03 byte from the hub must not stop the program (REPL): it is read as
    # an ordinary character and rejected as a bad line.
    micropython.kbd_intr(-1)
    watchdog = WDT(timeout=WDT_MS)
    try:  # noqa: SIM105 - no contextlib. 200 MHz: the sweep's Python (hardware/timing.md)
        freq(scan.CPU_HZ)
    except ValueError:  # a build that refuses runs at its default; STATS shows the cost
        pass
    reset = Pin(PIN_RESET, Pin.OUT, value=0)  # hard reset every reader once
    time.sleep_ms(2)
    reset.value(1)
    time.sleep_ms(50)
    watchdog.feed()
    spi = SPI(
        0,
        baudrate=SPI_HZ,
        polarity=0,
        phase=0,
        bits=8,
        firstbit=SPI.MSB,
        sck=Pin(PIN_SCK),
        mosi=Pin(PIN_MOSI),
        miso=Pin(PIN_MISO, Pin.IN, Pin.PULL_DOWN),  # vanished reader reads 0x00
    )
    demux = scan.Demux(
        [Pin(p, Pin.OUT, value=0) for p in PIN_ADDRESS],
        [Pin(p, Pin.OUT, value=1) for p in PIN_BANKS],
        Pin(PIN_STROBE, Pin.OUT, value=1),
        (mem32, scan.SIO_GPIO_OUT_XOR, PIN_ADDRESS + PIN_BANKS),  # one store per select
    )
    if sys.platform == "rp2":  # one viper call per transaction, on the registers
        from firmware.picobus import SIO_BASE, SPI0_BASE, PicoBus

        bus = PicoBus(SIO_BASE, SPI0_BASE, PIN_STROBE)
    else:  # the unix port in the tests: machine.SPI and Pin stand-ins
        bus = Bus(spi, demux.nss)
    readers = [MFRC522(bus, None, time, time.ticks_diff) for _ in range(N_READERS)]
    pawns = PawnSensors(
        Pin(PIN_PAWN_LOAD, Pin.OUT, value=1),
        Pin(PIN_PAWN_CLOCK, Pin.OUT, value=0),
        Pin(PIN_PAWN_DATA, Pin.IN, Pin.PULL_UP),
    )
    settle_us = settle_from_report("bench.json", scan.SETTLE_US)  # the bench test's report
    poll_us = from_report("bench.json", "poll_us", scan.POLL_US, 100, 5000)  # measured poll
    scanner = scan.Scanner(readers, demux, time, None, settle_us=settle_us,
                           diff=time.ticks_diff, pawns=pawns, poll_us=poll_us)
    scanner.cpu_mhz = freq() // 1_000_000
    stdin, stdout = sys.stdin, sys.stdout
    poll_in = select.poll()
    poll_in.register(stdin, select.POLLIN)
    poll_out = select.poll()
    poll_out.register(stdout, select.POLLOUT)

    def read_char() -> str:
        return stdin.read(1) if poll_in.poll(0) else ""

    def writable() -> bool:
        return bool(poll_out.poll(0))

    output = Output(stdout.write, writable, time, time.ticks_diff)
    loop = Loop(scanner, output, read_char, watchdog, gc.collect, Pin("LED", Pin.OUT))
    loop.start()
    while True:
        loop.step()


main()

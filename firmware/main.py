"""Pico entry point (MicroPython, RP2040). Runs on boot as /main.py.

Not imported under CPython: the tests only compile() it. Everything it calls
(firmware.scan, firmware.mfrc522, firmware.presence, firmware.protocol) is
tested under CPython against firmware.mfrc522_sim.

Pin map (see hardware/wiring.md):
  SPI0  SCK GP18, MOSI GP19, MISO GP16 (MISO comes through the 74HC125 buffers)
  demux A0..A3 GP2..GP5, bank /E1 GP6 GP7 GP8 (3 x 74HC154), strobe /E2 GP9
  reader NRSTPD (shared) GP10, heartbeat LED "LED"
"""

import select
import sys
import time

from machine import SPI, Pin

from firmware.mfrc522 import MFRC522
from firmware.scan import Demux, Scanner

N_READERS = 36  # 32 cells + 4 scan pads; up to 40 with the same wiring
SPI_HZ = scan.SPI_HZ
PIN_SCK, PIN_MOSI, PIN_MISO = 18, 19, 16
PIN_ADDRESS = (2, 3, 4, 5)
PIN_BANKS = (6, 7, 8)
PIN_STROBE = 9
PIN_RESET = 10
MAX_LINE = 600  # longer input is cut; decode_frame then rejects it as oversize


def main() -> None:
    reset = Pin(PIN_RESET, Pin.OUT, value=0)  # hard reset every reader once
    time.sleep_ms(2)
    reset.value(1)
    time.sleep_ms(50)
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
    demux = Demux(
        [Pin(p, Pin.OUT, value=0) for p in PIN_ADDRESS],
        [Pin(p, Pin.OUT, value=1) for p in PIN_BANKS],
        Pin(PIN_STROBE, Pin.OUT, value=1),
    )
    readers = [MFRC522(spi, demux.cs, time, time.ticks_diff) for _ in range(N_READERS)]
    out = sys.stdout

    def write_line(line: str) -> None:
        out.write(line)

    scanner = Scanner(readers, demux, time, write_line, diff=time.ticks_diff)
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    led = Pin("LED", Pin.OUT)
    scanner.boot()
    pending = ""
    while True:
        try:
            scanner.sweep()
        except Exception as error:  # never die: report and keep scanning
            scanner.emit_error("sweep failed: %s" % error)  # noqa: UP031
        led.toggle()
        while poller.poll(0):
            char = sys.stdin.read(1)
            if char == "\n":
                scanner.handle_line(pending)
                pending = ""
            elif char != "\r" and len(pending) < MAX_LINE:
                pending += char


main()

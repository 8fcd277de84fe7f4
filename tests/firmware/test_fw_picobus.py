"""firmware/picobus.py, the Pico's bus in viper code, on the MicroPython unix port (the
same viper source, compiled for x86-64) against fake register blocks: a bytearray for the
SIO (GPIO_OUT_SET/CLR) and one for the PL022 (data and status registers). The fake PL022
loops each byte back and reports "FIFO not full, data waiting, idle"; a status of 0 is a
peripheral that never clocks. mpy-cross -march=armv6m compiles it for the RP2040
(test_fw_micropython.py)."""

import os
import subprocess
from pathlib import Path

from test_fw_micropython import tool

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
from firmware import picobus
sio = bytearray(32)
spi = bytearray(16)
spi[12] = 6  # SSPSR: TNF | RNE, not BSY
bus = picobus.PicoBus(sio, spi, 9)
rx = bytearray(3)
bus.xfer(b'\x81\x82\x00', rx)
print("xfer", bytes(rx).hex())
print("clr", bytes(sio[24:28]).hex(), "set", bytes(sio[20:24]).hex())
bus.tx(b'\x02\x83')
print("tx last", spi[8])
bus.txs(b'\x02\x01\x0f\x01\x55')
print("txs last", spi[8])
spi[12] = 0  # a PL022 that never clocks
sio[20] = sio[21] = 0
try:
    bus.tx(b'\x02\x80')
    print("no error")
except OSError as e:
    print("OSError", e.errno, "strobe released", sio[21] == 2)
"""


def test_picobus_viper_transactions_on_fake_registers(tmp_path: Path) -> None:
    script = tmp_path / "picobus_check.py"
    script.write_text(SCRIPT)
    result = subprocess.run([tool("micropython"), str(script)], capture_output=True, text=True,
                            timeout=60, env=dict(os.environ, MICROPYPATH=str(ROOT)))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "xfer 818200"  # every byte sent, every byte read back in order
    assert lines[1] == "clr 00020000 set 00020000"  # GP9: strobe pulled low, then high
    assert lines[2] == "tx last 131"  # 0x83, the last byte written
    assert lines[3] == "txs last 85"  # the batch's second transaction, 0x55, went out
    assert lines[4] == "OSError 5 strobe released True"  # a dead bus fails, NSS high

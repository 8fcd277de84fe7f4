"""Run firmware/main.py on the MicroPython unix port with stand-in hardware
(mpy_fakes). Prints the firmware's protocol lines, then one summary line:
``MAIN DONE <feeds> <calls>``. ``mpy_main.py N``: every N-th SPI transaction fails."""

import sys

import mpy_fakes

if len(sys.argv) > 1:
    mpy_fakes.fail_every[0] = int(sys.argv[1])
sys.modules["machine"] = mpy_fakes
sys.modules["micropython"] = mpy_fakes
try:  # noqa: SIM105 - MicroPython has no contextlib
    import firmware.main  # noqa: F401 - runs main()
except SystemExit:
    pass
print("MAIN DONE", mpy_fakes.feeds[0], mpy_fakes.calls)

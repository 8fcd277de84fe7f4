"""Run firmware/main.py on the MicroPython unix port with stand-in hardware
(mpy_fakes). Prints the firmware's protocol lines, then one summary line:
``MAIN DONE <feeds> <calls>``. ``mpy_main.py N``: every N-th SPI transaction fails."""

import sys

import mpy_fakes

if len(sys.argv) > 1:
    mpy_fakes.fail_every[0] = int(sys.argv[1])
sys.modules["machine"] = mpy_fakes
sys.modules["micropython"] = mpy_fakes
# The stall guard times each write on the wall clock: on the shared test machine a pipe
# write can take > 20 ms under load, which is not a hub that stopped reading (that case
# is tested on the virtual clock, test_fw_loop.py). Lines then wait out a 2 s back-off
# and the run ends without them.
import firmware.loop  # noqa: E402

firmware.loop.STALL_US = 10_000_000
try:  # noqa: SIM105 - MicroPython has no contextlib
    import firmware.main  # runs main()
except SystemExit:
    pass
print("MAIN DONE", mpy_fakes.feeds[0], mpy_fakes.calls)

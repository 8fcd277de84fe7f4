"""Stand-ins for the Pico's ``machine`` and ``micropython`` modules, so that
firmware/main.py itself runs under the MicroPython unix port
(test_fw_micropython.py). No reader answers on this SPI bus (every byte reads
0x00: all readers absent) and no pawn board is fitted (the data line reads its
pull-up). The watchdog stops the run after ``LIMIT`` feeds."""

calls: list[tuple[str, object]] = []
feeds = [0]
LIMIT = 200
fail_every = [0]  # >0: every n-th SPI transaction raises OSError (a flaky bus)
transactions = [0]


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, pin: object, mode: int = 0, pull: object = None, value: int = 1) -> None:
        self.level = value if mode == Pin.OUT else 1

    def value(self, level: object = None) -> int:
        if level is not None:
            self.level = 1 if level else 0
        return self.level

    def toggle(self) -> None:
        self.level ^= 1


class SPI:
    MSB = 0

    def __init__(self, *args: object, **kwargs: object) -> None:
        calls.append(("spi", kwargs.get("baudrate")))

    def write(self, buf: bytes) -> None:
        pass

    def write_readinto(self, tx: bytes, rx: bytearray) -> None:
        transactions[0] += 1
        if fail_every[0] and transactions[0] % fail_every[0] == 0:
            raise OSError(5)
        for i in range(len(rx)):
            rx[i] = 0


class WDT:
    def __init__(self, timeout: int) -> None:
        calls.append(("wdt", timeout))

    def feed(self) -> None:
        feeds[0] += 1
        if feeds[0] >= LIMIT:
            raise SystemExit


mem32: dict[int, int] = {}  # the SIO GPIO_OUT_XOR stores (Demux selects with one store)


def freq(hz: int = 0) -> int:
    if hz:
        calls.append(("freq", hz))
        clock_hz[0] = hz
    return clock_hz[0]


clock_hz = [125_000_000]


def kbd_intr(char: int) -> None:
    calls.append(("kbd_intr", char))

# ruff: noqa: UP031 -- MicroPython: %-formatting works on every port
# No contextlib, dataclasses or typing here: plain MicroPython.
"""The firmware's main loop, built so that it cannot hang (Pico + CPython).

- Every step runs the sweep, then the hub's input, then the output, each in
  its own ``try``: an exception is reported on the serial line as ``ERR`` and
  the loop goes on (``Loop.step``).
- The hardware watchdog is fed after each part; if anything still blocks for
  longer than ``WDT_MS`` the RP2040 resets and the firmware boots again
  (HELLO, FULL: the hub resynchronises).
- Input is read without blocking, at most ``MAX_INPUT`` characters a step,
  lines cut at ``MAX_LINE``. With ``micropython.kbd_intr(-1)`` a 0x03 byte
  from the hub is an ordinary character (a bad line, answered with ``ERR``),
  never a KeyboardInterrupt that would drop the board to the REPL.
- Output goes through a bounded queue (``Output``): a few lines a step, and
  only while the port is writable; a write that took longer than ``STALL_US``
  means nobody reads (the hub holds the port without reading, where MicroPython
  blocks up to 500 ms a write), so output pauses for ``STALL_BACKOFF_US``.
  When the queue is full the oldest line is dropped: the hub sees the gap in
  the sequence numbers and asks for a FULL report (SYNC). A port whose poll()
  never reports POLLOUT gets a line after ``PROBE_US`` anyway; taken at once,
  poll() is ignored from then on (the stall timing still bounds every write).
"""

# The RP2040 watchdog allows up to 8.3 s. The longest modelled step is a sweep
# that acquires 36 new cards at once (~0.25 s) plus a WRITE (~0.2 s).

WDT_MS = 4000
MAX_LINE = 600  # longer input is cut; decode_frame then rejects it as oversize
MAX_INPUT = 2048  # characters read per step at most
OUT_LINES = 64  # queued output lines at most (dealing: 36 P + HEALTH)
OUT_PER_STEP = 64  # lines written per step at most (each write is timed)
STALL_US = 20000
STALL_BACKOFF_US = 2000000
# A port that says "not writable" for this long gets one line anyway: if it takes it at
# once, its poll() does not report POLLOUT (older ports) and is not asked again.
PROBE_US = 1000000
URGENT_LINES = 4  # lines written at once mid-sweep (a card moved: R + P)


def settle_from_report(path: str, default: int, lowest: int = 100) -> int:
    """``settle_us`` from the bench report copied to the Pico (``cauldron readers --bench``,
    hardware/bench-test.md); ``default`` (the ISO worst case) when there is none or it is
    out of range."""
    return from_report(path, "settle_us", default, lowest, default)


def from_report(path: str, key: str, default: int, lowest: int, highest: int) -> int:
    """An integer ``key`` of the bench report, or ``default`` when there is none, it is
    unreadable, or out of ``lowest..highest``."""
    try:
        import json

        with open(path) as handle:
            value = int(json.load(handle)[key])
    except Exception:  # no report, unreadable, or not ours: stay with the default
        return default
    return value if lowest <= value <= highest else default


def printable(text: str) -> str:
    """``text`` reduced to what a protocol line may carry."""
    out = []
    for ch in text:
        out.append(ch if " " <= ch <= "~" else "?")
    return "".join(out)


class Output:
    """Bounded, non-blocking line output. ``write(line)`` sends one line;
    ``writable()`` says whether the port takes more now."""

    def __init__(
        self, write: object, writable: object, clock: object, diff: object,
        max_lines: int = OUT_LINES,
    ) -> None:
        self._write = write
        self._writable = writable
        self._clock = clock
        self._diff = diff
        self.max_lines = max_lines
        self.queue = []
        self.dropped = 0
        self.stalls = 0
        self._stalled_at = None
        self.poll_reliable = True
        self._last_write = clock.ticks_us()

    def put(self, line: str) -> None:
        self.queue.append(line)
        if len(self.queue) > self.max_lines:
            self.queue.pop(0)
            self.dropped += 1

    def flush(self, limit: int = OUT_PER_STEP) -> int:
        """Write up to ``limit`` queued lines; returns how many."""
        clock = self._clock
        if self._stalled_at is not None:
            waited = self._diff(clock.ticks_us(), self._stalled_at)
            if 0 <= waited < STALL_BACKOFF_US:
                return 0
            self._stalled_at = None
        written = 0
        while self.queue and written < limit:
            probing = False
            if self.poll_reliable and not self._writable():
                idle = self._diff(clock.ticks_us(), self._last_write)
                if 0 <= idle < PROBE_US:
                    break
                probing = True
            line = self.queue.pop(0)
            start = clock.ticks_us()
            self._write(line)
            written += 1
            self._last_write = end = clock.ticks_us()
            took = self._diff(end, start)
            if took < 0 or took > STALL_US:
                self.stalls += 1
                self._stalled_at = end
                break
            if probing:
                self.poll_reliable = False  # it took the line poll() refused: poll lies
        return written


class LineReader:
    """Assembles hub lines from characters, bounded in length."""

    def __init__(self) -> None:
        self._pending = []
        self._length = 0

    def feed(self, char: str) -> object:
        """One character in; a complete line (str) out, or None."""
        if char == "\n":
            line = "".join(self._pending)
            self._pending = []
            self._length = 0
            return line
        if char != "\r" and self._length < MAX_LINE:
            self._pending.append(char)
            self._length += 1
        return None


class Loop:
    """One scanner, its serial link and its watchdog. ``read_char()`` returns
    one character, or None/"" when nothing is waiting (never blocks)."""

    COLLECT_EVERY = 8  # steps between gc.collect() calls (the hot path allocates little)

    def __init__(
        self,
        scanner: object,
        output: Output,
        read_char: object,
        watchdog: object = None,
        collect: object = None,
        led: object = None,
    ) -> None:
        self.scanner = scanner
        self.output = output
        self.read_char = read_char
        self.watchdog = watchdog
        self.collect = collect
        self.led = led
        self.reader = LineReader()
        self.errors = 0
        self.steps = 0
        scanner.write_line = output.put
        # P/R lines leave as soon as they are confirmed, mid-sweep: at most
        # URGENT_LINES a time, only while the port takes them, and never during a
        # stall back-off, so a slow host cannot hold the sweep up.
        scanner.flush = self.flush_urgent
        scanner.feed = self.feed

    def flush_urgent(self) -> None:
        self.output.flush(URGENT_LINES)

    def feed(self) -> None:
        if self.watchdog is not None:
            self.watchdog.feed()

    def report(self, where: str, error: object) -> None:
        self.errors += 1
        try:  # noqa: SIM105 - MicroPython has no contextlib
            self.scanner.emit_error(
                "%s failed: %s %s" % (where, type(error).__name__, printable(str(error)))
            )
        except Exception:  # the report must never stop the loop
            pass

    def start(self) -> None:
        try:
            self.scanner.boot()
        except Exception as error:
            self.report("boot", error)
        self.feed()
        self.output.flush()

    def step(self) -> None:
        self.steps += 1
        try:
            self.scanner.sweep()
        except Exception as error:
            self.report("sweep", error)
        self.feed()
        try:
            self._input()
        except Exception as error:
            self.report("input", error)
        self.feed()
        try:
            self.output.flush()
            if self.led is not None:
                self.led.toggle()
            if self.collect is not None and self.steps % self.COLLECT_EVERY == 0:
                self.collect()
        except Exception as error:
            self.report("output", error)
        self.feed()

    def _input(self) -> None:
        for _ in range(MAX_INPUT):
            char = self.read_char()
            if not char:
                return
            line = self.reader.feed(char)
            if line is not None:
                try:
                    self.scanner.handle_line(line)
                except Exception as error:
                    self.report("command", error)

# ruff: noqa: UP031 -- MicroPython: %-formatting works on every port
"""The scan loop: poll every reader in turn, debounce, emit protocol lines.

Plain Python for MicroPython (the Pico) and CPython (tests and the sweep model
against ``firmware.mfrc522_sim``).

Readers are polled in ``SCAN_ORDER``. A tag may need up to 5 ms in the field
before it answers (ISO/IEC 14443-3; NXP's reader library waits 5.1 ms), so
the field of the reader ``lead`` places further on in the order is switched on
while this one is polled: each field has been on for ``lead`` polls when its
turn comes, and the wake-ups overlap. ``SCAN_ORDER`` keeps any ``lead + 1``
consecutive readers at least 125 mm apart (no two neighbouring antennas on at
once; checked against ``hub.layout`` by tests/firmware/test_fw_scan_order.py).

One poll of reader ``i`` (its field is already on):
1. select it on the demultiplexer (address + bank pins); load WUPA;
2. wait until the field has been on ``settle_us``; send WUPA (7-bit short
   frame) with a 150 us timer: no answer -> empty;
3. an answer on a reader whose UID is already confirmed is taken as "that tag
   is still there" (probe); ``verify_per_sweep`` occupied readers per sweep,
   round robin, are verified instead with SELECT of the known UID (no
   anticollision needed); a reader with an unknown or unconfirmed tag gets the
   full anticollision + SELECT at both cascade levels (acquire);
4. antenna off (this resets the tag, so every poll starts from IDLE; no HLTA
   is needed).

Why the probe is safe: replacing a card takes a person far longer than the
gap between two polls of a reader (one sweep, <= 40 ms), so a swap shows up
as at least one empty poll and the new card is acquired in full; a swap that
somehow slips through is caught by the round-robin verification within
``n_readers / verify_per_sweep`` sweeps (~1.2 s for 36 readers).

Clock: every wait is computed with ``ticks_diff`` and clamped to its own
maximum, so a tick counter that wrapped (MicroPython's ``ticks_us`` wraps
every 2**30 us, ~18 min) can never turn into a sleep of minutes.
"""

import binascii

from firmware import mfrc522
from firmware.native import const, native
from firmware.pawns import PawnTracker, mask_hex
from firmware.presence import PresenceTracker
from firmware.protocol import FROM_HUB, ProtocolError, Sender, decode_frame

FW_VERSION = "1.1.0"
# Field-on to WUPA: the ISO/IEC 14443-3 worst case as NXP's library uses it.
# `cauldron readers --bench` measures the real wake-up of the table's tags and
# tells what to set here (hardware/bench-test.md).
SETTLE_US = 5100
# At most this many fields warm up while one reader is polled (7 on at once).
FIELD_LEAD = 6
# Poll order of the 36 readers of a table (hub/layout.py numbering): any 7
# consecutive readers (cyclically) are >= 125 mm apart. Found by a search,
# checked by tests/firmware/test_fw_scan_order.py.
SCAN_ORDER = (
    19, 7, 17, 28, 33, 32, 5, 25, 13, 21, 23, 2, 9, 11, 31, 0, 20, 24,
    22, 8, 12, 10, 1, 26, 29, 35, 14, 3, 18, 6, 16, 30, 27, 15, 4, 34,
)
# SPI clock: 2 MHz. SCK reaches each reader as one clean step on its own terminated
# cable, so the limit is the round trip of a bit (SCK out, MISO back through the
# gate) on the longest run, a pad's 80 cm (hardware/box.py computes the runs; cells
# <= 50 cm): 47 % of the half period left at 2 MHz (118 ns), -5 % at 4 MHz
# (hardware.netlist.spi_margin, wiring.md). 2 MHz shortens the acquiring sweep by
# ~1.4 ms against 1 MHz (hardware/timing.md). main.py uses it.
SPI_HZ = 2_000_000
# RP2040 SIO GPIO_OUT_XOR: a store through machine.mem32 flips the outputs in
# its mask (Demux selects a reader with one store).
SIO_GPIO_OUT_XOR = 0xD000001C
# CPU clock main.py sets (machine.freq): the RP2040 at 200 MHz, within the range
# Raspberry Pi rates it for (hardware/timing.md: the choice, measured).
CPU_HZ = 200_000_000
# Time one poll takes without waiting: the lead is the number of polls that cover
# the settle time. The default is the bus-and-RF model's; the bench report's
# measured poll time (bench.json "poll_us", main.py) replaces it.
POLL_US = 600
VERIFY_PER_SWEEP = 1
HEALTH_EVERY = 250  # sweeps between full HEALTH reports (~10 s); a multiple of:
HEALTH_CHECK_EVERY = 5  # sweeps between health checks (changes only)
REINIT_EVERY = 25  # sweeps between re-init attempts of a failed reader
STATS_SAMPLE_EVERY = 50  # one sweep in this many times each poll (2 ticks_us a poll)
STATS_KINDS = ("empty", "probe", "verify", "acquire")
# Minimum field-off time before a reader's field comes back on (NFC Forum
# field reset, 5.1 ms): the tag then starts from IDLE whatever the last poll
# left it in (a WUPA to a tag still in READY would be ignored). With 36
# readers a reader's field is off ~35 ms between polls, so this never waits;
# it matters for small rigs and for WRITE right after a poll.
FIELD_RESET_US = const(5100)

MODE_FAST = "fast"  # probe confirmed readers, verify round robin
MODE_FULL = "full"  # SELECT of the known UID on every occupied poll (reference)
MODE_NAIVE = "naive"  # anticollision + SELECT on every occupied poll (reference)

WUPA_FRAME = bytes((mfrc522.PICC_WUPA,))
_EMPTY = (None, None, "empty")  # poll()'s most frequent answer, not built anew each time


def uid_hex(uid: bytes) -> str:
    return binascii.hexlify(uid).decode().upper()


class Demux:
    """Chip selects through banks of 74HC154 (4-to-16, active-low outputs).

    ``address_pins``: A0..A3, shared by all banks. ``bank_pins``: each bank's
    /E1 (low = bank enabled). ``strobe_pin``: all banks' /E2 tied together;
    pulling it low asserts the selected reader's NSS (and enables its MISO
    tri-state buffer, which shares that line). Pins are ``machine.Pin``-like
    (``value(level)``); unchanged pins are not rewritten.

    ``port``: ``(mem, address, gpios)`` to select with one store instead of a
    pin write per changed line: ``mem[address] = mask`` flips the outputs in
    ``mask`` (the RP2040's SIO GPIO_OUT_XOR through ``machine.mem32``);
    ``gpios`` gives the GPIO numbers of A0..A3 then each /E1."""

    def __init__(self, address_pins: list, bank_pins: list, strobe_pin: object,
                 port: object = None) -> None:
        self.address_pins = address_pins
        self.bank_pins = bank_pins
        self.strobe_pin = strobe_pin
        self.strobe_pin.value(1)
        for pin in bank_pins:
            pin.value(1)
        for pin in address_pins:
            pin.value(0)
        self._address = 0
        self._bank = -1
        self.selected = -1
        # Bound pin writers, looked up once (no attribute chain per edge).
        self._a0, self._a1, self._a2, self._a3 = [p.value for p in address_pins]
        self._banks = [p.value for p in bank_pins]
        # The drivers write the strobe pin themselves (MFRC522 takes a Pin as cs).
        self.nss = strobe_pin
        self._port = None
        self._outputs = 16 * len(bank_pins)
        if port is not None:
            mem, address, gpios = port
            self._port, self._port_address = mem, address
            n_banks = len(bank_pins)
            self._level = sum(1 << gpios[4 + b] for b in range(n_banks))  # banks off
            self._levels = []  # reader -> output word of the A and /E1 lines
            for reader in range(16 * n_banks):
                word = sum(1 << gpios[4 + b] for b in range(n_banks) if b != reader >> 4)
                word |= sum(1 << gpios[i] for i in range(4) if reader >> i & 1)
                self._levels.append(word)

    @native
    def select(self, reader: int) -> None:
        if reader == self.selected:
            return
        if self._port is not None:
            if reader >= self._outputs:
                raise ValueError("reader %d has no demultiplexer output" % reader)
            word = self._levels[reader]
            self._port[self._port_address] = self._level ^ word
            self._level = word
            self.selected = reader
            return
        bank = reader >> 4
        address = reader & 0x0F
        if bank >= len(self._banks):
            raise ValueError("reader %d has no demultiplexer output" % reader)
        changed = self._address ^ address
        if changed & 1:
            self._a0(address & 1)
        if changed & 2:
            self._a1((address >> 1) & 1)
        if changed & 4:
            self._a2((address >> 2) & 1)
        if changed & 8:
            self._a3((address >> 3) & 1)
        self._address = address
        if bank != self._bank:
            if self._bank >= 0:
                self._banks[self._bank](1)
            self._banks[bank](0)
            self._bank = bank
        self.selected = reader

    def cs(self, active: bool) -> None:
        self.strobe_pin.value(0 if active else 1)


class Scanner:
    def __init__(
        self,
        readers: list,
        demux: object,
        clock: object,
        write_line: object,
        settle_us: int = SETTLE_US,
        verify_per_sweep: int = VERIFY_PER_SWEEP,
        mode: str = MODE_FAST,
        health_every: int = HEALTH_EVERY,
        diff: object = None,
        order: object = None,
        lead: object = None,
        pawns: object = None,
        poll_us: int = POLL_US,
    ) -> None:
        self.readers = readers
        self.n_readers = len(readers)
        self.demux = demux
        self.clock = clock
        self.write_line = write_line
        self.settle_us = settle_us
        self.verify_per_sweep = verify_per_sweep
        self.mode = mode
        self.health_every = health_every
        self._diff = diff or mfrc522.ticks_diff
        self.tracker = PresenceTracker(self.n_readers)
        self.sender = Sender()
        self.needs_init = [True] * self.n_readers
        self.last_kind = [""] * self.n_readers
        self.last_error = [""] * self.n_readers
        self.fault_kind = ["silent"] * self.n_readers
        self._off_at = [None] * self.n_readers  # ticks when the field last went off
        self._on_at = [None] * self.n_readers  # ticks when the field went on, None = off
        if order is None:
            order = SCAN_ORDER if self.n_readers == len(SCAN_ORDER) else range(self.n_readers)
        self.order = list(order)
        if sorted(self.order) != list(range(self.n_readers)):
            raise ValueError("order must list every reader once")
        if lead is None:
            # Overlapping fields only with an order checked for separation.
            lead = FIELD_LEAD if self.order == list(SCAN_ORDER) else 0
        self.poll_us = max(1, poll_us)
        self.lead = max(0, min(lead, self.n_readers - 1,
                               (settle_us + self.poll_us - 1) // self.poll_us))
        self.pawns = pawns  # firmware.pawns.PawnSensors or None
        self.flush = None  # set by Loop: send queued lines now, without blocking
        self.feed = None  # set by Loop: feed the watchdog (during a long boot)
        self._warm_next = -1  # the field to switch on during this poll's RF exchange
        # The firmware's own timing (STATS): sweeps since the last report, their
        # total and longest (us), and per poll kind [total us, polls] from sampled sweeps.
        self.cpu_mhz = 0  # set by main.py (machine.freq)
        self.stats_sample_every = STATS_SAMPLE_EVERY
        self._stat_sweeps = 0
        self._stat_total = 0
        self._stat_max = 0
        self._stat_polls = {}
        self._arm_next = -1  # the reader to load WUPA into meanwhile
        self.pawn_tracker = PawnTracker()
        self.sweeps = 0
        self._verify_next = 0
        self._reported_health = {}

    # ---------------------------------------------------------------- output

    def emit(self, kind: str, fields: list | tuple = ()) -> None:
        self.write_line(self.sender.frame(kind, fields))

    def emit_error(self, text: str) -> None:
        text = "".join(ch if " " <= ch <= "~" else "?" for ch in text[:200])
        words = [w for w in text.split(" ") if w]
        self.emit("ERR", words or ["error"])

    def send_full(self) -> None:
        for line in self.sender.full(self.tracker.state(), self.n_readers):
            self.write_line(line)
        if self.pawn_tracker.mask is not None:
            self.emit("PAWNS", [mask_hex(self.pawn_tracker.mask)])

    def scan_pawns(self, emit: bool = True) -> None:
        """Read the pawn sensors (if fitted); PAWNS when the debounced mask changed."""
        if self.pawns is None:
            return
        if self.pawn_tracker.update(self.pawns.read()) and emit:
            self.emit("PAWNS", [mask_hex(self.pawn_tracker.mask)])

    def send_health(self, everything: bool = False) -> None:
        states = self.tracker.health_all()
        report = {}
        for reader, state in states.items():
            if everything or self._reported_health.get(reader) != state:
                report[reader] = state
        self._reported_health = states
        for line in self.sender.health(report):
            self.write_line(line)

    # ---------------------------------------------------------------- polling

    def _init_reader(self, reader: int) -> str | None:
        """Returns the fault kind, or None when the reader is ready."""
        try:
            self.readers[reader].init()
        except (mfrc522.ReaderError, OSError) as error:  # OSError: the SPI bus itself failed
            self.last_error[reader] = str(error)
            self.fault_kind[reader] = getattr(error, "kind", "silent")
            return self.fault_kind[reader]
        finally:  # a hung chip's init waits out the soft reset (50 ms): 36 of them > WDT
            if self.feed is not None:
                self.feed()
        self.needs_init[reader] = False
        return None

    @native
    def _elapsed(self, since: int) -> int:
        """Microseconds since ``since`` (ticks); a negative difference (the
        counter wrapped more than half a period ago) counts as 'long ago'."""
        elapsed = self._diff(self.clock.ticks_us(), since)
        return elapsed if elapsed >= 0 else 1 << 29

    @native
    def _field_on(self, reader: int) -> None:
        """Select ``reader`` and switch its field on (after the field reset
        time, so the tag starts from IDLE)."""
        off_at = self._off_at[reader]
        clock = self.clock
        if off_at is not None:
            elapsed = self._diff(clock.ticks_us(), off_at)
            wait = FIELD_RESET_US - elapsed if elapsed >= 0 else 0
            if 0 < wait <= FIELD_RESET_US:
                clock.sleep_us(wait)
        self.demux.select(reader)
        self.readers[reader].antenna_on()
        self._on_at[reader] = clock.ticks_us()

    @native
    def _activate(self, reader: int, driver: object) -> int:
        """Field on (unless the pipeline did it already), WUPA once the field
        has been on ``settle_us``. Returns the bytes answered (0 = no tag).

        The hot path (36 times a sweep): what it calls is inlined here, the
        demultiplexer is only written when the selection changes, and the bus
        functions are called directly (hardware/timing.md: a Python method call
        costs about 8 attribute reads)."""
        demux = self.demux
        on_at = self._on_at
        if on_at[reader] is None:
            self._field_on(reader)
        elif demux.selected != reader:
            demux.select(reader)
        if not driver.armed:
            driver.prepare(WUPA_FRAME, 7, mfrc522.PROBE_TIMEOUT_US)
        clock = self.clock
        diff = self._diff
        settle = self.settle_us
        elapsed = diff(clock.ticks_us(), on_at[reader])
        wait = settle - elapsed if elapsed >= 0 else 0
        if 0 < wait <= settle:
            clock.sleep_us(wait)
        driver.start()
        # While this tag answers (~370 us on air), the bus is free: the field
        # ``lead`` places on comes on, and the next reader gets its WUPA loaded.
        warm = self._warm_next
        if warm >= 0:
            self._warm_next = -1
            if on_at[warm] is None and not self.needs_init[warm]:
                off_at = self._off_at[warm]
                if off_at is not None:  # the field reset time (never waits at 36 readers)
                    elapsed = diff(clock.ticks_us(), off_at)
                    wait = FIELD_RESET_US - elapsed if elapsed >= 0 else 0
                    if 0 < wait <= FIELD_RESET_US:
                        clock.sleep_us(wait)
                demux.select(warm)
                try:
                    self.readers[warm].antenna_on()
                    on_at[warm] = clock.ticks_us()
                except (mfrc522.ReaderError, OSError):
                    self.needs_init[warm] = True
        arm = self._arm_next
        if arm >= 0:
            self._arm_next = -1
            if not self.needs_init[arm]:
                demux.select(arm)
                armed = self.readers[arm]
                try:
                    armed.arm_wupa()
                except (mfrc522.ReaderError, OSError):  # left for that reader's own poll
                    armed.armed = False
        if demux.selected != reader:
            demux.select(reader)
        return driver.answered()

    @native
    def _field_off(self, reader: int) -> None:
        self.demux.select(reader)
        self.readers[reader].antenna_off()
        self._off_at[reader] = self.clock.ticks_us()
        self._on_at[reader] = None

    def _quiet(self) -> None:
        """Every field off (the next sweep warms them again)."""
        for reader in range(self.n_readers):
            if self._on_at[reader] is not None:
                self._field_off(reader)

    @native
    def _warm(self, reader: int) -> None:
        """Switch a later reader's field on early (pipeline); never a reader
        that needs init: its poll decides whether to touch it. (``_field_on``
        inline: this runs once a poll.)"""
        if self._on_at[reader] is None and not self.needs_init[reader]:
            clock = self.clock
            off_at = self._off_at[reader]
            if off_at is not None:
                elapsed = self._diff(clock.ticks_us(), off_at)
                wait = FIELD_RESET_US - elapsed if elapsed >= 0 else 0
                if 0 < wait <= FIELD_RESET_US:
                    clock.sleep_us(wait)
            self.demux.select(reader)
            try:
                self.readers[reader].antenna_on()
            except (mfrc522.ReaderError, OSError):
                self.needs_init[reader] = True
                return
            self._on_at[reader] = clock.ticks_us()

    @native
    def poll(self, reader: int, verify: bool = False) -> tuple:
        """Poll one reader: ``(uid_hex or None, fault or None, kind)``; kind is
        empty/probe/verify/acquire/tag-error/fault (for statistics)."""
        if self.needs_init[reader]:
            if self.sweeps and (self.sweeps + reader) % REINIT_EVERY:
                return None, self.fault_kind[reader], "fault"
            self.demux.select(reader)
            fault = self._init_reader(reader)
            if fault:
                return None, fault, "fault"
        driver = self.readers[reader]
        try:
            try:
                answer = self._activate(reader, driver)
                if not answer:
                    return _EMPTY
                if answer != 2:
                    raise mfrc522.TagError("ATQA of %d bytes" % answer)
                confirmed = self.tracker.settled(reader)  # (the tracker moves between polls)
                if confirmed and self.mode != MODE_NAIVE:
                    if self.mode == MODE_FAST and not verify:
                        return confirmed, None, "probe"
                    if driver.select_known(binascii.unhexlify(confirmed)):
                        return confirmed, None, "verify"
                    # Not the tag we knew: it went back to IDLE; wake it again.
                    if driver.wupa() is None:
                        return None, None, "empty"
                # No SELECT at the last level: the field goes off next (read_uid).
                uid = uid_hex(driver.read_uid(False))
                return uid, None, "acquire"
            finally:  # field off (this reader is still the selected one)
                if self.demux.selected != reader:
                    self.demux.select(reader)
                driver.antenna_off()
                self._off_at[reader] = self.clock.ticks_us()
                self._on_at[reader] = None
        except mfrc522.TagError as error:
            self.last_error[reader] = str(error)
            return None, None, "tag-error"
        except (mfrc522.ReaderError, OSError) as error:  # OSError: the SPI bus itself failed
            self.last_error[reader] = str(error)
            self.needs_init[reader] = True
            self.fault_kind[reader] = getattr(error, "kind", "silent")
            return None, self.fault_kind[reader], "fault"

    def _moved_from(self, reader: int, uid: str) -> list:
        """A tag just confirmed on ``reader`` cannot still lie on another: the
        card moved, and the old reader's removal (not confirmed yet when the
        scan order reaches the new place first) is reported before the
        placement."""
        moved = []
        for other in range(self.n_readers):
            if other != reader and self.tracker.uid(other) == uid:
                moved += self.tracker.apply_full({other: None})
        return moved

    @native
    def _verify_due(self) -> list:
        if self.mode != MODE_FAST or self.verify_per_sweep <= 0:
            return []
        due = []
        for step in range(self.n_readers):
            reader = (self._verify_next + step) % self.n_readers
            if self.tracker.uid(reader) is not None:
                due.append(reader)
                if len(due) >= self.verify_per_sweep:
                    break
        if due:
            self._verify_next = (due[-1] + 1) % self.n_readers
        return due

    @native
    def sweep(self, emit: bool = True) -> list:
        """Poll every reader once; emit P/R lines as soon as a change is
        confirmed (not at the end of the sweep: up to 35 ms sooner), then
        HEALTH for readers whose health changed."""
        started = self.clock.ticks_us()
        sample = self.sweeps % self.stats_sample_every == 0
        due = self._verify_due()
        events = []
        fault_seen = False
        order = self.order
        n = len(order)
        lead = self.lead
        tracker = self.tracker
        for step in range(lead):  # steady state: already on from the last sweep
            self._warm(order[step])
        for step in range(n):
            reader = order[step]
            if lead:
                self._warm_next = order[(step + lead) % n]
            self._arm_next = order[(step + 1) % n] if n > 1 else -1
            if sample:
                t0 = self.clock.ticks_us()
                uid, fault, kind = self.poll(reader, reader in due)
                self._count_poll(kind, self._diff(self.clock.ticks_us(), t0))
            else:
                uid, fault, kind = self.poll(reader, reader in due)
            if self._warm_next >= 0:  # the poll ended before its tag could answer
                self._warm(self._warm_next)
                self._warm_next = -1
            self._arm_next = -1
            self.last_kind[reader] = kind
            if fault is not None:
                fault_seen = True
            if kind == "tag-error":
                continue  # a tag answered badly: no information either way
            if fault is None and tracker.same(reader, uid):
                continue  # as before: no event (the usual poll, no list built)
            changes = tracker.update(reader, uid, fault)
            if changes and changes[-1][0] == "placed":
                changes = self._moved_from(reader, changes[-1][2]) + changes
            if emit and changes:
                for change, where, change_uid in changes:
                    self.emit("P" if change == "placed" else "R", [str(where), change_uid])
                if self.flush is not None:
                    self.flush()  # out now, not after the sweep (bounded: Output.flush)
            events += changes
        self.sweeps += 1
        took = self._diff(self.clock.ticks_us(), started)
        if 0 <= took < 1 << 28:
            self._stat_sweeps += 1
            self._stat_total += took
            self._stat_max = max(self._stat_max, took)
        self.scan_pawns(emit)
        if emit and (self.sweeps % HEALTH_CHECK_EVERY == 0 or fault_seen):
            # Health changes slowly (flicker needs several sweeps): checked every few
            # sweeps, and at once when a reader failed; all of it every health_every.
            self.send_health(everything=self.sweeps % self.health_every == 0)
        if emit and self.sweeps % self.health_every == 0:
            self.send_stats()
        return events

    def _count_poll(self, kind: str, took: int) -> None:
        entry = self._stat_polls.get(kind)
        if entry is None:
            entry = self._stat_polls[kind] = [0, 0]
        entry[0] += max(0, took)
        entry[1] += 1

    def send_stats(self) -> None:
        """STATS: sweeps since the last report, sweep mean and max, us per poll
        by kind (sampled sweeps), the CPU clock; then a fresh window."""
        count = self._stat_sweeps
        fields = ["sweeps=%d" % count,
                  "mean_us=%d" % (self._stat_total // count if count else 0),
                  "max_us=%d" % self._stat_max]
        for kind in STATS_KINDS:
            entry = self._stat_polls.get(kind)
            if entry and entry[1]:
                fields.append("%s=%d" % (kind, entry[0] // entry[1]))
        fields.append("cpu_mhz=%d" % self.cpu_mhz)
        self.emit("STATS", fields)
        self._reset_stats()

    def _reset_stats(self) -> None:
        self._stat_sweeps = self._stat_total = self._stat_max = 0
        self._stat_polls = {}

    # ---------------------------------------------------------------- life cycle

    def boot(self) -> None:
        """Init every reader, announce, settle the state silently, send FULL. The
        watchdog is fed after each init (``_init_reader``): 36 faulted readers take ~3.7 s
        to give up, here and in the first sweep."""
        for reader in range(self.n_readers):
            self.demux.select(reader)
            self._init_reader(reader)
        self.emit("HELLO", [FW_VERSION, str(self.n_readers)])
        for _ in range(self.tracker.confirm_reads):
            self.sweep(emit=False)
        self._reset_stats()  # STATS counts the scan, not the boot's inits
        self.send_full()
        self.send_health(everything=True)

    def handle_line(self, line: object) -> None:
        """One line from the hub."""
        try:
            frame = decode_frame(line, FROM_HUB)
        except ProtocolError as error:
            self.emit_error("bad line from hub: " + error.reason)
            return
        if frame.kind == "PING":
            self.emit("PONG")
        elif frame.kind == "SYNC":
            self.send_full()
            self.send_health(everything=True)
            self.send_stats()
        elif frame.kind == "WRITE":
            reason = self.write_card_id(int(frame.fields[0]), frame.fields[1])
            if reason is None:
                self.emit("ACK", [str(frame.seq)])
            else:
                self.emit("NAK", [str(frame.seq)] + [w for w in reason.split(" ") if w])

    def write_card_id(self, reader: int, card_id: str) -> str | None:
        """Write ``card_id`` into the confirmed tag on ``reader``; None or why not."""
        if reader >= self.n_readers:
            return "no reader %d" % reader
        uid = self.tracker.uid(reader)
        if uid is None:
            return "no tag on reader %d" % reader
        if self.needs_init[reader]:
            return "reader %d is not working" % reader
        driver = self.readers[reader]
        try:
            self._quiet()  # no warming field near the one written to
            try:
                answer = self._activate(reader, driver)
                if not answer:
                    return "tag left reader %d" % reader
                if not driver.select_known(binascii.unhexlify(uid)):
                    return "another tag is on reader %d" % reader
                mfrc522.write_card_id(driver, card_id)
            finally:
                self._field_off(reader)
        except (mfrc522.TagError, mfrc522.ReaderError, ValueError) as error:
            return "write failed: %s" % error
        return None

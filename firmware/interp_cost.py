# ruff: noqa: UP031 -- MicroPython: %-formatting works on every port
"""The interpreter's cost of the firmware's own sweep, on the MicroPython unix port.

Run by ``firmware.interp`` (CPython) as ``micropython -X heapsize=192k
firmware/interp_cost.py <transcript.json>``. The transcript is a recording of the
real scan loop (``firmware.loop.Loop`` over ``firmware.scan.Scanner``) on the
register-level simulator: every clock reading and every SPI answer. Here the
same firmware modules replay it:

1. once through checking stand-ins: every call must match the recording (the
   firmware takes exactly the path it took on the simulator);
2. ``RUNS`` times through the cheapest stand-ins there are (pin writes, SPI
   writes and sleeps are C builtins, like ``machine``'s on the Pico), timing each
   poll by kind and each loop step on the wall clock. What the two Python
   stand-ins (``ticks_us``, ``write_readinto``) and the timing wrapper cost
   beyond a C call is measured alone and taken off.

It also times the calibration loop, the ``add_test`` of shaoziyang's
micropython_benchmarks (``C = p[1] + p[2]``), whose RP2040 figure is published.
Prints one JSON line. Not for the Pico (never imported by main.py).
"""

import gc
import json
import sys
import time

if "--bytecode" in sys.argv:  # the bound: no native emitter (firmware.native falls back)
    class _NoNative:  # a micropython module without ``native``
        pass

    sys.modules["micropython"] = _NoNative()

from firmware.loop import Loop, Output
from firmware.mfrc522 import MFRC522
from firmware.scan import Demux, Scanner

RUNS = 5
CAL_CHUNK = 5000  # iterations per timed chunk (~250-400 us here, like a loop step)


def add_test(p):
    for i in range(p[0]):  # noqa: B007 - the published loop, as published
        C = p[1] + p[2]  # noqa: F841


def float_add_test(p):
    for i in range(p[0]):  # noqa: B007
        C = p[1] + p[2]  # noqa: F841


def chunks_us_per_iteration(test, p, chunks, out):
    """The loop in chunks about as long as a poll, each timed: ``out`` gets us/iteration.
    Chunks and polls are taken turn about and reduced by the same statistic
    (``low``), so the shared machine's load weighs on both alike."""
    for _ in range(chunks):
        start = time.ticks_us()
        test(p)
        out.append(time.ticks_diff(time.ticks_us(), start) / p[0])


def low(values):
    """The 10th percentile: what a run costs when the shared machine leaves it alone
    (a preempted poll or chunk is slower, never faster). The same statistic for the
    polls, the loop and the calibration chunks."""
    values = sorted(values)
    return values[len(values) // 10]


class Nothing:
    pass


def build(transcript, tape, check):
    """Firmware objects wired to replay stand-ins; ``check``: compare every call."""
    ticks = [e[1] for e in tape if e[0] == "t"]
    answers = [bytes.fromhex(e[2]) for e in tape if e[0] == "x"]
    pos = [0, 0, 0]  # ticks, answers, checked events
    sink = []

    if check:
        def expect(kind, *args):
            event = tape[pos[2]]
            pos[2] += 1
            if event[0] != kind or list(event[1:1 + len(args)]) != list(args):
                raise RuntimeError("call %d: got %s%r, recorded %r" % (pos[2], kind, args, event))
            return event

        class Clock:
            def ticks_us(self):
                return expect("t")[1]

            def sleep_us(self, us):
                expect("s", us)

        class CheckPin:
            def __init__(self, name):
                self.name = name

            def value(self, level):
                expect("p", self.name, level)

        class CheckBus:
            def tx(self, buf):
                expect("w", bytes(buf).hex())

            def txs(self, batch):
                expect("W", bytes(batch).hex())

            def xfer(self, tx, rx):
                answer = bytes.fromhex(expect("x", bytes(tx).hex())[2])
                for i in range(len(rx)):
                    rx[i] = answer[i]

        class Port:
            def __setitem__(self, address, mask):
                expect("m", mask)

        clock, bus, mem = Clock(), CheckBus(), Port()

        def pin(name):
            return CheckPin(name)
    else:
        def ticks_us():
            i = pos[0]
            pos[0] = i + 1
            return ticks[i]

        def xfer(tx, rx):
            i = pos[1]
            pos[1] = i + 1
            rx[:] = answers[i]

        clock = Nothing()
        clock.ticks_us = ticks_us
        clock.sleep_us = sink.count  # a C builtin, as time.sleep_us
        bus = Nothing()  # firmware.picobus: one viper call per transaction or batch
        bus.tx = sink.count
        bus.txs = sink.count
        bus.xfer = xfer

        def pin(name):
            p = Nothing()
            p.value = sink.count  # a C builtin, as machine.Pin.value
            return p

        mem = {}  # a C-level store, as machine.mem32

    demux = Demux([pin("A%d" % i) for i in range(4)], [pin("E1_%d" % b) for b in range(3)],
                  pin("E2"), (mem, transcript["port"][0], transcript["port"][1]))
    # time.ticks_diff as on the Pico (a C function; the recording never wraps)
    diff = time.ticks_diff
    readers = [MFRC522(bus, None, clock, diff) for _ in range(transcript["n"])]
    lines = []
    scanner = Scanner(readers, demux, clock, None, diff=diff)
    output = Output(lines.append, lambda: True, clock, diff)
    loop = Loop(scanner, output, lambda: "", None, None, None)
    return loop, scanner, pos, lines


def replay(transcript, tape, check, timings=None, count_kinds=False, time_polls=True,
           mark=None):
    """``time_polls`` False: whole steps only, the poll wrapper not installed (its own
    cost is then nothing to take off: the figure the model uses). ``mark(label)``:
    called right before and right after each step (the instruction count's marks)."""
    loop, scanner, pos, lines = build(transcript, tape, check)
    steps = transcript["steps"]
    ticks_us, ticks_diff = time.ticks_us, time.ticks_diff
    polls = {}  # kind -> [(us, ticks calls, spi answers), ...]
    step_times = {}  # label -> [(us, ticks calls, spi answers, the same within polls), ...]
    in_polls = [0, 0, 0, 0]  # this step: us, ticks calls, spi answers, polls
    real_poll = scanner.poll
    timing = [False]

    kinds = {}  # label -> {kind: polls per step}
    label = [""]

    def timed_poll(reader, verify=False):
        if not timing[0]:
            result = real_poll(reader, verify)
            if count_kinds and label[0]:
                per = kinds.setdefault(label[0], {})
                per[result[2]] = per.get(result[2], 0) + 1
            return result
        t0 = ticks_us()
        p0, a0 = pos[0], pos[1]
        result = real_poll(reader, verify)
        took = ticks_diff(ticks_us(), t0)
        entry = polls.get(result[2])
        if entry is None:
            entry = polls[result[2]] = []
        entry.append((took, pos[0] - p0, pos[1] - a0))
        in_polls[0] += took
        in_polls[1] += pos[0] - p0
        in_polls[2] += pos[1] - a0
        in_polls[3] += 1
        return result

    if time_polls or count_kinds:
        scanner.poll = timed_poll
    gc.collect()
    done = 0
    for step in steps:
        kind = step[0]
        if kind == "start":
            loop.start()
        elif kind == "step":
            # The heap as the Pico's loop keeps it: collected every COLLECT_EVERY steps
            # (here outside the timing; the model charges it apart). Without this, the
            # garbage of every earlier step piles up in the 64 MB heap, and each
            # multi-block allocation scans past all of it (py/gc.c advances its first-free
            # index for 1-block allocations only): allocations would cost ever more.
            if done % Loop.COLLECT_EVERY == 0:
                gc.collect()
            done += 1
            label[0] = step[1]
            timing[0] = timings is not None
            in_polls[0] = in_polls[1] = in_polls[2] = in_polls[3] = 0
            p0, a0 = pos[0], pos[1]
            if mark is None:
                t0 = ticks_us()
                loop.step()
                took = ticks_diff(ticks_us(), t0)
            else:
                mark("-")
                loop.step()
                mark("step:" + step[1])
                took = 0
            timing[0] = False
            if timings is not None:
                step_times.setdefault(step[1], []).append(
                    (took, pos[0] - p0, pos[1] - a0) + tuple(in_polls))  # noqa: RUF005 - MicroPython
    if check and pos[2] != len(tape):
        raise RuntimeError("%d recorded calls never made" % (len(tape) - pos[2]))
    if count_kinds:
        n_steps = {}
        for step in steps:
            if step[0] == "step":
                n_steps[step[1]] = n_steps.get(step[1], 0) + 1
        for name, per in kinds.items():
            for kind in per:
                per[kind] /= n_steps[name]
        return lines, polls, step_times, kinds
    return lines, polls, step_times


def stand_in_costs(mark=None):
    """What a Python stand-in and the timing wrapper cost beyond a C builtin call (us).
    ``mark``: the counting run; each loop of 400 calls is one counted interval."""
    n = 400
    ticks = list(range(n + 2))
    answers = [bytes(5)] * (n + 2)
    pos = [0, 0]
    sink = []
    rx = bytearray(5)
    tx = bytearray(5)

    def ticks_us():
        i = pos[0]
        pos[0] = i + 1
        return ticks[i]

    def write_readinto(tx, rx):
        i = pos[1]
        pos[1] = i + 1
        rx[:] = answers[i]

    def loop_c(n):
        count = sink.count
        for _ in range(n):
            count(tx)

    def loop_ticks(n):
        for _ in range(n):
            ticks_us()

    def loop_spi(n):
        for _ in range(n):
            write_readinto(tx, rx)

    def null(reader, verify=False):
        return None, None, "empty"

    def loop_wrapper(n):
        ticks, diff = time.ticks_us, time.ticks_diff
        entry = [0, 0, 0, 0]
        for _ in range(n):
            t0 = ticks()
            p0, a0 = pos[0], pos[1]
            result = null(1, False)
            took = diff(ticks(), t0)
            entry[0] += took
            entry[1] += 1
            entry[2] += pos[0] - p0
            entry[3] += pos[1] - a0
            del result

    def loop_null(n):
        for _ in range(n):
            null(1, False)

    def best(fn):
        # Short chunks, low percentile: the same statistic as the polls' (a long
        # loop on the shared machine would be preempted, and over-correct).
        chunk = 400
        times = []
        for _ in range(100):
            pos[0] = pos[1] = 0
            start = time.ticks_us()
            fn(chunk)
            times.append(time.ticks_diff(time.ticks_us(), start) / chunk)
        return low(times)

    if mark is not None:
        for name, fn in (("c", loop_c), ("ticks", loop_ticks), ("spi", loop_spi)):
            pos[0] = pos[1] = 0
            mark("-")
            fn(n)
            mark("stand-in:%s:%d" % (name, n))
        return {}
    c_call = best(loop_c)
    return {
        "c_call_us": c_call,
        "ticks_extra_us": max(0.0, best(loop_ticks) - c_call),
        "spi_extra_us": max(0.0, best(loop_spi) - c_call),
        "wrapper_us": max(0.0, best(loop_wrapper) - best(loop_null)),
    }


# Calibration loop lengths of the counting run (``--count LOW,HIGH``, from
# firmware.interp): their difference cancels the call.
COUNT_ADD = (2000, 6000)
if "--count" in sys.argv:
    COUNT_ADD = tuple(int(n) for n in sys.argv[sys.argv.index("--count") + 1].split(","))


def count(transcript, tape):
    """The instruction-count run (under valgrind's callgrind, started by firmware.interp
    with ``--dump-before=gc_isenabled``): ``gc.isenabled`` is the mark (a C function the
    firmware never calls), each mark closes
    one counted interval, and the labels say what each interval holds, in order. Counts
    do not depend on the machine's load: the same run gives the same figures."""
    labels = []
    marker = gc.isenabled

    def mark(label):
        labels.append(label)
        marker()

    gc.collect()
    args = [[n, 12345678, 56781234] for n in COUNT_ADD]
    float_args = [[n, 12345678.1234, 56781234.5678] for n in COUNT_ADD]
    mark("-")
    for p in args:
        add_test(p)
        mark("add:%d" % p[0])
    for p in float_args:
        float_add_test(p)
        mark("float_add:%d" % p[0])
    costs = stand_in_costs(mark)
    _lines, _polls, steps = replay(transcript, tape, False, True, False, False, mark)
    calls = {}
    for label, rows in steps.items():
        calls[label] = [[t, a] for took, t, a, pt, p_t, p_a, n in rows]
    return {"labels": labels, "stand_in_calls": costs, "step_calls": calls}


def main():
    with open(sys.argv[1]) as handle:
        transcript = json.load(handle)
    tape = transcript["events"]
    # The counting run (valgrind) skips the call-by-call check: the timed run and
    # tests/firmware/test_fw_interp.py make it; the printed lines are still compared.
    checked = "--count" not in sys.argv
    lines, _polls, _steps, kinds_per_step = replay(transcript, tape, checked, None, True)
    if lines != transcript["lines"]:
        raise RuntimeError("the replayed firmware printed other lines than on the simulator")
    if not checked:
        result = count(transcript, tape)
        result["kinds_per_step"] = kinds_per_step
        result["implementation"] = "%s %s" % (sys.implementation.name, sys.version)
        print(json.dumps(result))
        return
    costs = stand_in_costs()
    best_polls = {}
    best_steps = {}
    whole_steps = {}
    add_runs, float_add_runs = [], []
    for _ in range(RUNS):
        add, float_add = [], []
        chunks_us_per_iteration(add_test, [CAL_CHUNK, 12345678, 56781234], 30, add)
        chunks_us_per_iteration(float_add_test, [CAL_CHUNK, 12345678.1234, 56781234.5678], 10,
                                float_add)
        _lines, polls, steps = replay(transcript, tape, False, True)
        _lines, _polls, bare = replay(transcript, tape, False, True, False, False)
        chunks_us_per_iteration(add_test, [CAL_CHUNK, 12345678, 56781234], 30, add)
        chunks_us_per_iteration(float_add_test, [CAL_CHUNK, 12345678.1234, 56781234.5678], 10,
                                float_add)
        # The same statistic as the polls': each run's low percentile, the best run.
        add_runs.append(low(add))
        float_add_runs.append(low(float_add))
        # Low percentiles (then the best run): the machine is shared, and a poll the
        # scheduler interrupted is not the interpreter's cost.
        for kind, rows in polls.items():
            us = low([took - t * costs["ticks_extra_us"] - a * costs["spi_extra_us"]
                         for took, t, a in rows]) - costs["wrapper_us"]
            if kind not in best_polls or us < best_polls[kind][0]:
                best_polls[kind] = (us, len(rows))
        for label, rows in steps.items():
            # The loop outside the polls: the step less its polls (as timed, with the
            # wrapper), less the stand-ins' extra cost outside the polls.
            us = low([took - pt - n * costs["wrapper_us"]
                         - (t - p_t) * costs["ticks_extra_us"] - (a - p_a) * costs["spi_extra_us"]
                         for took, t, a, pt, p_t, p_a, n in rows])
            if label not in best_steps or us < best_steps[label]:
                best_steps[label] = us
        for label, rows in bare.items():
            # Whole steps, no poll wrapper: less only the two Python stand-ins' extra cost.
            whole = low([took - t * costs["ticks_extra_us"] - a * costs["spi_extra_us"]
                         for took, t, a, pt, p_t, p_a, n in rows])
            if label not in whole_steps or whole < whole_steps[label]:
                whole_steps[label] = whole
    print(json.dumps({
        "implementation": "%s %s" % (sys.implementation.name, sys.version),
        "add_test_us": min(add_runs),
        "add_test_runs_us": add_runs,
        "float_add_test_us": min(float_add_runs),
        "kinds_per_step": kinds_per_step,
        "stand_ins": costs,
        "poll_us": {k: v[0] for k, v in best_polls.items()},
        "poll_counts": {k: v[1] for k, v in best_polls.items()},
        "outside_polls_us": best_steps,
        "step_us": whole_steps,
        "replayed_events": len(tape),
    }))


main()

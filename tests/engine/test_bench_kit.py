"""The benchmark helpers every `cauldron bench` target shares."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.bench.kit import percentile, stop_process


def test_percentile_is_linear_between_ranks() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(values, 0) == 1.0
    assert percentile(values, 50) == 3.0
    assert percentile(values, 100) == 5.0
    assert percentile(values, 95) == pytest.approx(4.8)
    assert percentile([7.0], 99) == 7.0
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)


def test_stop_process_kills_one_that_ignores_sigterm() -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print(1, flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"1\n"
    stop_process(proc, timeout=0.5)
    assert proc.returncode is not None and proc.returncode < 0


def test_the_machine_is_said_with_its_load() -> None:
    # Other work on the machine shows in every figure: a report says how much there was.
    from engine.bench.kit import machine_info

    info = machine_info()
    assert len(info["load_average"]) == 3 and all(x >= 0 for x in info["load_average"])
    assert info["cores"] >= 1

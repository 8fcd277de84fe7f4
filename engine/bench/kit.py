"""`cauldron bench`: the benchmark command and what its targets share.

Benchmarks live in this package (`engine.bench`), out of the product packages: they may
import any of them (like the composition root, `engine.app`), and no product module imports
them (tests/test_dependency_rule.py). Each target module exposes
`run(runs: int, progress: Progress) -> list[Figure]`. Figures are reported as medians over
several runs, with the machine they ran on.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.cli import CliError, Progress

BENCH_TARGETS: dict[str, str] = {
    "engine": "engine.bench.rules",
    "history": "engine.bench.history",
    "hub": "engine.bench.hub",
    "engine-service": "engine.bench.service",
    "dashboard": "engine.bench.dashboard",
}


@dataclass
class Figure:
    """One measured quantity: its samples (one per run) and the budget it must meet."""

    name: str
    unit: str
    samples: list[float]
    goal: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "unit": self.unit,
            "median": self.median,
            "samples": self.samples,
            "goal": self.goal,
            **({"detail": self.detail} if self.detail else {}),
        }


ProgressFn = Callable[[str, int, int], None]


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of `values`, linear between ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    k = (len(ordered) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def stop_process(proc: subprocess.Popen[Any], timeout: float = 10.0) -> None:
    """Stop a process started by a benchmark: SIGTERM, then SIGKILL if it lingers."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": f"{platform.system()} {platform.release()}",
        # Other work on the machine shows in every figure: say how much there was.
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


STORE_TARGETS = {"engine-service"}  # benches that take --store


def run_targets(names: list[str], runs: int, progress: ProgressFn,
                store: str | None = None) -> dict[str, list[Figure]]:
    results: dict[str, list[Figure]] = {}
    for name in names:
        module = importlib.import_module(BENCH_TARGETS[name])
        extra = {"store": store} if store and name in STORE_TARGETS else {}
        results[name] = module.run(runs=runs, progress=progress, **extra)
    return results


def _available_targets() -> list[str]:
    import importlib.util

    found = []
    for name, module in BENCH_TARGETS.items():
        try:
            if importlib.util.find_spec(module) is not None:
                found.append(name)
        except ModuleNotFoundError:
            continue
    return found


def _handle(args: argparse.Namespace) -> int:
    available = _available_targets()
    names = available if args.target == "all" else [args.target]
    for name in names:
        if name not in available:
            raise CliError(f"unknown benchmark {name!r}; choose from: all, {', '.join(available)}")
    if args.store and not set(names) & STORE_TARGETS:
        raise CliError(f"--store applies to {', '.join(sorted(STORE_TARGETS))} only")
    results = run_targets(
        names, runs=args.runs, progress=Progress(None if not args.json else False),
        store=args.store,
    )
    machine = machine_info()
    if args.json:
        out = {
            "machine": machine,
            "runs": args.runs,
            "results": {k: [f.to_json() for f in v] for k, v in results.items()},
        }
        print(json.dumps(out, indent=2))
        return 0
    print(f"machine: {machine['cpu']} ({machine['cores']} cores), Python {machine['python']}, "
          f"load average {' / '.join(str(x) for x in machine['load_average'])} (1/5/15 min)")
    for target, figures in results.items():
        print(f"[{target}]")
        for fig in figures:
            goal = f"   (goal: {fig.goal})" if fig.goal else ""
            runs = len(fig.samples)
            print(f"  {fig.name:<44} {fig.median:>12,.2f} {fig.unit}  median of {runs}{goal}")
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("bench", help="run benchmarks (medians of several runs)")
    parser.add_argument("target", choices=["all", *BENCH_TARGETS], help="what to measure")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (default 5)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--store", help="engine-service: where the engine keeps games "
                        "(postgresql://… or sqlite; default a SQLite data dir)")
    parser.set_defaults(handler=_handle)

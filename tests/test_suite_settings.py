"""The suite's own rules: property tests take their size from the hypothesis profile
(tests/conftest.py: ``ci`` under CI, ``dev`` otherwise), never a hard-coded count."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).resolve().parent
HARD_CODED = re.compile(r"max_examples\s*=\s*\d")


def test_no_test_hard_codes_its_number_of_examples() -> None:
    found = [f"{p.relative_to(TESTS)}:{n}" for p in sorted(TESTS.rglob("*.py"))
             if p.name != "conftest.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if HARD_CODED.search(line)]
    assert not found, f"use the hypothesis profile (or a fraction of it) instead: {found}"


def test_a_profile_is_loaded() -> None:
    assert settings().deadline is None
    assert settings().max_examples in (settings.get_profile("ci").max_examples,
                                       settings.get_profile("dev").max_examples)

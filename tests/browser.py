"""The browser every browser test uses: Debian's Chromium through Playwright, launched once
per test process (`tests/conftest.py`'s ``browser`` fixture). One launch only: a second
`sync_playwright()` in the same process fails ("Sync API inside the asyncio loop"), which
two fixtures of their own did when xdist ran a Quacks page test and a dashboard one in one
worker."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]


def launched() -> Iterator[Any]:
    """Chromium, headless, for as long as the generator lives; skipped (failed in CI) when
    it is not installed."""
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        message = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; CI must run the browser tests")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()

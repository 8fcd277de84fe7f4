"""Closing a /count page is not an error (issue 18, item 10: one traceback per closed page
filled the terminal): pages opened and closed while the count goes on leave no error in the
server's log."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from dashkit import PIN, wait_until
from test_count_browser import CountTable, count_table  # noqa: F401 - the fixture

pytestmark = pytest.mark.browser


def test_closed_count_pages_leave_no_traceback(count_table: CountTable,  # noqa: F811
                                               browser: Any,
                                               caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    context = browser.new_context()
    try:
        for _ in range(6):
            page = context.new_page()
            page.goto(f"{count_table.url}/count?lang=en#pin={PIN}")
            page.wait_for_selector("#setup:not([hidden]) form")
            page.close()
            count_table.desk._notify()  # the count goes on: an update for every page
        # Every closed page's socket handled to its end (none is subscribed any more).
        wait_until(lambda: not count_table.desk._subscribers, 20, "the closed pages' sockets")
    finally:
        context.close()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not errors, "\n".join(f"{r.name}: {r.getMessage()}" for r in errors)

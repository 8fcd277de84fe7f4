"""One router per resource: table, seats, host, virtual table, scores, pages."""

from __future__ import annotations

from fastapi import HTTPException, status

from dashboard.models import CommandResult


def answered(result: CommandResult) -> CommandResult:
    """A command's answer as the HTTP reply: 200, 409 (refused, with the reason) or 503
    (the broker or the service is not there)."""
    if result.ok:
        return result
    code = status.HTTP_503_SERVICE_UNAVAILABLE if result.unavailable else status.HTTP_409_CONFLICT
    raise HTTPException(code, result.error or "refused")

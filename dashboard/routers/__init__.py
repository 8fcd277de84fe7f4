"""One router per resource: table, seats, host, virtual table, scores, pages."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Request, status
from fastapi.responses import JSONResponse

from dashboard.models import CommandResult


class Refusal(HTTPException):
    """A refusal (of the engine, the hub or the dashboard): the reason, its stable ``code``
    (the pages say ``refusal_<code>`` in their language), the rule id and the code's
    parameters (ids: cells, seats) stay on the HTTP answer (`refusal_response`)."""

    def __init__(self, status_code: int, message: str, code: str | None = None,
                 rule: str | None = None, params: dict[str, Any] | None = None) -> None:
        super().__init__(status_code, message)
        self.code = code
        self.rule = rule
        self.params = params or {}


def answered(result: CommandResult) -> CommandResult:
    """A command's answer as the HTTP reply: 200, 409 (refused, with the reason, its code
    and rule) or 503 (the broker or the service is not there)."""
    if result.ok:
        return result
    code = status.HTTP_503_SERVICE_UNAVAILABLE if result.unavailable else status.HTTP_409_CONFLICT
    raise Refusal(code, result.error or "refused", result.code, result.rule)


async def refusal_response(request: Request, exc: Exception) -> JSONResponse:
    """``{"detail": reason, "error": {"code", "rule", "message"[, "params"]}}`` (``detail`` as
    every other HTTP error of the dashboard has it; ``params`` only when the code has some)."""
    assert isinstance(exc, Refusal)
    message = str(exc.detail)
    error: dict[str, Any] = {"code": exc.code, "rule": exc.rule, "message": message}
    if exc.params:
        error["params"] = exc.params
    return JSONResponse({"detail": message, "error": error}, status_code=exc.status_code,
                        headers=exc.headers)

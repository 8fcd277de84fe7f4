"""The engine service's errors: one small hierarchy (a refused command is
`engine.games.base.Refused`, the game seam's)."""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every engine-service error; ``str()`` says what is wrong and what to do."""


class StoreError(ServiceError):
    """The table log cannot be opened, read or written."""

"""The engine service's errors: one small hierarchy."""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every engine-service error; ``str()`` says what is wrong and what to do."""


class Refused(ServiceError):
    """A command that does not fit the moment (or is malformed); nothing was changed.

    ``rule`` names the rule (G…) when one applies; ``code`` is a stable id for translations.
    """

    def __init__(self, message: str, *, code: str = "refused", rule: str | None = None) -> None:
        super().__init__(f"{message} ({rule})" if rule else message)
        self.message = message
        self.code = code
        self.rule = rule


class StoreError(ServiceError):
    """The table log cannot be opened, read or written."""

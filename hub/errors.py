"""The hub's errors: each message names the problem and what to do next."""

from __future__ import annotations

from engine.datadir import DiskTrouble


class HubError(Exception):
    """Base of every hub error."""


class ConfigError(HubError):
    """A hub configuration that cannot be used."""


class BackendError(HubError):
    """A reader back-end failed (link lost, hardware missing)."""


class UnsupportedError(BackendError):
    """The back-end cannot do this (e.g. write a card id into a tag)."""


class TagMapError(HubError):
    """The tag map refused a change (UID already enrolled, unknown card id, bad file)."""


class OutboxError(HubError):
    """The outbox cannot be written (a read-only or full disk...): ``trouble`` says why."""

    def __init__(self, message: str, trouble: DiskTrouble) -> None:
        super().__init__(message)
        self.trouble = trouble

"""The hub's errors: each message names the problem and what to do next."""

from __future__ import annotations


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

"""Dashboard settings: one plain pydantic model, filled by the CLI or by tests."""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.wire.contract import TABLE_ID_PATTERN

Lang = Literal["fr", "en", "de"]
LANGS: tuple[Lang, ...] = ("fr", "en", "de")


def random_pin() -> str:
    """A 6-digit host PIN for when none is configured (printed at start-up)."""
    return f"{secrets.randbelow(10**6):06d}"


class Settings(BaseModel):
    """Where the dashboard listens, which broker and table it follows, and its host PIN."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    mqtt: str = "mqtt://127.0.0.1:1883"
    base_topic: str = "cauldron"
    table: str = Field(default="t1", pattern=TABLE_ID_PATTERN)
    # At least 6 characters (a million guesses; dashboard.guard makes each one slow).
    pin: str = Field(default_factory=random_pin, min_length=6, max_length=32)
    # Seat secrets and the virtual table's state (None: kept in memory only, lost on restart)
    data_dir: Path | None = None
    default_lang: Lang = "fr"
    virtual: bool = True  # offer the virtual table (works only with the simulated hub)
    # How long a saved virtual table waits, at start, for the engine's game and the hub.
    virtual_restore_wait: float = Field(default=20.0, ge=0, le=300)
    command_timeout: float = Field(default=5.0, gt=0, le=60)

    @field_validator("pin")
    @classmethod
    def _pin_chars(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9]+", value):
            raise ValueError("the host PIN is 6-32 letters or digits")
        return value

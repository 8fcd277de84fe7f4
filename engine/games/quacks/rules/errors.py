"""The Quacks engine's errors: each names the rule (Q1…Q37, or a Decision N1…N31)."""

from __future__ import annotations


class QuacksError(Exception):
    """Base of every Quacks rules error; `rule` is the id from RULES-QUACKS.md."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} ({rule})")
        self.rule = rule
        self.message = message

    def to_wire(self) -> dict[str, str]:
        return {"rule": self.rule, "message": self.message, "error": type(self).__name__}


class IllegalAction(QuacksError):
    """An action the rules do not allow now; the game is unchanged."""


class InvalidSetup(QuacksError):
    """A configuration, catalogue or deck that does not fit the box."""


class InvalidWire(QuacksError, ValueError):
    """An action that cannot be decoded from its wire form."""

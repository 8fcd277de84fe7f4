"""The rules engine's errors: one small hierarchy, each error names the rule (G1…G11)."""

from __future__ import annotations


class RulesError(Exception):
    """Base of every rules error; `rule` is the rule id from RULES.md (e.g. "G6")."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} ({rule})")
        self.rule = rule
        self.message = message

    def to_wire(self) -> dict[str, str]:
        return {"rule": self.rule, "message": self.message, "error": type(self).__name__}


class IllegalAction(RulesError):
    """An action the rules do not allow at this moment; the game is unchanged."""


class InvalidSetup(RulesError):
    """A game configuration or deal that does not fit the box (G1, G2)."""


class InvalidWire(RulesError, ValueError):
    """An action, log or cell that cannot be decoded from its wire form (a ValueError
    too, for callers outside the rules)."""


class InvalidLog(RulesError):
    """A log that does not replay: an action in it is illegal at its point."""

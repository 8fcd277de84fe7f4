"""The hidden-information oracle shared by the view tests: which cards an observer must never
see named (the observer module is what it checks, so it is computed from the game here)."""

from __future__ import annotations

from engine.games.glastonbury.rules import Game


def covered(game: Game, seat: int | None = None) -> set[str]:
    """Cards the public (`seat` None) or `seat` must not see: the pile, every cauldron but its
    top (a seat's own too, unless the memory aid is on), and the other seats' recipes."""
    hidden = set(game.pile.cards())
    for s, cauldron in enumerate(game.cauldrons):
        if s != seat or not game.config.memory_aid:
            hidden |= set(cauldron[:-1])
    for s, recipes in enumerate(game.recipes):
        if s != seat:
            hidden |= set(recipes)
    return hidden


def keys_of(data: object) -> set[str]:
    """Every key at any depth of a wire payload (a public view must hold no secret's key)."""
    if isinstance(data, dict):
        return set(data) | {k for v in data.values() for k in keys_of(v)}
    if isinstance(data, list):
        return {k for v in data for k in keys_of(v)}
    return set()

"""The draw pile, known (simulation: a seeded shuffle) or unknown (a real table).

At a real table nobody knows the pile's order, but the engine knows exactly which cards are
in it (every other card is visible or tracked), and it knows the bottom exactly: cards sent
under the pile by Vanesco (G8) sit there, in order, and come out only after the rest.
Both modes answer the same questions, so the game model does not care which it has.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import NamedTuple

from engine.games.glastonbury.rules.names import card_name


class Pile:
    __slots__ = ("_bottom", "_known", "_order", "_unknown", "size")

    def __init__(self, *, order: Iterable[str] | None = None, unknown: Iterable[str] = ()) -> None:
        self._known = order is not None
        # Known mode: every card, top first. Unknown mode: the unordered part of the pile,
        # above `_bottom`, the cards Vanesco sent under it (top first).
        self._order: deque[str] = deque(order if order is not None else ())
        self._unknown: set[str] = set() if order is not None else set(unknown)
        self._bottom: deque[str] = deque()
        self.size = len(self._order) + len(self._unknown)  # kept in step: read on every turn

    @property
    def known(self) -> bool:
        return self._known

    def __len__(self) -> int:
        return self.size

    def __contains__(self, card: object) -> bool:
        return card in self._unknown or card in self._order or card in self._bottom

    def possible_next(self) -> list[str]:
        """The cards that may come off the top now (one when the order is known)."""
        if self._order:
            return [self._order[0]]
        if self._unknown:
            return sorted(self._unknown)
        return [self._bottom[0]] if self._bottom else []

    def top(self) -> str:
        """The next card, in known mode."""
        return self._order[0]

    def pop_top(self) -> str:
        """Draw the next card in known mode (`top()` then `draw()` in one step)."""
        self.size -= 1
        return self._order.popleft()

    def why_not_next(self, card: str) -> str | None:
        """None if `card` can be the next card off the pile, else the reason."""
        if self._order:
            top = self._order[0]
            if card == top:
                return None
            return f"the top of the draw pile is {card_name(top)}, not {card_name(card)}"
        if self._unknown:
            if card in self._unknown:
                return None
            if card in self._bottom:
                return (
                    f"{card_name(card)} was sent under the pile by Vanesco and cannot come out "
                    f"before the {len(self._unknown)} card(s) above it"
                )
            return f"{card_name(card)} is not in the draw pile"
        if self._bottom:
            nxt = self._bottom[0]
            return None if card == nxt else (
                f"the next card of the draw pile is {card_name(nxt)}, not {card_name(card)}")
        return "the draw pile is empty"

    def draw(self, card: str) -> None:
        """Remove `card` from the top; the caller checked `why_not_next(card)` is None."""
        self.size -= 1
        if self._order:
            self._order.popleft()
        elif self._unknown:
            self._unknown.remove(card)
        else:
            self._bottom.popleft()

    def put_under(self, card: str) -> None:
        self.size += 1
        if self._known:
            self._order.append(card)
        else:
            self._bottom.append(card)

    def cards(self) -> list[str]:
        """Every card in the pile (top first where known; the unknown part sorted)."""
        return [*self._order, *sorted(self._unknown), *self._bottom]

    def order(self) -> list[str] | None:
        """The full order, top first, when known."""
        return list(self._order) if self._known else None

    def copy(self) -> Pile:
        new = Pile.__new__(Pile)
        new._known = self._known
        new._order = deque(self._order)
        new._unknown = set(self._unknown)
        new._bottom = deque(self._bottom)
        new.size = self.size
        return new

    def state(self) -> tuple[object, ...]:
        return (self._known, tuple(self._order), frozenset(self._unknown), tuple(self._bottom))

    def snapshot(self) -> PileSnapshot:
        """The pile as it is now, immutable (`Game.push` keeps one per action)."""
        return PileSnapshot(self._known, tuple(self._order), frozenset(self._unknown),
                            tuple(self._bottom))

    @classmethod
    def restored(cls, snapshot: PileSnapshot) -> Pile:
        new = cls.__new__(cls)
        new._known = snapshot.known
        new._order = deque(snapshot.order)
        new._unknown = set(snapshot.unknown)
        new._bottom = deque(snapshot.bottom)
        new.size = len(snapshot.order) + len(snapshot.unknown) + len(snapshot.bottom)
        return new


class PileSnapshot(NamedTuple):
    known: bool
    order: tuple[str, ...]
    unknown: frozenset[str]
    bottom: tuple[str, ...]

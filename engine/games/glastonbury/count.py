"""Glastonbury's score-only count, pure (no I/O, no clock): the host's set-up (colours,
options, who took the last card), each seat's list in tap order, undo and remove, and the
score, always computed by the rules' one scorer (`rules.scoring.score_game`). A card that
cannot be counted is refused with a `CountRefused` naming why (already counted for another
seat, out of this game, ...). The dashboard's count desk (`dashboard.count.CountDesk`) keeps
one session, reached through the definition (`GlastonburyDefinition.score_only`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import JsonValue

from engine.games.base import CountRefused, Refused, ScoreOnly
from engine.games.glastonbury.rules.cards import CARDS, RECIPES
from engine.games.glastonbury.rules.names import card_name, seat_name
from engine.games.glastonbury.rules.scoring import GameScore, ScoringError, SeatCards, score_game

Source = Literal["tag", "manual", "sim"]
SOURCES: tuple[Source, ...] = ("tag", "manual", "sim")
STATE_VERSION = 1


@dataclass(frozen=True)
class CountSetup:
    """What the host picks before the seats tap: seat i plays ``colours[i]``."""

    colours: tuple[str, ...]
    recipes: bool = False
    second_player_bonus: bool = False
    first_seat: int = 0
    last_card_seat: int | None = None
    removed_colour: str | None = None  # 2 players: default, the first unused player colour

    def __post_init__(self) -> None:
        self._checked()  # the game's one check of a set-up (G2, G4)
        n = len(self.colours)
        if self.last_card_seat is not None and not 0 <= self.last_card_seat < n:
            raise CountRefused("setup", f"the seat that took the last card must be one of "
                                        f"the {n} seats")

    def _checked(self) -> dict[str, JsonValue]:
        from engine.games.glastonbury.definition import DEFINITION

        try:
            return DEFINITION.check({"colours": list(self.colours), "first_seat": self.first_seat,
                               "removed_colour": self.removed_colour, "recipes": self.recipes,
                               "second_player_bonus": self.second_player_bonus}).wire()
        except Refused as exc:
            raise CountRefused("setup", exc.message) from None

    @property
    def removed(self) -> str | None:
        """The colour whose cards are out of the box (2 players, G2)."""
        removed = self._checked().get("removed_colour")
        return removed if isinstance(removed, str) else None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "colours": list(self.colours), "removed": self.removed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CountSetup:
        return cls(colours=tuple(data["colours"]), recipes=bool(data.get("recipes")),
                   second_player_bonus=bool(data.get("second_player_bonus")),
                   first_seat=int(data.get("first_seat", 0)),
                   last_card_seat=data.get("last_card_seat"),
                   removed_colour=data.get("removed_colour"))


@dataclass(frozen=True)
class Tap:
    card: str
    source: Source
    uid: str | None = None


@dataclass
class SeatList:
    seat: int
    colour: str
    taps: list[Tap] = field(default_factory=list)
    done: bool = False

    def cards(self) -> list[str]:
        return [tap.card for tap in self.taps]

    def seat_cards(self) -> SeatCards:
        cards = self.cards()
        return SeatCards(
            seat=self.seat, colour=self.colour,
            cauldron=tuple(c for c in cards if c in CARDS and CARDS[c].kind != "spell"),
            spells=tuple(c for c in cards if c in CARDS and CARDS[c].kind == "spell"),
            recipes=tuple(c for c in cards if c in RECIPES),
        )


class CountSession:
    """One count: the set-up and each seat's list. Every change either happens whole or
    raises `CountRefused` and changes nothing."""

    def __init__(self, setup: CountSetup) -> None:
        self.setup = setup
        self.seats = [SeatList(i, colour) for i, colour in enumerate(setup.colours)]
        self.active: int | None = 0  # the seat the reader's taps go to

    def name(self, seat: int) -> str:
        return seat_name(seat, self.setup.colours[seat])

    def owner(self, card_id: str) -> int | None:
        return next((s.seat for s in self.seats if card_id in s.cards()), None)

    def _seat(self, seat: int | None) -> SeatList:
        if seat is None:
            if self.active is None:
                raise CountRefused("no_seat", "every seat is done: choose the seat to add "
                                              "this card to first")
            seat = self.active
        if not 0 <= seat < len(self.seats):
            raise CountRefused("no_seat", f"there is no {seat_name(seat)} in this count")
        return self.seats[seat]

    def check(self, card_id: str, seat: int) -> None:
        """Refuse a card that cannot be in this seat's final hand (changes nothing)."""
        if card_id.startswith("pawn-"):
            raise CountRefused("not_a_card", "that tag is a pawn, not a card")
        if card_id not in CARDS and card_id not in RECIPES:
            raise CountRefused("unknown_card", f"{card_id!r} is not a card of the box")
        if card_id in RECIPES:
            if not self.setup.recipes:
                raise CountRefused("impossible", f"{card_name(card_id)} cannot count: the "
                                   "recipe variant is off for this count (the host can turn "
                                   "it on)")
        else:
            card = CARDS[card_id]
            if card.kind == "corner":
                raise CountRefused("impossible", "corner cards stay in the corners of the "
                                   "grid: they are never in a cauldron")
            removed = self.setup.removed
            if removed is not None and card.colour == removed:
                raise CountRefused("impossible", f"{card_name(card_id)} cannot be in this "
                                   f"game: with 2 players the {removed} cards are out of the "
                                   "box (G2)")
        owner = self.owner(card_id)
        if owner == seat:
            raise CountRefused("already_here", f"{card_name(card_id)} is already counted "
                               f"for {self.name(seat)}", seat)
        if owner is not None:
            raise CountRefused("duplicate", f"{card_name(card_id)} is already counted for "
                               f"{self.name(owner)}: every card exists once. Remove it "
                               "there first if it was tapped for the wrong seat.", owner)

    def tap(self, card_id: str, seat: int | None = None, source: Source = "manual",
            uid: str | None = None) -> tuple[int, Tap]:
        """Count ``card_id`` for ``seat`` (default: the active seat). Returns (seat, tap)."""
        target = self._seat(seat)
        self.check(card_id, target.seat)
        tap = Tap(card_id, source, uid)
        target.taps.append(tap)
        target.done = False
        return target.seat, tap

    def undo(self, seat: int) -> Tap:
        target = self._seat(seat)
        if not target.taps:
            raise CountRefused("empty", f"nothing to undo: {self.name(seat)} has no card yet")
        target.done = False
        return target.taps.pop()

    def remove(self, seat: int, card_id: str) -> Tap:
        target = self._seat(seat)
        for i, tap in enumerate(target.taps):
            if tap.card == card_id:
                target.done = False
                return target.taps.pop(i)
        raise CountRefused("not_here", f"{card_name(card_id)} is not counted for "
                           f"{self.name(seat)}")

    def set_active(self, seat: int) -> None:
        self._seat(seat)
        self.active = seat

    def set_done(self, seat: int, done: bool = True) -> None:
        target = self._seat(seat)
        target.done = done
        if done and self.active == seat:
            after = [s.seat for s in self.seats[seat + 1:] + self.seats[:seat] if not s.done]
            self.active = after[0] if after else None
        elif not done and self.active is None:
            self.active = seat

    def set_last_card(self, seat: int | None) -> None:
        data = {**self.setup.to_json(), "last_card_seat": seat}
        data.pop("removed")
        self.setup = CountSetup.from_json(data)

    @property
    def finished(self) -> bool:
        return all(s.done for s in self.seats)

    def score_json(self) -> dict[str, Any]:
        """`score` as JSON; a list the scorer refuses (cannot happen for accepted taps) is a
        `CountRefused` ``score_error`` naming the rule."""
        try:
            return self.score().to_json()
        except ScoringError as exc:
            raise CountRefused("score_error", f"{exc.message} (rule {exc.rule})") from None

    def score(self) -> GameScore:
        """The score of the lists as they are now (the one scorer: `score_game`)."""
        return score_game(
            [s.seat_cards() for s in self.seats],
            last_card_seat=self.setup.last_card_seat if self.setup.recipes else None,
            first_seat=self.setup.first_seat,
            second_player_bonus=self.setup.second_player_bonus,
        )

    def score_input(self) -> dict[str, Any]:
        """The same cards as `cauldron score` input (to check or keep a count)."""
        return {
            "players": [{"seat": s.seat, "colour": s.colour, "cauldron": list(c.cauldron),
                         "spells": list(c.spells), "recipes": list(c.recipes)}
                        for s in self.seats for c in [s.seat_cards()]],
            "last_card_seat": self.setup.last_card_seat if self.setup.recipes else None,
            "options": {"second_player_bonus": self.setup.second_player_bonus,
                        "first_seat": self.setup.first_seat},
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "setup": self.setup.to_json(),
            "active": self.active,
            "seats": [{"seat": s.seat, "colour": s.colour, "done": s.done,
                       "taps": [asdict(t) for t in s.taps]} for s in self.seats],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CountSession:
        setup = data["setup"]
        setup = {k: v for k, v in setup.items() if k != "removed"}
        session = cls(CountSetup.from_json(setup))
        for entry in data["seats"]:
            for tap in entry["taps"]:
                source = tap.get("source", "manual")
                session.tap(tap["card"], entry["seat"], source if source in SOURCES else "manual",
                            tap.get("uid"))
            session.seats[entry["seat"]].done = bool(entry.get("done"))
        active = data.get("active")
        session.active = active if isinstance(active, int) and 0 <= active < len(
            session.seats) else None
        return session


SCORE_ONLY = ScoreOnly(setup=CountSetup.from_json, new=CountSession,
                       restore=CountSession.from_json)

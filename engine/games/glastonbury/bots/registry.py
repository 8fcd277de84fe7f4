"""Bots by name: `make_bot("search")`, `make_bot("search:simulations=400")`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from engine.games.glastonbury.bots.base import Bot, BotError
from engine.games.glastonbury.bots.greedy import GreedyBot
from engine.games.glastonbury.bots.random_bot import RandomBot
from engine.games.glastonbury.bots.search import SearchBot

BOT_NAMES: Final[tuple[str, ...]] = ("random", "greedy", "search")


def _search(options: dict[str, str]) -> Bot:
    kwargs: dict[str, object] = {}
    for key, value in options.items():
        if key in ("simulations", "candidates"):
            kwargs[key] = _int(key, value)
        elif key == "depth":
            kwargs[key] = None if value in ("", "none", "end") else _int(key, value)
        elif key == "epsilon":
            try:
                kwargs[key] = float(value)
            except ValueError:
                raise BotError(f"search option epsilon must be a number, not {value!r}") from None
        elif key == "rollout":
            kwargs[key] = value
        else:
            raise BotError(
                f"unknown search option {key!r}; use simulations, candidates, rollout, "
                "epsilon or depth"
            )
    return SearchBot(**kwargs)  # type: ignore[arg-type]


def _int(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise BotError(f"search option {key} must be a whole number, not {value!r}") from None


def _plain(factory: Callable[[], Bot], name: str) -> Callable[[dict[str, str]], Bot]:
    def build(options: dict[str, str]) -> Bot:
        if options:
            raise BotError(f"the {name} bot takes no options")
        return factory()

    return build


_FACTORIES: Final[dict[str, Callable[[dict[str, str]], Bot]]] = {
    "random": _plain(RandomBot, "random"),
    "greedy": _plain(GreedyBot, "greedy"),
    "search": _search,
}


def make_bot(spec: str) -> Bot:
    """A bot from `name` or `name:key=value:key=value` (options for the search bot)."""
    name, _, rest = spec.strip().partition(":")
    if name not in _FACTORIES:
        raise BotError(f"unknown bot {name!r}; choose from {', '.join(BOT_NAMES)}")
    options: dict[str, str] = {}
    if rest:
        for item in rest.split(":"):
            key, sep, value = item.partition("=")
            if not sep:
                raise BotError(f"bot option {item!r} must look like key=value")
            options[key.strip()] = value.strip()
    return _FACTORIES[name](options)

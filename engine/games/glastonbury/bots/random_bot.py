"""The random bot: any legal action, uniformly."""

from __future__ import annotations

import random

from engine.games.glastonbury.bots.base import BotError, Observation
from engine.games.glastonbury.rules.actions import Action
from engine.games.glastonbury.rules.cards import Lang
from engine.games.glastonbury.rules.names import seat_name


class RandomBot:
    name = "random"

    def choose(self, observation: Observation, rng: random.Random) -> Action:
        if not observation.legal:
            raise BotError(f"{seat_name(observation.seat)} has nothing to do now")
        return observation.legal[rng.randrange(len(observation.legal))]

    def explain(self, observation: Observation, action: Action, lang: Lang = "en") -> str:
        from engine.games.glastonbury.bots.greedy import rate_actions, reason_text

        for rating in rate_actions(observation):
            if rating.action == action:
                return reason_text(rating, lang)
        return str(action)

"""Determinization: one complete, possible world consistent with an `Observation`.

The search bot cannot know the order of the draw pile, the other seats' recipes, or (with
`memory="own"`) the other seats' covered cards. `sample_world` copies the observation's
shadow game (which holds only public information and the seat's own) and fills in those
hidden parts at random, consistently with everything the seat has seen:

- the cards this seat could not place (`observation.unseen`) are shuffled; forgotten
  cauldron slots take cauldron cards (ingredients or Immuto) from them, the rest become the
  pile's top part in random order, above the known bottom that Vanesco sent under it;
- other seats' recipes are drawn from the recipe cards this seat does not hold.

The result is an ordinary simulation `Game` (known pile: refills happen on their own) that
the search bot may play out freely. It is built from the observation alone, so it can never
reflect the real pile order.
"""

from __future__ import annotations

import random

from engine.games.glastonbury.bots.base import Observation, pile_parts
from engine.games.glastonbury.bots.evaluation import IN_CAULDRON
from engine.games.glastonbury.rules.cards import RECIPE_A, RECIPE_B
from engine.games.glastonbury.rules.game import Game
from engine.games.glastonbury.rules.pile import Pile


def sample_world(observation: Observation, rng: random.Random) -> Game:
    """A random full game state consistent with what `observation.seat` knows."""
    world = observation.shadow.copy()
    unknown, bottom = pile_parts(world)
    pool = sorted(observation.unseen)  # sorted: the same observation and seed, the same world
    rng.shuffle(pool)
    forgotten = [
        (seat, i)
        for seat, stack in enumerate(observation.stacks)
        for i, card in enumerate(stack)
        if card is None
    ]
    if forgotten:
        fill = [c for c in pool if c in IN_CAULDRON][: len(forgotten)]
        taken = set(fill)
        pool = [c for c in pool if c not in taken]
        for (seat, i), card in zip(forgotten, fill, strict=True):
            world.cauldrons[seat][i] = card
    assert len(pool) == len(unknown), "unseen cards and the pile's unordered part must agree"
    world.pile = Pile(order=[*pool, *bottom])
    if observation.config.recipes:
        world.recipes = _sample_recipes(observation, rng)
    return world


def _sample_recipes(observation: Observation, rng: random.Random) -> tuple[tuple[str, ...], ...]:
    own = set(observation.recipes)
    free_a = [r for r in RECIPE_A if r not in own]
    free_b = [r for r in RECIPE_B if r not in own]
    rng.shuffle(free_a)
    rng.shuffle(free_b)
    recipes: list[tuple[str, ...]] = []
    for seat in range(observation.players):
        if seat == observation.seat:
            recipes.append(observation.recipes)
        else:
            recipes.append((free_a.pop(), free_b.pop()))
    return tuple(recipes)

"""The Quacks of Quedlinburg behind the game seam: `definition.DEFINITION` (the registry's
entry), `table.QuacksTable` (one table's game, pads and inputs), `scoring` (the printable
breakdown per round), `static/` and `i18n/` (its page fragments, en/fr/de). The pure rules
core is `engine.games.quacks.rules`."""

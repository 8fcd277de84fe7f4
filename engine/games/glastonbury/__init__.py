"""Glastonbury (Kupferkessel Co.), the table's first game: its pure rules (`rules`), its bots
(`bots`), the engine service's table interpreter for it (`table`), and its definition for
the platform (`definition.DEFINITION`, found by `engine.games.get("glastonbury")`)."""

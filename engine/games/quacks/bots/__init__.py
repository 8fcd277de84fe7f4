"""Bots for The Quacks of Quedlinburg: `random`, `greedy` (never risks an explosion) and
`push` (push-your-luck from the exact explosion odds and the pot's expected value), and a
tournament with Wilson intervals. They see only their seat's view
(engine.games.quacks.rules.observer)."""

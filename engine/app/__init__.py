"""The composition root: the only code that wires the broker, the hub, the engine service,
the dashboard and the bots together (the `cauldron` command, `engine.app.cli`). Nothing
imports it; tests/test_dependency_rule.py checks that, and what every package may import.
The demo (`engine.demo`) and the score-only count (`engine.count_cli`) wire packages
together too: they count as composition code and move here next.
"""

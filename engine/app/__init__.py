"""The composition root: the only code that wires the broker, the hub, the engine service,
the dashboard and the bots together: the `cauldron` command (`engine.app.cli`) and the
score-only count (`engine.app.count`) and the demo (`engine.app.demo`). Nothing imports it;
tests/test_dependency_rule.py checks that, and what every package may import.
"""

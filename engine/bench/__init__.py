"""Benchmarks (`cauldron bench …`), out of the product packages: see `engine.bench.kit`."""

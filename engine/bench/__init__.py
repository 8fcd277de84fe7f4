"""Benchmarks (`cauldron bench all`, or one target), out of the product packages: see
`engine.bench.kit`."""

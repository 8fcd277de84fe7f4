"""Cauldron Table engine: the pure rules (`engine.games.glastonbury.rules`), the shared wire
contract
(`engine.wire`) and the service that follows real games (`engine.service`)."""

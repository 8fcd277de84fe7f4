"""Glastonbury at a physical table: the engine service's sensor-to-action interpreter
(`interpreter`), the deal guide, the pawn check, and the scripted table driver."""

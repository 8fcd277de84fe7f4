"""Hosting a real table: `cauldron setup` (a fresh Raspberry Pi OS into a table) and
`cauldron doctor` (is the table sound, and what to fix)."""

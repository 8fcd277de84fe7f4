"""`cauldron demo`: a whole table with bots in one process."""

"""The Cauldron Table dashboard: a FastAPI app (table view, seat views, host controls, score
screen, virtual table) that talks to the engine only over MQTT (`engine.wire`)."""

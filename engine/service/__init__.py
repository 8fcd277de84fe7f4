"""The engine service: follows real tables from hub events (interpreter), keeps every game
safe (store) and publishes the views (service). See ARCHITECTURE.md, "Engine shape"."""

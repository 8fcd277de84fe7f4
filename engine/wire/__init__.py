"""The shared wire contract (`engine.wire.contract`), the one MQTT client module
(`engine.wire.mqtt`) and consumer-side exactly-once ordering (`engine.wire.sequence`)."""

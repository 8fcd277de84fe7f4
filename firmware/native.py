"""``native``: MicroPython's native code emitter where there is one (the Pico, the unix
port), a no-op decorator elsewhere (CPython: the tests, the simulator, the hub)."""

try:
    from micropython import native
except ImportError:  # CPython, or a stand-in micropython module without it

    def native(function: object) -> object:
        return function


__all__ = ["native"]

"""``native`` and ``const``: MicroPython's native code emitter and its compile-time
constants where there are (the Pico, the unix port); a no-op decorator and the value
itself elsewhere (CPython: the tests, the simulator, the hub). A ``NAME = const(0x20)``
is folded into the code that uses it: no global look-up per use on the Pico."""

try:
    from micropython import const, native
except ImportError:  # CPython, or a stand-in micropython module without them

    def native(function: object) -> object:
        return function

    def const(value: int) -> int:
        return value


__all__ = ["const", "native"]

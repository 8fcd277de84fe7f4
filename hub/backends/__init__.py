"""Reader back-ends, chosen by name like gpiozero pin factories: ``make_backend(config)``.

``sim`` (`hub.backends.sim.SimulatedTable`), ``serial`` (`hub.backends.serial.SerialBackend`,
the Pico firmware over USB) and ``spi`` (`hub.backends.spi.SpiBackend`, MFRC522 readers on
the Pi), ``pcsc`` (`hub.backends.pcsc.PcscBackend`, USB desktop NFC readers as scan pads).
Each module is imported only when chosen, so ``spi`` needs the ``pi`` extra only on
the Pi.

A ``sim`` table keeps what lies on it in the config's data dir (``sim-<table>.json``), as real
cards stay on a real table when the hub restarts; ``sim_state=False`` gives a table of its own
that starts empty and is not saved (``cauldron readers``/``enroll``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub.backends.base import Change, PollResult, ReaderBackend, ReaderRead
from hub.errors import ConfigError
from hub.layout import Layout

if TYPE_CHECKING:
    from hub.config import HubConfig
    from hub.tagmap import TagMap

__all__ = ["Change", "PollResult", "ReaderBackend", "ReaderRead", "make_backend"]


def make_backend(config: HubConfig, tagmap: TagMap | None = None, *,
                 sim_state: bool = True) -> ReaderBackend:
    from hub.game import use

    game = use(config.game)  # the configured game lays the readers out (and names them)
    layout = Layout(pads=config.pads, perimeter=config.perimeter, game=game)
    if config.backend == "sim":
        from hub.backends.sim import SimulatedTable

        sim = config.sim
        seed = sim.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ConfigError(f"[sim] seed = {seed!r} is not an integer")
        rates = {}
        for key in ("drop_rate", "misread_rate"):
            rate = sim.get(key, 0.0)
            if not isinstance(rate, int | float) or isinstance(rate, bool) or not 0 <= rate <= 1:
                raise ConfigError(f"[sim] {key} = {rate!r} is not a number from 0 to 1")
            rates[key] = float(rate)
        return SimulatedTable(layout, tagmap=tagmap, seed=seed, drop_rate=rates["drop_rate"],
                              misread_rate=rates["misread_rate"],
                              state_path=config.sim_state_path if sim_state else None)
    if config.backend == "serial":
        from hub.backends.serial import SerialBackend

        return SerialBackend.from_config(layout, config.serial)
    if config.backend == "pcsc":
        from hub.backends.pcsc import PcscBackend

        return PcscBackend.from_config(layout, config.pcsc)
    if config.backend == "spi":
        from hub.backends.spi import SpiBackend

        return SpiBackend.from_config(layout, config.spi)
    raise ConfigError(f"unknown back-end {config.backend!r}; choose sim, serial, spi or pcsc")

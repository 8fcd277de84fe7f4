"""The modelled sweep time (a deterministic model, not a wall-clock timing)."""

from pathlib import Path

import pytest

from firmware.sweep import GOAL_MS, model_sweep

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"


def test_36_reader_sweep_meets_the_goal_with_default_timings() -> None:
    result = model_sweep(36)
    assert result["sweep_ms"] <= GOAL_MS == 40.0
    assert result["meets_goal"] is True
    assert result["max_antennas_on"] == 1
    assert result["miso_contentions"] == 0
    per = result["per_reader_us"]
    assert per["empty"] < per["probe"] < per["verify"]
    assert result["n_readers"] == 36 and len(result["occupied"]) == 32


def test_worst_case_all_readers_occupied_also_meets_the_goal() -> None:
    assert model_sweep(36, occupied=range(36))["sweep_ms"] <= GOAL_MS


def test_model_responds_to_its_parameters() -> None:
    def sweep_ms(**options: object) -> float:
        return float(model_sweep(12, occupied=range(10), sweeps=2, **options)["sweep_ms"])  # type: ignore[arg-type]

    base = sweep_ms()
    assert sweep_ms(spi_hz=1_000_000) > base
    assert 3 * base < sweep_ms(mode="full") < sweep_ms(mode="naive")
    assert float(model_sweep(12, occupied=(), sweeps=2)["sweep_ms"]) < base


def test_model_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        model_sweep(4, occupied=[9])
    with pytest.raises(ValueError):
        model_sweep(4, mode="turbo")


def test_pico_entry_point_compiles() -> None:
    for name in ("main.py", "scan.py", "mfrc522.py", "protocol.py", "presence.py"):
        source = (FIRMWARE / name).read_text()
        compile(source, str(FIRMWARE / name), "exec")

"""The modelled sweep time (a deterministic model, not a wall-clock timing)."""

from pathlib import Path

import pytest

from firmware.mfrc522_sim import Timings
from firmware.scan import FIELD_LEAD
from firmware.sweep import GOAL_MS, at_wakeup, build, model_sweep, placement_ms

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"


def test_36_reader_sweep_meets_the_goal_at_the_iso_worst_case_wakeup() -> None:
    result = at_wakeup(5.1)
    assert result["wakeup_us"] == 5100 and result["settle_us"] == 5100
    assert result["sweep_ms"] <= GOAL_MS == 40.0
    assert result["new_tag_sweep_ms"] <= GOAL_MS
    assert result["meets_goal"] is True
    assert result["max_antennas_on"] == FIELD_LEAD + 1  # wake-ups overlap...
    assert result["crosstalk"] == 0  # ...but never two neighbouring antennas
    assert result["miso_contentions"] == 0
    per = result["per_reader_us"]
    assert per["empty"] < per["verify"] and per["probe"] < per["verify"]
    assert result["n_readers"] == 36 and len(result["occupied"]) == 32


def test_worst_case_all_readers_occupied_also_meets_the_goal() -> None:
    assert at_wakeup(5.1, occupied=range(36))["sweep_ms"] <= GOAL_MS


def test_sweep_at_each_wakeup_time() -> None:
    figures = {w: at_wakeup(w) for w in (0.3, 1.0, 5.1)}
    assert [figures[w]["lead"] for w in (0.3, 1.0, 5.1)] == [1, 2, FIELD_LEAD]
    # (0.3 and 1 ms both fit in the lead's polls: equal, to the virtual clock's 1 us ticks)
    tick = 0.002
    assert figures[0.3]["sweep_ms"] <= figures[1.0]["sweep_ms"] + tick
    assert figures[1.0]["sweep_ms"] <= figures[5.1]["sweep_ms"] + tick
    assert all(f["crosstalk"] == 0 and f["sweep_ms"] <= GOAL_MS for f in figures.values())


def test_one_field_at_a_time_cannot_meet_the_goal_at_5_1_ms() -> None:
    """Why the fields overlap: 36 readers x 5.1 ms settle is ~200 ms."""
    assert at_wakeup(5.1, lead=0, sweeps=2)["sweep_ms"] > 5 * GOAL_MS


def test_placement_to_confirmed_line_from_the_model() -> None:
    result = at_wakeup(5.1)
    placement = placement_ms(result)
    assert placement["p95_ms"] < placement["worst_ms"] == pytest.approx(
        2 * result["new_tag_sweep_ms"]
    )
    assert placement["worst_ms"] <= 2 * GOAL_MS


def test_firmware_waits_for_the_wakeup_it_is_told() -> None:
    """The simulator honours the tag's wake-up: a firmware that polls too early
    sees nothing, one that waits long enough finds every tag."""
    for settle, found in ((300, False), (5100, True)):
        table, scanner, _lines = build(4, Timings(tag_power_up_us=5100), "fast", settle, 1)
        table.place(1, "04A1B2C3D4E5F6")
        scanner.boot()
        assert (scanner.tracker.uid(1) is not None) is found


def test_model_responds_to_its_parameters() -> None:
    def sweep_ms(**options: object) -> float:
        return float(at_wakeup(5.1, sweeps=2, **options)["sweep_ms"])

    base = sweep_ms()
    assert sweep_ms(spi_hz=4_000_000) < base
    assert 3 * base < sweep_ms(mode="full") < sweep_ms(mode="naive")
    assert sweep_ms(occupied=()) < base


def test_model_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        model_sweep(4, occupied=[9])
    with pytest.raises(ValueError):
        model_sweep(4, mode="turbo")


def test_pico_entry_point_compiles() -> None:
    for name in ("main.py", "scan.py", "mfrc522.py", "protocol.py", "presence.py", "loop.py",
                 "pawns.py"):
        source = (FIRMWARE / name).read_text()
        compile(source, str(FIRMWARE / name), "exec")

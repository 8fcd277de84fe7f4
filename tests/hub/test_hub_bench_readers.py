"""`cauldron readers --bench` (hardware/bench-test.md) on the register-level simulator:
wake-up time, read rate and chip version per reader, and a report the firmware reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from firmware.loop import settle_from_report
from firmware.mfrc522_sim import SimTable, Timings
from firmware.scan import SETTLE_US
from hub.backends.spi import Rig
from hub.bench_readers import ReaderBench, write_report

BIN = Path(sys.executable).parent


def rig(wakeup_us: float) -> tuple[SimTable, Rig]:
    table = SimTable(8, Timings(tag_power_up_us=wakeup_us))
    demux = table.demux
    return table, Rig(table.spi, demux.address, demux.bank_enable, demux.strobe, table.clock)


def test_bench_measures_wakeup_read_rate_and_version(tmp_path: Path) -> None:
    table, sim_rig = rig(800)
    table.place(2, "04A1B2C3D4E5F6")
    table.place(5, "04A1B2C3D4E5F7")
    table.faults(6).vanished = True
    asked: list[str] = []

    def ask(text: str) -> None:
        asked.append(text)
        if "OFF-CENTRE on reader 5" in text:  # off-centre: reader 5 drops 1 answer in 10
            table.faults(5).drop_probability = 0.1

    report = ReaderBench(sim_rig, 8).measure([2, 5, 6], tries=5, polls=60, ask=ask,
                                             say=lambda _t: None)
    two, five, six = report.readers
    assert two.version == "0x92" and two.wakeup_us == 1000  # first delay >= 800 us
    assert two.read_rate_centred == two.read_rate_off_centre == 1.0
    assert two.uid == "04A1B2C3D4E5F6"
    assert five.read_rate_centred == 1.0 and 0.3 < (five.read_rate_off_centre or 0) < 0.9
    assert six.problem and "VersionReg" in six.problem and six.wakeup_us is None
    assert report.settle_us == 1500  # 1000 x 1.5
    assert any("CENTRED on reader 2" in text for text in asked)
    path = tmp_path / "bench.json"
    write_report(report, path)
    assert json.loads(path.read_text())["settle_us"] == 1500
    assert settle_from_report(str(path), SETTLE_US) == 1500  # what firmware/main.py does


def test_firmware_keeps_the_worst_case_without_a_good_report(tmp_path: Path) -> None:
    assert settle_from_report(str(tmp_path / "none.json"), SETTLE_US) == SETTLE_US
    bad = tmp_path / "bad.json"
    for text in ("{", '{"settle_us": 99999}', '{"settle_us": 3}', '{"other": 1}'):
        bad.write_text(text)
        assert settle_from_report(str(bad), SETTLE_US) == SETTLE_US


def test_readers_bench_command_on_a_simulated_rig(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = subprocess.run(
        [str(BIN / "cauldron"), "readers", "--bench", "--backend", "sim", "--bench-readers",
         "0,33", "--tries", "3", "--polls", "10", "--report", str(report)],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    assert "settle time for the firmware" in result.stdout
    data = json.loads(report.read_text())
    assert [r["reader"] for r in data["readers"]] == [0, 33]
    assert 100 <= data["settle_us"] <= SETTLE_US
    bad = subprocess.run(
        [str(BIN / "cauldron"), "readers", "--bench", "--backend", "sim", "--bench-readers",
         "99"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert bad.returncode != 0 and "readers must be 0..35" in bad.stderr
    assert "Traceback" not in bad.stderr

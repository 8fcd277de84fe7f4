"""A real Mosquitto with the shipped ACL (hardware/deploy/mosquitto/acl) and password
accounts: for the ACL tests and the attacks on MQTT (a module, not a conftest)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from waiting import EXIT_WITHIN

from engine.wire.broker import find_mosquitto, free_port

ROOT = Path(__file__).resolve().parents[1]
ACL = ROOT / "hardware" / "deploy" / "mosquitto" / "acl"

needs_mosquitto = pytest.mark.skipif(
    find_mosquitto() is None or shutil.which("mosquitto_passwd") is None,
    reason="needs mosquitto and mosquitto_passwd (apt-get install mosquitto)",
)


@contextmanager
def secured_broker(tmp: Path, accounts: dict[str, str]) -> Iterator[int]:
    """Mosquitto on a free port of 127.0.0.1, no anonymous access, the shipped ACL; yields
    the port and stops it afterwards."""
    passwd = tmp / "passwd"
    passwd.write_text("")
    for user, password in accounts.items():
        subprocess.run(
            ["mosquitto_passwd", "-b", str(passwd), user, password], check=True, capture_output=True
        )
    port = free_port()
    conf = tmp / "mosquitto.conf"
    conf.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous false\npassword_file {passwd}\n"
        f"acl_file {ACL}\npersistence false\n"
        # As `cauldron setup` writes it: QoS 1 messages queue behind a flood, not dropped.
        "max_queued_messages 100000\n"
        # As root Mosquitto drops to its own user, which cannot read pytest's temp dir.
        "user root\n"
    )
    mosquitto = find_mosquitto()
    assert mosquitto is not None
    proc = subprocess.Popen([mosquitto, "-c", str(conf)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    try:
        while True:
            probe = mqtt.Client(CallbackAPIVersion.VERSION2)
            try:
                probe.connect("127.0.0.1", port)
                probe.disconnect()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    proc.kill()
                    assert proc.stderr is not None
                    pytest.fail("mosquitto with the shipped ACL did not start: "
                                f"{proc.stderr.read()!r}")
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(EXIT_WITHIN)

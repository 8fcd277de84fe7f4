"""The embedded broker's ACL check (`engine.wire.broker.acl_allows`) reads the shipped
Mosquitto ACL as Mosquitto does: it gives every account exactly the rights the doctor's
probes expect of a real Mosquitto (engine.hosting.doctor.acl_probes), so the demo's broker
mirrors a table's."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.hosting.doctor import Probe, acl_probes
from engine.wire.broker import LocalBroker, acl_allows, parse_acl

ROOT = Path(__file__).resolve().parents[3]
RULES = parse_acl((ROOT / "hardware" / "deploy" / "mosquitto" / "acl").read_text("utf-8"))
TABLE = "t1"
ACCOUNTS = {"hub": TABLE, "engine": "cauldron.engine", "dashboard": "cauldron.dashboard"}


@pytest.mark.parametrize("probe", acl_probes(TABLE), ids=lambda p: f"{p.publisher}:{p.topic}")
def test_the_embedded_acl_grants_what_the_shipped_acl_grants_in_mosquitto(probe: Probe) -> None:
    sent = acl_allows(RULES, ACCOUNTS[probe.publisher], probe.topic, "write")
    for expect in probe.expects:
        read = acl_allows(RULES, ACCOUNTS[expect.receiver], probe.topic, "read")
        assert (sent and read) is expect.delivered, expect.why


def test_no_account_may_subscribe_wider_than_its_rights() -> None:
    # a subscription is allowed only where every topic it can match is readable
    assert acl_allows(RULES, "cauldron.dashboard", "cauldron/t1/game/#", "read")
    assert not acl_allows(RULES, "cauldron.dashboard", "cauldron/t1/#", "read")
    assert not acl_allows(RULES, "cauldron.dashboard", "cauldron/t1/hub/+", "read")
    assert not acl_allows(RULES, TABLE, "cauldron/+/hub/cmd/#", "read")
    assert acl_allows(RULES, TABLE, "cauldron/t1/hub/cmd/#", "read")
    assert not acl_allows(RULES, None, "cauldron/t1/game/public", "read")  # anonymous


def test_a_bad_acl_line_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="line 2"):
        LocalBroker(kind="amqtt", accounts={}, acl="user a\nallow everything\n")

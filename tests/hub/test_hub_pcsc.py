"""The PC/SC back-end (USB desktop NFC readers) against the drivable fake at the PC/SC
boundary (`MockPcscFactory`): a card laid and lifted, a reader unplugged and plugged back, a
read error, the card id carried in the tag, writing it at enrolment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from waiting import wait_for

from engine.games.glastonbury.rules.names import card_name
from hub import ndef
from hub.backends import make_backend
from hub.backends.base import Change
from hub.backends.pcsc import MockPcscFactory, MockTag, PcscBackend, PyscardFactory
from hub.config import HubConfig
from hub.enroll import Enrolment
from hub.errors import BackendError, ConfigError
from hub.layout import Layout
from hub.tagmap import TagMap

ACR = "ACS ACR122U PICC Interface 00 00"
OTHER = "ACS ACR1252 1S CL Reader [ACR1252 1S CL Reader(1)] 01 00"
UID = "04A1B2C3D4E5F6"
UID2 = "04112233445566"


def backend_with(*names: str, pads: int = 1) -> tuple[PcscBackend, MockPcscFactory]:
    fake = MockPcscFactory(*names)
    backend = PcscBackend(Layout(pads=pads), factory=fake)
    backend.open()
    return backend, fake


def sweeps(backend: PcscBackend, n: int = 3) -> list[Change]:
    changes: list[Change] = []
    for _ in range(n):
        changes += backend.poll().changes
    return changes


def test_a_card_laid_then_lifted_is_placed_then_removed_on_pad_0() -> None:
    backend, fake = backend_with(ACR)
    pad = backend.layout.pad_reader(0)
    assert sweeps(backend) == []
    fake.lay(ACR, UID)
    assert sweeps(backend) == [Change("placed", pad, UID)]
    assert backend.state()[pad] == UID
    assert sweeps(backend) == []  # still lying there: nothing new
    fake.lift(ACR)
    assert sweeps(backend) == [Change("removed", pad, UID)]
    assert backend.health()[pad] == "ok"


def test_one_poll_seeing_the_card_is_not_yet_a_placement() -> None:
    backend, fake = backend_with(ACR)
    fake.lay(ACR, UID)
    assert backend.poll().changes == []  # two equal reads confirm
    assert backend.poll().changes == [Change("placed", backend.layout.pad_reader(0), UID)]


def test_reader_unplugged_then_plugged_back() -> None:
    backend, fake = backend_with(ACR)
    pad = backend.layout.pad_reader(0)
    fake.lay(ACR, UID)
    sweeps(backend)
    fake.unplug(ACR)
    result = [backend.poll() for _ in range(3)]
    assert all(r.changes == [] for r in result)  # unplugging invents no removal
    assert backend.health()[pad] == "absent"
    assert any(r.health == {pad: "absent"} for r in result)
    # Plugged back with the card lifted meanwhile: the reader is back, the card is gone.
    fake.plug(ACR)
    changes = sweeps(backend)
    assert backend.health()[pad] == "ok"
    assert changes == [Change("removed", pad, UID)]
    fake.lay(ACR, UID2)
    assert sweeps(backend) == [Change("placed", pad, UID2)]


def test_plugged_back_with_the_card_still_there_reports_nothing() -> None:
    backend, fake = backend_with(ACR)
    fake.lay(ACR, UID)
    sweeps(backend)
    fake.unplug(ACR)
    sweeps(backend)
    fake.plug(ACR)
    fake.lay(ACR, UID)
    assert sweeps(backend) == []
    assert backend.health()[backend.layout.pad_reader(0)] == "ok"


def test_a_read_error_is_a_silent_reader_not_a_removal() -> None:
    backend, fake = backend_with(ACR)
    pad = backend.layout.pad_reader(0)
    fake.lay(ACR, UID)
    sweeps(backend)
    fake.fail(ACR, exchanges=3)
    result = [backend.poll() for _ in range(3)]
    assert all(r.changes == [] for r in result)
    assert backend.health()[pad] == "silent"
    assert sweeps(backend) == []  # the exchanges work again: the card is still there
    assert backend.health()[pad] == "ok"
    assert backend.state()[pad] == UID


def test_a_single_failed_exchange_changes_nothing() -> None:
    backend, fake = backend_with(ACR)
    fake.lay(ACR, UID)
    sweeps(backend)
    fake.fail(ACR)
    assert sweeps(backend, 4) == []
    assert backend.health()[backend.layout.pad_reader(0)] == "ok"


def test_the_card_id_written_in_the_tag_is_read_with_its_uid() -> None:
    backend, fake = backend_with(ACR)
    fake.lay(ACR, UID, card_id="violet-b-3")
    sweeps(backend)
    assert backend.tag_memory(UID) == "violet-b-3"
    fake.lay(ACR, UID2)  # a blank tag carries nothing
    sweeps(backend)
    assert backend.tag_memory(UID2) is None
    transmits = fake.transmits
    sweeps(backend)
    assert fake.transmits - transmits == 3  # memory is read once per tag, then UID only


def test_write_tag_then_read_back_and_enrolment_with_the_usb_reader(tmp_path) -> None:
    backend, fake = backend_with(ACR)
    pad = backend.layout.pad_reader(0)
    enrolment = Enrolment(TagMap(tmp_path / "tagmap.json"), order=["blue-a-4", "accio-1"],
                          backend=backend, reader=pad, write_tags=True)
    fake.lay(ACR, UID)
    [change] = sweeps(backend)
    assert "Enrolled Pumpkins 4 (blue) (tag " in str(enrolment.tag_seen(change.uid))
    assert backend.tag_memory(UID) == "blue-a-4"
    fake.lift(ACR)
    sweeps(backend)
    tag = fake.lay(ACR, UID2)
    fake.fail(ACR, exchanges=1)
    [change] = sweeps(backend)
    fake.fail(ACR, exchanges=1)
    assert "Could not write Accio into tag" in str(enrolment.tag_seen(change.uid))
    assert "accio-1" not in enrolment.tagmap.cards()
    assert "Enrolled Accio (tag " in str(enrolment.tag_seen(change.uid))
    assert bytes(tag.memory[:4]) == b"\x03\x0e\xd1\x01"


def test_write_tag_without_a_tag_says_so() -> None:
    backend, _fake = backend_with(ACR)
    with pytest.raises(BackendError, match="no tag on the reader"):
        backend.write_tag(backend.layout.pad_reader(0), "blue-a-4")


def test_two_readers_are_two_pads_and_config_names_choose_the_order() -> None:
    fake = MockPcscFactory(ACR, OTHER)
    backend = PcscBackend(Layout(pads=2), factory=fake, names=["ACR1252"])
    backend.open()
    assert backend.reader_names() == {backend.layout.pad_reader(0): OTHER,
                                      backend.layout.pad_reader(1): ACR}
    fake.lay(ACR, UID)
    assert sweeps(backend) == [Change("placed", backend.layout.pad_reader(1), UID)]


def test_a_reader_plugged_in_after_start_takes_the_free_pad() -> None:
    backend, fake = backend_with(ACR, pads=2)
    pad1 = backend.layout.pad_reader(1)
    sweeps(backend)
    assert backend.health()[pad1] == "absent"
    fake.plug(OTHER)
    fake.lay(OTHER, UID)
    assert sweeps(backend) == [Change("placed", pad1, UID)]
    assert backend.health()[pad1] == "ok"


def test_no_reader_plugged_is_a_clear_error() -> None:
    backend = PcscBackend(Layout(pads=1), factory=MockPcscFactory())
    with pytest.raises(BackendError, match="no PC/SC reader found: plug the USB reader in"):
        backend.open()


def test_without_pyscard_the_error_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "smartcard", None)
    with pytest.raises(Exception, match="apt install pcscd"):
        PyscardFactory()
    backend = make_backend(HubConfig(backend="pcsc", pads=1))
    with pytest.raises(BackendError, match="python3-pyscard"):
        backend.open()


def test_the_pyscard_hint_tells_a_venv_that_cannot_see_debians_package(
        monkeypatch, tmp_path: Path) -> None:
    """`apt install python3-pyscard` alone loops for a venv made without
    --system-site-packages (issue 19): the hint names that venv and the command."""
    from hub.backends.pcsc import venv_hint

    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("include-system-site-packages = false\n")
    monkeypatch.setattr(sys, "prefix", str(venv))
    hint = venv_hint("python3-pyscard")
    assert f"`sudo python3 -m venv --system-site-packages {venv}`" in hint
    (venv / "pyvenv.cfg").write_text("include-system-site-packages = true\n")
    assert venv_hint("python3-pyscard") == ""


def test_config_readers_must_be_a_list_of_names() -> None:
    with pytest.raises(ConfigError, match=r"\[pcsc\] readers"):
        make_backend(HubConfig(backend="pcsc", pcsc={"readers": "ACR122U"}))


def test_importing_the_pcsc_backend_loads_no_pyscard() -> None:
    code = ("import sys, hub.backends.pcsc, hub.backends, hub.cli; "
            "sys.exit(1 if 'smartcard' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_a_whole_enrolment_on_the_usb_reader_writes_every_tag(tmp_path) -> None:
    """`cauldron enroll --backend pcsc --write`'s loop: a person taps each card in turn (laid
    until the reader has it, then lifted), one lift is slow, one write fails once."""
    from hub.enroll import run_enrolment

    backend, fake = backend_with(ACR)
    pad = backend.layout.pad_reader(0)
    order = ["yellow-a-1", "yellow-a-2", "immuto-1", "vanesco-4"]
    enrolment = Enrolment(TagMap(tmp_path / "tagmap.json"), order=list(order), backend=backend,
                          reader=pad, write_tags=True)
    tags = {card: f"04{i:012X}" for i, card in enumerate(order, start=1)}
    said: list[str] = []
    failed_once = False
    laid_at = 0

    def person() -> str | None:  # between two polls: what the person's hand does next
        nonlocal failed_once, laid_at
        lying = fake.readers[ACR].tag
        card = enrolment.current
        if card is None:
            return None
        if lying is None:
            if backend.state()[pad] is not None:
                return None  # the reader has not yet seen the lift
            laid_at = len(said)
            fake.lay(ACR, tags[card])
            if card == "immuto-1" and not failed_once:
                failed_once = True
                fake.fail_write(ACR)  # the tag refuses a page write once: asked again
        elif len(said) > laid_at:  # the screen answered: lift it (and tap again if asked)
            fake.lift(ACR)
        return None

    assert run_enrolment(enrolment, backend, pad, person, said.append, poll_interval=0,
                         idle_timeout=5), "\n".join(said)
    assert TagMap.load(tmp_path / "tagmap.json").items() == [(tags[c], c) for c in order]
    assert any("Could not write Immuto (Metamorphosis)" in line for line in said)
    for card in order:
        fake.lay(ACR, tags[card])
        sweeps(backend)
    assert all(backend.tag_memory(tags[c]) == c for c in order)


def _carried(tag: MockTag) -> str | None:
    """The card id a fake tag's memory carries (what any reader would read from it)."""
    return ndef.decode_card_id(bytes(tag.memory))


def _written_enrolment(tmp_path: Path, order: list[str]
                       ) -> tuple[Enrolment, PcscBackend, MockPcscFactory, int]:
    backend, fake = backend_with(ACR)
    pad = backend.layout.pad_reader(0)
    enrolment = Enrolment(TagMap(tmp_path / "tagmap.json"), order=order, backend=backend,
                          reader=pad, write_tags=True)
    return enrolment, backend, fake, pad


def test_undo_with_write_erases_the_id_from_a_tag_still_on_the_pad(tmp_path: Path) -> None:
    enrolment, backend, fake, pad = _written_enrolment(tmp_path, ["blue-a-4", "accio-1"])
    tag = fake.lay(ACR, UID)
    [change] = sweeps(backend)
    enrolment.tag_seen(change.uid)
    assert _carried(tag) == "blue-a-4"
    said = str(enrolment.undo())
    assert "is no longer enrolled" in said and f"Tag {UID} still carries" in said
    erased = enrolment.erase_lying(backend.state().get(pad))
    assert erased is not None and "carries no card id any more" in str(erased)
    assert _carried(tag) is None and backend.tag_memory(UID) is None
    assert enrolment.erase_lying(backend.state().get(pad)) is None  # once, not every poll
    assert enrolment.current == "blue-a-4" and UID not in enrolment.tagmap


def test_undo_with_write_erases_a_lifted_tag_when_it_comes_back_and_restores_its_old_id(
        tmp_path: Path) -> None:
    """A tag tapped by mistake: it carried another card's id (an older enrolment) before
    this session wrote over it; undone and lifted, it gets that id back when laid again,
    and that tap enrols nothing. The right tag then takes the card."""
    enrolment, backend, fake, pad = _written_enrolment(tmp_path, ["blue-a-4", "accio-1"])
    wrong = fake.lay(ACR, UID, card_id="red-a-2")
    [change] = sweeps(backend)
    enrolment.tag_seen(change.uid)
    assert _carried(wrong) == "blue-a-4"
    fake.lift(ACR)
    sweeps(backend)
    enrolment.undo()
    assert enrolment.erase_lying(backend.state().get(pad)) is None  # not on the pad
    fake.lay_again(ACR, wrong)
    [change] = sweeps(backend)
    said = str(enrolment.tag_seen(change.uid))
    assert said.startswith(f"Tag {UID} carries {card_name('red-a-2')} again"), said
    assert _carried(wrong) == "red-a-2" and UID not in enrolment.tagmap
    fake.lift(ACR)
    sweeps(backend)
    right = fake.lay(ACR, UID2)
    [change] = sweeps(backend)
    assert "Enrolled Pumpkins 4 (blue)" in str(enrolment.tag_seen(change.uid))
    assert _carried(right) == "blue-a-4" and "Still carrying" not in str(enrolment.stopped())


def test_stopping_names_a_tag_an_undo_could_not_erase_yet(tmp_path: Path) -> None:
    enrolment, backend, fake, _pad = _written_enrolment(tmp_path, ["blue-a-4"])
    fake.lay(ACR, UID)
    [change] = sweeps(backend)
    enrolment.tag_seen(change.uid)
    fake.lift(ACR)
    enrolment.undo()
    assert f"tag {UID} (Pumpkins 4 (blue))" in str(enrolment.stopped())


def test_unplugging_the_pad_reader_mid_enrolment_says_so_and_what_to_do(tmp_path) -> None:
    """`cauldron enroll --backend pcsc`: the USB reader pulled out while a person taps cards
    is said at once (plug it back, which command shows the readers), and enrolment goes on
    by itself once it is plugged back."""
    from hub.enroll import run_enrolment

    backend, fake = backend_with(ACR)
    pad = backend.layout.pad_reader(0)
    enrolment = Enrolment(TagMap(tmp_path / "tagmap.json"), order=["blue-a-4"],
                          backend=backend, reader=pad)
    said: list[str] = []
    steps = iter(["unplug", *["wait"] * 3, "plug", "lay", *["wait"] * 20])

    def person() -> str | None:
        step = next(steps, "wait")
        if step == "unplug":
            fake.unplug(ACR)
        elif step == "plug":
            assert any("is gone" in line for line in said), said  # said while still out
            fake.plug(ACR)
        elif step == "lay":
            fake.lay(ACR, UID)
        return None

    assert run_enrolment(enrolment, backend, pad, person, said.append, poll_interval=0,
                         idle_timeout=5), "\n".join(said)
    gone = next(line for line in said if "is gone" in line)
    assert "Seat 1" in gone and "plug it back in" in gone and "`pcsc_scan`" in gone
    back = said.index(next(line for line in said if "pad is back." in line))
    assert said.index(gone) < back < said.index(next(s for s in said if "Enrolled" in s))


def test_the_running_hub_says_when_the_enrolment_pads_reader_is_unplugged(
        mqtt_broker: str, table_id: str, tmp_path: Path) -> None:
    """The hub's enrolment mode (host page, `cauldron enroll`): the status message names the
    unplugged reader and the fix, then says it is back."""
    from test_hub_service import fast_client

    from engine.wire.contract import Topics
    from hub.outbox import Outbox
    from hub.service import Hub

    backend, fake = backend_with(ACR)
    tagmap = TagMap.load(tmp_path / "tagmap.json")
    client = fast_client(mqtt_broker, state_topic=Topics(table_id).hub_state,
                         client_id=f"hub-{table_id}")
    hub = Hub(table=table_id, backend=backend, client=client, tagmap=tagmap,
              outbox=Outbox(tmp_path / "o.sqlite"), poll_interval=0.002).start()
    try:
        with fast_client(mqtt_broker) as asker:
            def enrol(action: str, **more: object) -> dict[str, object]:
                reply = asker.request(Topics(table_id).hub_cmd("enrol"),
                                      {"action": action, **more}, timeout=5)
                assert reply.status == "ok", reply.error
                return dict(reply.data)
            enrol("start", pad=0, write=True)
            fake.unplug(ACR)
            wait_for(lambda: "is gone" in str(enrol("status")["message"]))
            assert "plug it back in" in str(enrol("status")["message"])
            fake.plug(ACR)
            wait_for(lambda: "pad is back." in str(enrol("status")["message"]))
            tag = fake.lay(ACR, UID)
            wait_for(lambda: tagmap.card_for(UID) is not None)
            card = tagmap.card_for(UID)
            assert _carried(tag) == card
            said = str(enrol("undo")["message"])
            assert "no longer enrolled" in said
            wait_for(lambda: _carried(tag) is None)  # still on the pad: erased at once
            assert "carries no card id" in str(enrol("status")["message"])
    finally:
        hub.stop()

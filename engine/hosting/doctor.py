"""`cauldron doctor`: is the table sound, end to end? Each problem says what to do.

It reads what `cauldron setup` wrote (``/etc/cauldron``; ``--root`` for a scratch tree) and
checks, in order: each broker account logs in; each may do exactly what the ACL means, no
more (a few marked test messages between the three accounts: the services ignore them);
the hub, the engine and the dashboard are alive and serve the same table; every reader
answers; the tag map holds the whole box; the clock is sane; the disk has room.
"""

from __future__ import annotations

import contextlib
import grp
import json
import os
import pwd
import shutil
import subprocess
import threading
import time
import tomllib
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from engine.datadir import probe_dir
from engine.games.glastonbury.rules.board import SIZE, parse_cell
from engine.hosting.setup import (
    SERVICES,
    Answers,
    Owned,
    Paths,
    accounts,
    env_value,
    ownership,
)
from engine.wire.api import ReadersResult
from engine.wire.contract import doctor_probe

Say = Callable[[str], None]
OTHER_TABLE = "doctor-other-table"
MIN_FREE_BYTES = 200 * 1024 * 1024
PROBE_BYTES = 1024 * 1024  # what a data dir must still take: a game's log grows by less


class DoctorError(Exception):
    """The doctor cannot examine this table at all (the message says why)."""


@dataclass
class Expect:
    """A receiver should (or should not) get a probe message; ``why`` names the right."""

    receiver: str
    delivered: bool
    why: str


@dataclass
class Probe:
    publisher: str
    topic: str
    expects: list[Expect]
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


def acl_probes(table: str) -> list[Probe]:
    """What each account may and may not do (ARCHITECTURE.md, the ACL's header), as
    messages between the three accounts. Topics under a ``#`` right use a ``doctor`` leaf
    that no service subscribes to."""
    t = f"cauldron/{table}"
    o = f"cauldron/{OTHER_TABLE}"
    return [
        Probe("hub", f"{t}/hub/event", [
            Expect("engine", True, f"the hub publishes its events on {t}/hub/event and the "
                   "engine reads them"),
            Expect("dashboard", False, f"the dashboard account may read {t}/hub/event, which "
                   "names the cards laid on the pads (covered cards)")]),
        Probe("hub", f"{t}/hub/snapshot", [
            Expect("engine", True, f"the hub publishes {t}/hub/snapshot and the engine reads "
                   "it"),
            Expect("dashboard", False, f"the dashboard account may read {t}/hub/snapshot, "
                   "which names the cards laid on the pads (covered cards)")]),
        Probe("hub", f"{t}/hub/health", [
            Expect("dashboard", True, f"the hub publishes {t}/hub/health (reader health) and "
                   "the dashboard reads it")]),
        Probe("hub", f"{t}/hub/cmd/doctor/response", [
            Expect("engine", True, "the hub answers the engine's hub commands")]),
        Probe("hub", f"{o}/hub/cmd/doctor/response", [
            Expect("engine", False, f"the hub account ({table}) may write another table's "
                   f"topics ({o}/hub/...)")]),
        Probe("hub", f"{t}/game/doctor", [
            Expect("dashboard", False, f"the hub account may publish game topics ({t}/game/...)"
                   ", which only the engine may"),
            Expect("engine", False, f"the hub account may publish game topics ({t}/game/...)"
                   ", which only the engine may")]),
        Probe("hub", f"{t}/cmd/history", [
            Expect("engine", False, f"the hub account may send host commands ({t}/cmd/...)")]),
        Probe("engine", f"{t}/hub/cmd/doctor", [
            Expect("hub", True, f"the engine sends hub commands ({t}/hub/cmd/...) and the hub "
                   "reads them")]),
        Probe("engine", f"{t}/game/doctor", [
            Expect("dashboard", True, f"the engine publishes the game ({t}/game/...) and the "
                   "dashboard reads it"),
            Expect("hub", False, f"the hub account may read game topics ({t}/game/...)")]),
        Probe("engine", f"{t}/cmd/doctor/response", [
            Expect("dashboard", True, "the engine answers the dashboard's commands")]),
        Probe("engine", f"{t}/hub/event", [
            Expect("engine", False, f"the engine account may publish hub events "
                   f"({t}/hub/event): a forged card could enter the game")]),
        Probe("dashboard", f"{t}/cmd/history", [
            Expect("engine", True, f"the dashboard sends host commands ({t}/cmd/...) and the "
                   "engine reads them"),
            Expect("hub", False, f"the hub account may read host commands ({t}/cmd/...)")]),
        Probe("dashboard", f"{t}/cmd/history/response", [
            Expect("dashboard", False, "the dashboard account may publish command answers "
                   f"({t}/cmd/.../response), which only the engine may: a forged answer "
                   "would tell the host a refused command was done")]),
        Probe("dashboard", f"{t}/hub/cmd/enrol", [
            Expect("hub", True, "the host page asks the hub to enrol (hub/cmd/enrol)")]),
        Probe("dashboard", f"{t}/game/doctor", [
            Expect("engine", False, f"the dashboard account may publish game topics "
                   f"({t}/game/...), which only the engine may")]),
        Probe("dashboard", f"{t}/hub/event", [
            Expect("engine", False, f"the dashboard account may publish hub events "
                   f"({t}/hub/event): a forged card could enter the game")]),
    ]


class Session:
    """One account's MQTT connection for the probes: CONNACK, SUBACKs, what arrives."""

    def __init__(self, name: str, user: str, password: str, host: str, port: int) -> None:
        self.name = name
        self.user = user
        self.refusal: str | None = None
        self.received: set[str] = set()
        self.retained: dict[str, bytes] = {}
        self._connected = threading.Event()
        self._lock = threading.Lock()
        self._subacks: dict[int, threading.Event] = {}
        self.client = paho.Client(CallbackAPIVersion.VERSION2,
                                  client_id=f"doctor-{name}-{uuid.uuid4().hex[:6]}")
        self.client.username_pw_set(user, password)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self.host, self.port = host, port

    def _on_connect(self, _c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            self.refusal = str(reason)
        self._connected.set()

    def _on_message(self, _c: Any, _u: Any, message: paho.MQTTMessage) -> None:
        payload = bytes(message.payload)
        with self._lock:
            if message.retain:
                self.retained[message.topic] = payload
            try:
                data = json.loads(payload)
            except ValueError:
                return
            if isinstance(data, dict) and isinstance(data.get("doctor"), str):
                self.received.add(data["doctor"])

    def _on_subscribe(self, _c: Any, _u: Any, mid: int, _codes: Any, _p: Any) -> None:
        with self._lock:
            event = self._subacks.get(mid)
        if event is not None:
            event.set()

    def connect(self, timeout: float) -> str | None:
        """None when logged in, else why not."""
        try:
            self.client.connect(self.host, self.port, keepalive=15)
        except OSError as exc:
            return f"no broker answers at {self.host}:{self.port} ({exc.strerror or exc})"
        self.client.loop_start()
        if not self._connected.wait(timeout):
            return f"the broker at {self.host}:{self.port} did not answer in {timeout:g} s"
        return self.refusal

    def subscribe(self, topics: list[str], timeout: float) -> None:
        events = []
        for topic in topics:
            with self._lock:
                _rc, mid = self.client.subscribe(topic, qos=1)
                event = threading.Event()
                if mid is not None:
                    self._subacks[mid] = event
                    events.append(event)
        for event in events:
            event.wait(timeout)

    def publish(self, topic: str, token: str) -> None:
        info = self.client.publish(topic, doctor_probe(token), qos=1)
        with contextlib.suppress(RuntimeError, ValueError):  # refused or not connected
            info.wait_for_publish(2)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def place_name(reader: dict[str, Any]) -> str:
    """A reader's place in a host's words (rows, columns and seats counted from 1)."""
    if reader.get("cell"):
        r, c = divmod(parse_cell(str(reader["cell"])), SIZE)
        return f"the reader under row {r + 1}, column {c + 1}"
    if reader.get("seat") is not None:
        return f"Seat {int(reader['seat']) + 1}'s scan pad"
    return f"the pawn sensor at perimeter position {int(reader.get('position') or 0) + 1}"


class Doctor:
    def __init__(self, root: Path, timeout: float = 3.0, skip: set[str] | None = None) -> None:
        self.paths = Paths(root)
        self.timeout = timeout
        self.skip = skip or set()
        if not self.paths.answers.exists():
            raise DoctorError(f"no table is set up under {root} ({self.paths.answers} is "
                              "missing): run `sudo cauldron setup` first")
        try:
            data = tomllib.loads(self.paths.answers.read_text(encoding="utf-8"))["table"]
            known = {k: v for k, v in data.items() if k in Answers.__dataclass_fields__}
            self.answers = Answers(**known)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DoctorError(f"{self.paths.answers} cannot be read ({exc}); run "
                              "`sudo cauldron setup` again") from None
        self.passwords: dict[str, str] = {}
        for service in SERVICES:
            path = self.paths.password(service)
            try:
                self.passwords[service] = path.read_text(encoding="utf-8").splitlines()[0]
            except PermissionError:
                raise DoctorError(f"cannot read {path}: run the doctor with sudo") from None
            except (OSError, IndexError):
                raise DoctorError(f"{path} is missing or empty: run `sudo cauldron setup` "
                                  "again") from None
        self.sessions: dict[str, Session] = {}
        self.not_run: list[str] = []  # checks that could not run, and why
        self.broker_down: str | None = None

    # ------------------------------------------------------------ the run

    def run(self, say: Say) -> list[str]:
        problems: list[str] = []
        a = self.answers
        say(f"Table {a.table!r}: broker {a.mqtt_host}:{a.mqtt_port}, {a.backend} readers, "
            f"dashboard on port {a.dashboard_port}")
        try:
            if "broker" not in self.skip:
                problems += self.check_logins(say)
            if "acl" not in self.skip:
                if len(self.sessions) == len(SERVICES):
                    problems += self.check_acl(say)
                else:
                    self._not_run(say, "each account may do exactly what the ACL says",
                                  "not every account could log in")
            if "services" not in self.skip:
                problems += self.check_services(say)
            if "readers" not in self.skip:
                problems += self.check_readers(say)
        finally:
            for session in self.sessions.values():
                session.close()
        if "services" not in self.skip:
            problems += self.check_keys(say)
        if "secrets" not in self.skip:
            problems += self.check_secrets(say)
        if "database" not in self.skip and self.answers.store:
            problems += self.check_database(say)
        if "tags" not in self.skip:
            problems += self.check_tags(say)
        if "clock" not in self.skip:
            problems += self.check_clock(say)
        if "disk" not in self.skip:
            problems += self.check_disk(say)
        return problems

    def _not_run(self, say: Say, what: str, why: str) -> None:
        """A check that could not run is never shown as ``ok``."""
        say(f"NOT RUN {what} (could not run: {why})")
        self.not_run.append(f"{what}: {why}")

    def _acl_hint(self) -> str:
        return (f"the ACL ({self.paths.acl}; `sudo cauldron setup` writes the shipped one)")

    @staticmethod
    def _report(say: Say, what: str, found: list[str]) -> list[str]:
        say(f"{'ok     ' if not found else 'PROBLEM'} {what}")
        return found

    def check_logins(self, say: Say) -> list[str]:
        found = []
        a = self.answers
        for service, user in accounts(a).items():
            session = Session(service, user, self.passwords[service], a.mqtt_host, a.mqtt_port)
            why = session.connect(self.timeout)
            if why is None:
                self.sessions[service] = session
                continue
            session.close()
            if "authori" in why.lower() or "password" in why.lower():
                found.append(
                    f"the {service} account {user!r} cannot log in to the broker ({why}): its "
                    f"password in {self.paths.passwd} differs from "
                    f"{self.paths.password(service)}, or Mosquitto was not restarted since; "
                    "run `sudo cauldron setup` (it rewrites the accounts and restarts it)")
            else:
                self.broker_down = why
                found.append(f"the {service} account cannot reach the broker: {why}; start it "
                             "(`sudo systemctl restart mosquitto`, then "
                             "`journalctl -u mosquitto` if it fails)")
        return self._report(say, "each account logs in to the broker", found)

    def check_acl(self, say: Say) -> list[str]:
        probes = acl_probes(self.answers.table)
        wanted: dict[str, set[str]] = {}
        for probe in probes:
            for expect in probe.expects:
                wanted.setdefault(expect.receiver, set()).add(probe.topic)
        for service, topics in wanted.items():
            self.sessions[service].subscribe(sorted(topics), self.timeout)
        for probe in probes:
            self.sessions[probe.publisher].publish(probe.topic, probe.token)
        allowed = [(p, e) for p in probes for e in p.expects if e.delivered]
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline and not all(
                p.token in self.sessions[e.receiver].received for p, e in allowed):
            time.sleep(0.02)
        time.sleep(min(0.5, self.timeout / 4))  # a denied message would have come by now
        found = []
        for probe in probes:
            for expect in probe.expects:
                got = probe.token in self.sessions[expect.receiver].received
                if got and not expect.delivered:
                    found.append(f"too much allowed: {expect.why}; fix {self._acl_hint()}, then "
                                 "`sudo systemctl restart mosquitto`")
                elif expect.delivered and not got:
                    found.append(f"not allowed but needed: {expect.why}; fix {self._acl_hint()}, "
                                 "then `sudo systemctl restart mosquitto`")
        total = sum(len(p.expects) for p in probes)
        return self._report(say, f"each account may do exactly what the ACL says ({total} "
                            "probes)", found)

    def check_services(self, say: Say) -> list[str]:
        found = []
        a = self.answers
        t = f"cauldron/{a.table}"
        dashboard = self.sessions.get("dashboard")
        if dashboard is not None:
            topics = [f"{t}/hub/state", f"{t}/engine/state", f"{t}/hub/health"]
            dashboard.subscribe(topics, self.timeout)
            deadline = time.monotonic() + self.timeout
            while time.monotonic() < deadline and len(
                    [x for x in topics if x in dashboard.retained]) < len(topics):
                time.sleep(0.02)
            for who, topic, unit in (("hub", topics[0], "cauldron-hub"),
                                     ("engine", topics[1], "cauldron-engine")):
                state = _field(dashboard.retained.get(topic), "state")
                if state != "online":
                    seen = "never seen" if state is None else f"says {state!r}"
                    found.append(f"the {who} of table {a.table} is not online ({topic} "
                                 f"{seen}): `sudo systemctl status {unit}` and "
                                 f"`journalctl -u {unit} -n 50` say why")
            # Alive is not enough: an engine that cannot write its log says so here.
            degraded = _field(dashboard.retained.get(topics[1]), "degraded")
            if degraded:
                found.append(f"the engine cannot follow table {a.table}: {degraded}; "
                             f"{_disk_advice(str(degraded))}")
            health = dashboard.retained.get(topics[2])
            found += self._hub_degraded(_field(health, "degraded"))
            backend = _field(health, "backend")
            if health is not None and backend != a.backend:
                found.append(f"the hub reads with the {backend!r} back-end but setup chose "
                             f"{a.backend!r}: run `sudo cauldron setup` again and restart it")
        else:
            self._not_run(say, "the hub and the engine say they are online and sound",
                          f"no broker login ({self.broker_down or 'the dashboard account'})")
        found += self._dashboard_answers()
        configs = self._configured_tables()
        for where, table in configs.items():
            if table != a.table:
                found.append(f"{where} names table {table!r}, not {a.table!r}: run "
                             "`sudo cauldron setup` again")
        return self._report(say, "hub, engine and dashboard are alive and serve table "
                            f"{a.table!r}", found)

    def _hub_degraded(self, degraded: Any) -> list[str]:
        """The hub's own health (``hub/health`` ``degraded``): it cannot store its events,
        or its readers fail."""
        if not isinstance(degraded, dict):
            return []
        code, reason = degraded.get("code"), str(degraded.get("reason", ""))
        if code == "readers_failed":
            advice = ("check the readers' cable and power, then `journalctl -u cauldron-hub "
                      "-n 50`")
        else:
            advice = _disk_advice(reason)
        return [f"the hub of table {self.answers.table} is degraded ({code}): {reason}; "
                f"{advice}"]

    def _dashboard_answers(self) -> list[str]:
        a = self.answers
        url = f"http://127.0.0.1:{a.dashboard_port}/api/table"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as reply:
                served = json.loads(reply.read()).get("table")
        except (OSError, ValueError, urllib.error.URLError) as exc:
            holder = port_holder(a.dashboard_port)
            if holder is not None and "cauldron" not in holder:
                return [f"port {a.dashboard_port} is taken by another program ({holder}), so "
                        "the dashboard cannot listen there: stop that program, or choose "
                        "another port (`sudo cauldron setup --dashboard-port 8080`)"]
            return [f"the dashboard does not answer on port {a.dashboard_port} ({exc}): "
                    "`sudo systemctl status cauldron-dashboard`"]
        if served != a.table:
            holder = port_holder(a.dashboard_port) or "another dashboard"
            return [f"the dashboard on port {a.dashboard_port} shows table {served!r}, not "
                    f"{a.table!r}: {holder} holds the port, or run `sudo cauldron setup` "
                    "again"]
        return []

    def _configured_tables(self) -> dict[str, str]:
        tables: dict[str, str] = {}
        try:
            hub = tomllib.loads(self.paths.config("hub").read_text(encoding="utf-8"))
            tables[str(self.paths.config("hub"))] = str(hub.get("table"))
            engine = tomllib.loads(self.paths.config("engine").read_text(encoding="utf-8"))
            served = engine.get("engine", {}).get("tables")
            if isinstance(served, str) and self.answers.table not in served.split(","):
                tables[str(self.paths.config("engine"))] = served
        except (OSError, ValueError) as exc:
            tables["the configs"] = f"unreadable ({exc})"
        return tables

    def check_keys(self, say: Say) -> list[str]:
        """The table's keys (engine.wire.auth): the hub's signing key and the command key,
        in the one folder the three services share."""
        from engine.wire.auth import KeyKind, key_path, load_key

        table, folder = self.answers.table, self.paths.keys
        found = []
        kinds: tuple[tuple[KeyKind, str, str], ...] = (
            ("hub", "the hub makes it when it first starts", "cauldron-hub"),
            ("cmd", "the dashboard or the engine makes it when it starts", "cauldron-dashboard"))
        for kind, maker, unit in kinds:
            path = key_path(folder, table, kind)
            try:
                key = load_key(folder, table, kind)
            except (OSError, ValueError) as exc:
                found.append(f"the {kind} key {path} cannot be read ({exc})")
                continue
            if key is None:
                found.append(f"no {kind} key for table {table} in {folder} ({maker}): "
                             f"`sudo systemctl restart {unit}`, then restart the others")
        # Their owners and modes: check_secrets.
        return self._report(say, "the table's keys are in place", found)

    def check_readers(self, say: Say) -> list[str]:
        hub = self.sessions.get("hub")
        if hub is None:
            self._not_run(say, "every reader answers",
                          f"no hub login ({self.broker_down or 'the hub account'})")
            return []
        from engine.wire.contract import CommandRequest, CommandResponse, Topics, encode

        topic = Topics(self.answers.table).hub_cmd("readers")
        answers: list[CommandResponse] = []
        transaction = uuid.uuid4().hex

        def on_answer(_c: Any, _u: Any, message: paho.MQTTMessage) -> None:
            try:
                reply = CommandResponse.model_validate_json(message.payload)
            except ValueError:
                return
            if reply.transaction == transaction:
                answers.append(reply)

        hub.client.message_callback_add(topic + "/response", on_answer)
        hub.subscribe([topic + "/response"], self.timeout)
        from engine.wire.auth import load_key, sign_command

        key = load_key(self.paths.keys, self.answers.table, "cmd")
        if key is None:  # check_keys says what to do
            self._not_run(say, "every reader answers", "no command key")
            return []
        request = sign_command(CommandRequest(transaction=transaction, source="doctor",
                                              deadline=time.time() + self.timeout + 5),
                               self.answers.table, "readers", key.key, hub=True)
        hub.client.publish(topic, encode(request), qos=1)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline and not answers:
            time.sleep(0.02)
        if not answers or answers[0].status != "ok" or not isinstance(answers[0].data, dict):
            why = answers[0].error if answers else "no answer"
            return self._report(say, "every reader answers", [
                f"the hub did not say what its readers see ({why}): is cauldron-hub running? "
                "`journalctl -u cauldron-hub -n 50`"])
        try:
            readers = ReadersResult.model_validate(answers[0].data).readers
        except ValueError as exc:
            return self._report(say, "every reader answers", [
                f"the hub's answer about its readers is not what this doctor knows ({exc}): "
                "are the hub and this program the same version?"])
        found = []
        for reader in readers:
            if reader.health != "ok":
                found.append(f"{place_name(reader.model_dump())} is {reader.health}: check "
                             "its cable and antenna (hardware/wiring.md), then `sudo cauldron "
                             f"readers --config {self.paths.config('hub')}`")
        count = len(readers)
        return self._report(say, f"every reader answers ({count} readers)", found)

    def check_tags(self, say: Say) -> list[str]:
        from engine.games.glastonbury.rules.cards import enrolment_order

        try:
            hub = tomllib.loads(self.paths.config("hub").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return self._report(say, "the tag map holds the whole box", [
                f"{self.paths.config('hub')} cannot be read ({exc}): run `sudo cauldron setup`"])
        path = Path(str(hub.get("tagmap") or Path(str(hub.get("data_dir"))) / "tagmap.json"))
        if not path.exists():
            if hub.get("backend") == "sim":
                return self._report(say, "the tag map holds the whole box (simulated table: "
                                    "a virtual box)", [])
            return self._report(say, "the tag map holds the whole box", [
                f"no card is enrolled yet ({path} is missing): on /host open Tag enrolment "
                "and tap every card on a pad (or `sudo cauldron enroll --config "
                f"{self.paths.config('hub')}`)"])
        try:
            tags = json.loads(path.read_text(encoding="utf-8")).get("tags", {})
        except (OSError, ValueError) as exc:
            return self._report(say, "the tag map holds the whole box", [
                f"the tag map {path} cannot be read ({exc})"])
        have = set(tags.values()) if isinstance(tags, dict) else set()
        missing = [c for c in enrolment_order() if c not in have]
        found = []
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            found.append(f"{len(missing)} of {len(enrolment_order())} cards are not enrolled "
                         f"({shown}): on /host open Tag enrolment and tap them on a pad")
        return self._report(say, f"the tag map holds the whole box ({len(have)} tags)", found)

    def check_secrets(self, say: Say) -> list[str]:
        """Every secret with the owner, group and mode of setup's plan (`ownership`): the
        broker passwords, the host PIN, the database password and the table's keys, each
        readable by its own services only; and Mosquitto's password file, 0600."""
        p, found = self.paths, []
        plan = [o for o in ownership(self.answers, p).values() if o.secret]
        plan.append(Owned(p.passwd, "mosquitto", None, 0o600, True))
        for o in plan:
            try:
                st = o.path.stat()
            except FileNotFoundError:
                if o.path != p.engine_env:
                    found.append(f"{o.path} is missing: run `sudo cauldron setup` again")
                continue
            mode = st.st_mode & 0o777
            if mode & ~o.mode:
                found.append(f"{o.path} can be read by others (mode {mode:o}): "
                             f"`sudo chmod {o.mode:o} {o.path}`")
            elif mode != o.mode:
                found.append(f"{o.path} has mode {mode:o}, not {o.mode:o} (its service cannot "
                             f"read it): `sudo chmod {o.mode:o} {o.path}`")
            if self.scratch:  # a rehearsal's files are all its runner's
                continue
            user, group = o.user or "root", o.group or "root"
            if _uid(user) is not None and st.st_uid != _uid(user):
                found.append(f"{o.path} belongs to {_user_name(st.st_uid)}, not {user}: "
                             f"`sudo chown {user} {o.path}`")
            if o.group is not None and _gid(group) is not None and st.st_gid != _gid(group):
                found.append(f"{o.path} is in group {_group_name(st.st_gid)}, not {group}: "
                             f"`sudo chgrp {group} {o.path}`")
        return self._report(say, "each secret is readable by its own services only "
                            "(passwords, PIN, keys, broker accounts)", found)

    @property
    def scratch(self) -> bool:
        return self.paths.root != Path("/")

    def check_database(self, say: Say) -> list[str]:
        """A venue's store: reachable with the engine's password, its schema current, this
        table in the venue's list and served by a live engine."""
        from engine.service.store.postgres import SCHEMA_VERSION, redact

        store, table = self.answers.store, self.answers.table
        what = f"the venue's database {redact(store)} serves table {table!r}"
        try:
            import psycopg
        except ImportError:
            return self._report(say, what, ["psycopg is not installed: "
                                             "`sudo /opt/cauldron-table/.venv/bin/pip install "
                                             "-e '/opt/cauldron-table[venue]'`"])
        password = env_value(self.paths.engine_env, "PGPASSWORD")
        kwargs: dict[str, Any] = {"connect_timeout": max(1, int(self.timeout))}
        if password:
            kwargs["password"] = password
        try:
            with psycopg.connect(store, **kwargs) as conn:
                row = conn.execute("SELECT MAX(version) FROM cauldron_schema").fetchone()
                version = int(row[0] or 0) if row else 0
                listed = conn.execute("SELECT 1 FROM cauldron_venue_tables WHERE table_id = %s",
                                      (table,)).fetchone() is not None
        except psycopg.errors.UndefinedTable:
            return self._report(say, what, [
                f"{redact(store)} has no Cauldron tables yet: start the engine once (it "
                "migrates), or `sudo cauldron games migrate --config "
                f"{self.paths.config('engine')}`"])
        except psycopg.Error as exc:
            return self._report(say, what, [
                f"the engine cannot reach its database {redact(store)} "
                f"({' '.join(str(exc).split())}): is PostgreSQL running, and is the password "
                f"in {self.paths.engine_env} right? (`sudo cauldron setup --store URL` "
                "asks it again)"])
        found = []
        if version < SCHEMA_VERSION:
            found.append(f"{redact(store)} has schema version {version}, this program needs "
                         f"{SCHEMA_VERSION}: restart the engine (it migrates) or `sudo cauldron "
                         f"games migrate --config {self.paths.config('engine')}`")
        elif version > SCHEMA_VERSION:
            found.append(f"{redact(store)} has schema version {version}, newer than this "
                         f"program's {SCHEMA_VERSION}: update the project on this Pi")
        if not listed:
            found.append(f"table {table} is not in the venue's list, so no engine serves it: "
                         f"`sudo cauldron games tables --config {self.paths.config('engine')} "
                         f"--add {table}`")
        return self._report(say, what + f" (schema {version})", found)

    def check_clock(self, say: Say) -> list[str]:
        found = []
        now = time.time()
        year = time.gmtime(now).tm_year
        # No battery clock: a Pi that booted offline starts from the last time it saved.
        # Sane means "not before this program was installed"; on an offline table network
        # no NTP sync is expected, so that alone is no problem.
        floor = _install_time()
        if year < 2025 or now < floor - 86400:
            found.append(f"the clock says {time.strftime('%Y-%m-%d %H:%M', time.gmtime(now))}"
                         " UTC, before this program was installed: set it (`sudo timedatectl "
                         "set-ntp true` with a network, or `sudo date -s 'YYYY-MM-DD HH:MM'`)")
            return self._report(say, "the clock is sane", found)
        synced = None
        if shutil.which("timedatectl"):
            try:
                synced = subprocess.run(
                    ["timedatectl", "show", "-p", "NTPSynchronized", "--value"],
                    capture_output=True, text=True, timeout=5, check=False).stdout.strip()
            except (OSError, subprocess.TimeoutExpired):
                synced = None
        note = " (not synchronised: no time server reached; fine for a table)" \
            if synced == "no" else ""
        return self._report(say, f"the clock is sane{note}", found)

    def data_dirs(self) -> list[Path]:
        """Every folder the services write (their data, the keys, the engine's logs)."""
        p = self.paths
        dirs = [p.data / s for s in SERVICES] + [p.keys]
        tables = p.data / "engine" / "tables"
        return dirs + ([tables] if tables.is_dir() else [])

    def check_disk(self, say: Say) -> list[str]:
        """A probe written and synced in every data dir: a read-only or full card is found
        here, not in the middle of a game (free bytes alone miss a read-only mount)."""
        found = []
        seen_fs: set[int] = set()
        least: int | None = None
        for folder in self.data_dirs():
            if not folder.is_dir():
                found.append(f"{folder} is missing: run `sudo cauldron setup` again")
                continue
            trouble = probe_dir(folder, PROBE_BYTES)
            if trouble is not None:
                found.append(f"{folder} cannot be written ({trouble.words}): "
                             f"{_disk_advice(trouble.words)}")
                continue
            st = os.stat(folder)
            if st.st_dev in seen_fs:
                continue
            seen_fs.add(st.st_dev)
            usage = shutil.disk_usage(folder)
            least = usage.free if least is None else min(least, usage.free)
            if usage.free < MIN_FREE_BYTES or usage.free < usage.total * 0.05:
                found.append(f"only {usage.free // (1024 * 1024)} MB free on the disk holding "
                             f"{folder}: {_disk_advice('disk is full')}")
        free = f" ({least // (1024 * 1024)} MB free)" if least is not None else ""
        return self._report(say, f"every data dir can be written and synced{free}", found)


def _disk_advice(trouble: str) -> str:
    if "read-only" in trouble or "input/output" in trouble:
        return ("the SD card went read-only (Linux does that after write errors: a worn or "
                "failing card); `sudo dmesg | grep -i -e ext4 -e mmc` says why; "
                "`sudo reboot` checks and repairs it, and a new card (copy "
                "/var/lib/cauldron first) cures a worn one")
    if "full" in trouble or "space" in trouble:
        return ("free some room (`sudo journalctl --vacuum-size=50M`; old games: "
                "`sudo cauldron games`), or use a bigger SD card")
    return "`sudo cauldron setup` again sets owners and modes"


def port_holder(port: int) -> str | None:
    """The program listening on TCP `port` here ("nginx (pid 812)"), from /proc; None
    when nothing listens or it cannot be told."""
    inodes = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(parts[9])
    if not inodes:
        return None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    shown = " ".join(x.decode(errors="replace") for x in cmd[:3] if x)
                    return f"{shown[:80]} (pid {pid})"
        except OSError:
            continue
    return "a program this user cannot see (run the doctor with sudo)"


def _install_time() -> float:
    """When this program was installed (its files' time): a clock before it is wrong."""
    try:
        return Path(__file__).stat().st_mtime
    except OSError:
        return 0.0


def _uid(user: str) -> int | None:
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def _gid(group: str) -> int | None:
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        return None


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return f"gid {gid}"


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _field(payload: bytes | None, name: str) -> Any:
    if payload is None:
        return None
    try:
        data = json.loads(payload)
    except ValueError:
        return None
    return data.get(name) if isinstance(data, dict) else None

"""A local MQTT broker on 127.0.0.1 for tests, benchmarks and the zero-install demo.

``LocalBroker()`` runs Mosquitto (``/usr/sbin/mosquitto`` or ``mosquitto`` on PATH) with a
temporary config (one listener on 127.0.0.1, anonymous, no persistence), or, when Mosquitto
is not installed, the embedded pure-Python amqtt broker in a background thread. It can be
stopped and started again on the same port (broker outage tests)::

    with LocalBroker() as broker:      # broker.url == "mqtt://127.0.0.1:<port>"
        broker.stop(); broker.start()

``LocalBroker(kind="amqtt", accounts={user: password}, acl=text)`` refuses anonymous
clients and enforces a Mosquitto ACL (the shipped one's syntax: ``user``, ``topic`` and
``pattern`` lines, ``%u``) on every publish, subscription and delivery: the demo's broker.
The passwords stay in this process's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

BrokerKind = Literal["mosquitto", "amqtt"]
HOST = "127.0.0.1"


class BrokerStartError(RuntimeError):
    """The local broker did not come up."""


def find_mosquitto() -> str | None:
    for candidate in ("/usr/sbin/mosquitto", shutil.which("mosquitto")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port() -> int:
    """A port free now, for a server started a moment later. Picked below the kernel's
    ephemeral range: outgoing connections take their local ports from that range (so does
    a bind to port 0), and one of them could take the port before its server binds it."""
    top = _ephemeral_low()
    for _ in range(100):
        port = top - 1 - secrets.randbelow(min(10_000, top - 1025))
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((HOST, port))
            except OSError:
                continue  # in use: another
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


log = logging.getLogger("cauldron.broker")


def _open_transports(loop: asyncio.AbstractEventLoop) -> list[Any]:
    """The client connections a selector event loop still holds (none on other loops)."""
    transports = getattr(loop, "_transports", None)
    return [t for t in list(transports.values()) if not t.is_closing()] if transports else []


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((HOST, port)) == 0


# ------------------------------------------------------------ accounts and ACL (amqtt)

Access = Literal["read", "write"]


@dataclass(frozen=True)
class AclRule:
    user: str | None  # None: a `pattern` line, for every account (%u = its name)
    access: frozenset[str]
    topic: str


def parse_acl(text: str) -> list[AclRule]:
    """The rules of a Mosquitto acl_file; an unknown line raises ValueError naming it."""
    rules: list[AclRule] = []
    user: str | None = ""  # "" : topic lines before any `user` line (anonymous in Mosquitto)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        if word == "user":
            user = rest
            continue
        if word not in ("topic", "pattern") or not rest:
            raise ValueError(f"ACL line {number}: {line!r} is not user/topic/pattern")
        access, _, topic = rest.partition(" ")
        if access not in ("read", "write", "readwrite", "deny"):
            access, topic = "readwrite", rest  # Mosquitto's default access
        granted = frozenset() if access == "deny" else (
            frozenset({"read", "write"}) if access == "readwrite" else frozenset({access}))
        rules.append(AclRule(None if word == "pattern" else user, granted, topic.strip()))
    return rules


def _covers(pattern: str, topic: str) -> bool:
    """Every topic that ``topic`` (a name or a subscription filter) can stand for matches
    the ACL ``pattern`` (MQTT wildcards in both)."""
    want, have = pattern.split("/"), topic.split("/")
    for i, level in enumerate(want):
        if level == "#":
            return True
        if i >= len(have):
            return False
        if have[i] == "#" or (have[i] == "+" and level != "+"):
            return False
        if level not in ("+", have[i]):
            return False
    return len(have) == len(want)


def acl_allows(rules: list[AclRule], user: str | None, topic: str, access: Access) -> bool:
    """Mosquitto's answer: some rule of ``user`` (or a pattern) grants ``access`` to
    ``topic``; a `deny` rule that covers it wins."""
    allowed = False
    for rule in rules:
        if rule.user is None:
            if user is None or any(ch in user for ch in "+#/"):
                continue  # Mosquitto skips patterns for such names
            pattern = rule.topic.replace("%u", user)
        elif rule.user == (user or ""):
            pattern = rule.topic
        else:
            continue
        if _covers(pattern, topic):
            if not rule.access:
                return False
            allowed = allowed or access in rule.access
    return allowed


try:  # amqtt is the fallback broker: its plugins only where it is installed
    from amqtt.contexts import Action
    from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin
    from amqtt.session import Session
except ImportError:  # pragma: no cover - amqtt is a dependency of the project
    pass
else:
    class AccountsAuthPlugin(BaseAuthPlugin):  # type: ignore[misc]
        """Only the given accounts, by password (constant-time compare); no anonymous."""

        @dataclass
        class Config:
            accounts: dict[str, str] = field(default_factory=dict)

        async def authenticate(self, *, session: Session) -> bool | None:
            accounts: dict[str, str] = self.config.accounts
            user, password = session.username, session.password
            if not user or password is None or user not in accounts:
                return False
            given = password.encode() if isinstance(password, str) else bytes(password)
            return hmac.compare_digest(given, accounts[user].encode())

    class MosquittoAclPlugin(BaseTopicPlugin):  # type: ignore[misc]
        """A Mosquitto acl_file on publish (write), subscribe and delivery (read)."""

        @dataclass
        class Config:
            acl: str = ""

        def __init__(self, context: Any) -> None:
            super().__init__(context)
            self._rules = parse_acl(self.config.acl)

        async def topic_filtering(self, *, session: Session | None = None,
                                  topic: str | None = None,
                                  action: Action | None = None) -> bool | None:
            if session is None or not topic:
                return False
            access: Access = "write" if action == Action.PUBLISH else "read"
            return acl_allows(self._rules, session.username, topic, access)


    def _filtered_broker() -> type[Any]:
        """amqtt's Broker, with retained messages sent on a subscription only where the
        ACL lets the subscriber read them (amqtt 0.12 sends them unchecked), and safe
        loops over its subscriptions."""
        from amqtt.broker import Broker

        class Subscriptions(dict[str, list[tuple[Session, int]]]):
            """Iterated as a snapshot: with topic checks amqtt awaits inside its loops over
            the subscriptions, and a client (un)subscribing meanwhile must not end one."""

            def __iter__(self) -> Iterator[str]:
                return iter(list(self.keys()))

            def items(self) -> Any:
                return [(key, list(value)) for key, value in super().items()]

        class FilteredBroker(Broker):  # type: ignore[misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self._subscriptions = Subscriptions()

            async def _publish_retained_messages_for_subscription(
                    self, subscription: tuple[str, int], session: Session) -> None:
                if not await self._topic_filtering(session, subscription[0], Action.SUBSCRIBE):
                    return
                handler = self._get_handler(session)
                topic_filter, qos = subscription
                sends = [
                    asyncio.ensure_future(handler.mqtt_publish(
                        retained.topic, retained.data, min(qos, retained.qos or qos),
                        retain=True))
                    for topic, retained in list(self._retained_messages.items())
                    if handler is not None and self._matches(topic, topic_filter)
                    and await self._topic_filtering(session, topic, Action.RECEIVE)]
                if sends:
                    await asyncio.wait(sends)

        return FilteredBroker


class LocalBroker:
    """A broker process (Mosquitto) or thread (amqtt) listening on 127.0.0.1:``port``."""

    def __init__(self, port: int | None = None, kind: BrokerKind | None = None,
                 accounts: Mapping[str, str] | None = None, acl: str | None = None) -> None:
        mosquitto = find_mosquitto()
        if kind is None:
            kind = "mosquitto" if mosquitto else "amqtt"
        if kind == "mosquitto" and mosquitto is None:
            raise BrokerStartError("mosquitto is not installed (apt-get install mosquitto)")
        if accounts is not None and kind != "amqtt":
            raise ValueError("accounts are for the embedded amqtt broker (kind='amqtt')")
        if acl is not None:
            parse_acl(acl)  # a bad line fails here, not in the broker's thread
        self._accounts = dict(accounts) if accounts is not None else None
        self._acl = acl
        self.kind: BrokerKind = kind
        self.port = port or free_port()
        self._mosquitto = mosquitto
        self._tmp = tempfile.TemporaryDirectory(prefix="cauldron-broker-")
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._amqtt: Any = None

    @property
    def url(self) -> str:
        return f"mqtt://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        if self.kind == "mosquitto":
            return self._proc is not None and self._proc.poll() is None
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------ start / stop

    def start(self, timeout: float = 10.0) -> LocalBroker:
        if self.running:
            return self
        deadline = time.monotonic() + timeout
        if self.kind == "mosquitto":
            self._start_mosquitto()
        else:
            self._start_amqtt()
        while not _port_open(self.port):
            if time.monotonic() > deadline or not self.running:
                log = self._log_tail()
                self.stop()
                raise BrokerStartError(f"{self.kind} did not listen on port {self.port}: {log}")
            time.sleep(0.01)
        return self

    def _start_mosquitto(self) -> None:
        conf = Path(self._tmp.name) / "mosquitto.conf"
        conf.write_text(
            f"listener {self.port} {HOST}\n"
            "allow_anonymous true\n"
            "persistence false\n"
            # Without it every hop through the broker can wait for Nagle (~40 ms).
            "set_tcp_nodelay true\n"
            f"log_dest file {Path(self._tmp.name) / 'mosquitto.log'}\n"
            "max_queued_messages 100000\n"
            # QoS 1 messages in flight to a client at once (Mosquitto's default 20): the
            # engine acknowledges a batch once stored, so this bounds its group commits.
            "max_inflight_messages 1000\n",
            encoding="utf-8",
        )
        assert self._mosquitto is not None
        self._proc = subprocess.Popen(
            [self._mosquitto, "-c", str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _start_amqtt(self) -> None:
        ready = threading.Event()
        errors: list[BaseException] = []

        def serve() -> None:
            from amqtt.broker import Broker

            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            plugins: dict[str, Any] = {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}}
            if self._accounts is not None:
                plugins = {f"{__name__}.AccountsAuthPlugin": {"accounts": self._accounts}}
            if self._acl is not None:
                plugins[f"{__name__}.MosquittoAclPlugin"] = {"acl": self._acl}
            config = {
                "listeners": {"default": {"type": "tcp", "bind": f"{HOST}:{self.port}"}},
                "plugins": plugins,
            }
            try:
                broker = (Broker if self._acl is None else _filtered_broker())(config, loop=loop)
                loop.run_until_complete(broker.start())
                self._amqtt = broker
            except BaseException as exc:  # reported to the starting thread
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            # Stop listening first: amqtt closes its listeners only after every session has
            # stopped, which can hang under load, and a restart must get the port back.
            for server in getattr(broker, "_servers", {}).values():
                if getattr(server, "instance", None) is not None:
                    server.instance.close()
            try:
                loop.run_until_complete(asyncio.wait_for(broker.shutdown(), 5))
            except Exception as exc:  # a stuck session: drop what is left with the loop
                log.warning("amqtt broker shutdown incomplete: %r", exc)
            for transport in _open_transports(loop):
                transport.abort()  # the clients see the broker go, as with a real one
            leftover = asyncio.all_tasks(loop)
            for task in leftover:
                task.cancel()
            if leftover:  # let them end here, not later in the garbage collector
                loop.run_until_complete(asyncio.wait(leftover, timeout=2))
            loop.close()

        self._thread = threading.Thread(target=serve, name="amqtt-broker", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            self._thread.join(5)  # its loop is closed: nothing for stop() to stop
            self._thread = None
            self._loop = None
            raise BrokerStartError(f"amqtt broker failed: {errors[0]}")

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)
            self._proc = None
        if self._thread is not None:
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None
            self._loop = None
        deadline = time.monotonic() + 5
        while _port_open(self.port) and time.monotonic() < deadline:
            time.sleep(0.01)

    def restart(self) -> None:
        self.stop()
        self.start()

    def _log_tail(self) -> str:
        log = Path(self._tmp.name) / "mosquitto.log"
        with contextlib.suppress(OSError):
            return " | ".join(log.read_text(encoding="utf-8").splitlines()[-3:])
        return "(no log)"

    def close(self) -> None:
        self.stop()
        self._tmp.cleanup()

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

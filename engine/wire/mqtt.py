"""The one module that owns the MQTT client (paho-mqtt 2.x, ``CallbackAPIVersion.VERSION2``).

The hub, the engine service and the dashboard all talk MQTT through `WireClient`::

    from engine.wire.contract import Topics, ServiceState
    from engine.wire.mqtt import WireClient

    client = WireClient("mqtt://127.0.0.1:1883", client_id="hub-t1",
                        state_topic=Topics("t1").hub_state)
    client.subscribe(Topics("t1").game_public, lambda topic, model: ...)
    client.start(wait=5)                       # connect; raise MqttError if it cannot
    client.wait_ready(5)                       # ... and every subscription acknowledged
    mid = client.publish(Topics("t1").hub_event, event)          # QoS 1
    reply = client.request(Topics("t1").cmd("undo"), {"why": "host"}, timeout=5)
    client.serve(Topics("+").cmd("+"), handler)   # answer requests: handler(info, request)
    client.stop()                              # publishes state offline, disconnects

What it does for you:

- Broker URL: ``mqtt://[user[:password]@]host[:port]`` (port 1883) or ``mqtts://…`` (TLS,
  port 8883, system CAs or ``tls_ca``). Credentials are percent-decoded.
- Presence: with ``state_topic``, a retained last will ``{"state": "offline"}`` and a retained
  ``online`` on every (re)connect, ``offline`` on a clean `stop`.
- Reconnect: automatic, exponential backoff ``reconnect_min``..``reconnect_max`` seconds;
  every subscription is renewed on reconnect; ``on_connect`` hooks run after each connect.
- QoS 1 publish of typed models (`publish`) or raw bytes (`publish_raw`); ``on_ack()`` is
  called (on paho's network thread: keep it short) when the broker's PUBACK arrives; the
  hub's outbox uses it to mark an event delivered.
  While disconnected paho keeps QoS 1 messages in memory and sends them, in order, on
  reconnect.
- Typed subscribe: payloads are parsed with `engine.wire.contract.parse_payload`; a
  malformed one is logged, counted in ``stats`` and passed to ``on_reject`` — never raised.
- Handlers run one at a time, in arrival order, on a dispatcher thread (not paho's network
  thread), so a handler may call `publish` or `request`. Keep them short.
- Bounded intake (`engine.wire.intake`): a PUBLISH over ``max_packet`` bytes is thrown away
  while it is read (never held whole), counted (``stats["oversize"]``), given to no
  handler. QoS 1 messages go first; QoS 0 ones (no service of ours sends any: a flood) come
  in at up to ``bulk_rate`` a second into a lane of ``bulk_items``; the rest is dropped
  unread and counted (``stats["dropped"]``).
  Refusals are logged at a limited rate (`engine.wire.ratelog`).
- Request/response: `request` publishes a `CommandRequest` with a fresh ``transaction`` id
  and waits for the `CommandResponse` with the same id on ``<topic>/response``; `serve`
  answers requests: the handler returns data (status ok) or raises `CommandRefused`
  (status error with its reason).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, unquote, urlsplit

import paho.mqtt.client as paho
from paho.mqtt.client import ConnectFlags, DisconnectFlags
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, _ConnectionState
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from pydantic import JsonValue

from engine.wire.auth import ensure_key, key_path, keys_dir, load_key, sign_command
from engine.wire.contract import (
    MAX_PAYLOAD_BYTES,
    CommandRequest,
    CommandResponse,
    ServiceState,
    TopicInfo,
    Topics,
    WireError,
    WireModel,
    encode,
    is_doctor_probe,
    parse_payload,
    parse_topic,
)
from engine.wire.intake import GuardedSocket, Inbox
from engine.wire.ratelog import RateLimitedLog

log = logging.getLogger("cauldron.wire")
# A PUBLISH packet may hold a payload of MAX_PAYLOAD_BYTES plus its topic and header.
MAX_PACKET: Final = MAX_PAYLOAD_BYTES + 64 * 1024

Handler = Callable[[str, WireModel], None]
RejectHandler = Callable[[str, bytes, WireError], None]
ServeHandler = Callable[[TopicInfo, CommandRequest], JsonValue]


# The share of a request's wait in which the service must take it up (the rest is for the
# work and the answer's way back).
ANSWER_TIME: Final = 0.6


class MqttError(WireError):
    """The MQTT link failed: bad URL, broker unreachable, request timed out."""


class BrokerUrlError(MqttError):
    """A broker URL that cannot be used."""


class RequestTimeout(MqttError):
    """No response arrived in time for a request."""


class CommandRefused(Exception):
    """Raised by a `serve` handler to answer ``status: error`` with this reason, and a
    stable ``code`` (and the ``rule`` id G… when one applies) for the response."""

    def __init__(self, message: str = "", *, code: str | None = None,
                 rule: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule


class NoAnswer(Exception):
    """Raised by a `serve` handler to send no response at all (another process answers:
    e.g. an engine that does not own the table)."""


@dataclass(frozen=True)
class BrokerUrl:
    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> BrokerUrl:
        if "://" not in url:
            url = "mqtt://" + url
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise BrokerUrlError(f"broker URL {url!r}: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
            raise BrokerUrlError(
                f"broker URL scheme {parts.scheme!r} is not mqtt:// or mqtts:// (e.g. "
                "mqtt://127.0.0.1:1883)"
            )
        if not parts.hostname:
            raise BrokerUrlError(f"broker URL {url!r} has no host (e.g. mqtt://127.0.0.1:1883)")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise BrokerUrlError(f"broker URL {url!r}: no path or query allowed")
        tls = scheme in ("mqtts", "ssl")
        return cls(
            host=parts.hostname,
            port=port or (8883 if tls else 1883),
            tls=tls,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
        )

    def redacted(self) -> str:
        user = f"{self.username}:***@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


def with_password_file(url: str, password_file: str | Path | None) -> str:
    """``url`` with the password read from ``password_file`` (first line), so secrets stay
    off command lines and out of config files: ``mqtt://hub@host:1883`` + a 0600 file."""
    if password_file is None:
        return url
    path = Path(password_file)
    try:
        password = path.read_text(encoding="utf-8").splitlines()[0].strip()
    except OSError as exc:
        raise MqttError(f"cannot read the MQTT password file {path}: {exc.strerror}; run the "
                        "command as root (sudo) or as the table's service user") from None
    except IndexError:
        raise MqttError(f"the MQTT password file {path} is empty; run `cauldron setup` "
                        "again") from None
    broker = BrokerUrl.parse(url)
    if not broker.username:
        raise MqttError(f"broker URL {broker.redacted()} names no account, but a password "
                        f"file ({path}) is given; write mqtt://ACCOUNT@host:port")
    scheme = "mqtts" if broker.tls else "mqtt"
    host = f"[{broker.host}]" if ":" in broker.host else broker.host
    return (f"{scheme}://{quote(broker.username, safe='')}:{quote(password, safe='')}"
            f"@{host}:{broker.port}")


def accepts_anonymous(url: str, timeout: float = 5.0, tls_ca: str | None = None) -> bool | None:
    """Whether the broker at `url` lets a client in with no account (None: no answer).
    Such a broker is unsupported for a table: anyone on its network could publish the
    table's screen or its hub's health, and read every seat's private view."""
    broker = BrokerUrl.parse(url)
    answer: list[bool] = []
    done = threading.Event()

    def on_connect(client: paho.Client, userdata: object, flags: ConnectFlags,
                   reason: ReasonCode, properties: Properties | None) -> None:
        answer.append(not reason.is_failure)
        done.set()

    probe = paho.Client(CallbackAPIVersion.VERSION2,
                        client_id=f"cauldron-anonymous-probe-{uuid.uuid4().hex[:8]}")
    probe.on_connect = on_connect
    if broker.tls:
        probe.tls_set(ca_certs=tls_ca, cert_reqs=ssl.CERT_REQUIRED)
    try:
        probe.connect(broker.host, broker.port, keepalive=10)
    except (OSError, ssl.SSLError):
        return None
    probe.loop_start()
    try:
        done.wait(timeout)
    finally:
        probe.disconnect()
        probe.loop_stop()
    return answer[0] if answer else None


@dataclass
class _Subscription:
    pattern: str
    handler: Handler | None
    raw_handler: Callable[[str, bytes], None] | None
    qos: int


_STOP = object()
_ROUTES_KEPT = 4096  # topics whose matching subscriptions are remembered


def _is_message(item: Any) -> bool:
    return item is not _STOP and item[0] == "message"


# What paho may send before its CONNACK (everything else waits for the connection).
_UNCONNECTED: Final = frozenset({paho.CONNECT, paho.DISCONNECT})
_CONNECTED: Final = _ConnectionState.MQTT_CS_CONNECTED


class _GuardedClient(paho.Client):
    """paho's client reading through a `GuardedSocket` (the size bound), whose packets
    queued by one thread while it is `corked` wake the network thread once, at `uncork`."""

    max_packet = MAX_PACKET
    shed: Callable[[], bool] = staticmethod(lambda: False)
    _corked_by: int | None = None
    _corked_packets = 0

    def _create_socket(self) -> Any:
        self.guard = GuardedSocket(super()._create_socket(), self.max_packet, self.shed)
        return self.guard

    def cork(self) -> None:
        """Until `uncork`, this thread's packets are queued without waking paho's network
        thread for each (a wake-up and a `select` a packet cost more than the packet): a
        batch's publishes and acknowledgements go out together. (The network thread still
        writes them whenever it wakes for another reason.)"""
        if self._thread is not None:  # (without a network thread, paho writes at once)
            self._corked_by = threading.get_ident()

    def uncork(self) -> None:
        self._corked_by = None
        self.send_corked()

    def send_corked(self) -> None:
        """Wake the network thread for what the cork holds (the cork stays)."""
        if self._corked_packets:
            self._corked_packets = 0
            self._wake()

    def _wake(self) -> None:
        if self._sockpairW is not None:  # as paho's own _packet_queue does
            with contextlib.suppress(BlockingIOError):
                self._sockpairW.send(b"0")
        self._call_socket_register_write()

    def _packet_queue(self, command: int, packet: bytes | bytearray, mid: int, qos: int,
                      info: paho.MQTTMessageInfo | None = None) -> MQTTErrorCode:
        if command & 0xF0 not in _UNCONNECTED and self._state is not _CONNECTED:
            # paho sets its new socket before it queues the CONNECT (`reconnect`), and
            # `publish` checks only the socket: another thread's packet then reached the
            # broker first, amqtt parsed it as the CONNECT and waited for ever, and the
            # client had no session until its keepalive ran out (the demo's hub, whose poll
            # thread publishes at once: its commands were lost). Not connected: a QoS 1
            # message stays queued, sent after the CONNACK; an ack or a subscription
            # belongs to the old session (`WireClient._on_connect` subscribes again).
            return MQTTErrorCode.MQTT_ERR_NO_CONN
        if self._corked_by is None or self._corked_by != threading.get_ident():
            return super()._packet_queue(command, packet, mid, qos, info)
        self._out_packet.append({"command": command, "mid": mid, "qos": qos, "pos": 0,
                                 "to_process": len(packet), "packet": packet, "info": info})
        self._corked_packets += 1
        return MQTTErrorCode.MQTT_ERR_SUCCESS


def _no_delay(client: paho.Client, userdata: Any, sock: Any) -> None:
    """Nagle's algorithm off: a small MQTT packet otherwise waits for the peer's delayed ACK
    (~40 ms a hop; a request and its answer took ~80 ms instead of ~2 ms)."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (AttributeError, OSError) as exc:  # a TLS wrapper without it, a socket closed
        log.debug("TCP_NODELAY not set: %s", exc)


class WireClient:
    """One MQTT connection with typed publish/subscribe, presence and request/response."""

    def __init__(
        self,
        url: str,
        *,
        client_id: str | None = None,
        state_topic: str | None = None,
        clean_session: bool = True,
        keepalive: int = 15,
        reconnect_min: float = 0.2,
        reconnect_max: float = 10.0,
        tls_ca: str | None = None,
        base: str = "cauldron",
        on_reject: RejectHandler | None = None,
        sign_commands: bool = True,
        keys: Path | None = None,
        make_keys: bool = True,
        max_packet: int = MAX_PACKET,
        bulk_items: int = 1000,
        bulk_rate: float = 200.0,
    ) -> None:
        self.broker = BrokerUrl.parse(url)
        self.client_id = client_id or f"cauldron-{uuid.uuid4().hex[:12]}"
        self.state_topic = state_topic
        self.base = base
        self.on_reject = on_reject
        # Commands (cmd/<verb> and hub/cmd/<verb>) are signed with the table's command key
        # from `keys` (default: engine.wire.auth.keys_dir()); see engine.wire.auth. Without
        # `make_keys` a missing key is an error, not a new key (a hub's machine: a key made
        # there would be no one else's).
        self.sign_commands = sign_commands
        self.keys = keys
        self.make_keys = make_keys
        self._command_keys: dict[str, bytes] = {}
        # PUBACK bookkeeping: mid -> on_ack (or None); acks that beat publish() returning.
        self._ack_lock = threading.Lock()
        self._ack_waiting: dict[int, Callable[[], None] | None] = {}
        self._ack_early: set[int] = set()
        self.stats: Counter[str] = Counter()
        self.refusals = RateLimitedLog(log)
        self.last_error: str | None = None
        self._subs: dict[str, _Subscription] = {}
        self._routes: dict[str, list[_Subscription]] = {}  # topic -> its subscriptions
        self._lock = threading.RLock()
        self._connected = threading.Event()
        self._ready = threading.Event()  # connected and every subscription acknowledged
        self._first_subacks: set[int] = set()
        self._suback: dict[int, threading.Event] = {}
        self._pending: dict[str, tuple[threading.Event, list[CommandResponse]]] = {}
        self._response_topics: set[str] = set()
        self._connect_hooks: list[Callable[[], None]] = []
        self._inbox = Inbox(bulk_items=bulk_items, bulk_rate=bulk_rate)
        self._dispatcher: threading.Thread | None = None
        self._started = False
        self._batch: tuple[Callable[[], None], Callable[[], None], int] | None = None

        client = _GuardedClient(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            clean_session=clean_session,
            protocol=paho.MQTTv311,
            # A QoS 1 message is acknowledged only after its handlers ran (and, for the
            # engine, stored it): a crash before that makes the broker send it again.
            manual_ack=True,
        )
        client.max_packet = max_packet
        client.shed = self._shed
        client.reconnect_delay_set(reconnect_min, reconnect_max)  # type: ignore[arg-type]
        client.max_inflight_messages_set(100)
        if self.broker.username:
            client.username_pw_set(self.broker.username, self.broker.password)
        if self.broker.tls:
            try:
                client.tls_set(ca_certs=tls_ca, cert_reqs=ssl.CERT_REQUIRED)
            except (OSError, ssl.SSLError, ValueError) as exc:
                raise MqttError(
                    f"TLS set-up for {self.broker.redacted()} failed: {exc}; check the CA file"
                    f" ({tls_ca or 'system default'})"
                ) from None
        if state_topic:
            client.will_set(state_topic, self._state_payload("offline"), qos=1, retain=True)
        client.on_socket_open = _no_delay
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        self._client = client
        self.keepalive = keepalive

    # ------------------------------------------------------------ lifecycle

    def _state_payload(self, state: str) -> bytes:
        return encode(ServiceState(state=state, client_id=self.client_id, ts=time.time()))  # type: ignore[arg-type]

    def start(self, wait: float | None = None) -> WireClient:
        """Connect in the background (keeps retrying). With ``wait``, block until the first
        connection and raise `MqttError` naming the broker when it does not come."""
        if not self._started:
            self._started = True
            self._dispatcher = threading.Thread(
                target=self._dispatch, name=f"wire-{self.client_id}", daemon=True
            )
            self._dispatcher.start()
            self._client.connect_async(self.broker.host, self.broker.port, self.keepalive)
            self._client.loop_start()
        if wait is not None and not self.wait_connected(wait):
            raise MqttError(self.not_connected_reason(wait))
        return self

    @property
    def refused(self) -> bool:
        """The broker answered but refused this account (not: the broker is away)."""
        error = (self.last_error or "").lower()
        return "refused" in error and ("authori" in error or "password" in error)

    def not_connected_reason(self, waited: float) -> str:
        """Why there is no connection, and what to do, in a host's words."""
        where = self.broker.redacted()
        if self.refused:
            account = self.broker.username or "(no account)"
            return (f"the MQTT broker at {where} refused the account {account!r} "
                    f"({self.last_error}): the account or its password is wrong, or Mosquitto "
                    "was not restarted since the account was made. Run `sudo cauldron setup` "
                    "again (it writes the accounts and restarts Mosquitto), then "
                    "`sudo cauldron doctor`")
        reason = f": {self.last_error}" if self.last_error else ""
        return (f"could not connect to the MQTT broker at {where} within {waited:g} s{reason}; "
                f"is it running (e.g. `mosquitto -p {self.broker.port}`)?")

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    def wait_ready(self, timeout: float) -> bool:
        """Block until connected with every subscription made before the connection
        acknowledged by the broker (so requests to this client will be heard)."""
        return self._ready.wait(timeout)

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def stop(self, timeout: float = 2.0) -> None:
        """Say ``offline`` (when a state topic is set), disconnect and stop the threads."""
        if not self._started:
            return
        if self.state_topic and self.connected:
            done = threading.Event()
            self.publish_raw(
                self.state_topic, self._state_payload("offline"), retain=True, on_ack=done.set
            )
            done.wait(timeout)
        self._client.disconnect()
        self._client.loop_stop()
        self._inbox.put(_STOP)
        if self._dispatcher is not None:
            self._dispatcher.join(timeout)
        self._started = False

    def __enter__(self) -> WireClient:
        return self.start(wait=10)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add_connect_hook(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` on the dispatcher thread after every (re)connect."""
        self._connect_hooks.append(hook)

    # ------------------------------------------------------------ paho callbacks

    def _on_connect(self, client: paho.Client, userdata: object, flags: ConnectFlags,
                    reason: ReasonCode, properties: Properties | None) -> None:
        if reason.is_failure:
            self.last_error = f"broker refused the connection: {reason}"
            log.warning("MQTT %s: %s", self.broker.redacted(), self.last_error)
            return
        self.last_error = None
        self.stats["connects"] += 1
        if self.state_topic:
            self.publish_raw(self.state_topic, self._state_payload("online"), retain=True)
        with self._lock:
            subs = list(self._subs.values())
            self._first_subacks.clear()
            for sub in subs:
                rc, mid = client.subscribe(sub.pattern, sub.qos)
                if rc == MQTTErrorCode.MQTT_ERR_SUCCESS and mid is not None:
                    self._first_subacks.add(mid)
            if not self._first_subacks:
                self._ready.set()
        self._connected.set()
        self._inbox.put(("connected",))

    def _on_disconnect(self, client: paho.Client, userdata: object, flags: DisconnectFlags,
                       reason: ReasonCode, properties: Properties | None) -> None:
        if self._connected.is_set():
            self.stats["disconnects"] += 1
            log.info("MQTT %s disconnected (%s); reconnecting", self.broker.redacted(), reason)
        self._connected.clear()
        self._ready.clear()

    def _on_publish(self, client: paho.Client, userdata: object, mid: int, reason: ReasonCode,
                    properties: Properties) -> None:
        self.stats["acked"] += 1
        # Called with paho's out-message lock held: never call paho from here.
        with self._ack_lock:
            if mid in self._ack_waiting:
                callback = self._ack_waiting.pop(mid)
            else:
                self._ack_early.add(mid)
                return
        self._fire_ack(callback)

    @staticmethod
    def _fire_ack(callback: Callable[[], None] | None) -> None:
        if callback is None:
            return
        try:
            callback()
        except Exception:  # a bad callback must not kill the network thread
            log.exception("on_ack callback failed")

    def _on_subscribe(self, client: paho.Client, userdata: object, mid: int,
                      reasons: list[ReasonCode], properties: Properties | None) -> None:
        with self._lock:
            event = self._suback.pop(mid, None)
            if mid in self._first_subacks:
                self._first_subacks.discard(mid)
                if not self._first_subacks:
                    self._ready.set()
        if event is not None:
            event.set()

    def _on_message(self, client: paho.Client, userdata: object,
                    message: paho.MQTTMessage) -> None:
        self.stats["received"] += 1
        topic, payload = message.topic, bytes(message.payload)
        guard = getattr(client, "guard", None)
        if guard is not None and guard.oversize and guard.oversize[0][0] == topic and not payload:
            _, size = guard.oversize.popleft()
            self.stats["oversize"] += 1
            self.refusals.warning("oversize", "refused a %d-byte message on %s: over the %d "
                                  "bytes a message may have (it was never held)", size,
                                  topic[:200], self._client.max_packet)
            if message.qos:
                client.ack(message.mid, message.qos)
            return
        if topic in self._response_topics:
            # Answered here, not on the dispatcher, so a handler may wait in request().
            self._take_response(topic, payload)
        item = ("message", topic, payload, message.mid, message.qos)
        if not self._inbox.put(item, bulk=message.qos == 0, size=len(payload)):
            self._dropped()

    def _shed(self) -> bool:
        """A QoS 0 message is coming in: drop it unread when its lane is full."""
        if not self._inbox.shed_bulk():
            return False
        self._dropped()
        return True

    def _dropped(self) -> None:
        self.stats["dropped"] += 1
        if self.stats["dropped"] % 1000 == 1:  # cheap: a flood is dropped at full speed
            self.refusals.warning("dropped", "dropped QoS 0 messages (%d so far): more than "
                                  "%g a second (no service of ours sends QoS 0: a flood?)",
                                  self.stats["dropped"], self._inbox.bulk_rate)

    # ------------------------------------------------------------ dispatch

    def set_batch(self, begin: Callable[[], None], end: Callable[[], None],
                  max_items: int = 32) -> None:
        """Handle messages in batches: ``begin()``, the handlers of every message already
        queued (up to `max_items`), ``end()`` (the engine commits them in one transaction
        and publishes there), and only then the QoS 1 acknowledgements: a message is
        acknowledged after what its handler did is stored."""
        self._batch = (begin, end, max_items)

    def _dispatch(self) -> None:
        while True:
            item = self._inbox.get()
            if item is _STOP:
                return
            if item[0] == "connected":
                for hook in list(self._connect_hooks):
                    try:
                        hook()
                    except Exception:
                        log.exception("connect hook failed")
                continue
            if self._batch is None:
                _, topic, payload, mid, qos = item
                self._deliver(topic, payload)
                if qos:
                    self._client.ack(mid, qos)
                continue
            begin, end, most = self._batch
            acks: list[tuple[int, int]] = []
            self._client.cork()  # the batch's packets leave together, after `end`
            try:
                begin()
                try:
                    for count in range(most):
                        if count:  # then whatever is queued already, without waiting
                            item = self._inbox.get_nowait(_is_message)
                            if item is None:
                                break
                        _, topic, payload, mid, qos = item
                        self._deliver(topic, payload)
                        if qos:
                            acks.append((mid, qos))
                finally:
                    self._call(end)
                for mid, qos in acks:
                    self._client.ack(mid, qos)
            finally:
                self._client.uncork()

    def _deliver(self, topic: str, payload: bytes) -> None:
        if is_doctor_probe(payload):  # `cauldron doctor` checking the broker's rights
            self.stats["doctor_probes"] += 1
            return
        with self._lock:
            subs = self._routes.get(topic)
            if subs is None:  # (paho's matcher is built anew for each test: cached per topic)
                if len(self._routes) >= _ROUTES_KEPT:
                    self._routes.clear()
                subs = self._routes[topic] = [
                    s for s in self._subs.values() if paho.topic_matches_sub(s.pattern, topic)]
        typed = [s for s in subs if s.handler is not None]
        for sub in subs:
            if sub.raw_handler is not None:
                self._call(sub.raw_handler, topic, payload)
        if not typed:
            return
        try:
            model = parse_payload(topic, payload, base=self.base)
        except WireError as exc:
            self.reject(topic, payload, exc)
            return
        for sub in typed:
            assert sub.handler is not None
            self._call(sub.handler, topic, model)

    def reject(self, topic: str, payload: bytes, error: WireError) -> None:
        """Count and log a refused payload (also used by callers for their own checks)."""
        self.stats["rejected"] += 1
        self.stats[f"rejected:{type(error).__name__}"] += 1
        self.refusals.warning("rejected", "rejected message on %s: %s", topic[:200],
                              str(error)[:500])
        if self.on_reject is not None:
            self._call(self.on_reject, topic, payload, error)

    @staticmethod
    def _call(fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("handler %r failed", getattr(fn, "__name__", fn))

    # ------------------------------------------------------------ publish / subscribe

    def publish(
        self,
        topic: str,
        model: WireModel,
        *,
        retain: bool = False,
        qos: int = 1,
        on_ack: Callable[[], None] | None = None,
    ) -> int:
        """Publish a contract model; returns the paho message id. ``on_ack()`` runs when
        the broker acknowledged it (QoS 1). Works while disconnected: sent on reconnect."""
        return self.publish_raw(topic, encode(model), retain=retain, qos=qos, on_ack=on_ack)

    def publish_raw(
        self,
        topic: str,
        payload: bytes,
        *,
        retain: bool = False,
        qos: int = 1,
        on_ack: Callable[[], None] | None = None,
    ) -> int:
        info = self._client.publish(topic, payload, qos=qos, retain=retain)
        if info.rc not in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            raise MqttError(f"publish on {topic} failed: {paho.error_string(info.rc)}")
        self.stats["published"] += 1
        mid = int(info.mid)
        # QoS 0 too: paho says a QoS 0 message "published" once written, and a mid left in
        # `_ack_early` would fire the on_ack of a later QoS 1 message given the same mid.
        with self._ack_lock:
            early = mid in self._ack_early
            if early:
                self._ack_early.discard(mid)
            else:
                self._ack_waiting[mid] = on_ack
        if early:
            self._fire_ack(on_ack)
        return mid

    def subscribe(
        self,
        pattern: str,
        handler: Handler | None = None,
        *,
        raw: Callable[[str, bytes], None] | None = None,
        qos: int = 1,
        wait: float | None = None,
    ) -> None:
        """Call ``handler(topic, model)`` for each valid message matching ``pattern``
        (``raw(topic, payload)`` gets the bytes unparsed). Kept across reconnects. With
        ``wait``, block until the broker confirms the subscription."""
        with self._lock:
            self._subs[pattern] = _Subscription(pattern, handler, raw, qos)
            self._routes.clear()
        self._send_subscribe(pattern, qos, wait)

    def _send_subscribe(self, pattern: str, qos: int, wait: float | None) -> None:
        if not self.connected:
            return  # subscribed in _on_connect
        event = threading.Event()
        with self._lock:
            rc, mid = self._client.subscribe(pattern, qos)
            if rc == MQTTErrorCode.MQTT_ERR_SUCCESS and mid is not None:
                self._suback[mid] = event
        if wait is not None and rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
            event.wait(wait)

    def unsubscribe(self, pattern: str) -> None:
        with self._lock:
            self._subs.pop(pattern, None)
            self._routes.clear()
        self._client.unsubscribe(pattern)

    # ------------------------------------------------------------ request / response

    def request(
        self,
        topic: str,
        args: Mapping[str, JsonValue] | None = None,
        *,
        timeout: float = 5.0,
        seat: int | None = None,
        source: str | None = None,
        auth: str | None = None,
        deadline: float | None = None,
    ) -> CommandResponse:
        """Send a `CommandRequest` on ``topic`` and wait for its `CommandResponse`.
        Raises `RequestTimeout` when none arrives within ``timeout`` seconds. The request
        expires at ``deadline`` (default: 60 % of the wait), so a command that was not
        answered in time never runs later, and one that starts just before its deadline still
        has time to answer within the wait (never "failed" for a command that was done); a
        command (game or hub) is signed (see `sign_commands`)."""
        info = parse_topic(topic, self.base)  # refuse a topic outside the contract early
        response_topic = Topics.response(topic)
        with self._lock:
            known = response_topic in self._response_topics
            self._response_topics.add(response_topic)
        if not known:
            self.subscribe(response_topic, raw=lambda _t, _p: None, wait=timeout)
        transaction = uuid.uuid4().hex
        done = threading.Event()
        box: list[CommandResponse] = []
        request = CommandRequest(
            transaction=transaction, args=dict(args or {}), seat=seat, source=source, auth=auth,
            deadline=deadline if deadline is not None else time.time() + ANSWER_TIME * timeout,
        )
        if auth is None and self.sign_commands and info.verb is not None:
            hub = info.name.startswith("hub/")
            request = sign_command(request, info.table, info.verb,
                                   self.command_key(info.table), hub=hub)
        with self._lock:
            self._pending[transaction] = (done, box)
        try:
            self.publish(topic, request)
            self._client.send_corked()  # a handler waiting here needs its request sent
            if not done.wait(timeout):
                raise RequestTimeout(
                    f"no answer on {response_topic} within {timeout:g} s; is the service "
                    "for this table running?"
                )
            return box[0]
        finally:
            with self._lock:
                self._pending.pop(transaction, None)

    def command_key(self, table: str) -> bytes:
        """The table's command key (made in the keys dir when there is none yet, unless
        `make_keys` is off: then `MqttError` says which file to copy)."""
        key = self._command_keys.get(table)
        if key is None:
            folder = self.keys or keys_dir()
            if self.make_keys:
                key = ensure_key(folder, table, "cmd").key
            else:
                found = load_key(folder, table, "cmd")
                if found is None:
                    raise MqttError(
                        f"no command key for table {table} in {folder}: copy "
                        f"{key_path(folder, table, 'cmd').name} from the engine's keys dir "
                        "(see hub/README.md, 'A hub on another machine')")
                key = found.key
            self._command_keys[table] = key
        return key

    def _take_response(self, topic: str, payload: bytes) -> None:
        try:
            model = parse_payload(topic, payload, base=self.base)
        except WireError as exc:
            self.reject(topic, payload, exc)
            return
        if not isinstance(model, CommandResponse):
            return
        with self._lock:
            waiting = self._pending.get(model.transaction)
        if waiting is not None:
            waiting[1].append(model)
            waiting[0].set()

    def serve(self, pattern: str, handler: ServeHandler, *, wait: float | None = None) -> None:
        """Answer every `CommandRequest` on topics matching ``pattern``: ``handler(info,
        request)`` returns the response data, or raises `CommandRefused` / `WireError`
        (status error with that reason). Other exceptions answer ``internal error`` (code
        ``internal_error``).
        With ``wait``, block until the broker confirms the subscription."""

        def on_request(topic: str, model: WireModel) -> None:
            if not isinstance(model, CommandRequest):
                return
            info = parse_topic(topic, self.base)
            try:
                data = handler(info, model)
                response = CommandResponse(transaction=model.transaction, status="ok", data=data)
            except NoAnswer:
                return
            except CommandRefused as exc:
                response = CommandResponse(
                    transaction=model.transaction, status="error",
                    error=(str(exc) or "refused")[:1000], code=exc.code, rule=exc.rule,
                )
            except WireError as exc:
                response = CommandResponse(
                    transaction=model.transaction, status="error",
                    error=(str(exc) or "refused")[:1000], code="bad_request",
                )
            except Exception as exc:
                log.exception("command handler for %s failed", topic)
                response = CommandResponse(
                    transaction=model.transaction,
                    status="error",
                    error=f"internal error: {type(exc).__name__}", code="internal_error",
                )
            self.publish(Topics.response(topic), response)

        def on_reject(topic: str, payload: bytes, error: WireError) -> None:
            # Answer a malformed request when its transaction id can be read.
            import json

            try:
                transaction = json.loads(payload).get("transaction")
                response = CommandResponse(
                    transaction=transaction, status="error", error=str(error)[:1000],
                    code="bad_request",
                )
            except Exception:
                return
            self.publish(Topics.response(topic), response)

        def raw_guard(topic: str, payload: bytes) -> None:
            if topic.endswith("/response"):
                return
            try:
                model = parse_payload(topic, payload, base=self.base)
            except WireError as exc:
                self.reject(topic, payload, exc)
                on_reject(topic, payload, exc)
                return
            on_request(topic, model)

        self.subscribe(pattern, raw=raw_guard, wait=wait)

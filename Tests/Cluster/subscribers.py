"""The live feed's subscribers, run by load.py in the client host: four follow /getchatts/stream over HTTP/1.1 and
TLS, one directly to each chatterd host and two through HAProxy.

Each starts from the store's very beginning: before any post it reads the feed (empty) from where it will subscribe
and sends that answer's Feed-Position as Last-Event-ID, so it must receive every chatt the run stores, each once.
It records every event (a chatt: its position, id and message; `event: delete`: its position and the removed chatt's
id; `event: reset`, which ends it: it would have to read the feed again, and the run fails), every connection (with
the X-Request-Id prefix of the chatterd process that served it), every refusal and every drop, and resumes with
Last-Event-ID set to the last event it had, a chatt's or a removal's. Like a phone, it leaves
now and then: every ROTATE_SECONDS it closes its connection and resumes on a new one, so each subscriber resumes
during every fault; one through HAProxy may land on the other chatterd, and a direct one whose host refuses it
tries the other host until its next rotation takes it home."""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
import time
from pathlib import Path

from client import Client, Recorder, server_of

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Clients"))
from eventstream import Event, EventStream  # noqa: E402 (Tests/Clients)

ROTATE_SECONDS = 10.0
# How long the live feed has to answer 200 at load start: the cluster may still be warming up.
WARMUP_SECONDS = 30.0
# A subscriber that hears nothing, not even a heartbeat (every 15 s by default), for this long drops and resumes.
STREAM_IDLE = 35.0
REFUSED_PAUSE = 1.0
# After the posters stop, the subscribers go on until each is connected and none has had an event for DRAIN_QUIET
# seconds (at most DRAIN_LONGEST), so the last chatts reach them all.
DRAIN_QUIET = 3.0
DRAIN_LONGEST = 30.0
STREAM_PATH = "/getchatts/stream"


class Dropped(Exception):
    pass


class Rotated(Exception):
    pass


class Stopped(Exception):
    pass


class Reset(Exception):
    pass


class Wire:
    """Bytes from a TLS socket with a short timeout, so a stop, a rotation or a silent peer is noticed."""

    def __init__(self, sock: ssl.SSLSocket, stop: threading.Event):
        self.sock, self.stop, self.buffer = sock, stop, b""
        self.last = time.monotonic()
        self.deadline = float("inf")  # when the subscriber leaves to resume on a new connection

    def fill(self) -> None:
        while True:
            if self.stop.is_set():
                raise Stopped()
            if time.monotonic() > self.deadline:
                raise Rotated()
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, TimeoutError):
                if time.monotonic() - self.last > STREAM_IDLE:
                    raise Dropped(f"nothing for {STREAM_IDLE:.0f} s")
                continue
            except OSError as error:
                raise Dropped(type(error).__name__)
            if not data:
                raise Dropped("closed")
            self.last = time.monotonic()
            self.buffer += data
            return

    def line(self) -> bytes:
        while (end := self.buffer.find(b"\n")) < 0:
            self.fill()
        line, self.buffer = self.buffer[:end + 1], self.buffer[end + 1:]
        return line.rstrip(b"\r\n")

    def exactly(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self.fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data


def open_stream(address: str, context: ssl.SSLContext, path: str, stop: threading.Event,
                last_event_id: str | None = None) -> tuple[object, dict, Wire | None, ssl.SSLSocket | None]:
    """Sends GET `path` over a new HTTP/1.1 TLS connection: (status or failure, headers, the body's wire)."""
    host, port = address.rsplit(":", 1)
    try:
        raw = socket.create_connection((host, int(port)), timeout=5)
        sock = context.wrap_socket(raw, server_hostname=host)
        sock.settimeout(1.0)
        request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
        if last_event_id:
            request += f"Last-Event-ID: {last_event_id}\r\n"
        sock.sendall((request + "\r\n").encode())
        wire = Wire(sock, stop)
        status_line = wire.line().decode("latin-1").split()
        headers = {}
        while line := wire.line():
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(status_line[1]), headers, wire, sock
    except (OSError, ValueError, IndexError, Dropped) as error:
        return f"error:{type(error).__name__}", {}, None, None


def body_chunks(wire: Wire, headers: dict):
    """The body's bytes as they come, chunked or until the connection ends."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            size = int(wire.line().split(b";")[0], 16)
            if size == 0:
                raise Dropped("the stream ended")
            data = wire.exactly(size)
            wire.exactly(2)
            yield data
    while True:
        if not wire.buffer:
            wire.fill()
        data, wire.buffer = wire.buffer, b""
        yield data


def events(chunks):
    """Server-sent events as (event type, the stream's last event ID, data) from a stream of bytes: each block with
    data or an event type (eventstream.py parses them; comments and id-only blocks are no event here)."""
    stream = EventStream()
    for chunk in chunks:
        for item in stream.feed(chunk):
            if isinstance(item, Event) and (item.data is not None or item.event):
                yield item.type, item.last_id or None, item.data or ""


class Subscriber:
    """One subscriber: where it subscribes (`targets`, (name, IP:PORT), its home first), the last event it had,
    and whether it is connected now."""

    def __init__(self, name: str, targets: list[tuple[str, str]], context: ssl.SSLContext, recorder: Recorder,
                 first_rotation: float = ROTATE_SECONDS):
        self.name, self.targets, self.context, self.recorder = name, targets, context, recorder
        self.first_rotation = first_rotation
        self.last_event_id: str | None = None
        self.last_event = time.monotonic()
        self.connected = False
        self.reset = False  # it got `event: reset`, and follows no more

    def begin(self, deadline: float) -> bool:
        """Reads the feed from its home until it answers 200 (until `deadline`): its Feed-Position is where the
        subscriber starts. Records what it read; False when it never answered."""
        via, address = self.targets[0]
        client = Client(address, self.context)
        while True:
            status, headers, body = client.request("GET", "/getchatts")
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(REFUSED_PAUSE)
        client.close()
        record = {"op": "sub", "sub": self.name, "what": "start", "t": time.monotonic(), "via": via,
                  "status": status, "srv": server_of(headers), "position": headers.get("feed-position")}
        if status == 200:
            try:
                record["rows"] = len(json.loads(body))
            except (ValueError, TypeError):
                record["rows"] = None
        self.recorder.write(**record)
        self.last_event_id = record["position"]
        return status == 200 and self.last_event_id is not None

    def run(self, stop: threading.Event) -> None:
        """Follows the stream until `stop`, resuming from the last event it had after each drop or rotation."""
        choice, stay = 0, self.first_rotation
        while not stop.is_set():
            via, address = self.targets[choice]
            status, headers, wire, sock = open_stream(address, self.context, STREAM_PATH, stop, self.last_event_id)
            now = time.monotonic()
            if status != 200:
                self.note("refused", via=via, status=status, last_event_id=self.last_event_id)
                if sock:
                    sock.close()
                choice = (choice + 1) % len(self.targets)
                stop.wait(REFUSED_PAUSE)
                continue
            self.note("connected", t=now, via=via, srv=server_of(headers), last_event_id=self.last_event_id)
            wire.deadline, stay = now + stay, ROTATE_SECONDS
            self.connected = True
            try:
                self.follow(wire, headers)
            except Rotated:
                self.note("rotated")
                choice = 0
            except Reset:
                self.note("reset", last_event_id=self.last_event_id)
                self.reset = True
                return
            except (Dropped, ValueError) as drop:
                self.note("dropped", reason=str(drop))
            except Stopped:
                pass
            finally:
                self.connected = False
                sock.close()

    def follow(self, wire: Wire, headers: dict) -> None:
        for kind, event_id, data in events(body_chunks(wire, headers)):
            record = {"op": "event", "sub": self.name, "t": time.monotonic(), "id": event_id, "event": kind}
            if kind in ("message", "delete"):
                try:
                    if kind == "message":
                        row = json.loads(data)
                        record["chatt"], record["msg"] = row[2], row[1]
                    elif isinstance(removed := json.loads(data), str):
                        record["chatt"] = removed
                    else:
                        record["data"] = data
                except (ValueError, IndexError, TypeError, KeyError):
                    record["data"] = data
                self.last_event_id, self.last_event = event_id, record["t"]
            else:
                record["data"] = data
            self.recorder.write(**record)
            if kind == "reset":
                raise Reset()

    def note(self, what: str, **fields) -> None:
        self.recorder.write(**{"op": "sub", "sub": self.name, "what": what, "t": time.monotonic(), **fields})


def stream_status(address: str, context: ssl.SSLContext) -> object:
    """The status of GET /getmaps/stream."""
    status, _, _, sock = open_stream(address, context, "/getmaps/stream", threading.Event())
    if sock:
        sock.close()
    return status


def start(lb: str, hosts: dict[str, str], context: ssl.SSLContext, recorder: Recorder) -> list[Subscriber]:
    """The subscribers, each holding the Feed-Position of the feed it read before any post. None when the live
    feed has not answered 200 within WARMUP_SECONDS: the run goes on without them, and the checker fails it."""
    began = time.monotonic()
    deadline = began + WARMUP_SECONDS
    while (status := stream_status(lb, context)) != 200 and time.monotonic() < deadline:
        time.sleep(REFUSED_PAUSE)
    names = list(hosts)
    subscribers = [Subscriber(f"direct-{name}", [(name, hosts[name])] + [(other, hosts[other]) for other in names
                                                                        if other != name], context, recorder)
                   for name in names]
    subscribers += [Subscriber(f"lb-{i}", [("lb", lb)], context, recorder) for i in range(2)]
    for index, subscriber in enumerate(subscribers):  # their rotations spread over the period
        subscriber.first_rotation = ROTATE_SECONDS * (index + 1) / len(subscribers)
    recorder.write(op="streams", status=status, t=time.monotonic(), waited=time.monotonic() - began,
                   subscribers=[s.name for s in subscribers] if status == 200 else [])
    if status != 200:
        return []
    return [subscriber for subscriber in subscribers if subscriber.begin(deadline)]


def drain(subscribers: list[Subscriber]) -> None:
    """Waits, once nothing more is posted, until every subscriber is connected and quiet (or DRAIN_LONGEST); one
    that was reset follows no more."""
    deadline = time.monotonic() + DRAIN_LONGEST
    while time.monotonic() < deadline:
        now = time.monotonic()
        if all(s.reset or (s.connected and now - s.last_event >= DRAIN_QUIET) for s in subscribers):
            return
        time.sleep(0.2)

"""Steady load from the client host, run inside its namespace: posters post unique chatts through the load
balancer (a new connection every RECONNECT_EVERY posts, as phones come and go) and then read the feed from one
chatterd host, alternating (read-your-writes); one reader per host reads the whole feed a few times a second, and
a prober reads it through the balancer on a new connection each time, so HAProxy picks a server afresh. Every
request's outcome is one JSON line in --out, with CLOCK_MONOTONIC times (shared by every namespace), until
SIGTERM. Each answer's X-Request-Id prefix (`srv`) names the chatterd process that made it.

Feeds are recorded as their length, a hash chain over their messages (`chain`), and their rows per poster
(`have`: for each `run-poster`, the highest sequence number and the numbers below it that are absent): the
checker can tell exactly which rows a read had, and whether they were in the final order, without keeping every
read whole.

With the live feed (only when the server answers 200 on /getmaps/stream), four subscribers follow
/getchatts/stream over HTTP/1.1 and TLS, one directly to each host and two through the balancer, recording
every event and reconnecting with Last-Event-ID after a drop."""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import signal
import socket
import ssl
import threading
import time

REQUEST_TIMEOUT = 10.0
RECONNECT_EVERY = 20
PROBE_INTERVAL = 0.5
# A subscriber that hears nothing, not even a heartbeat (every 15 s by default), for this long drops and resumes.
STREAM_IDLE = 35.0
# After the posters stop, subscribers go on this long for the last events to arrive.
STREAM_DRAIN = 3.0


def chain(messages, digest: bytes = b"") -> str:
    """The hash chain over `messages`: each link hashes the previous one and the next message."""
    for message in messages:
        digest = hashlib.sha256(digest + message.encode() + b"\n").digest()
    return digest.hex()


def feed_record(messages: list[str]) -> dict:
    """A read's rows, exactly and compactly: `run-poster-seq` messages as each poster's highest seq and the
    seqs below it that are absent; anything else whole in `other`."""
    seqs: dict[str, set[int]] = {}
    other = []
    for message in messages:
        stem, _, seq = message.rpartition("-")
        if stem and seq.isdigit():
            seqs.setdefault(stem, set()).add(int(seq))
        else:
            other.append(message)
    have = {stem: [max(present), sorted(set(range(max(present) + 1)) - present)] for stem, present in seqs.items()}
    return {"n": len(messages), "chain": chain(messages), "have": have, "other": other, "newest": messages[-3:]}


def server_of(headers: dict) -> str | None:
    """The chatterd process that answered: the random prefix of the request id it made."""
    request_id = headers.get("x-request-id")
    return request_id.split("-", 1)[0] if request_id else None


class Client:
    """One keep-alive HTTPS connection, opened again after any failure."""

    def __init__(self, address: str, context: ssl.SSLContext):
        self.host, port = address.rsplit(":", 1)
        self.port = int(port)
        self.context = context
        self.connection: http.client.HTTPSConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[object, dict, bytes]:
        """(status or failure name, headers, body)."""
        if self.connection is None:
            self.connection = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                                          timeout=REQUEST_TIMEOUT)
        headers = {"Content-Type": "application/json; charset=utf-8"} if body is not None else {}
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            payload = response.read()
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, payload
        except (socket.timeout, TimeoutError):
            self.close()
            return "timeout", {}, b""
        except (OSError, http.client.HTTPException) as error:
            self.close()
            return f"error:{type(error).__name__}", {}, b""

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class Recorder:
    def __init__(self, path: str):
        self.file = open(path, "w", buffering=1)
        self.lock = threading.Lock()

    def write(self, **record) -> None:
        line = json.dumps(record, separators=(",", ":"))
        with self.lock:
            self.file.write(line + "\n")


def read_feed(client: Client) -> tuple[object, list[str] | None, dict]:
    status, headers, body = client.request("GET", "/getchatts")
    if status != 200:
        return status, None, headers
    try:
        return status, [row[1] for row in json.loads(body)], headers
    except (ValueError, IndexError, TypeError):
        return "malformed", None, headers


def record_read(recorder: Recorder, client: Client, host: str, who: str, **extra) -> None:
    started = time.monotonic()
    status, messages, headers = read_feed(client)
    record = {"op": "read", "host": host, "who": who, "t0": started, "t1": time.monotonic(), "status": status,
              "srv": server_of(headers), "age": headers.get("age"), **extra}
    if messages is not None:
        record.update(feed_record(messages))
    recorder.write(**record)


def poster(index: int, args, context, hosts, recorder: Recorder, stop: threading.Event) -> None:
    balancer = Client(args.lb, context)
    readers = [Client(address, context) for address in hosts.values()]
    names = list(hosts)
    interval = args.posters / args.rate
    sequence = 0
    while not stop.is_set():
        started = time.monotonic()
        if sequence % RECONNECT_EVERY == 0:
            balancer.close()
        message = f"{args.run}-{index}-{sequence}"
        body = json.dumps({"name": "cluster", "message": message}).encode()
        status, headers, _ = balancer.request("POST", "/postchatt", body)
        recorder.write(op="post", msg=message, t0=started, t1=time.monotonic(), status=status,
                       srv=server_of(headers))
        if status == 200:
            which = sequence % len(readers)
            record_read(recorder, readers[which], names[which], f"poster{index}", after=message)
        sequence += 1
        stop.wait(max(0.0, interval - (time.monotonic() - started)))


def reader(name: str, address: str, args, context, recorder: Recorder, stop: threading.Event) -> None:
    client = Client(address, context)
    while not stop.is_set():
        started = time.monotonic()
        record_read(recorder, client, name, f"reader-{name}")
        stop.wait(max(0.0, args.read_interval - (time.monotonic() - started)))


def prober(args, context, recorder: Recorder, stop: threading.Event) -> None:
    """Reads through the balancer on a new connection each time: which server HAProxy sends new clients to."""
    client = Client(args.lb, context)
    while not stop.is_set():
        started = time.monotonic()
        client.close()
        record_read(recorder, client, "lb", "prober")
        stop.wait(max(0.0, PROBE_INTERVAL - (time.monotonic() - started)))


# --- the live feed's subscribers

class Dropped(Exception):
    pass


class Stopped(Exception):
    pass


class Wire:
    """Bytes from a TLS socket with a short timeout, so a stop or a silent peer is noticed."""

    def __init__(self, sock: ssl.SSLSocket, stop: threading.Event):
        self.sock, self.stop, self.buffer = sock, stop, b""
        self.last = time.monotonic()

    def fill(self) -> None:
        while True:
            if self.stop.is_set():
                raise Stopped()
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
    """Server-sent events as (event type, id, data) from a stream of bytes."""
    pending, kind, event_id, data = b"", None, None, []
    for chunk in chunks:
        pending += chunk
        while (end := pending.find(b"\n")) >= 0:
            line, pending = pending[:end].rstrip(b"\r").decode(), pending[end + 1:]
            if not line:
                if data or kind:
                    yield kind or "message", event_id, "\n".join(data)
                kind, data = None, []
            elif line.startswith(":"):
                continue
            else:
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    kind = value
                elif name == "id":
                    event_id = value
                elif name == "data":
                    data.append(value)


def subscriber(name: str, address: str, context, recorder: Recorder, stop: threading.Event) -> None:
    """Follows /getchatts/stream, resuming from the last event it had after any drop."""
    last_event_id = None
    while not stop.is_set():
        status, headers, wire, sock = open_stream(address, context, "/getchatts/stream", stop, last_event_id)
        now = time.monotonic()
        if status != 200:
            recorder.write(op="sub", sub=name, what="refused", t=now, status=status, last_event_id=last_event_id)
            if sock:
                sock.close()
            stop.wait(1.0)
            continue
        recorder.write(op="sub", sub=name, what="connected", t=now, srv=server_of(headers),
                       last_event_id=last_event_id)
        try:
            for kind, event_id, data in events(body_chunks(wire, headers)):
                record = {"op": "event", "sub": name, "t": time.monotonic(), "id": event_id, "event": kind}
                if kind == "message":
                    try:
                        record["row"] = json.loads(data)
                        record["msg"] = record["row"][1]
                    except (ValueError, IndexError, TypeError, KeyError):
                        record["msg"], record["data"] = None, data
                    last_event_id = event_id
                recorder.write(**record)
                if kind == "reset":
                    raise Dropped("reset")
        except (Dropped, ValueError) as drop:
            recorder.write(op="sub", sub=name, what="dropped", t=time.monotonic(), reason=str(drop))
        except Stopped:
            pass
        finally:
            sock.close()


def streams_enabled(address: str, context) -> object:
    """The status of GET /getmaps/stream: the subscribers run only when it is 200."""
    status, _, _, sock = open_stream(address, context, "/getmaps/stream", threading.Event())
    if sock:
        sock.close()
    return status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lb", required=True, help="load balancer IP:PORT")
    parser.add_argument("--host", action="append", required=True, help="NAME=IP:PORT of a chatterd host")
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--run", required=True, help="prefix of every message")
    parser.add_argument("--posters", type=int, default=3)
    parser.add_argument("--rate", type=float, default=12.0, help="posts per second, all posters together")
    parser.add_argument("--read-interval", type=float, default=0.25)
    args = parser.parse_args()
    hosts = dict(entry.split("=", 1) for entry in args.host)
    context = ssl.create_default_context(cafile=args.cafile)
    context.set_alpn_protocols(["http/1.1"])
    recorder, stop, stop_streams = Recorder(args.out), threading.Event(), threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    status = streams_enabled(args.lb, context)
    recorder.write(op="streams", enabled=status == 200, status=status, t=time.monotonic())
    subscribers = []
    if status == 200:
        targets = [(f"direct-{name}", address) for name, address in hosts.items()]
        targets += [(f"lb-{i}", args.lb) for i in range(2)]
        subscribers = [threading.Thread(target=subscriber, args=(name, address, context, recorder, stop_streams))
                       for name, address in targets]
        for thread in subscribers:
            thread.start()
        time.sleep(1.0)  # subscribed before the first post

    threads = [threading.Thread(target=poster, args=(i, args, context, hosts, recorder, stop))
               for i in range(args.posters)]
    threads += [threading.Thread(target=reader, args=(name, address, args, context, recorder, stop))
                for name, address in hosts.items()]
    threads.append(threading.Thread(target=prober, args=(args, context, recorder, stop)))
    for thread in threads:
        thread.start()
    while not stop.is_set():
        stop.wait(1)
    for thread in threads:
        thread.join(REQUEST_TIMEOUT + 5)
    if subscribers:
        time.sleep(STREAM_DRAIN)
        stop_streams.set()
        for thread in subscribers:
            thread.join(5)


if __name__ == "__main__":
    main()

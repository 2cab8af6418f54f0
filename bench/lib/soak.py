"""Soak load for bench/soak.sh: mixed traffic against one chatterd over HTTP/1.1 and HTTP/2, a PostgreSQL restart
every minute, and clients that vanish mid-request, while chatterd's memory and descriptors are sampled every 10 s.

Python standard library plus PyPI's h2 for the HTTP/2 clients (scripts/test installs it; see
scripts/lib/deps.sh); loopback only; bounded in time (the deadline) and in count (MAX_REQUESTS per thread).
Each HTTP/2 client keeps one connection with several streams in flight, and opens a new one when the server
goes away (its stream cap is the requests-per-connection cap). Prints the series, writes a Markdown report,
and exits 1 when an invariant is violated:
  - every post answered 200 is stored exactly once, and no chatt is stored twice;
  - every answer is one API.md allows here (200, 304, 503 with Retry-After), never a 500 or a dropped connection;
  - an HTTP/2 stream the server refused unprocessed (above the last stream id of its GOAWAY, or reset with
    REFUSED_STREAM; RFC 9113 §6.8, §8.7) is no error, and a post on such a stream is not stored;
  - once the load is gone, chatterd's descriptors (less its database sessions) are back at their baseline,
    no client connection is left open, and its resident memory is back within RSS_SLACK_BYTES of its baseline;
  - chatterd is alive, /readyz answers 200 and SIGTERM later exits 0 (checked by soak.sh).

The store is held at about KEEP_ROWS chatts by another writer that moves older rows into soak_archive every
TRIM_SECONDS (a DELETE the change listener hears of): chatterd's memory follows the feed's size, so a store that
grew for the whole run would hide a leak behind its growth. Acknowledged posts are looked for in both tables.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import re
import socket
import ssl
import statistics
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Clients"))
import procfs  # noqa: E402 (Tests/Clients)

try:
    import h2.config
    import h2.connection
    import h2.errors
    import h2.events
    import h2.exceptions
    from h2.connection import ConnectionInputs, ConnectionState
except ImportError:
    sys.exit("soak.py: the HTTP/2 clients need PyPI's h2 (python3 -m pip install 'h2>=4.1,<5'; scripts/test installs it)")

SAMPLE_SECONDS = 10
RESTART_EVERY_SECONDS = 60
FIRST_RESTART_SECONDS = 30
WARMUP_SECONDS = 15
MAX_REQUESTS = 200_000  # per thread: the count bound, far above what the deadline allows
TIMEOUT = 15.0
# With the store's size held, resident memory stays within a megabyte of its baseline here; a leak of a
# few hundred bytes per request or a few kilobytes per vanished client passes this within minutes.
RSS_SLACK_BYTES = 8 * 1024 * 1024
KEEP_ROWS = 1000
TRIM_SECONDS = 5
TRIMMED = "404 (since a chatt the trimming writer moved away)"
GEODATA = '[42.2936,-83.7166,"North","walking"]'


@dataclass
class Tally:
    """Answers by kind, plus what violated the contract."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: dict = field(default_factory=dict)
    violations: list = field(default_factory=list)
    acknowledged: list = field(default_factory=list)
    requests: int = 0
    http2_requests: int = 0
    # HTTP/2 streams the server refused unprocessed (after its GOAWAY, or REFUSED_STREAM), and the posts among them.
    refused_streams: int = 0
    refused_posts: list = field(default_factory=list)

    def record(self, what: str, status, response=None, http2: bool = False) -> None:
        with self.lock:
            self.requests += 1
            self.http2_requests += http2
            self.statuses[status] = self.statuses.get(status, 0) + 1
            if status == 503 and response is not None and not response.getheader("Retry-After"):
                self.violations.append(f"{what}: 503 without Retry-After")
            elif status not in (200, 304, 503, TRIMMED):
                self.violations.append(f"{what}: {status}")

    def count(self, status) -> int:
        with self.lock:
            return self.statuses.get(status, 0)


class H2Failure(Exception):
    """The HTTP/2 connection broke a rule, ended or stalled with streams unanswered."""


@dataclass
class H2Answer:
    """One stream's response, read like http.client's for Tally.record."""

    status: int
    headers: dict
    body: bytes

    def getheader(self, name: str):
        return self.headers.get(name.lower())


REFUSED = "refused unprocessed"


class H2Client:
    """One HTTP/2 connection over TLS (ALPN h2) that sends a batch of requests as concurrent streams and reads
    until each is answered. After the server's GOAWAY (`gone`), streams above its last stream id were not
    processed, and neither was one reset with REFUSED_STREAM: both come back as None, safe to send again."""

    def __init__(self, port: int, context: ssl.SSLContext):
        raw = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        try:
            self.sock = context.wrap_socket(raw, server_hostname="localhost")
        except OSError:
            raw.close()
            raise
        if self.sock.selected_alpn_protocol() != "h2":
            self.close()
            raise H2Failure(f"ALPN chose {self.sock.selected_alpn_protocol()!r}, not h2")
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        # h2 ends the whole connection at a GOAWAY, but streams up to its last stream id still finish (RFC 9113
        # §6.8): keep its state machine open for them, as Tests/Clients/h2wire.py does.
        machine = self.conn.state_machine
        machine._transitions = {**machine._transitions, (ConnectionState.CLIENT_OPEN, ConnectionInputs.RECV_GOAWAY):
                                (None, ConnectionState.CLIENT_OPEN)}
        self.conn.initiate_connection()
        self.sock.sendall(self.conn.data_to_send())
        self.gone = False

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, requests) -> list[int]:
        ids = []
        for method, path, headers, body in requests:
            stream = self.conn.get_next_available_stream_id()
            fields = [(":method", method), (":scheme", "https"), (":authority", "localhost"), (":path", path)]
            self.conn.send_headers(stream, fields + list(headers), end_stream=body is None)
            if body is not None:
                self.conn.send_data(stream, body, end_stream=True)
            ids.append(stream)
        self.sock.sendall(self.conn.data_to_send())
        return ids

    def exchange(self, requests) -> list:
        """The answers to `requests` (method, path, headers, body or None), in order; REFUSED for a stream the
        server did not process."""
        ids = self.send(requests)
        fields, bodies, ended, refused = {}, {stream: bytearray() for stream in ids}, set(), set()
        last_stream = None
        deadline = time.monotonic() + TIMEOUT
        while len(ended | refused) < len(ids):
            if time.monotonic() > deadline:
                raise H2Failure(f"streams unanswered after {TIMEOUT:g} s")
            data = self.sock.recv(65536)
            if not data:
                raise H2Failure(f"connection closed with streams unanswered (GOAWAY last stream {last_stream})")
            for event in self.conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    fields[event.stream_id] = dict(event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    bodies[event.stream_id] += event.data
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    ended.add(event.stream_id)
                elif isinstance(event, h2.events.StreamReset) and event.stream_id not in ended:
                    if event.error_code != h2.errors.ErrorCodes.REFUSED_STREAM:
                        raise H2Failure(f"stream {event.stream_id} reset with {event.error_code!r}")
                    refused.add(event.stream_id)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    self.gone = True
                    last_stream = event.last_stream_id
                    if event.error_code != h2.errors.ErrorCodes.NO_ERROR:
                        raise H2Failure(f"GOAWAY with {event.error_code!r}")
            if last_stream is not None:
                refused.update(stream for stream in ids if stream > last_stream)
            # Window updates too: after its GOAWAY the server still sends the streams below its last stream id.
            pending = self.conn.data_to_send()
            if pending:
                try:
                    self.sock.sendall(pending)
                except OSError:
                    if not self.gone:  # once everything is sent, the server may have closed already
                        raise
        if any(stream not in fields for stream in ended - refused):
            raise H2Failure("a stream ended without a response")
        return [REFUSED if stream in refused else H2Answer(int(fields[stream][":status"]), fields[stream],
                                                        bytes(bodies[stream])) for stream in ids]


class Load:
    def __init__(self, args, tally: Tally):
        self.args = args
        self.tally = tally
        self.stop = threading.Event()
        self.context = ssl.create_default_context(cafile=args.cacert)
        self.h2_context = ssl.create_default_context(cafile=args.cacert)
        self.h2_context.set_alpn_protocols(["h2"])
        self.threads: list[threading.Thread] = []
        self.vanished = 0
        # Message numbers go on across start() calls, so every post of a run has a message of its own.
        self.numbers = itertools.count()

    def connection(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.args.port, context=self.context, timeout=TIMEOUT)

    def exchange(self, conn, method: str, target: str, body: bytes | None = None, headers=None):
        """One request on a keep-alive connection; returns (connection to use next, response, body)."""
        try:
            conn.request(method, target, body=body, headers=headers or {})
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            conn.close()
            self.tally.record(f"{method} {target}", f"client error {type(error).__name__}: {error}")
            return self.connection(), None, b""
        if response.will_close:
            conn.close()
            conn = self.connection()
        return conn, response, data

    def poster(self, index: int) -> None:
        conn = self.connection()
        for number in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            message = f"{self.args.prefix}-p-{next(self.numbers):07d}"
            payload = {"name": f"soak{index}", "message": message}
            if number % 2:
                payload["geodata"] = GEODATA
            path = "/postmaps" if number % 3 else "/postchatt"
            conn, response, _ = self.exchange(conn, "POST", path, json.dumps(payload).encode(),
                                              {"Content-Type": "application/json; charset=utf-8"})
            if response is not None:
                self.tally.record("POST " + path, response.status, response)
                if response.status == 200:
                    with self.tally.lock:
                        self.tally.acknowledged.append(message)
            self.stop.wait(self.args.post_pause)
        conn.close()

    def reader(self, index: int) -> None:
        conn = self.connection()
        etag = None
        last_id = None
        for number in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            choice = number % 4
            if choice == 0:  # the iOS client: gzip, revalidating with its last ETag
                headers = {"Accept-Encoding": "gzip"}
                if etag:
                    headers["If-None-Match"] = etag
                conn, response, _ = self.exchange(conn, "GET", "/getmaps", headers=headers)
                if response is not None:
                    self.tally.record("GET /getmaps", response.status, response)
                    etag = response.getheader("ETag") or etag
            elif choice == 1:  # an incremental read after the last chatt seen
                target = "/getchatts?limit=50" + (f"&since={last_id}" if last_id else "")
                conn, response, data = self.exchange(conn, "GET", target)
                if response is not None:
                    status = response.status
                    if status == 404 and not archived(self.args, last_id):
                        status = "404 for a chatt id that was neither deleted nor lost"
                    elif status == 404:  # the trimming writer moved it away: start again from the top
                        last_id = None
                        status = TRIMMED
                    self.tally.record("GET /getchatts?since", status, response)
                    if response.status == 200:
                        rows = json.loads(data)
                        if rows:
                            last_id = rows[-1][2]
            elif choice == 2:
                conn, response, data = self.exchange(conn, "GET", "/getchatts")
                if response is not None:
                    self.tally.record("GET /getchatts", response.status, response)
                    if response.status == 200 and last_id is None:
                        rows = json.loads(data)
                        last_id = rows[len(rows) // 2][2] if rows else None
            else:
                conn, response, _ = self.exchange(conn, "GET", "/healthz")
                if response is not None:
                    self.tally.record("GET /healthz", response.status, response)
            self.stop.wait(self.args.read_pause)
        conn.close()

    def vanisher(self) -> None:
        """Clients that go away mid-request, each a different way, over TLS unless noted."""
        for number in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            kind = number % 6
            try:
                if kind == 5:  # HTTP/2: a feed on one stream and a post on another, reset mid-response
                    client = H2Client(self.args.port, self.h2_context)
                    message = f"{self.args.prefix}-v-{next(self.numbers):07d}"
                    client.send([("GET", "/getmaps", [], None),
                                 ("POST", "/postchatt", [], json.dumps({"name": "gone", "message": message}).encode())])
                    client.sock.recv(100)
                    client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    client.close()
                    self.vanished += 1
                    self.stop.wait(self.args.vanish_pause)
                    continue
                raw = socket.create_connection(("127.0.0.1", self.args.port), timeout=TIMEOUT)
                if kind == 0:  # abandons the TLS handshake: TCP only, then a reset
                    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    raw.close()
                else:
                    conn = self.context.wrap_socket(raw, server_hostname="localhost")
                    if kind == 1:  # half a header section
                        conn.sendall(b"GET /getmaps HTTP/1.1\r\nHost: localhost\r\nAccept-Enc")
                    elif kind == 2:  # a body cut short
                        conn.sendall(b"POST /postmaps HTTP/1.1\r\nHost: localhost\r\nContent-Length: 80\r\n\r\n"
                                     b'{"name":"gone","mess')
                    elif kind == 3:  # a whole post, gone before the answer (it may or may not be stored)
                        message = f"{self.args.prefix}-v-{next(self.numbers):07d}"
                        body = json.dumps({"name": "gone", "message": message}).encode()
                        conn.sendall(b"POST /postchatt HTTP/1.1\r\nHost: localhost\r\nContent-Length: "
                                     + str(len(body)).encode() + b"\r\n\r\n" + body)
                    else:  # reads a few bytes of a feed, then resets mid-response
                        conn.sendall(b"GET /getmaps HTTP/1.1\r\nHost: localhost\r\n\r\n")
                        conn.recv(100)
                    # A reset, not an orderly close: the client is simply gone.
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    conn.close()
                self.vanished += 1
            except (OSError, H2Failure, h2.exceptions.H2Error) as error:
                self.tally.record("vanishing client", f"client error {type(error).__name__}: {error}")
            self.stop.wait(self.args.vanish_pause)

    def h2_client(self):
        """A new HTTP/2 connection; None (recorded) when it cannot be made."""
        try:
            return H2Client(self.args.port, self.h2_context)
        except (OSError, H2Failure) as error:
            self.tally.record("HTTP/2 connect", f"client error {type(error).__name__}: {error}", http2=True)
            return None

    def h2_exchange(self, client, requests):
        """Sends a batch of requests as streams of one connection; returns the client to use next (None: a new one)
        and the answers, each an H2Answer, REFUSED for a stream the server did not process, or None for one lost
        with the connection (recorded as a client error)."""
        if client is None:
            client = self.h2_client()
            if client is None:
                self.stop.wait(1)
                return None, [None] * len(requests)
        try:
            answers = client.exchange(requests)
        except (OSError, H2Failure, h2.exceptions.H2Error) as error:
            client.close()
            for method, path, _, _ in requests:
                self.tally.record(f"{method} {path} (HTTP/2)", f"client error {type(error).__name__}: {error}",
                                  http2=True)
            return None, [None] * len(requests)
        if client.gone:
            client.close()
            client = None
        refused = sum(answer is REFUSED for answer in answers)
        if refused:
            with self.tally.lock:
                self.tally.refused_streams += refused
        return client, answers

    def h2_poster(self, index: int) -> None:
        """Three posts at once on one HTTP/2 connection, then a pause. Three streams a batch do not divide the
        stream cap (1000), so some batch straddles it: the server's GOAWAY then names the last stream it took
        from that batch (all three, when they arrived together), and any stream above it counts as refused."""
        client = None
        for number in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            batch = []
            for path in ("/postmaps", "/postchatt", "/postmaps"):
                message = f"{self.args.prefix}-h-{next(self.numbers):07d}"
                payload = {"name": f"soakh2{index}", "message": message}
                if path == "/postmaps":
                    payload["geodata"] = GEODATA
                batch.append((message, ("POST", path, [("content-type", "application/json; charset=utf-8")],
                                        json.dumps(payload).encode())))
            client, answers = self.h2_exchange(client, [request for _, request in batch])
            for (message, request), answer in zip(batch, answers):
                if answer is REFUSED:
                    with self.tally.lock:
                        self.tally.refused_posts.append(message)
                if answer is None or answer is REFUSED:
                    continue
                self.tally.record(f"POST {request[1]} (HTTP/2)", answer.status, answer, http2=True)
                if answer.status == 200:
                    with self.tally.lock:
                        self.tally.acknowledged.append(message)
            self.stop.wait(self.args.post_pause)
        if client is not None:
            client.close()

    def h2_reader(self, index: int) -> None:
        """The readers' mix as three concurrent streams of one HTTP/2 connection."""
        client = None
        etag = None
        for number in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            maps_headers = [("accept-encoding", "gzip")] + ([("if-none-match", etag)] if etag else [])
            chatts = "/getchatts" if number % 2 else "/getchatts?limit=50"
            requests = [("GET", "/getmaps", maps_headers, None), ("GET", chatts, [], None),
                        ("GET", "/healthz", [], None)]
            client, answers = self.h2_exchange(client, requests)
            for (method, path, _, _), answer in zip(requests, answers):
                if answer is None or answer is REFUSED:
                    continue
                self.tally.record(f"{method} {path} (HTTP/2)", answer.status, answer, http2=True)
                if path == "/getmaps" and answer.status in (200, 304):
                    etag = answer.getheader("etag") or etag
            self.stop.wait(self.args.read_pause)
        if client is not None:
            client.close()

    def trimmer(self) -> None:
        """Another writer: keeps the newest KEEP_ROWS chatts, moving older ones to soak_archive in one statement."""
        while not self.stop.wait(TRIM_SECONDS):
            # Fails while PostgreSQL restarts; the next round catches up.
            psql(self.args, TRIM_SQL, check=False)

    def guarded(self, target, *args) -> None:
        """Runs one load thread; an exception that ends it early is a violation, not silently less load."""
        try:
            target(*args)
        except Exception as error:  # noqa: BLE001 - any of them ends the thread
            with self.tally.lock:
                self.tally.violations.append(f"{target.__name__} thread died: {type(error).__name__}: {error}")

    def start(self) -> None:
        self.stop.clear()
        targets = [(self.trimmer,)] + [(self.poster, i) for i in range(self.args.posters)]
        targets += [(self.reader, i) for i in range(self.args.readers)]
        targets += [(self.h2_poster, i) for i in range(self.args.h2_posters)]
        targets += [(self.h2_reader, i) for i in range(self.args.h2_readers)]
        targets.append((self.vanisher,))
        self.threads = [threading.Thread(target=self.guarded, args=target, daemon=True) for target in targets]
        for thread in self.threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(TIMEOUT + 5)


class Probe:
    """What chatterd holds: resident memory and descriptors from /proc, sessions from PostgreSQL."""

    def __init__(self, args):
        self.args = args
        self.context = ssl.create_default_context(cafile=args.cacert)

    def rss_bytes(self) -> int:
        return procfs.rss_bytes(self.args.pid)

    def fds(self) -> int:
        return procfs.fd_count(self.args.pid)

    def db_sessions(self):
        """chatterd's sessions on the database (pool and listener), or None while it is down."""
        done = subprocess.run(["psql", "-X", "-A", "-t", "-d", self.args.database_url, "-c",
                               "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'chatterd'"],
                              capture_output=True, text=True, timeout=10)
        return int(done.stdout.strip()) if done.returncode == 0 else None

    def get(self, target: str):
        conn = http.client.HTTPSConnection("127.0.0.1", self.args.port, context=self.context, timeout=TIMEOUT)
        try:
            conn.request("GET", target)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def client_connections(self):
        """Open client connections, less the one asking."""
        status, body = self.get("/metrics")
        if status != 200:
            return None
        match = re.search(rb"^chatterd_open_connections (\d+)", body, re.M)
        return int(match.group(1)) - 1 if match else None

    def feed_bytes(self) -> int:
        status, body = self.get("/getmaps")
        return len(body) if status == 200 else 0

    def settle_pool(self) -> None:
        """Checks out every pooled connection at once (concurrent /readyz), so dead ones left by a restart are
        closed and every descriptor still open is a live session that pg_stat_activity counts."""
        threads = [threading.Thread(target=lambda: self.get("/readyz")) for _ in range(2 * self.args.pool_size)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT)


class Database:
    """Restarts the throwaway cluster as an operator or a crash would."""

    def __init__(self, args):
        self.args = args
        self.restarts: list[tuple[float, str, float]] = []  # (offset, mode, seconds down)

    def restart(self, offset: float) -> None:
        mode = "fast" if len(self.restarts) % 2 == 0 else "immediate"
        command = [os.path.join(self.args.pg_bindir, "pg_ctl"), "-D", self.args.pgdata, "-m", mode, "-w",
                   "-t", "60", "-l", self.args.pg_log, "restart"]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        started = time.monotonic()
        subprocess.run(command, check=True, capture_output=True, timeout=90, cwd="/")
        self.restarts.append((offset, mode, time.monotonic() - started))


ARCHIVE_SQL = "CREATE TABLE IF NOT EXISTS soak_archive (id uuid, message text)"
TRIM_SQL = f"""WITH moved AS (
    DELETE FROM chatts WHERE seq <= (SELECT max(seq) - {KEEP_ROWS} FROM chatts) RETURNING id, message)
    INSERT INTO soak_archive SELECT id, message FROM moved"""


def psql(args, sql: str, check: bool = True) -> str:
    try:
        done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d",
                               args.database_url, "-c", sql], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        if check:
            raise
        return ""
    if check and done.returncode != 0:
        raise RuntimeError(f"psql failed: {done.stderr.strip()}")
    return done.stdout


def archived(args, chatt_id: str | None) -> bool:
    """Whether the trimming writer moved the chatt with this id away (ids come from the server: no quoting issue)."""
    if not chatt_id or not re.fullmatch(r"[0-9a-f-]{36}", chatt_id):
        return False
    return psql(args, f"SELECT count(*) FROM soak_archive WHERE id = '{chatt_id}'", check=False).strip() == "1"


def stored_counts(args) -> dict[str, int]:
    """message -> copies, in the store and in the archive together."""
    out = psql(args, f"SELECT message, count(*) FROM (SELECT message FROM chatts UNION ALL "
                     f"SELECT message FROM soak_archive) AS m WHERE message LIKE '{args.prefix}-%' GROUP BY 1")
    counts = {}
    for line in out.splitlines():
        if line:
            message, count = line.rsplit("\t", 1)
            counts[message] = int(count)
    return counts


@dataclass
class Sample:
    offset: int
    phase: str
    rss: int
    fds: int
    db: object
    clients: object
    requests: int
    http2: int
    unavailable: int


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--cacert", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--pgdata", required=True)
    parser.add_argument("--pg-bindir", required=True)
    parser.add_argument("--pg-log", required=True)
    parser.add_argument("--pool-size", type=int, default=8)
    parser.add_argument("--posters", type=int, default=3)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--h2-posters", type=int, default=1)
    parser.add_argument("--h2-readers", type=int, default=1)
    parser.add_argument("--post-pause", type=float, default=0.2)
    parser.add_argument("--read-pause", type=float, default=0.01)
    parser.add_argument("--vanish-pause", type=float, default=0.05)
    parser.add_argument("--report", required=True)
    parser.add_argument("--command", default="bench/soak.sh")
    args = parser.parse_args()
    args.prefix = f"soak{os.getpid()}"

    tally, probe, database = Tally(), Probe(args), Database(args)
    load = Load(args, tally)
    samples: list[Sample] = []

    def sample(offset: int, phase: str) -> Sample:
        taken = Sample(offset, phase, probe.rss_bytes(), probe.fds(), probe.db_sessions(), probe.client_connections(),
                       tally.requests, tally.http2_requests, tally.count(503))
        samples.append(taken)
        print(f"{taken.offset:6d}  {taken.phase:9s} {taken.rss / 1048576:7.1f} {taken.fds:5d} {str(taken.db):>3s} "
              f"{str(taken.clients):>7s} {taken.requests:9d} {taken.http2:7d} {taken.unavailable:6d} "
              f"{len(tally.violations):6d}",
              flush=True)
        return taken

    def idle_sample(offset: int, phase: str) -> Sample:
        """A sample once the load's connections are gone and the pool holds only live sessions."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (probe.client_connections() or 0) > 0:
            time.sleep(0.2)
        probe.settle_pool()
        time.sleep(0.5)
        return sample(offset, phase)

    psql(args, ARCHIVE_SQL)
    print(f"soak: {args.minutes:g} min, PostgreSQL restart every {RESTART_EVERY_SECONDS} s from "
          f"{FIRST_RESTART_SECONDS} s, samples every {SAMPLE_SECONDS} s", flush=True)
    print("   t s  phase      RSS MB   fds  db clients  requests  HTTP/2   503s  wrong", flush=True)
    load.start()
    time.sleep(WARMUP_SECONDS)
    load.finish()
    baseline = idle_sample(0, "baseline")
    baseline_feed = probe.feed_bytes()

    load.start()
    started = time.monotonic()
    duration = args.minutes * 60
    next_sample, next_restart = SAMPLE_SECONDS, FIRST_RESTART_SECONDS
    while True:
        elapsed = time.monotonic() - started
        if elapsed >= duration:
            break
        if elapsed >= next_restart:
            database.restart(round(elapsed))
            next_restart += RESTART_EVERY_SECONDS
            continue
        if elapsed >= next_sample:
            sample(next_sample, "load")
            next_sample += SAMPLE_SECONDS
            continue
        time.sleep(min(next_sample, next_restart, duration) - elapsed)
    load.finish()
    final = idle_sample(round(time.monotonic() - started), "after")
    final_feed = probe.feed_bytes()
    ready = probe.get("/readyz")[0]

    counts = stored_counts(args)
    acknowledged = set(tally.acknowledged)
    missing = [m for m in acknowledged if counts.get(m, 0) != 1]
    doubled = [m for m, n in counts.items() if n > 1]
    refused_stored = [m for m in tally.refused_posts if counts.get(m, 0)]
    baseline_other = baseline.fds - (baseline.db or 0)
    final_other = final.fds - (final.db or 0)
    rss_allowed = baseline.rss + RSS_SLACK_BYTES
    load_rss = [s.rss for s in samples if s.phase == "load"]
    checks = [
        (f"{len(acknowledged)} posts acknowledged, every one stored once (in chatts or soak_archive)", not missing,
         f"missing or not once: {missing[:5]}"),
        ("no chatt stored twice", not doubled, f"doubled: {doubled[:5]}"),
        (f"{len(tally.refused_posts)} HTTP/2 posts refused unprocessed at a GOAWAY, none stored", not refused_stored,
         f"stored: {refused_stored[:5]}"),
        ("only 200, 304, 503 with Retry-After (and 404 for a since id trimmed away), no client error",
         not tally.violations,
         f"{len(tally.violations)}: {tally.violations[:5]}"),
        (f"descriptors back at baseline: {final.fds} open, {final.db} database sessions "
         f"(baseline {baseline.fds}, {baseline.db})", final_other <= baseline_other and final.db is not None,
         f"{final_other - baseline_other} more descriptors than database sessions explain"),
        ("no client connection left open", final.clients == 0, f"{final.clients} open"),
        (f"resident memory back near baseline: {final.rss / 1048576:.1f} MB "
         f"(baseline {baseline.rss / 1048576:.1f} MB, allowed {rss_allowed / 1048576:.1f} MB)",
         final.rss <= rss_allowed, "grew past the allowance"),
        ("/readyz 200 after the load", ready == 200, f"/readyz {ready}"),
        (f"HTTP/2 clients served: {tally.http2_requests} requests", tally.http2_requests > 0, "no HTTP/2 request answered"),
        (f"{len(database.restarts)} PostgreSQL restarts", len(database.restarts) >= max(1, int(args.minutes)),
         "fewer restarts than minutes"),
    ]
    summary = [
        f"requests: {tally.requests} ({', '.join(f'{k}: {v}' for k, v in sorted(tally.statuses.items(), key=str))}), "
        f"{tally.http2_requests} of them over HTTP/2 ({tally.refused_streams} more streams refused unprocessed, "
        f"at the stream cap's GOAWAY); clients vanished mid-request: {load.vanished}",
        f"restarts (offset s, mode, seconds down): "
        + ", ".join(f"{o:g} {m} {d:.1f}" for o, m, d in database.restarts),
        f"feed (held near {KEEP_ROWS} chatts): {baseline_feed} bytes at baseline, {final_feed} after; RSS under load: median "
        f"{statistics.median(load_rss) / 1048576:.1f} MB, peak {max(load_rss) / 1048576:.1f} MB" if load_rss else "",
    ]
    failed = [c for c in checks if not c[1]]
    for line in summary:
        print(line)
    for text, ok, detail in checks:
        print(("ok:   " if ok else "FAIL: ") + text + ("" if ok else f" ({detail})"))

    with open(args.report, "w") as report:
        report.write(f"## Soak run of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n")
        report.write(f"- command: `{args.command}`\n")
        report.write(f"- machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end\n")
        for line in summary:
            if line:
                report.write(f"- {line}\n")
        report.write("\n| t s | phase | RSS MB | fds | db sessions | client conns | requests | of them HTTP/2 | 503s |\n")
        report.write("|--:|---|--:|--:|--:|--:|--:|--:|--:|\n")
        for s in samples:
            report.write(f"| {s.offset} | {s.phase} | {s.rss / 1048576:.1f} | {s.fds} | {s.db} | {s.clients} | "
                         f"{s.requests} | {s.http2} | {s.unavailable} |\n")
        report.write("\n")
        for text, ok, detail in checks:
            report.write(f"- {'ok' if ok else '**FAIL**'}: {text}{'' if ok else f' ({detail})'}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

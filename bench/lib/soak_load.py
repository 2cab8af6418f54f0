"""The soak's load (soak.py): threads posting and reading over HTTP/1.1 (http.client, kept alive) and HTTP/2
(soak_h2.py, several streams in flight on one connection, a new one when the server goes away: its stream cap is the
requests-per-connection cap), clients that vanish mid-request, and another writer holding the store near KEEP_ROWS
chatts. Bounded in time (until stopped) and in count (MAX_REQUESTS per thread); every answer goes to the Tally."""

from __future__ import annotations

import http.client
import itertools
import json
import socket
import ssl
import struct
import threading

import soak_h2
from soak_store import TRIM_SECONDS, TRIM_SQL, archived, psql
from soak_tally import TRIMMED, Tally

MAX_REQUESTS = 200_000  # per thread: the count bound, far above what the deadline allows
TIMEOUT = 15.0
GEODATA = '[42.2936,-83.7166,"North","walking"]'


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
                    client = soak_h2.connect(self.args.port, self.h2_context, TIMEOUT)
                    message = f"{self.args.prefix}-v-{next(self.numbers):07d}"
                    soak_h2.send(client, [("GET", "/getmaps", [], None),
                                          ("POST", "/postchatt", [],
                                           json.dumps({"name": "gone", "message": message}).encode())])
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
            except soak_h2.ERRORS as error:
                self.tally.record("vanishing client", f"client error {type(error).__name__}: {error}")
            self.stop.wait(self.args.vanish_pause)

    def h2_client(self):
        """A new HTTP/2 connection; None (recorded) when it cannot be made."""
        try:
            return soak_h2.connect(self.args.port, self.h2_context, TIMEOUT)
        except (OSError, soak_h2.H2Failure) as error:
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
            answers = soak_h2.exchange(client, requests, TIMEOUT)
        except soak_h2.ERRORS as error:
            client.close()
            for method, path, _, _ in requests:
                self.tally.record(f"{method} {path} (HTTP/2)", f"client error {type(error).__name__}: {error}",
                                  http2=True)
            return None, [None] * len(requests)
        if soak_h2.gone(client):
            client.close()
            client = None
        refused = sum(answer is soak_h2.REFUSED for answer in answers)
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
                if answer is soak_h2.REFUSED:
                    with self.tally.lock:
                        self.tally.refused_posts.append(message)
                if answer is None or answer is soak_h2.REFUSED:
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
                if answer is None or answer is soak_h2.REFUSED:
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

"""`chatter watch` run as a process: against a scripted event-stream server (drops, resets, refusals), and
against the real chatterd's live feed (the contract of docs/API.md) when it has one."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import ssl
import subprocess
import threading
import time
import uuid

import pytest

from wire import build_request

EXIT_HTTP = 67
WAIT = 20.0  # seconds any one expected line may take; generous for a loaded CI machine


class Request:
    """A request as the scripted server read it."""

    def __init__(self, head: bytes):
        lines = head.decode("latin-1").split("\r\n")
        self.method, self.target, _ = lines[0].split(" ", 2)
        self.headers = {}
        for line in lines[1:]:
            if line:
                name, value = line.split(":", 1)
                self.headers[name.strip().lower()] = value.strip()

    def __repr__(self) -> str:
        return f"{self.method} {self.target} Last-Event-ID={self.headers.get('last-event-id')}"


class ScriptedServer:
    """Answers the n-th connection with the n-th script, one connection at a time, and records each request.
    A script is a function (conn, stop_event); the last one usually holds its connection until stop()."""

    def __init__(self, scripts, tls: ssl.SSLContext | None = None):
        self.scripts = list(scripts)
        self.tls = tls
        self.requests: list[Request] = []
        self.errors: list[BaseException] = []
        self.stopping = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            for script in self.scripts:
                conn = self._accept()
                if conn is None:
                    return
                with conn:
                    head = b""
                    while b"\r\n\r\n" not in head:
                        chunk = conn.recv(4096)
                        if not chunk:
                            raise AssertionError(f"connection closed before a whole request: {head!r}")
                        head += chunk
                    self.requests.append(Request(head.split(b"\r\n\r\n")[0]))
                    script(conn, self.stopping)
        except BaseException as error:  # reported by the test, through stop()
            self.errors.append(error)

    def _accept(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                continue
            conn.settimeout(WAIT)
            return self.tls.wrap_socket(conn, server_side=True) if self.tls else conn
        return None

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(WAIT)
        self.listener.close()
        assert not self.errors, self.errors


def row(n: int, maps: bool = False) -> list:
    chatts = [f"user{n}", f"message {n}", str(uuid.UUID(int=n)), f"2026-03-25T08:11:{n:02d}.000000Z"]
    return chatts + ["[42.5,-83.25,\"North\",\"walking\"]"] if maps else chatts


def event(position: str, data) -> bytes:
    return f"id: {position}\ndata: {json.dumps(data)}\n\n".encode()


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


STREAM_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n")


def stream(*pieces: bytes, end: str):
    """A script: the stream's head, each piece as a chunk of its own, then `end`: "drop" (close with no last
    chunk), "finish" (the last chunk, then close) or "hold" (keep the connection open until the test stops)."""

    def script(conn, stopping: threading.Event) -> None:
        # One send: chatter may close as soon as it has read what it needs (a reset), and a later send would fail.
        last = b"0\r\n\r\n" if end == "finish" else b""
        conn.sendall(STREAM_HEAD + b"".join(chunk(piece) for piece in pieces) + last)
        if end == "hold":
            stopping.wait(WAIT * 3)

    return script


def answer(status: str, body: bytes, *fields: str):
    def script(conn, stopping) -> None:
        head = [f"HTTP/1.1 {status}", "Content-Type: application/json", f"Content-Length: {len(body)}", *fields]
        conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)

    return script


class Watch:
    """A running `chatter watch`, its stdout read line by line as it comes."""

    def __init__(self, chatter_bin: str, *args, cwd):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHATTER_")}
        self.popen = subprocess.Popen([chatter_bin, "watch", *map(str, args)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.popen.stdout:
            self.lines.put(line)

    def next_line(self) -> str:
        try:
            return self.lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no line within {WAIT}s; stderr so far: {self.stop()[1]}") from None

    def stop(self) -> tuple[list[str], str]:
        """Ends chatter (SIGTERM); returns the lines it printed after those taken, and its stderr."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        self.popen.wait(WAIT)
        self.reader.join(WAIT)
        rest = []
        while not self.lines.empty():
            rest.append(self.lines.get())
        return rest, self.popen.stderr.read()


@pytest.fixture
def watch(chatter_bin, tmp_path):
    started: list[Watch] = []

    def start(*args) -> Watch:
        started.append(Watch(chatter_bin, *args, cwd=tmp_path))
        return started[-1]

    yield start
    for process in started:
        if process.popen.poll() is None:
            process.popen.kill()
            process.popen.wait(WAIT)


@pytest.fixture(params=["plain", "tls"])
def scheme(request, certs):
    """(server TLS context or None, chatter's --server prefix and trust options)."""
    if request.param == "plain":
        return None, "http://127.0.0.1", []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs.cert, certs.key)
    context.set_alpn_protocols(["http/1.1"])
    return context, "https://localhost", ["--cacert", certs.cert]


def test_a_drop_resumes_after_the_last_event_without_gap_or_repeat(watch, scheme):
    context, base, trust = scheme
    server = ScriptedServer([
        # The second event comes in two chunks, cut inside its data line.
        stream(event("1-1", row(1)), event("1-2", row(2))[:20], event("1-2", row(2))[20:], end="drop"),
        stream(event("1-3", row(3)), end="hold"),
    ], tls=context)
    chatter = watch("--format", "json", "--server", f"{base}:{server.port}", *trust)
    try:
        shown = [json.loads(chatter.next_line()) for _ in range(3)]
        rest, errors = chatter.stop()
    finally:
        server.stop()
    assert shown == [row(1), row(2), row(3)] and rest == [], (shown, rest)
    assert [(r.target, r.headers.get("last-event-id"), r.headers.get("accept")) for r in server.requests] == [
        ("/getchatts/stream", None, "text/event-stream"), ("/getchatts/stream", "1-2", "text/event-stream")]
    assert "the live feed ended; trying again in" in errors, errors


def test_a_reset_refetches_the_position_and_subscribes_from_it(watch):
    feed = json.dumps([row(9, maps=True)]).encode()
    server = ScriptedServer([
        stream(event("5-1", row(1, maps=True)), b"event: reset\ndata: {}\n\n", end="finish"),
        answer("200 OK", feed, "Feed-Position: 6-0"),
        stream(b":\n", event("6-1", row(2, maps=True)), end="hold"),
    ])
    chatter = watch("--maps", "--format", "json", "--server", f"http://127.0.0.1:{server.port}")
    try:
        shown = [json.loads(chatter.next_line()) for _ in range(2)]
        rest, errors = chatter.stop()
    finally:
        server.stop()
    assert shown == [row(1, maps=True), row(2, maps=True)] and rest == [], "nothing of the refetched feed"
    assert [(r.method, r.target, r.headers.get("last-event-id")) for r in server.requests] == [
        ("GET", "/getmaps/stream", None), ("GET", "/getmaps?limit=0", None), ("GET", "/getmaps/stream", "6-0")]
    [notice] = [line for line in errors.splitlines() if "reset" in line]
    assert notice.startswith("chatter: the server cannot resume the live feed"), errors


def test_a_busy_server_is_asked_again_and_a_refusal_ends_the_watch(watch, chatter_bin, tmp_path):
    server = ScriptedServer([
        answer("503 Service Unavailable", b'{"error":"database unavailable"}', "Retry-After: 1"),
        stream(event("2-1", row(1)), end="hold"),
    ])
    chatter = watch("--format", "json", "--server", f"http://127.0.0.1:{server.port}")
    try:
        assert json.loads(chatter.next_line()) == row(1)
        _, errors = chatter.stop()
    finally:
        server.stop()
    assert "chatter: server answered 503: database unavailable; trying again in 1.0 s" in errors, errors

    refusing = ScriptedServer([answer("400 Bad Request", b'{"error":"malformed Last-Event-ID"}')])
    try:
        result = subprocess.run([chatter_bin, "watch", "--server", f"http://127.0.0.1:{refusing.port}"],
                                capture_output=True, text=True, timeout=WAIT, cwd=tmp_path)
    finally:
        refusing.stop()
    assert result.returncode == EXIT_HTTP and result.stdout == "", result
    assert result.stderr == "chatter: server answered 400: malformed Last-Event-ID\n"


def test_table_rows_come_one_by_one_under_one_header(watch):
    server = ScriptedServer([
        stream(event("1-1", row(1)), end="drop"),
        stream(event("1-2", row(2)), end="hold"),
    ])
    chatter = watch("--server", f"http://127.0.0.1:{server.port}")
    try:
        lines = [chatter.next_line() for _ in range(3)]
        rest, _ = chatter.stop()
    finally:
        server.stop()
    assert lines[0].split() == ["TIME", "(UTC)", "NAME", "MESSAGE"] and rest == []
    assert [line.split()[2:] for line in lines[1:]] == [["user1", "message", "1"], ["user2", "message", "2"]]
    assert lines[1].index("user1") == lines[0].index("NAME") == lines[2].index("user2")


# --- against chatterd itself ------------------------------------------------------------------------

def stream_status(endpoint) -> int:
    """The status chatterd answers GET /getchatts/stream with (the body, if any, is not read)."""
    with endpoint.connect(timeout=10) as conn:
        conn.send(build_request("GET", "/getchatts/stream", headers=[("Accept", "text/event-stream")]))
        line = conn._read_until(b"\r\n", time.monotonic() + 10)
    return int(line.split()[1])


def test_watch_prints_a_chatt_posted_to_chatterd(watch, tls_server, certs, token):
    if stream_status(tls_server) == 404:
        pytest.skip("this chatterd has no live feed (GET /getchatts/stream answers 404)")
    chatter = watch("--format", "json", "--server", f"https://localhost:{tls_server.port}", "--cacert", certs.cert)
    # The first subscription starts at the end of the feed, and nothing says when it is in place: post until
    # one of ours shows (bounded), then one more, which must come next.
    seen = None
    for attempt in range(10):
        assert tls_server.post_json("/postchatt", {"name": "watcher", "message": f"{token} {attempt}"}).status == 200
        try:
            line = chatter.lines.get(timeout=2)
        except queue.Empty:
            continue
        seen = json.loads(line)
        break
    assert seen is not None and seen[1].startswith(token), f"nothing shown: {chatter.stop()}"
    assert tls_server.post_json("/postchatt", {"name": "watcher", "message": f"{token} last"}).status == 200
    rows = [json.loads(chatter.next_line())]
    while rows[-1][1] != f"{token} last":
        rows.append(json.loads(chatter.next_line()))
    chatter.stop()
    feed = [r for r in tls_server.get("/getchatts").json() if r[1].startswith(token)]
    assert [seen, *rows] == feed[feed.index(seen):], "every chatt from the first shown on, in order, once"


def test_chatter_delete_removes_a_chatt_and_watch_shows_the_removal(watch, start_server, certs, tmp_path, token):
    tokens = tmp_path / "admin-tokens"
    tokens.write_text("carol:carol-token-0123456789\n")
    os.chmod(tokens, 0o600)
    server = start_server("--admin-token-file", str(tokens), tls=True)
    target = ["--server", f"https://localhost:{server.port}", "--cacert", certs.cert]
    assert server.post_json("/postchatt", {"name": "doomed", "message": token}).status == 200
    doomed = next(row[2] for row in server.get("/getchatts").json() if row[1] == token)
    chatter = watch("--format", "json", *target)
    # The watch starts at the end of the feed: a sentinel shows it is in place.
    for attempt in range(10):
        assert server.post_json("/postchatt", {"name": "watcher", "message": f"{token} {attempt}"}).status == 200
        try:
            chatter.lines.get(timeout=2)
            break
        except queue.Empty:
            continue
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATTER_")}
    done = subprocess.run([os.environ["CHATTER_BIN"], "delete", doomed, "--reason", "spam",
                           "--admin-token-file", str(tokens), *target], capture_output=True, text=True,
                          timeout=WAIT, env=env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "", done
    line = chatter.next_line()
    while not line.startswith("{"):
        line = chatter.next_line()
    assert json.loads(line) == {"removed": doomed}
    chatter.stop()
    assert doomed not in [row[2] for row in server.get("/getchatts").json()]
    again = subprocess.run([os.environ["CHATTER_BIN"], "delete", doomed, "--reason", "spam", *target],
                           capture_output=True, text=True, timeout=WAIT, cwd=tmp_path,
                           env={**env, "CHATTER_ADMIN_TOKEN": "carol-token-0123456789"})
    assert again.returncode == EXIT_HTTP and "no such chatt" in again.stderr, again


def test_watch_of_a_box_prints_only_the_chatts_posted_in_it(watch, tls_server, certs, token):
    if stream_status(tls_server) == 404:
        pytest.skip("this chatterd has no live feed (GET /getchatts/stream answers 404)")
    chatter = watch("--bbox", "40.5,40.5,40.6,40.6", "--format", "json",
                    "--server", f"https://localhost:{tls_server.port}", "--cacert", certs.cert)

    def post_at(message, lat, lon):
        body = {"name": "boxed", "message": message, "geodata": f'[{lat},{lon},"N","w"]'}
        assert tls_server.post_json("/postmaps", body).status == 200

    # As above: post in the box until one shows (the subscription's start is not announced), then outside and in.
    seen = None
    for attempt in range(10):
        post_at(f"{token} in {attempt}", 40.55, 40.55)
        try:
            seen = json.loads(chatter.lines.get(timeout=2))
            break
        except queue.Empty:
            continue
    assert seen is not None and seen[1].startswith(f"{token} in"), f"nothing shown: {chatter.stop()}"
    post_at(f"{token} out", 10, 10)
    post_at(f"{token} in last", 40.6, 40.5)
    rows = [json.loads(chatter.next_line())]
    while rows[-1][1] != f"{token} in last":
        rows.append(json.loads(chatter.next_line()))
    chatter.stop()
    assert all(" in " in row[1] or row[1].endswith(" in last") for row in rows), rows

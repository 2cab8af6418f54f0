"""Slow bodies, slow readers and a large /getmaps. Uses its own database, seeded with
many chatts, so the shared one stays small."""

from __future__ import annotations

import json
import re
import signal
import socket
import time

import pytest

from pgsupport import migrated_database
from processes import wait_until
from procfs import rss_bytes
from wire import ConnectionClosed, build_request

SEEDED_ROWS = 20000


@pytest.fixture(scope="module")
def seeded_url(env):
    """A separate database, migrated with `chatterd migrate` and holding SEEDED_ROWS chatts."""
    seed = f"""INSERT INTO chatts (name, message, geodata)
               SELECT 'seed' || (g % 97), 'seeded message number ' || g || ' with some padding text',
                      '[42.2936,-83.7166,"North","walking"]'
               FROM generate_series(1, {SEEDED_ROWS}) AS g;"""
    with migrated_database(env.admin_url, env.binary, env.migrations, "e2e_big_", seed) as url:
        yield url


def open_connections(server) -> int:
    text = server.get("/metrics").body.decode()
    match = re.search(r"^\w*open_connections\w* (\d+)", text, re.M)
    assert match, "no open-connections gauge in /metrics"
    return int(match.group(1))


def non_reading_client(server, requests: int, target: str = "/getmaps") -> socket.socket:
    """A connection that asks for `target` `requests` times and never reads."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect, so the window stays small
    sock.settimeout(2)
    sock.connect((server.host, server.port))
    try:
        sock.sendall(build_request("GET", target) * requests)
    except OSError:
        pass
    return sock


def test_slow_readers_do_not_each_cost_a_copy_of_getmaps(start_server, seeded_url):
    server = start_server("--send-timeout", "30", url=seeded_url)
    body = server.get("/getmaps", timeout=30).body
    assert body.count(b"],[") + 1 >= SEEDED_ROWS
    for _ in range(3):
        server.get("/getmaps", timeout=30)
    baseline = rss_bytes(server.process.pid)
    hogs = [non_reading_client(server, 3) for _ in range(30)]
    try:
        time.sleep(1.5)
        grown = rss_bytes(server.process.pid) - baseline
        started = time.monotonic()
        assert server.get("/healthz").status == 200
        assert time.monotonic() - started < 2
    finally:
        for sock in hogs:
            sock.close()
    # 30 readers x 3 responses of ~len(body) each: a private copy per response would be ~90 x body.
    assert grown < 10 * len(body), f"RSS grew {grown / 1e6:.1f} MB for 30 slow readers of a {len(body) / 1e6:.1f} MB body"


def test_slow_readers_of_since_slices_share_the_feeds_bytes(start_server, seeded_url):
    # A `since` answer is cut from the shared body (docs/API.md: no private copy per connection): 30 readers
    # of nearly the whole feed each, who never read, cost what the whole-feed readers above cost.
    server = start_server("--send-timeout", "30", url=seeded_url)
    body = server.get("/getmaps", timeout=30).body
    oldest = json.loads(body)[0][2]
    target = f"/getmaps?since={oldest}"
    slice_body = server.get(target, timeout=30).body
    assert len(slice_body) > 0.99 * len(body)
    for _ in range(3):
        server.get(target, timeout=30)
    baseline = rss_bytes(server.process.pid)
    hogs = [non_reading_client(server, 3, target) for _ in range(30)]
    try:
        time.sleep(1.5)
        grown = rss_bytes(server.process.pid) - baseline
    finally:
        for sock in hogs:
            sock.close()
    assert grown < 10 * len(body), f"RSS grew {grown / 1e6:.1f} MB for 30 slow readers of a {len(body) / 1e6:.1f} MB slice"


def test_send_timeout_closes_a_reader_that_stops_reading(start_server, seeded_url):
    server = start_server("--send-timeout", "1", url=seeded_url)
    # More than the kernel's socket buffers can absorb (4 MiB send buffer here), so writes stall.
    sock = non_reading_client(server, 4)
    try:
        assert open_connections(server) >= 2
        assert wait_until(lambda: open_connections(server) == 1, 6), "stalled reader kept past the send timeout"
    finally:
        sock.close()


def test_reset_in_the_middle_of_a_large_tls_response_is_survived(start_server, seeded_url):
    server = start_server(url=seeded_url, tls=True)
    for _ in range(30):
        conn = server.connect()
        conn.send(build_request("GET", "/getmaps"))
        conn.sock.recv(1000)  # the response has started
        conn.abort()
    assert server.get("/healthz").status == 200
    assert server.process.alive()


def test_body_idle_timeout_ends_a_stalled_upload(start_server, database_url):
    server = start_server("--body-timeout", "1", "--header-timeout", "30")
    with server.connect() as conn:
        conn.send(build_request("POST", "/postchatt", headers=[("Content-Length", "100")]) + b'{"name":')
        started = time.monotonic()
        try:
            response = conn.read_response(timeout=6)
            assert response.status == 408 and response.says_close, response
            assert conn.closed_by_server()
        except ConnectionClosed:
            pass
        assert time.monotonic() - started < 4


def test_header_deadline_applies_to_a_later_request_on_the_connection(start_server):
    server = start_server("--header-timeout", "1", "--keepalive-timeout", "30")
    with server.connect() as conn:
        conn.send(build_request("GET", "/healthz"))
        assert conn.read_response().status == 200
        conn.send(b"GET /healthz HTTP/1.1\r\n")
        started = time.monotonic()
        try:
            response = conn.read_response(timeout=8)
            assert response.status == 408, response
        except ConnectionClosed:
            pass
        assert time.monotonic() - started < 4, "a half-sent second request got the keep-alive allowance"


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_throttled_reader_receives_the_whole_large_getmaps_intact(start_server, seeded_url, tls):
    server = start_server(url=seeded_url, tls=tls)
    expected = server.get("/getmaps", timeout=30).body
    conn = server.connect(timeout=30)
    with conn:
        conn.send(build_request("GET", "/getmaps") * 2 + build_request("GET", "/healthz"))
        received = b""
        deadline = time.monotonic() + 60
        # Read in small bites with pauses, so the server's writes keep hitting a full socket.
        while len(received) < 2 * len(expected) and time.monotonic() < deadline:
            chunk = conn.sock.recv(16384)
            if not chunk:
                break
            received += chunk
            if len(received) % 10 == 0:
                time.sleep(0.001)
        conn.buf += received
        first = conn.read_response(timeout=30)
        second = conn.read_response(timeout=30)
        third = conn.read_response(timeout=30)
    assert first.status == second.status == 200
    assert first.body == expected and second.body == expected, "large response corrupted on a slow socket"
    assert third.status == 200


def test_many_pipelined_requests_in_one_tls_write_are_all_answered(start_server, seeded_url):
    server = start_server(url=seeded_url, tls=True)
    raw = b"".join(build_request("GET", "/healthz" if i % 10 else "/getchatts") for i in range(60))
    with server.connect(timeout=30) as conn:
        conn.send(raw)
        statuses = [conn.read_response(timeout=30).status for _ in range(60)]
    assert statuses == [200] * 60


def test_sigterm_with_a_stalled_reader_exits_zero_at_the_drain_deadline(start_server, seeded_url):
    server = start_server("--drain-timeout", "2", "--send-timeout", "30", url=seeded_url)
    sock = non_reading_client(server, 4)
    try:
        assert open_connections(server) >= 2
        server.process.signal(signal.SIGTERM)
        started = time.monotonic()
        status = server.process.wait(timeout=8)
        elapsed = time.monotonic() - started
    finally:
        sock.close()
    assert status == 0, f"exit status {status} (None = still running)\n{server.process.log()}"
    assert elapsed < 4.5, f"took {elapsed:.1f}s with a 2s drain deadline"

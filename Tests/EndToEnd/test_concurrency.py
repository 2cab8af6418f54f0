"""Many clients at once, slow and abusive clients, connection limits."""

from __future__ import annotations

import json
import select
import shutil
import socket
import threading
import time

import pytest

from conftest import serve_args
from pgsupport import message_counts
from processes import ChatterdProcess, free_port, wait_healthy, wait_until
from wire import ConnectionClosed, Endpoint, build_request, pipeline


def test_200_concurrent_posts_are_all_acknowledged_and_stored_once(tls_server, database_url, token):
    count = 200
    barrier = threading.Barrier(count)
    statuses: dict[int, object] = {}

    def post(index: int) -> None:
        body = json.dumps({"name": "c", "message": f"{token}-{index:03d}"}).encode()
        try:
            conn = tls_server.connect(timeout=60)
            barrier.wait(timeout=60)
            with conn:
                conn.send(build_request("POST", "/postmaps", body))
                statuses[index] = conn.read_response(timeout=60).status
        except Exception as error:  # recorded and reported below
            statuses[index] = repr(error)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    failed = {i: s for i, s in statuses.items() if s != 200}
    assert len(statuses) == count and not failed, failed
    stored = message_counts(database_url, token)
    assert len(stored) == count and set(stored.values()) == {1}, {m: n for m, n in stored.items() if n != 1}


def test_concurrent_posts_come_back_oldest_first(plain_server, token):
    # Rows are served "oldest first, in posting order": their timestamps must never go backwards.
    def post_many(worker: int) -> None:
        with plain_server.connect() as conn:
            for index in range(20):
                body = json.dumps({"name": "o", "message": f"{token}-{worker:02d}-{index:02d}"}).encode()
                conn.send(build_request("POST", "/postchatt", body))
                assert conn.read_response().status == 200

    threads = [threading.Thread(target=post_many, args=(w,)) for w in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    rows = [row for row in plain_server.get("/getmaps").json() if row[1].startswith(token)]
    assert len(rows) == 16 * 20
    backwards = [(a[3], b[3]) for a, b in zip(rows, rows[1:]) if b[3] < a[3]]
    assert not backwards, f"{len(backwards)} rows are older than the row before them, e.g. {backwards[:3]}"


def test_slowloris_connections_do_not_stall_normal_clients(plain_server):
    slow = []
    for _ in range(50):
        conn = plain_server.connect(timeout=5)
        conn.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        slow.append(conn)
    try:
        worst = 0.0
        for _ in range(15):
            for conn in slow:
                conn.try_send(b"a")
            started = time.monotonic()
            assert plain_server.get("/getmaps", timeout=5).status == 200
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.2)
        assert worst < 2.0, f"a normal request took {worst:.2f}s during slowloris"
    finally:
        for conn in slow:
            conn.close()


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_silent_connection_is_closed_by_the_header_or_handshake_deadline(start_server, tls):
    server = start_server("--header-timeout", "1", "--handshake-timeout", "1", tls=tls)
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        started = time.monotonic()
        try:
            data = sock.recv(4096)
        except ConnectionResetError:
            data = b""
        elapsed = time.monotonic() - started
    assert data == b"" or tls or data.startswith(b"HTTP/1.1 408"), data
    assert elapsed < 4, f"silent connection held for {elapsed:.1f}s"


def test_partial_header_times_out_with_408_or_close(start_server):
    server = start_server("--header-timeout", "1")
    with server.connect(timeout=10) as conn:
        conn.send(b"GET /getmaps HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        try:
            response = conn.read_response(timeout=6)
            assert response.status == 408, response
            assert conn.closed_by_server(timeout=2)
        except ConnectionClosed:
            pass
        assert time.monotonic() - started < 4


def test_header_deadline_counts_from_the_first_byte_not_the_last(start_server):
    server = start_server("--header-timeout", "1")
    with server.connect(timeout=10) as conn:
        conn.send(b"GET /getmaps HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        # Keep dripping header lines until the server answers (408) or closes.
        while time.monotonic() - started < 6:
            readable, _, _ = select.select([conn.sock], [], [], 0.25)
            if readable or not conn.try_send(b"X-Drip: 1\r\n"):
                break
        elapsed = time.monotonic() - started
        assert elapsed < 4, "trickled headers kept the request alive past the header deadline"
        try:
            response = conn.read_response(timeout=2)
            assert response.status == 408 and response.says_close, response
        except ConnectionClosed:
            pass


def test_connection_flood_past_the_cap_is_survived(start_server):
    server = start_server("--max-connections", "20", "--header-timeout", "1")
    idle = [socket.create_connection((server.host, server.port), timeout=5) for _ in range(40)]
    try:
        started = time.monotonic()
        response = server.get("/healthz", timeout=15)
        assert response.status == 200
        assert time.monotonic() - started < 10
        assert server.process.alive()
    finally:
        for sock in idle:
            sock.close()
    assert wait_until(lambda: server.get("/healthz").status == 200, 5)


@pytest.mark.parametrize("name", ["plain", "tls"])
def test_reset_storm_leaves_the_server_healthy(request, name):
    server = request.getfixturevalue(f"{name}_server")
    for index in range(100):
        conn = server.connect(timeout=5)
        conn.send(build_request("GET", "/getmaps") if index % 2 else
                  build_request("POST", "/postchatt", b'{"name":"r","message":"rst"}'))
        conn.abort()
    assert server.get("/healthz").status == 200
    assert server.process.alive()


def test_idle_keep_alive_connection_is_closed_after_the_timeout(start_server):
    server = start_server("--keepalive-timeout", "1")
    with server.connect() as conn:
        conn.send(build_request("GET", "/healthz"))
        assert conn.read_response().status == 200
        time.sleep(0.3)
        conn.send(build_request("GET", "/healthz"))
        assert conn.read_response().status == 200
        started = time.monotonic()
        assert conn.closed_by_server(timeout=5), "idle keep-alive connection not closed"
        assert 0.5 < time.monotonic() - started < 4


def test_requests_per_connection_cap_closes_after_the_last_allowed(start_server):
    server = start_server("--max-requests-per-connection", "3")
    with server.connect() as conn:
        for index in range(3):
            conn.send(build_request("GET", "/healthz"))
            response = conn.read_response()
            assert response.status == 200
            assert response.says_close == (index == 2), response
        assert conn.closed_by_server()


def test_requests_pipelined_past_the_cap_are_not_executed(start_server, database_url, token):
    server = start_server("--max-requests-per-connection", "3")
    raw = b"".join(build_request("POST", "/postchatt", json.dumps({"name": "k", "message": f"{token}-{i}"}).encode())
                   for i in range(5))
    responses, conn = pipeline(server, raw, 5)
    conn.close()
    assert [r.status for r in responses] == [200, 200, 200]
    assert responses[2].says_close
    assert sorted(message_counts(database_url, token)) == [f"{token}-{i}" for i in range(3)]


def test_slow_reader_of_getmaps_does_not_block_others(plain_server):
    # A client that requests /getmaps many times and never reads must not stall anyone else.
    with plain_server.connect() as hog:
        hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        hog.sock.settimeout(1)
        for _ in range(200):
            if not hog.try_send(build_request("GET", "/getmaps")):
                break
        started = time.monotonic()
        assert plain_server.get("/healthz").status == 200
        assert time.monotonic() - started < 2


def test_file_descriptor_exhaustion_neither_crashes_nor_spins(env, database_url):
    if not shutil.which("prlimit"):
        pytest.skip("prlimit not available")
    port = free_port()
    process = ChatterdProcess("prlimit", ["--nofile=64:64", env.binary,
                                          *serve_args(env, port, database_url, None, ["--header-timeout", "30"])])
    server = Endpoint("127.0.0.1", port, None, process)
    idle = []
    try:
        process.wait_listening()
        wait_healthy(server)
        for _ in range(100):
            try:
                idle.append(socket.create_connection((server.host, server.port), timeout=2))
            except OSError:
                break
        time.sleep(0.5)
        cpu_before = process.cpu_seconds()
        time.sleep(3)
        spent = process.cpu_seconds() - cpu_before
        assert process.alive(), process.log()
        assert spent < 0.6, f"server used {spent:.2f}s CPU in 3s while out of file descriptors"
        # Under load, connections close and others take their descriptors, so accepts fail and succeed in turn:
        # still one episode, and one log line.
        for _ in range(6):
            for sock in idle[:8]:
                sock.close()
            del idle[:8]
            for _ in range(16):
                try:
                    idle.append(socket.create_connection((server.host, server.port), timeout=2))
                except OSError:
                    break
            time.sleep(0.6)
        assert process.log().count("accept_failed") == 1, process.log()
        for sock in idle:
            sock.close()
        idle.clear()
        assert wait_until(lambda: _healthy(server), 10), "did not recover once descriptors were free"
    finally:
        for sock in idle:
            sock.close()
        status = process.stop(10)
        assert status == 0, process.log()


def _healthy(server) -> bool:
    try:
        return server.get("/healthz", timeout=2).status == 200
    except (OSError, AssertionError):
        return False


@pytest.mark.parametrize("name", ["plain", "tls"])
def test_idle_server_uses_no_cpu(request, name):
    server = request.getfixturevalue(f"{name}_server")
    with server.connect() as conn:  # one idle keep-alive connection too
        conn.send(build_request("GET", "/healthz"))
        conn.read_response()
        before = server.process.cpu_seconds()
        time.sleep(2)
        spent = server.process.cpu_seconds() - before
    assert spent < 0.2, f"idle server used {spent:.2f}s CPU in 2s"


def test_file_descriptors_return_to_baseline_after_mixed_load(start_server, token):
    server = start_server(tls=True)
    server.get("/getmaps")
    baseline = server.process.fd_count()
    for index in range(150):
        conn = server.connect()
        if index % 3 == 0:
            conn.send(build_request("POST", "/postchatt", json.dumps({"name": "f", "message": token}).encode()))
            conn.read_response()
            conn.close()
        elif index % 3 == 1:
            conn.send(build_request("GET", "/getmaps"))
            conn.abort()
        else:
            conn.send(b"GET /getmaps HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n")
            conn.read_response()
            conn.close()
    assert wait_until(lambda: server.process.fd_count() <= baseline + 2, 5), \
        f"fds: baseline {baseline}, now {server.process.fd_count()}"

"""RELIABILITY.md §6 / API.md: SIGTERM drains in-flight requests, then exits 0; a second signal exits at once."""

from __future__ import annotations

import json
import signal
import socket
import time

from pgsupport import message_counts
from processes import wait_until
from wire import build_request


def refused(endpoint) -> bool:
    try:
        socket.create_connection((endpoint.host, endpoint.port), timeout=1).close()
        return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def open_in_flight(server, bodies: list[bytes]):
    """Connections that each sent a POST's head but not its body; returns once the server holds them all."""
    baseline = server.process.fd_count()
    conns = []
    for body in bodies:
        conn = server.connect()
        conn.send(build_request("POST", "/postchatt", headers=[("Content-Length", str(len(body)))]))
        conns.append(conn)
    assert wait_until(lambda: server.process.fd_count() >= baseline + len(bodies), 5)
    time.sleep(0.2)  # let the server read the heads it has accepted
    return conns


def test_sigterm_finishes_requests_in_flight_then_exits_zero(start_server, database_url, token):
    server = start_server("--drain-timeout", "5")
    bodies = [json.dumps({"name": "d", "message": f"{token}-{i}"}).encode() for i in range(10)]
    conns = open_in_flight(server, bodies)
    server.process.signal(signal.SIGTERM)
    signalled = time.monotonic()
    assert wait_until(lambda: refused(server), 3), "still accepting new connections after SIGTERM"
    for conn, body in zip(conns, bodies):
        conn.send(body)
    responses = [conn.read_response(timeout=10) for conn in conns]
    assert [r.status for r in responses] == [200] * 10, responses
    assert all(r.says_close for r in responses), "responses during drain should say Connection: close"
    status = server.process.wait(timeout=max(0.1, 6 - (time.monotonic() - signalled)))
    assert status == 0, f"exit status {status} (None = still running past the drain deadline)\n{server.process.log()}"
    for conn in conns:
        conn.close()
    stored = message_counts(database_url, token)
    assert stored == {f"{token}-{i}": 1 for i in range(10)}


def test_sigterm_closes_idle_keep_alive_connections_at_once(start_server):
    server = start_server("--drain-timeout", "10")
    with server.connect() as conn:
        conn.send(build_request("GET", "/healthz"))
        assert conn.read_response().status == 200
        server.process.signal(signal.SIGTERM)
        started = time.monotonic()
        assert conn.closed_by_server(timeout=3), "idle keep-alive connection kept open during drain"
        assert server.process.wait(timeout=3) == 0
        assert time.monotonic() - started < 3


def test_drain_deadline_force_closes_stuck_requests_and_exits_zero(start_server):
    server = start_server("--drain-timeout", "2", "--body-timeout", "30")
    conns = open_in_flight(server, [b'{"name":"s","message":"never sent"}'])
    server.process.signal(signal.SIGTERM)
    started = time.monotonic()
    status = server.process.wait(timeout=6)
    elapsed = time.monotonic() - started
    assert status == 0, f"exit status {status}\n{server.process.log()}"
    assert 1.5 < elapsed < 5, f"exited after {elapsed:.1f}s with a 2s drain deadline"
    for conn in conns:
        conn.close()


def test_second_sigterm_exits_at_once(start_server):
    server = start_server("--drain-timeout", "30", "--body-timeout", "30")
    conns = open_in_flight(server, [b'{"name":"s","message":"never sent"}'])
    server.process.signal(signal.SIGTERM)
    assert wait_until(lambda: refused(server), 3)
    assert server.process.alive(), "exited before the in-flight request finished"
    server.process.signal(signal.SIGTERM)
    started = time.monotonic()
    assert server.process.wait(timeout=5) is not None, "second SIGTERM did not stop the server"
    assert time.monotonic() - started < 2
    for conn in conns:
        conn.close()

"""docs/API.md "HTTP and TLS": SIGTERM drains in-flight requests, then exits 0; a second signal exits at once."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from urllib.parse import parse_qsl, urlsplit

import pytest

from pgsupport import message_counts, psql
from processes import ChatterdProcess, free_port, wait_healthy, wait_until
from wire import Endpoint, build_request


def refused(endpoint) -> bool:
    try:
        socket.create_connection((endpoint.host, endpoint.port), timeout=1).close()
        return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def open_connections(server) -> int:
    """The server's own open-connection gauge from /metrics (including the connection asking)."""
    text = server.get("/metrics").body.decode()
    match = re.search(r"^\w*open_connections\w* (\d+)", text, re.M)
    assert match, "no open-connections gauge in /metrics"
    return int(match.group(1))


def open_in_flight(server, bodies: list[bytes]):
    """Connections that each sent a POST's head but not its body; returns once the server holds them all."""
    conns = []
    for body in bodies:
        conn = server.connect()
        conn.send(build_request("POST", "/postchatt", headers=[("Content-Length", str(len(body)))]))
        conns.append(conn)
    assert wait_until(lambda: open_connections(server) >= len(bodies) + 1, 5)
    time.sleep(0.2)  # accepted; give the server a moment to read the heads too
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


def test_sigint_drains_like_sigterm(start_server):
    server = start_server("--drain-timeout", "5")
    with server.connect() as conn:
        conn.send(build_request("GET", "/healthz"))
        assert conn.read_response().status == 200
        server.process.signal(signal.SIGINT)
        assert conn.closed_by_server(timeout=3)
    assert server.process.wait(timeout=5) == 0


def test_migrate_creates_the_schema_and_is_idempotent(env, fresh_database):
    url = fresh_database()
    for _ in range(2):
        done = subprocess.run([env.binary, "migrate", "--database-url", url, "--migrations", str(env.migrations)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    columns = psql(url, "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'chatts';")
    types = dict(line.split("|") for line in columns.splitlines() if line)
    assert types["name"] in ("text", "character varying")
    assert types["message"] in ("text", "character varying")
    assert types["id"] == "uuid"
    assert types["time"] == "timestamp with time zone"
    assert types["geodata"] in ("text", "character varying")


UNREACHABLE = "postgresql:///postgres?host=/nonexistent-e2e&port=5999&user=postgres&connect_timeout=2"


def test_migrate_against_an_unreachable_database_fails_cleanly(env):
    done = subprocess.run([env.binary, "migrate", "--database-url", UNREACHABLE, "--migrations", str(env.migrations)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert done.stderr.strip()


def test_serve_against_an_unreachable_database_never_hangs(env):
    port = free_port()
    args = ["serve", "--host", "127.0.0.1", "--port", str(port), "--plain-http", "--database-url", UNREACHABLE,
            "--migrations", str(env.migrations)]
    process = ChatterdProcess(env.binary, args)
    try:
        status = process.wait(20)
        if status is not None:
            assert status != 0, process.log()
            return
        # Still running: then it must be serving and say it is not ready.
        endpoint = Endpoint("127.0.0.1", port)
        assert process.listening.is_set(), f"neither exited nor listening after 20s:\n{process.log()}"
        assert endpoint.get("/healthz").status == 200
        assert endpoint.get("/readyz", timeout=15).status == 503
    finally:
        process.stop(5)


def _serve_with(env, database_args: list[str], extra_env: dict[str, str]) -> tuple[ChatterdProcess, Endpoint]:
    port = free_port()
    args = ["serve", "--host", "127.0.0.1", "--port", str(port), "--plain-http", *database_args,
            "--migrations", str(env.migrations)]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PG") and k != "DATABASE_URL"}
    process = ChatterdProcess(env.binary, args, {**environment, **extra_env})
    return process, Endpoint("127.0.0.1", port, None, process)


def _conninfo_parts(url: str) -> dict[str, str]:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    return {"host": query.get("host", ""), "port": query.get("port", "5432"), "user": query.get("user", ""),
            "dbname": parts.path.lstrip("/") or "postgres"}


@pytest.mark.parametrize("style", ["pg-environment", "keyword-value"])
def test_database_settings_follow_libpq_conventions(env, database_url, style):
    parts = _conninfo_parts(database_url)
    if style == "pg-environment":
        process, endpoint = _serve_with(env, [], {"PGHOST": parts["host"], "PGPORT": parts["port"],
                                                  "PGUSER": parts["user"], "PGDATABASE": parts["dbname"]})
    else:
        conninfo = " ".join(f"{key}={value}" for key, value in parts.items())
        process, endpoint = _serve_with(env, ["--database-url", conninfo], {})
    try:
        process.wait_listening()
        wait_healthy(endpoint)
        assert endpoint.get("/readyz").status == 200
        assert endpoint.get("/getchatts").status == 200
    finally:
        assert process.stop(10) == 0, process.log()


def test_body_limit_is_configurable(start_server):
    server = start_server("--max-body-bytes", "100")
    body = b'{"name":"a","message":"' + b"m" * 75 + b'"}'
    assert len(body) == 100 and server.request("POST", "/postchatt", body=body).status == 200
    assert server.request("POST", "/postchatt", body=body + b" ").status == 413
    with server.connect() as conn:
        conn.send(b"POST /postchatt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" + body + b" \r\n0\r\n\r\n")
        assert conn.read_response().status == 413


def test_concurrent_migrations_on_a_fresh_database_apply_once(env, fresh_database):
    url = fresh_database()
    command = [env.binary, "migrate", "--database-url", url, "--migrations", str(env.migrations)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(4)]
    outputs = [(run.wait(60), run.stdout.read()) for run in runs]
    assert all(status == 0 for status, _ in outputs), outputs
    assert int(psql(url, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'chatts';")) == 1

"""Several chatterd processes on one database, sharing one port with --reuse-port or on
ports of their own, serve the same chatts: a post through one is returned by another at once."""

from __future__ import annotations

import time

from conftest import serve_args
from contract import rows_of, rows_with
from processes import ChatterdProcess, free_port, wait_healthy
from telemetry import parse_logfmt
from wire import Endpoint

NEW_CONNECTIONS = 200
VISIBLE_WITHIN = 2.0  # seconds: "at once" with room for a loaded machine


def start(env, port: int, url: str, *flags) -> Endpoint:
    process = ChatterdProcess(env.binary, serve_args(env, port, url, None, flags))
    endpoint = Endpoint("127.0.0.1", port, None, process)
    try:
        process.wait_listening()
        wait_healthy(endpoint)
    except Exception:
        process.stop(5)
        raise
    return endpoint


def served_request_ids(endpoint: Endpoint) -> set[str]:
    records = [parse_logfmt(line) for line in list(endpoint.process.lines)]
    return {r["request_id"] for r in records if r.get("event") == "request" and r.get("path") == "/healthz"}


def test_processes_share_one_port_with_reuse_port(env, database_url):
    port = free_port()
    first = start(env, port, database_url, "--reuse-port")
    second = None
    try:
        second = start(env, port, database_url, "--reuse-port")
        ids = set()
        for index in range(NEW_CONNECTIONS):  # a new connection each time: the kernel picks a listener per connection
            response = first.get("/healthz", headers=[("X-Request-Id", f"spread-{index}")])
            assert response.status == 200, response
            ids.add(response.header("X-Request-Id"))

        def both_logged() -> bool:
            seen = served_request_ids(first) | served_request_ids(second)
            return {i for i in seen if i.startswith("spread-")} == ids
        deadline = time.monotonic() + 5
        while not both_logged() and time.monotonic() < deadline:
            time.sleep(0.05)
        by_first, by_second = served_request_ids(first), served_request_ids(second)
        assert by_first | by_second >= ids, "some requests left no access line"
        assert not by_first & by_second, "a request was logged by both processes"
        print(f"\n{NEW_CONNECTIONS} connections: {len(by_first & ids)} served by one process, "
              f"{len(by_second & ids)} by the other")
        assert by_first & ids and by_second & ids, "SO_REUSEPORT did not spread connections over both processes"
    finally:
        for endpoint in (first, second):
            if endpoint:
                assert endpoint.process.stop() == 0, endpoint.process.log()


def test_a_second_process_without_reuse_port_cannot_bind(env, database_url):
    port = free_port()
    first = start(env, port, database_url)
    try:
        for flags in ([], ["--reuse-port"]):
            second = ChatterdProcess(env.binary, serve_args(env, port, database_url, None, flags))
            status = second.wait(30)
            second.reader.join(2)
            assert status == 1, f"second process with {flags} did not fail: {status}\n{second.log()}"
            fatal = [parse_logfmt(line) for line in second.lines if "event=fatal" in line]
            assert fatal and "Address already in use" in fatal[0]["cause"], second.log()
            assert "--reuse-port" in fatal[0]["cause"], "the message should name the way to share a port"
        assert first.get("/healthz").status == 200
    finally:
        assert first.process.stop() == 0


def test_a_chatt_posted_through_one_process_is_returned_by_the_other(env, database_url, token):
    one = start(env, free_port(), database_url)
    other = None
    try:
        other = start(env, free_port(), database_url)
        # Both processes have read (and cached) the feed before the posts.
        for endpoint in (one, other):
            rows_of(endpoint, "/getmaps")
            rows_of(endpoint, "/getchatts")
        delays = []
        for index in range(6):
            writer, reader = (one, other) if index % 2 == 0 else (other, one)
            message = f"{token}-{index}"
            posted = writer.post_json("/postmaps", {"name": "scale", "message": message,
                                                    "geodata": "[42.29,-83.71,\"North\",\"walking\"]"})
            assert posted.status == 200, posted
            acknowledged = time.monotonic()
            path = "/getmaps" if index % 4 < 2 else "/getchatts"
            while not rows_with(rows_of(reader, path)[1], message):
                assert time.monotonic() - acknowledged < VISIBLE_WITHIN, f"{message} not on the other process's {path}"
                time.sleep(0.01)
            delays.append(time.monotonic() - acknowledged)
        print(f"\ndelay until the other process returned the chatt (s): {', '.join(f'{d:.3f}' for d in delays)}")
    finally:
        for endpoint in (one, other):
            if endpoint:
                assert endpoint.process.stop() == 0, endpoint.process.log()


def test_with_strict_feeds_the_other_process_returns_a_post_on_its_very_next_read(env, database_url, token):
    """--strict-feeds trades the notification window for a version query per read: no read after a 200
    misses that chatt, whichever process it goes to."""
    one = start(env, free_port(), database_url, "--strict-feeds")
    other = None
    try:
        other = start(env, free_port(), database_url, "--strict-feeds")
        for endpoint in (one, other):
            rows_of(endpoint, "/getmaps")
        for index in range(30):
            writer, reader = (one, other) if index % 2 == 0 else (other, one)
            message = f"{token}-strict-{index}"
            posted = writer.post_json("/postchatt", {"name": "strict", "message": message})
            assert posted.status == 200, posted
            assert rows_with(rows_of(reader, "/getchatts" if index % 3 else "/getmaps")[1], message), \
                f"{message} missing from the other process's next read"
    finally:
        for endpoint in (one, other):
            if endpoint:
                assert endpoint.process.stop() == 0, endpoint.process.log()

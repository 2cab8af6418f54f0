"""HTTP/2 clients that stall on purpose, against a real chatterd: a response held back by a flow-control window
that never opens, a request body trickled a byte at a time, connections whose streams all wait on their client
at a small connection cap, and more unfinished request bodies than a connection may hold. Every stream makes
progress or goes, and nobody else waits for it."""

from __future__ import annotations

import subprocess
import time
from contextlib import contextmanager

from h2wire import ErrorCodes, SettingCodes
from procfs import rss_kb
from telemetry import metric, parse_exposition


def scrape(endpoint) -> dict:
    _, samples = parse_exposition(endpoint.get("/metrics").body.decode())
    return samples


def stalled_getmaps(endpoint):
    """An HTTP/2 connection whose /getmaps stream got its headers and can never get a byte of its body: the
    client grants no stream window at all."""
    conn = endpoint.connect(settings={SettingCodes.INITIAL_WINDOW_SIZE: 0})
    stream_id = conn.send_request("GET", "/getmaps")
    assert conn.wait_for(lambda: conn.streams[stream_id].fields is not None, 5), "no response headers"
    assert conn.streams[stream_id].response().status == 200
    assert not conn.streams[stream_id].body
    return conn, stream_id


def test_a_response_a_shut_window_holds_back_is_reset_and_its_connection_closed(start_server):
    server = start_server("--send-timeout", "2", tls=True, h2=True)
    before = scrape(server)
    conn, stream_id = stalled_getmaps(server)
    with conn:
        started = time.monotonic()
        assert conn.wait_for(lambda: conn.streams[stream_id].reset is not None, 6), "the stream was never reset"
        reset_after = time.monotonic() - started
        assert conn.streams[stream_id].reset == ErrorCodes.CANCEL
        assert 1.5 <= reset_after <= 4, f"reset after {reset_after:.1f}s with --send-timeout 2"
        assert conn.wait_for(lambda: conn.goaways, 2), "nothing else moved, yet the connection stayed"
        assert conn.goaways[0][0] == ErrorCodes.NO_ERROR
        # It lingers (5 s at most) for the client to read the GOAWAY, then closes.
        assert conn.closed_by_server(8)
    after = scrape(server)
    assert metric(after, "chatterd_connections_closed_total", reason="send_stalled") == (
        metric(before, "chatterd_connections_closed_total", reason="send_stalled") or 0) + 1
    assert server.get("/healthz").status == 200


def test_a_request_body_trickled_over_http2_is_cut_at_the_rate_floor(start_server):
    # Idle gaps of 1 s never reach the 10 s body timeout; the 500 bytes/s floor over 5 s ends it.
    server = start_server(tls=True, h2=True)
    with server.connect() as conn:
        stream_id = conn.send_request("POST", "/postchatt", headers=[("content-type", "application/json"),
                                                                     ("content-length", "200")], end_stream=False)
        started = time.monotonic()
        while not conn.streams[stream_id].done and time.monotonic() - started < 12:
            conn.send_body(stream_id, b" ", end_stream=False)
            try:
                conn.pump(time.monotonic() + 1)
            except TimeoutError:
                pass
        elapsed = time.monotonic() - started
        response = conn.response(stream_id, timeout=2)
        assert response.status == 408 and response.json() == {"error": "request too slow"}
        assert elapsed < 8, f"the trickle went on for {elapsed:.1f}s"
        # Nothing else moved on the connection: it follows, as an HTTP/1.1 connection does after a 408.
        assert conn.wait_for(lambda: conn.goaways, 2) and conn.goaways[0][0] == ErrorCodes.NO_ERROR
        assert conn.closed_by_server(8)
    assert server.get("/healthz").status == 200


def test_connections_whose_streams_all_wait_on_their_clients_make_room_for_others(start_server):
    server = start_server("--max-connections", "4", "--send-timeout", "60", tls=True, h2=True)
    before = scrape(server)
    stalled = [stalled_getmaps(server) for _ in range(4)]
    try:
        time.sleep(1.2)  # past the grace period: each waits on its client
        started = time.monotonic()
        assert server.get("/healthz", timeout=6).status == 200
        waited = time.monotonic() - started
        assert waited < 4, f"a fifth client waited {waited:.1f}s behind four stalled connections"
    finally:
        for conn, _ in stalled:
            conn.close()
    after = scrape(server)
    assert metric(after, "chatterd_connections_shed_total") > (metric(before, "chatterd_connections_shed_total") or 0)


def test_a_connection_at_the_handler_is_not_shed_for_a_stalled_stream_beside_it(start_server, database_url):
    # A stream whose request the server is still working on keeps the connection, however its others stall:
    # here a post waits on a table another session has locked while /getmaps waits on a shut window. The idle
    # connection beside it is the one shed for a waiting client.
    server = start_server("--max-connections", "2", "--send-timeout", "60", tls=True, h2=True)
    conn, _ = stalled_getmaps(server)
    with conn:
        with table_locked(database_url):
            post = conn.send_request("POST", "/postchatt", body=b'{"name":"a","message":"held"}',
                                     headers=[("content-type", "application/json")])
            time.sleep(1.2)
            idle = server.connect()
            assert server.get("/healthz", timeout=6).status == 200, "nobody could be shed for the waiting client"
            assert idle.closed_by_server(1), "the idle connection was not the one shed"
            conn.quiet_for(0.3)
            assert not conn.eof, "the connection with a request at the handler was shed"
        conn.grant(100, post)  # its answer needs a window too
        assert conn.response(post, timeout=10).status == 200


@contextmanager
def table_locked(url: str):
    """`chatts` locked against writes by another session until the block ends."""
    locker = subprocess.Popen(["psql", "-X", "-q", url], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        locker.stdin.write("BEGIN; LOCK TABLE chatts IN ACCESS EXCLUSIVE MODE; SELECT 1;\n")
        locker.stdin.flush()
        time.sleep(0.5)
        yield
    finally:
        locker.stdin.close()  # psql exits; the transaction rolls back
        locker.wait(10)


def test_unfinished_bodies_past_a_connections_budget_are_refused_and_cost_no_memory(start_server):
    # Five connections try to hold 100 unfinished 60 KB bodies each (30 MB in all); each may hold four
    # bodies' worth (4 x 64 KiB), and the streams past that are refused for the client to send again.
    server = start_server(tls=True, h2=True)
    before = rss_kb(server.process.pid)
    conns = []
    refused = held = 0
    try:
        for _ in range(5):
            conn = server.connect(timeout=20)
            conns.append(conn)
            for _ in range(100):
                stream_id = conn.send_request("POST", "/postchatt", headers=[("content-type", "application/json"),
                                                                             ("content-length", "60000")],
                                              end_stream=False)
                conn.send_body(stream_id, b" " * 59_999, end_stream=False)
            conn.quiet_for(0.5)
            resets = [s.reset for s in conn.streams.values()]
            refused += sum(code == ErrorCodes.REFUSED_STREAM for code in resets)
            held += sum(code is None for code in resets)
            assert all(code in (None, ErrorCodes.REFUSED_STREAM) for code in resets), resets
        growth_mb = (rss_kb(server.process.pid) - before) / 1024
        assert held <= 5 * 4, f"{held} unfinished bodies held on 5 connections"
        assert refused >= 5 * 95
        assert growth_mb < 12, f"RSS grew {growth_mb:.0f} MB holding unfinished bodies"
        # The held ones are still served once they end.
        conn = conns[0]
        open_streams = [s.stream_id for s in conn.streams.values() if s.reset is None]
        for stream_id in open_streams:
            conn.send_body(stream_id, b" ", end_stream=True)
        for stream_id in open_streams:
            assert conn.response(stream_id).status == 422  # 60 KB of spaces is no chatt
    finally:
        for conn in conns:
            conn.close()
    assert server.get("/healthz").status == 200

"""The live feed streams across processes and under limits (docs/API.md), each on chatterd processes of
its own: two processes on one database, a restart with chatts committed by psql while chatterd is down, a store
that went back (its last ticks lost, as a restore or a lossy failover leaves it), SIGTERM with streams open,
heartbeats, a subscriber that stops reading (cut, memory bounded, the others unharmed), and streams under
--max-connections and --keepalive-timeout. The shared servers' streams are test_streams.py's."""

from __future__ import annotations

import signal
import time

import pytest

from h2wire import ErrorCodes, SettingCodes, over_h2
from pgsupport import psql
from processes import wait_until
from procfs import rss_kb
from sse import subscribe
from streamsupport import check_events_are_feed_rows, log_ids, messages, post, post_many, settled_position
from telemetry import metric, parse_exposition
from wire import build_request


def subscribers(endpoint) -> float | None:
    _, samples = parse_exposition(endpoint.get("/metrics").body.decode())
    return metric(samples, "chatterd_stream_subscribers")


# --- 5. two processes on one database ----------------------------------------------------------------------

def test_subscribers_of_two_processes_see_every_chatt_once_in_the_same_order(start_server, database_url, token):
    one, other = start_server(), start_server()
    position = settled_position(one, database_url)
    settled_position(other, database_url)
    sent = [f"{token}-{i}" for i in range(12)]
    with subscribe(one, "/getmaps/stream", position) as first, subscribe(other, "/getmaps/stream", position) as second:
        for index, message in enumerate(sent):
            post(one if index % 2 else other, message, geodata=index % 3 != 0)
        for sub in (first, second):
            sub.wait_events(len(sent))
        assert messages(first.events) == messages(second.events), "the processes disagree on the order"
        assert sorted(messages(first.events)) == sorted(sent), "a chatt missing or twice"
        assert first.ids == second.ids == log_ids(database_url, position)
        assert [e.raw for e in first.events] == [e.raw for e in second.events]
        check_events_are_feed_rows(first.events, one, "maps")
        # Nothing more: a sentinel through one is the next event on both.
        post(one, f"{token}-sentinel")
        for sub in (first, second):
            sub.wait_events(len(sent) + 1)
            assert messages(sub.events)[-1] == f"{token}-sentinel" and len(sub.events) == len(sent) + 1
    for endpoint in (one, other):
        assert endpoint.process.stop() == 0, endpoint.process.log()


# --- 6. a restart ------------------------------------------------------------------------------------------

def test_resuming_after_a_restart_gives_exactly_what_was_committed_meanwhile(start_server, database_url, token):
    before = start_server()
    position = settled_position(before, database_url)
    with subscribe(before, "/getchatts/stream", position) as sub:
        post(before, f"{token}-before-0")
        post(before, f"{token}-before-1", geodata=False)
        sub.wait_events(2)
        assert before.process.stop() == 0, before.process.log()
        assert sub.wait_end(5) and sub.ended, "the stream did not end with the process"
        seen = list(sub.events)
    assert messages(seen) == [f"{token}-before-0", f"{token}-before-1"]
    assert [e.id for e in seen] == log_ids(database_url, position)
    # While no chatterd runs on it (the shared servers do not post): three commits, one with two rows.
    psql(database_url, f"INSERT INTO chatts (name, message) VALUES ('psql', '{token}-down-0');"
                       f"BEGIN; INSERT INTO chatts (name, message, geodata) VALUES ('psql', '{token}-down-1', "
                       f"'[1,2,\"N\",\"s\"]'), ('psql', '{token}-down-2', NULL); COMMIT;")
    after = start_server()
    with subscribe(after, "/getchatts/stream", seen[-1].id) as sub:
        events = sub.wait_events(3)
        assert messages(events) == [f"{token}-down-{i}" for i in range(3)]
        assert [e.id for e in events] == log_ids(database_url, seen[-1].id)
        post(after, f"{token}-after")
        events = sub.wait_events(4)
        assert messages(events)[3:] == [f"{token}-after"] and [e.id for e in events] == log_ids(database_url, seen[-1].id)
        check_events_are_feed_rows(events, after, "chatts")
    assert after.process.stop() == 0


# --- 6b. a store that went back ----------------------------------------------------------------------------

def test_a_store_that_lost_its_last_ticks_resets_its_subscribers_instead_of_skipping(start_server, fresh_database,
                                                                                     token):
    url = fresh_database()
    server = start_server(url=url)
    position = settled_position(server, url)
    with subscribe(server, "/getchatts/stream", position) as live:
        post(server, f"{token}-kept")
        live.wait_events(1)  # its tick made: the next post's is another
        post(server, f"{token}-lost")
        events = live.wait_events(2)
        # As a restore from a backup taken before the second post's tick, or a promotion that lost it, leaves the
        # store: that tick gone, its chatt still there (its commit survived), the next tick made under its number.
        lost = events[1].id.rsplit(".", 1)[0]
        tick = lost.split(".")[0]
        psql(url, "DELETE FROM chatts_ticks WHERE tick >= :'tick';", {"tick": tick})
        post(server, f"{token}-after")
        assert live.wait_end(10), "the subscriber was not reset"
        assert [e.event for e in live.events[2:]] == ["reset"] and live.ended
    assert not psql(url, "SELECT 1 FROM chatts_ticks WHERE tick || '.' || to_hex(token) = :'lost';",
                    {"lost": lost}).strip(), "the tick number was made again under another token"
    # A client holding a position of the lost tick is reset too; one from before it resumes exactly.
    with subscribe(server, "/getchatts/stream", events[1].id) as stale:
        assert stale.wait_end(10) and [e.event for e in stale.events] == ["reset"]
    with subscribe(server, "/getchatts/stream", events[0].id) as earlier:
        resumed = earlier.wait_events(2)
        assert sorted(messages(resumed)) == [f"{token}-after", f"{token}-lost"]
        assert [e.id for e in resumed] == log_ids(url, events[0].id)
    assert server.process.stop() == 0


# --- 7. SIGTERM with streams open --------------------------------------------------------------------------

@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls+h2"])
def test_sigterm_ends_every_stream_cleanly_and_the_process_exits_0(start_server, certs, database_url, tls, token):
    server = start_server("--drain-timeout", "5", tls=tls)
    position = settled_position(server, database_url)
    subs = [subscribe(server, "/getmaps/stream", position), subscribe(server, "/getchatts/stream", position)]
    if tls:
        subs.append(subscribe(over_h2(server, certs.cert), "/getmaps/stream", position))
    try:
        for index in range(3):
            post(server, f"{token}-{index}")
        for sub in subs:
            assert messages(sub.wait_events(3)) == [f"{token}-{i}" for i in range(3)]
        started = time.monotonic()
        server.process.signal(signal.SIGTERM)
        for sub in subs:
            assert sub.wait_end(8), "a stream outlived SIGTERM"
            assert time.monotonic() - started < 5, "streams ended after the drain deadline"
            assert sub.ended and sub.reset is None and not sub.closed, (sub.ended, sub.reset, sub.closed)
            assert len(sub.events) == 3 and not sub.parser.partial, "the stream did not end on a whole event"
            if hasattr(sub, "raw"):
                assert bytes(sub.raw).endswith(b"\n\n\r\n0\r\n\r\n"), bytes(sub.raw)[-40:]
        assert server.process.wait(10) == 0, server.process.log()
        assert time.monotonic() - started < 8
    finally:
        for sub in subs:
            sub.close()


# --- 8. heartbeats -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("h2", [False, True], ids=["http1", "h2"])
def test_a_quiet_stream_gets_a_comment_at_least_every_heartbeat(start_server, h2):
    server = start_server("--stream-heartbeat", "1", tls=h2, h2=h2)
    with subscribe(server, "/getchatts/stream") as sub:
        opened = time.monotonic()
        sub.quiet(4.2)
        times = [opened] + [at for at, _ in sub.comments]
        gaps = [later - earlier for earlier, later in zip(times, times[1:])]
        assert len(sub.comments) >= 3, f"{len(sub.comments)} heartbeats in 4 s"
        assert all(text == "" for _, text in sub.comments), "a heartbeat is the line `:`"
        assert max(gaps) < 2.0, f"gaps between heartbeats: {gaps}"
        assert sub.events == [] and not sub.done
        if not h2:
            assert b":\n" in bytes(sub.raw)


# --- 9. a subscriber that does not read --------------------------------------------------------------------

LONG = "x" * 200


@pytest.mark.parametrize("h2", [False, True], ids=["http1", "h2"])
def test_a_subscriber_that_does_not_read_is_cut_and_costs_nothing(start_server, certs, database_url, h2, token):
    server = start_server("--stream-max-unsent-bytes", "4096", "--send-timeout", "60", tls=h2)
    position = settled_position(server, database_url)
    reader = subscribe(server, "/getmaps/stream", position)
    if h2:
        # A one-byte stream window never opened again, and no DATA acknowledged.
        conn = over_h2(server, certs.cert).connect(auto_ack=False, settings={SettingCodes.INITIAL_WINDOW_SIZE: 1})
        stuck = subscribe(over_h2(server, certs.cert), "/getmaps/stream", position, conn=conn)
    else:
        stuck = subscribe(server, "/getmaps/stream", position, rcvbuf=1024)
    try:
        assert stuck.response.status == 200 and reader.response.status == 200
        assert wait_until(lambda: subscribers(server) == 2, 5)
        rss_before = rss_kb(server.process.pid)
        # About 150 KB of events: more than the stuck subscriber's connection queues (64 KiB) and its socket holds.
        # The reader reads every 10 events (about 3.4 KB), so that it never falls as far behind as the bound,
        # however late the server gets to write them.
        sent = [f"{token}-{i}-{LONG}" for i in range(450)]
        for start in range(0, 450, 10):
            post_many(server, sent[start:start + 10])
            reader.wait_events(start + 10, 20)
        started = time.monotonic()
        assert messages(reader.wait_events(450, 20)) == sent, "the reading subscriber missed events"
        assert reader.ids == log_ids(database_url, position)
        assert wait_until(lambda: subscribers(server) == 1, 10), "the stuck subscriber was never cut"
        if h2:
            assert stuck.wait_for(lambda: stuck.reset is not None, 10)
            assert stuck.reset == ErrorCodes.CANCEL and not stuck.ended
            assert time.monotonic() - started < 10, "reset by the send deadline, not for falling behind"
            # Only the stream goes: the connection serves another (given a window for its answer).
            probe = conn.send_request("GET", "/healthz")
            conn.grant(1000, probe)
            assert conn.response(probe).json() == {"status": "ok"}
        else:
            assert stuck.wait_end(10), "the connection of the stuck subscriber stayed open"
            assert stuck.closed and not stuck.ended, "cut, not ended cleanly"
            assert len(stuck.events) < 450
            assert [e.id for e in stuck.events] == log_ids(database_url, position)[:len(stuck.events)], "a gap"
        grown = rss_kb(server.process.pid) - rss_before
        assert grown < 6 * 1024, f"RSS grew by {grown} KiB"
        assert not reader.done
    finally:
        stuck.close()
        reader.close()
        if h2:
            conn.close()


# --- 11. limits --------------------------------------------------------------------------------------------

def test_streams_count_under_max_connections_and_outlive_the_keepalive_timeout(start_server, database_url, token):
    server = start_server("--max-connections", "2", "--keepalive-timeout", "1", "--stream-heartbeat", "1")
    position = settled_position(server, database_url)
    streams = [subscribe(server, "/getmaps/stream", position), subscribe(server, "/getchatts/stream", position)]
    try:
        waiting = server.connect(timeout=10)
        waiting.send(build_request("GET", "/healthz"))
        opened = time.monotonic()
        with pytest.raises(TimeoutError):
            waiting.read_response(timeout=3)  # both slots are the streams', and flowing streams are never shed
        for sub in streams:
            sub.quiet(0.1)
            assert not sub.done and len(sub.comments) >= 2, "heartbeats did not flow"
        assert time.monotonic() - opened > 3, "streams outlived three keep-alive timeouts"
        # A chatt committed meanwhile (by psql: no slot for a post) comes on both.
        psql(database_url, f"INSERT INTO chatts (name, message) VALUES ('psql', '{token}-capped');")
        for sub in streams:
            assert messages(sub.wait_events(1)) == [f"{token}-capped"]
            assert sub.ids == log_ids(database_url, position)
        streams[0].close()
        response = waiting.read_response(timeout=10)
        assert response.status == 200, response
        waiting.close()
        assert not streams[1].done
    finally:
        for sub in streams:
            sub.close()
    assert server.get("/healthz").status == 200

"""The live feed streams, `GET /getmaps/stream` and `GET /getchatts/stream` (docs/API.md), on the shared
servers over HTTP/1.1 (plain and TLS) and HTTP/2: the head, each event's bytes against the feed's row, resuming
from a feed's `Feed-Position` and from an event's id (no gap, no duplicate, commit order even when a psql
transaction commits after a later post), the reset for a position from before an edit, and the requests refused.
Every event's id is checked against the store's own change log (`log_ids`).
Processes started, stopped and limited are test_streams_lifecycle.py's.

"Exactly" is checked by a sentinel: a last chatt is posted and waited for, and the events up to it must be the
expected ones and no others."""

from __future__ import annotations

import pytest

from contract import error_reason
from h2wire import H2Endpoint
from pgsupport import psql
from sse import subscribe
from streamsupport import (PsqlSession, check_events_are_feed_rows, kind_of, log_ids, messages, parse_position, post,
                           settled_position, store_position)
from wire import build_request

PATHS = ["/getmaps/stream", "/getchatts/stream", "/getmaps/stream/", "/getchatts/stream/"]


@pytest.fixture(params=["plain", "tls", "h2"])
def stream_server(request):
    """HTTP/1.1 plain, HTTP/1.1 over TLS, HTTP/2 over TLS: the shared servers."""
    return request.getfixturevalue(f"{request.param}_server")


def is_h2(endpoint) -> bool:
    return isinstance(endpoint, H2Endpoint)


def finish_with_sentinel(sub, endpoint, token: str, expected: list[str]) -> list:
    """Posts a sentinel, reads up to it, and asserts the messages up to it are exactly `expected` then it."""
    sentinel = f"{token}-sentinel"
    post(endpoint, sentinel)
    assert sub.wait_for(lambda: sentinel in messages(sub.events), 10), \
        f"sentinel never came; got {messages(sub.events)}"
    assert messages(sub.events) == expected + [sentinel]
    return sub.events


# --- 1. the head and the bytes of each event ---------------------------------------------------------------

@pytest.mark.parametrize("path", PATHS)
def test_a_stream_is_200_event_stream_and_each_event_is_the_feeds_row(stream_server, database_url, path, token):
    position = settled_position(stream_server, database_url)
    with subscribe(stream_server, path) as sub:
        head = sub.response
        assert head.status == 200, head
        assert head.header("Content-Type") == "text/event-stream"
        assert head.header("Cache-Control") == "no-store"
        assert head.header("Content-Length") is None, head
        if not is_h2(stream_server):
            assert head.version == "HTTP/1.1" and head.headers_named("Transfer-Encoding") == ["chunked"], head
        assert sub.events == [] and not sub.done
        sent = [f"{token}-maps", f"{token}-plain", f'{token}-"quoted"\\ \u00e9\U0001F600 </script>']
        post(stream_server, sent[0])
        post(stream_server, sent[1], geodata=False)
        post(stream_server, sent[2])
        events = sub.wait_events(3)
        assert messages(events) == sent
        assert [e.id for e in events] == log_ids(database_url, position)
        assert all(parse_position(e.id)[2] < 2**63 - 1 for e in events), "an event names its chatt within its tick"
        check_events_are_feed_rows(events, stream_server, kind_of(path))
        assert events[1].row[4:] in ([None], []), "a chatt posted without geodata has none"
        finish_with_sentinel(sub, stream_server, token, sent)
        assert not sub.parser.partial and not sub.done


def test_an_http10_stream_runs_to_the_close_without_chunks(plain_server, database_url, token):
    position = settled_position(plain_server, database_url)
    with subscribe(plain_server, "/getchatts/stream", last_event_id=position,
                   version="HTTP/1.0") as sub:
        assert sub.response.status == 200 and sub.response.says_close, sub.response
        assert sub.response.header("Transfer-Encoding") is None and sub.response.header("Content-Length") is None
        post(plain_server, f"{token}-old-client")
        events = finish_with_sentinel(sub, plain_server, token, [f"{token}-old-client"])
        assert [e.id for e in events] == log_ids(database_url, position)
        check_events_are_feed_rows(events, plain_server, "chatts")


# --- 2. snapshot, then resume from its Feed-Position ----------------------------------------------------

@pytest.mark.parametrize("path", ["/getmaps/stream", "/getchatts/stream"])
def test_resuming_from_a_feeds_position_gives_exactly_the_later_chatts_then_live_ones(
        stream_server, database_url, path, token):
    position = settled_position(stream_server, database_url)
    before = [f"{token}-before-{i}" for i in range(3)]
    for message in before:
        post(stream_server, message)
    with subscribe(stream_server, path, last_event_id=position) as sub:
        assert sub.response.status == 200
        events = sub.wait_events(3)
        assert messages(events) == before
        assert [e.id for e in events] == log_ids(database_url, position)
        live = [f"{token}-live-{i}" for i in range(2)]
        for message in live:
            post(stream_server, message)
        events = finish_with_sentinel(sub, stream_server, token, before + live)
        assert [e.id for e in events] == log_ids(database_url, position)
        check_events_are_feed_rows(events, stream_server, kind_of(path))


# --- 3. drop, post, resume from the last id ---------------------------------------------------------------

def test_a_dropped_stream_resumes_from_its_last_id_with_no_gap_and_no_duplicate(stream_server, database_url, token):
    position = settled_position(stream_server, database_url)
    sent = [f"{token}-{i}" for i in range(8)]
    with subscribe(stream_server, "/getmaps/stream", last_event_id=position) as sub:
        for message in sent[:3]:
            post(stream_server, message)
        sub.wait_events(2)
        seen = list(sub.events)  # two or three, whatever had come
    for message in sent[3:]:
        post(stream_server, message)
    with subscribe(stream_server, "/getmaps/stream", last_event_id=seen[-1].id) as sub:
        events = finish_with_sentinel(sub, stream_server, token, sent[len(seen):])
    assert [e.id for e in seen + events] == log_ids(database_url, position)


# --- 4. commit order, not insert order --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["plain", "h2"])
def test_a_transaction_committed_after_a_later_post_comes_after_it(request, database_url, name, token):
    server = request.getfixturevalue(f"{name}_server")
    position = settled_position(server, database_url)
    with subscribe(server, "/getchatts/stream", last_event_id=position) as sub, PsqlSession(database_url) as session:
        session.run(f"BEGIN; INSERT INTO chatts (name, message) VALUES ('psql', '{token}-psql');")
        post(server, f"{token}-chatterd")
        between = server.get("/getmaps").header("Feed-Position")
        events = sub.wait_events(1)
        assert messages(events) == [f"{token}-chatterd"], "the open transaction held back only its own row"
        assert log_ids(database_url, position) == [events[0].id]
        assert parse_position(events[0].id)[0] == parse_position(between)[0], "the feed shows the post's tick"
        session.run("COMMIT;")
        events = finish_with_sentinel(sub, server, token, [f"{token}-chatterd", f"{token}-psql"])
        assert [e.id for e in events] == log_ids(database_url, position)
        check_events_are_feed_rows(events, server, "chatts")
    with subscribe(server, "/getmaps/stream", last_event_id=between) as resumed:
        events = resumed.wait_events(2)
        assert messages(events) == [f"{token}-psql", f"{token}-sentinel"]
        assert [e.id for e in events] == log_ids(database_url, between)
        check_events_are_feed_rows(events, server, "maps")
        assert events[0].row[4] is None


# --- 10. what is refused, and the reset --------------------------------------------------------------------

MALFORMED = ["abc", "1.", ".1", "1..2", "1.2.3.4", "1.G", "1.2.a", "+1.2", "1 .2", "1. 2", "1.2 3", "0x1.2", "1_2",
             "1234567890123456789.1", "1.1.1234567890123456789", "1.12345678901234567", "1-", "-1-2", "1-2-3"]


@pytest.mark.parametrize("value", MALFORMED)
def test_a_malformed_last_event_id_is_400(stream_server, value):
    with subscribe(stream_server, "/getmaps/stream", last_event_id=value) as sub:
        assert sub.response.status == 400, sub.response
        assert "Last-Event-ID" in error_reason(sub.response)


def test_a_repeated_last_event_id_is_400_even_when_both_agree(stream_server, database_url):
    position = store_position(database_url)
    with subscribe(stream_server, "/getchatts/stream", last_event_id=[position, position]) as sub:
        assert sub.response.status == 400, sub.response
        error_reason(sub.response)


def test_an_empty_last_event_id_starts_at_the_current_end(stream_server, database_url, token):
    settled_position(stream_server, database_url)
    with subscribe(stream_server, "/getmaps/stream", last_event_id="") as sub:
        assert sub.response.status == 200
        post(stream_server, f"{token}-after")
        events = finish_with_sentinel(sub, stream_server, token, [f"{token}-after"])
        assert log_ids(database_url, events[0].id) == [events[1].id]


def test_a_position_from_before_an_edit_gets_one_reset_and_the_stream_ends(stream_server, database_url, token):
    post(stream_server, f"{token}-to-edit")
    old = settled_position(stream_server, database_url)
    live = subscribe(stream_server, "/getmaps/stream", last_event_id=old)
    live_chatts = subscribe(stream_server, "/getchatts/stream")
    try:
        assert live.response.status == 200 and live_chatts.response.status == 200
        # A real one-row edit (a statement-level trigger would bump the epoch even for zero rows).
        assert psql(database_url, "UPDATE chatts SET message = message WHERE message = :'m' RETURNING 1;",
                    {"m": f"{token}-to-edit"}).split() == ["1"]
        assert parse_position(store_position(database_url))[0] > parse_position(old)[0]
        for sub in (live, live_chatts):
            assert sub.wait_end(10), "a live subscriber was not reset"
            assert [(e.event, e.data, e.raw) for e in sub.events] == [("reset", "{}", b"event: reset\ndata: {}\n\n")]
            assert sub.ended and sub.reset is None, "the stream ends cleanly after the reset"
            assert not sub.parser.partial
    finally:
        live.close()
        live_chatts.close()
    with subscribe(stream_server, "/getchatts/stream", last_event_id=old) as sub:
        assert sub.response.status == 200
        assert sub.wait_end(10)
        assert [e.raw for e in sub.events] == [b"event: reset\ndata: {}\n\n"] and sub.ended
    # What a reset client does: refetch the feed and subscribe from its position.
    fresh = settled_position(stream_server, database_url)
    assert parse_position(fresh)[0] > parse_position(old)[0]
    with subscribe(stream_server, "/getmaps/stream", last_event_id=fresh) as sub:
        events = finish_with_sentinel(sub, stream_server, token, [])
        assert [e.id for e in events] == log_ids(database_url, fresh)


def test_a_position_ahead_of_the_store_or_of_another_store_gets_the_reset(stream_server, database_url):
    tick, token, _ = parse_position(store_position(database_url))
    # A tick not made yet; the newest tick under another token, as a store restored from a backup would make it
    # again; and a position of the log before ticks (migrations/0005's).
    for ahead in (f"{tick + 1000}.{token:x}", f"{tick}.{token ^ 1:x}", f"{tick}.{token ^ 1:x}.5", "1-5"):
        with subscribe(stream_server, "/getmaps/stream", last_event_id=ahead) as sub:
            assert sub.response.status == 200
            assert sub.wait_end(10) and sub.ended
            assert [e.raw for e in sub.events] == [b"event: reset\ndata: {}\n\n"]


@pytest.mark.parametrize("path", PATHS)
def test_head_gets_the_stream_headers_only(stream_server, path):
    response = stream_server.request("HEAD", path)
    assert response.status == 200 and response.body == b"", response
    assert response.header("Content-Type") == "text/event-stream"
    assert response.header("Cache-Control") == "no-store"


def test_head_leaves_an_http11_connection_usable(http1_server):
    with http1_server.connect() as conn:
        conn.send(build_request("HEAD", "/getmaps/stream") + build_request("GET", "/healthz"))
        head = conn.read_response(head_request=True)
        assert head.status == 200 and head.header("Content-Type") == "text/event-stream", head
        assert head.headers_named("Transfer-Encoding") in ([], ["chunked"]) and not head.says_close, head
        assert conn.read_response().json() == {"status": "ok"}


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
@pytest.mark.parametrize("path", ["/getmaps/stream", "/getchatts/stream/"])
def test_other_methods_are_405_with_allow(stream_server, path, method):
    response = stream_server.request(method, path, body=b"{}" if method != "DELETE" else None)
    assert response.status == 405, response
    assert response.tokens("Allow") == {"get", "head"}, response
    error_reason(response)


@pytest.mark.parametrize("path", ["/getmaps/streams", "/getmaps/stream//", "/getmaps/stream/x", "/GETMAPS/STREAM",
                                  "/stream", "/getchatts/stream.json"])
def test_near_miss_paths_are_404(stream_server, path):
    response = stream_server.get(path)
    assert response.status == 404, response
    error_reason(response)

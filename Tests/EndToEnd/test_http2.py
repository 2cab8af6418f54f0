"""HTTP/2 (RFC 9113) on the wire with PyPI's `h2` as the client: the same API as HTTP/1.1, flow control,
concurrent streams, stream errors that leave the connection up, limits, h2c with prior knowledge, GOAWAY
on SIGTERM, and what /metrics and the access log say. Every HTTP/2 response anywhere in the suite is also
checked for connection-specific fields (h2wire.check_response_fields)."""

from __future__ import annotations

import gzip
import json
import signal

import hyperframe.frame
import pytest

from contract import error_reason
from h2wire import ErrorCodes, RawH2, SettingCodes, StreamReset
from pgsupport import count_chatts, count_message, message_counts
from processes import wait_until
from telemetry import metric, parse_exposition, wait_for_record

GZIP = [("Accept-Encoding", "gzip, deflate, br")]
# Fields that differ between any two responses.
PER_RESPONSE = {"date", "x-request-id"}


def fields_of(response) -> dict[str, str]:
    return {name.lower(): value for name, value in response.headers if name.lower() not in PER_RESPONSE}


# --- the same API as HTTP/1.1 ---------------------------------------------------------------------------

@pytest.mark.parametrize("headers", [[], GZIP], ids=["identity", "gzip"])
def test_getmaps_sends_the_same_bytes_over_both_protocols_past_the_initial_window(big_feed, headers):
    http11 = big_feed.plain.get("/getmaps", headers=headers)
    assert http11.status == 200, http11
    assert len(big_feed.plain.get("/getmaps").body) > 65_535, "the feed fits in the initial window"
    for endpoint in (big_feed.tls, big_feed.h2, big_feed.h2c):
        response = endpoint.get("/getmaps", headers=headers)
        assert response.status == 200, response
        assert response.body == http11.body, f"{endpoint.port} {response.version}: different bytes"
        assert fields_of(response) == fields_of(http11)
    if headers:
        assert json.loads(gzip.decompress(http11.body)) == big_feed.plain.get("/getmaps").json()


SAME_AS_HTTP11 = {
    "root": ("GET", "/", None, []),
    "getmaps-gzip": ("GET", "/getmaps", None, GZIP),
    "getchatts": ("GET", "/getchatts?limit=2", None, []),
    "healthz": ("GET", "/healthz", None, []),
    "post-422": ("POST", "/postchatt", b"{", []),
    "not-found": ("GET", "/nope", None, []),
    "wrong-method": ("DELETE", "/getmaps", None, []),
    "unknown-method": ("BREW", "/getmaps", None, []),
    "expectation": ("POST", "/postchatt", b"{}", [("Expect", "nothing")]),
    "bad-since": ("GET", "/getmaps?since=0", None, []),
    "unknown-since": ("GET", "/getmaps?since=00000000-0000-0000-0000-000000000000", None, []),
    "head-getmaps": ("HEAD", "/getmaps", None, []),
    "head-not-found": ("HEAD", "/nope", None, []),
    "head-431": ("HEAD", "/getmaps", None, [(f"x-f-{i}", "1") for i in range(101)]),
    "head-417": ("HEAD", "/getmaps", None, [("Expect", "nothing")]),
}


@pytest.mark.parametrize("method, target, body, headers", SAME_AS_HTTP11.values(), ids=SAME_AS_HTTP11.keys())
def test_responses_carry_http11s_status_fields_and_body(big_feed, method, target, body, headers):
    # Against a database nobody posts to while this runs, so feeds and ETags are stable.
    http11 = big_feed.plain.request(method, target, body=body, headers=headers)
    h2 = big_feed.h2.request(method, target, body=body, headers=headers)
    assert (h2.status, h2.body) == (http11.status, http11.body), (h2, http11)
    # "connection" is the one field HTTP/1.1 may add; none is sent over HTTP/2 (checked by h2wire).
    assert fields_of(h2) == {k: v for k, v in fields_of(http11).items() if k != "connection"}
    assert h2.header("date") and h2.header("x-request-id")


def test_head_and_304_carry_the_get_fields_and_no_body_on_one_connection(big_feed):
    zipped = big_feed.plain.get("/getmaps", headers=GZIP)
    with big_feed.h2.connect() as conn:
        for path in ("/", "/getmaps", "/getchatts", "/healthz", "/readyz", "/nope", "/postmaps"):
            get = conn.get(path)
            head = conn.request("HEAD", path)
            assert head.status == get.status and head.body == b"", head
            assert head.header("content-length") == str(len(get.body)), (path, head)
            assert head.header("content-type") == get.header("content-type")
        etag = conn.get("/getmaps").header("etag")
        for condition in (etag, f'"nope", W/{etag}'):
            unchanged = conn.get("/getmaps", headers=[("If-None-Match", condition)])
            assert unchanged.status == 304 and unchanged.body == b"", unchanged
            assert unchanged.header("etag") == etag and "accept-encoding" in unchanged.tokens("vary")
        head = conn.request("HEAD", "/getmaps", headers=GZIP)
        for name in ("etag", "content-encoding", "content-length", "vary"):
            assert head.header(name) == zipped.header(name), name
        conditional = conn.request("HEAD", "/getmaps", headers=GZIP + [("If-None-Match", zipped.header("ETag"))])
        assert conditional.status == 304 and conditional.header("etag") == zipped.header("ETag")
        assert conn.get("/healthz").json() == {"status": "ok"}


# --- streams and flow control ----------------------------------------------------------------------------

def test_a_hundred_concurrent_streams_are_served_and_the_next_is_refused(big_feed):
    body = big_feed.plain.get("/getmaps").body
    with big_feed.h2.connect(timeout=30) as conn:
        # All 101 go out in one write, before the server's SETTINGS are read (so the client does not hold the
        # last back) and before any of the first 100 can be answered and closed.
        fields = conn.request_fields("GET", "/getmaps")
        streams = [conn.send_headers(fields, flush=False) for _ in range(101)]
        conn.flush()
        assert conn.wait_for(lambda: all(conn.streams[s].done for s in streams), 30)
        outcomes = [conn.streams[s] for s in streams]
        refused = [s.stream_id for s in outcomes if s.reset is not None]
        assert refused == [streams[-1]] and outcomes[-1].reset == ErrorCodes.REFUSED_STREAM, refused
        assert all(s.response().status == 200 and s.body == body for s in outcomes[:100])
        assert conn.get("/healthz").status == 200, "a refused stream is a stream error only"


def test_a_one_kibibyte_client_window_is_honoured_exactly_until_window_update(big_feed):
    body = big_feed.plain.get("/getmaps").body
    with big_feed.h2.connect(auto_ack=False, settings={SettingCodes.INITIAL_WINDOW_SIZE: 1024}) as conn:
        stream = conn.streams[conn.send_request("GET", "/getmaps")]
        # What the window allows comes, then nothing more for a while (generous: loopback takes microseconds).
        assert conn.wait_for(lambda: len(stream.body) >= 1024)
        conn.quiet_for(0.5)
        assert len(stream.body) == 1024 and not stream.done
        conn.grant(1000, stream.stream_id)
        assert conn.wait_for(lambda: len(stream.body) >= 2024)
        conn.quiet_for(0.5)
        assert len(stream.body) == 2024 and bytes(stream.body) == body[:2024]
        # The connection's window (64 KiB) is the next limit; open both.
        conn.grant(len(body), stream.stream_id)
        conn.grant(len(body))
        assert conn.response(stream.stream_id).body == body


def test_a_hundred_concurrent_posts_are_each_committed_when_acknowledged(h2_server, database_url, token):
    with h2_server.connect(timeout=30) as conn:
        streams = {conn.send_request("POST", "/postmaps", body=json.dumps({"name": "s", "message": f"{token}-{i}"})
                                     .encode(), headers=[("Content-Type", "application/json")]): f"{token}-{i}"
                   for i in range(100)}
        assert conn.wait_for(lambda: any(conn.streams[s].ended for s in streams), 30)
        first = next(s for s in streams if conn.streams[s].ended)
        assert conn.response(first).status == 200
        assert count_message(database_url, streams[first]) == 1, "a 200 went out before its chatt was committed"
        statuses = [conn.response(s).status for s in streams]
    assert statuses == [200] * 100
    assert message_counts(database_url, token) == {message: 1 for message in streams.values()}


# --- stream errors: the connection goes on ------------------------------------------------------------

def base(method="GET", path="/healthz"):
    return [(":method", method), (":scheme", "https"), (":authority", "localhost"), (":path", path)]


MALFORMED = {  # RFC 9113 §8.1.1, §8.2, §8.3: each a stream error (RST_STREAM PROTOCOL_ERROR)
    "missing-method": (base()[1:], None),
    "missing-path": (base()[:3], None),
    "missing-scheme": ([base()[0]] + base()[2:], None),
    "duplicate-path": (base() + [(":path", "/")], None),
    "duplicate-method": (base() + [(":method", "GET")], None),
    "pseudo-after-regular": (base()[:3] + [("accept", "*/*"), (":path", "/healthz")], None),
    "unknown-pseudo-header": (base() + [(":protocol", "websocket")], None),
    "response-pseudo-header": (base() + [(":status", "200")], None),
    "upper-case-name": (base() + [("Accept", "*/*")], None),
    "connection": (base() + [("connection", "keep-alive")], None),
    "keep-alive": (base() + [("keep-alive", "timeout=5")], None),
    "transfer-encoding": (base("POST", "/postchatt") + [("transfer-encoding", "chunked")], b'{"name":"a","message":"b"}'),
    "te-not-trailers": (base() + [("te", "gzip")], None),
    "content-length-over-data": (base("POST", "/postchatt") + [("content-length", "30")], b'{"name":"a","message":"b"}'),
    "content-length-under-data": (base("POST", "/postchatt") + [("content-length", "5")], b'{"name":"a","message":"b"}'),
}


@pytest.mark.parametrize("fields, body", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_request_is_reset_with_protocol_error_and_the_connection_goes_on(h2_server, database_url,
                                                                                     fields, body):
    before = count_chatts(database_url)
    with h2_server.connect(validate=False) as conn:
        stream = conn.send_headers(fields, end_stream=body is None)
        if body is not None:
            conn.send_body(stream, body)
        with pytest.raises(StreamReset) as reset:
            conn.response(stream)
        assert reset.value.code == ErrorCodes.PROTOCOL_ERROR
        assert conn.get("/healthz").status == 200 and not conn.goaways
    assert count_chatts(database_url) == before


@pytest.mark.parametrize("declared", [True, False], ids=["by-content-length", "by-summed-data"])
def test_a_body_over_the_limit_is_413_then_rst_stream_no_error(h2_server, database_url, declared):
    before = count_chatts(database_url)
    # Much more than the limit, so the client is still sending when the 413 comes.
    body = b'{"name":"a","message":"' + b"m" * (1 << 20) + b'"}'
    with h2_server.connect() as conn:
        fields = conn.request_fields("POST", "/postchatt")
        if declared:
            fields.append(("content-length", str(len(body))))
        stream = conn.send_headers(fields, end_stream=False)
        sent = conn.send_body(stream, body)
        conn.wait_for(lambda: conn.streams[stream].reset is not None)
        response = conn.response(stream)
        assert response.status == 413 and error_reason(response), response
        assert conn.streams[stream].reset == ErrorCodes.NO_ERROR
        assert sent < len(body), "the server let the whole oversized body in"
        assert conn.get("/healthz").status == 200 and not conn.goaways
    assert count_chatts(database_url) == before


def test_a_header_list_over_16_kib_is_431_and_just_under_is_served(h2_server):
    with h2_server.connect() as conn:
        # 16 KiB counted as HTTP/1.1 counts its header section: each field as "name: value" and CRLF.
        over = conn.get("/healthz", headers=[(f"x-pad-{i:02d}", "p" * 1000) for i in range(17)])
        assert over.status == 431 and error_reason(over), over
        under = conn.get("/healthz", headers=[(f"x-pad-{i:02d}", "p" * 1000) for i in range(15)])
        assert under.status == 200, under


# --- h2c with prior knowledge --------------------------------------------------------------------------

def test_h2c_with_prior_knowledge_and_http11_share_the_plain_listener(h2c_server, plain_server, token):
    assert h2c_server.post_json("/postchatt", {"name": "c", "message": token}).json() == {}
    rows = h2c_server.get("/getchatts").json()
    assert [row[1] for row in rows if row[1] == token] == [token]
    http11 = plain_server.get("/getchatts")
    assert http11.status == 200 and http11.version == "HTTP/1.1" and http11.json() == rows
    record = wait_for_record(plain_server.process, "logfmt", lambda r: r.get("event") == "request"
                             and r.get("path") == "/postchatt" and r.get("proto") == "HTTP/2")
    assert record["status"] == "200"


@pytest.mark.parametrize("name", ["h2", "h2c"])
def test_a_connection_written_one_byte_at_a_time_is_served(request, name):
    endpoint = request.getfixturevalue(f"{name}_server")
    with endpoint.connect(write_size=1) as conn:
        response = conn.request("POST", "/postchatt", body=b'{"name":"b","message":"bytewise"}')
    assert response.status == 200, response


def test_a_plain_connection_that_only_starts_like_the_preface_is_http11(plain_server):
    with plain_server.connect() as conn:
        conn.send(b"PRI * HTTP/1.1\r\nHost: x\r\n\r\n")
        response = conn.read_response()
        assert response.status in (400, 405, 501), response
    assert plain_server.get("/healthz").status == 200


# --- observability ----------------------------------------------------------------------------------------

def scrape(endpoint):
    _, samples = parse_exposition(endpoint.get("/metrics").body.decode())
    return samples


def test_metrics_and_access_lines_show_protocol_streams_and_goaways(start_server, certs):
    server = start_server("--keepalive-timeout", "1", tls=True, h2=True)
    before = scrape(server)
    with server.connect() as conn:
        held = [conn.send_request("POST", "/postchatt", headers=[("content-length", "40")]) for _ in range(3)]
        assert conn.get("/healthz", headers=[("X-Request-Id", "e2e-h2-line")]).status == 200
        during = scrape(server)
        assert metric(during, "chatterd_http2_connections_open") >= 2  # this one and the scrape's
        assert metric(during, "chatterd_http2_streams_open") >= 3
        for stream in held:
            conn.reset(stream)
        # Idle for the keep-alive timeout: GOAWAY NO_ERROR, then the server closes.
        assert conn.wait_for(lambda: conn.goaways, 5), "no GOAWAY on an idle connection"
        assert conn.goaways[0][0] == ErrorCodes.NO_ERROR
        assert conn.closed_by_server(5)
    after = scrape(server)

    def delta(name, **labels):
        return (metric(after, name, **labels) or 0) - (metric(before, name, **labels) or 0)

    assert delta("chatterd_requests_by_protocol_total", protocol="HTTP/2") == 3  # healthz and two scrapes
    assert delta("chatterd_http2_goaways_sent_total", reason="NO_ERROR") >= 1
    assert wait_until(lambda: metric(scrape(server), "chatterd_http2_streams_open") <= 1, 5), "streams left open"
    line = wait_for_record(server.process, "logfmt", lambda r: r.get("request_id") == "e2e-h2-line")
    assert (line["proto"], line["path"], line["status"]) == ("HTTP/2", "/healthz", "200")


# --- GOAWAY on SIGTERM -------------------------------------------------------------------------------------

def test_sigterm_sends_goaway_and_finishes_the_streams_in_flight(start_server, database_url, token):
    server = start_server("--drain-timeout", "5", tls=True, h2=True)
    bodies = {f"{token}-{i}": json.dumps({"name": "d", "message": f"{token}-{i}"}).encode() for i in range(5)}
    with server.connect() as conn:
        streams = {conn.send_request("POST", "/postchatt", headers=[("content-length", str(len(body)))]): body
                   for body in bodies.values()}
        assert conn.get("/healthz").status == 200  # the heads above have been read
        server.process.signal(signal.SIGTERM)
        assert conn.wait_for(lambda: conn.goaways, 5), "no GOAWAY after SIGTERM"
        code, last_stream = conn.goaways[0]
        assert code == ErrorCodes.NO_ERROR and last_stream >= max(streams), conn.goaways
        for stream, body in streams.items():
            conn.send_body(stream, body)
        assert [conn.response(stream).status for stream in streams] == [200] * len(streams)
        assert conn.closed_by_server(5), "connection left open after its last stream"
    assert server.process.wait(timeout=6) == 0, server.process.log()
    assert message_counts(database_url, token) == {message: 1 for message in bodies}


def test_a_goaway_reaches_a_client_that_is_still_sending(h2_server):
    # A connection error in the middle of a stream of PINGs: the server sends GOAWAY and reads no more frames.
    # Had it closed with PINGs unread, the kernel would reset the connection and the client would often lose
    # the GOAWAY (RFC 9113 §6.8); so it drops what still comes until the client closes.
    zero_window_update = bytes.fromhex("000004 08 00 00000000 00000000")  # a connection error (RFC 9113 §6.9)
    ping = hyperframe.frame.PingFrame(0, opaque_data=b"e2e-ping").serialize()
    for attempt in range(5):
        with RawH2(h2_server) as raw:
            sent = 0
            for index in range(600):
                if index == 300:
                    raw.send(zero_window_update)
                if not raw.send(ping):
                    break
                sent += 1
            goaway = raw.goaway(5)
            assert goaway is not None, f"attempt {attempt}: no GOAWAY after {sent} PINGs; frames {raw.frames[-3:]}"
            assert goaway.error_code == ErrorCodes.PROTOCOL_ERROR
            assert sent == 600, "the server reset the connection instead of draining it"
            assert raw.closed_by_server(5)
    assert h2_server.get("/healthz").status == 200

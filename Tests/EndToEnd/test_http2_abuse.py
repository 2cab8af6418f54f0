"""HTTP/2 clients that try to make one connection cost the server more than its share: rapid reset
(CVE-2023-44487), CONTINUATION flood (CVE-2024-28182), PING and SETTINGS floods, too many SETTINGS, an HPACK
bomb, and thousands of streams whose responses are never read. Each ends or is contained within bounds, the
server's memory stays bounded, and other connections, one opened before the abuse among them, are served
promptly afterwards. Every loop here is bounded in count and in time."""

from __future__ import annotations

import time

import hyperframe.frame as frames
import pytest

from h2wire import ErrorCodes, RawH2, SettingCodes
from processes import wait_until
from procfs import rss_kb
from telemetry import metric, parse_exposition

GET_HEALTHZ = [(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/healthz")]
GET_MAPS = GET_HEALTHZ[:3] + [(":path", "/getmaps")]
# Generous: a loaded 2-core machine answers /healthz in milliseconds.
PROMPT_SECONDS = 2.0


def scrape(endpoint) -> dict:
    _, samples = parse_exposition(endpoint.get("/metrics").body.decode())
    return samples


def assert_served_promptly(feed, bystander) -> None:
    """New connections over both protocols, and `bystander` (opened before the abuse), are answered at once."""
    for label, call in (("h2", lambda: feed.h2.get("/healthz", timeout=5)),
                        ("http/1.1", lambda: feed.tls.get("/healthz", timeout=5)),
                        ("bystander", lambda: bystander.get("/healthz", timeout=5))):
        started = time.monotonic()
        assert call().status == 200, label
        elapsed = time.monotonic() - started
        assert elapsed < PROMPT_SECONDS, f"{label}: /healthz took {elapsed:.2f}s after the abuse"


@pytest.fixture
def bystander(big_feed):
    with big_feed.h2.connect() as conn:
        assert conn.get("/healthz").status == 200
        yield conn


def test_rapid_reset_gets_goaway_and_starts_bounded_work(big_feed, bystander):
    before = scrape(big_feed.h2)
    with RawH2(big_feed.h2) as raw:
        opened = 0
        for index in range(1000):
            stream = 1 + 2 * index
            if not raw.send(raw.headers(stream, GET_MAPS), frames.RstStreamFrame(stream, error_code=ErrorCodes.CANCEL)):
                break
            opened += 1
        goaway = raw.goaway(5)
        assert goaway is not None, f"no GOAWAY after {opened} opened and reset streams"
        # nghttp2 names the flood INTERNAL_ERROR; ENHANCE_YOUR_CALM would say the same.
        assert goaway.error_code in (ErrorCodes.INTERNAL_ERROR, ErrorCodes.ENHANCE_YOUR_CALM), goaway
        assert goaway.last_stream_id < 2 * 200, "the server went on taking streams long past the burst"
        assert raw.closed_by_server(5)
    after = scrape(big_feed.h2)
    handled = metric(after, "chatterd_requests_by_protocol_total", protocol="HTTP/2") - metric(
        before, "chatterd_requests_by_protocol_total", protocol="HTTP/2")
    assert handled <= 200, f"{handled} requests reached the handler from one resetting client"
    reason = ErrorCodes(goaway.error_code).name
    assert (metric(after, "chatterd_http2_goaways_sent_total", reason=reason) or 0) > (
        metric(before, "chatterd_http2_goaways_sent_total", reason=reason) or 0)
    assert_served_promptly(big_feed, bystander)


def test_continuation_flood_ends_the_connection(big_feed, bystander):
    with RawH2(big_feed.h2) as raw:
        raw.send(frames.HeadersFrame(1, data=raw.block(GET_HEALTHZ), flags=["END_STREAM"]))
        sent = 0
        started = time.monotonic()
        while sent < 10_000 and time.monotonic() - started < 10:
            if not raw.send(frames.ContinuationFrame(1, data=raw.block([("x-flood", f"v{sent}")]))):
                break
            sent += 1
        assert raw.closed_by_server(5), f"connection still open after {sent} CONTINUATION frames"
        assert sent < 10_000
        assert not any(isinstance(f, frames.HeadersFrame) for f in raw.frames), "the endless header block was served"
    assert_served_promptly(big_feed, bystander)


@pytest.mark.parametrize("flood", ["ping", "settings"])
def test_a_flood_of_frames_to_acknowledge_ends_the_connection(big_feed, bystander, flood):
    one = (frames.PingFrame(0, opaque_data=b"e2eflood") if flood == "ping"
           else frames.SettingsFrame(0, settings={SettingCodes.INITIAL_WINDOW_SIZE: 65_535}))
    batch = one.serialize() * 1000
    before = rss_kb(big_feed.tls.process.pid)
    with RawH2(big_feed.h2) as raw:
        raw.sock.settimeout(5)
        sent = 0
        started = time.monotonic()
        # The client reads nothing: acknowledgements pile up until the server gives up on it.
        while sent < 1000 and time.monotonic() - started < 10:
            if not raw.send(batch):
                break
            sent += 1
        assert raw.closed_by_server(5), f"connection still open after {sent}000 {flood} frames"
    growth_mb = (rss_kb(big_feed.tls.process.pid) - before) / 1024
    assert growth_mb < 64, f"RSS grew {growth_mb:.0f} MB during a {flood} flood"
    assert_served_promptly(big_feed, bystander)


def test_too_many_settings_in_one_frame_get_goaway(big_feed, bystander):
    before = scrape(big_feed.h2)
    entries = b"".join((0x100 + i).to_bytes(2, "big") + (1).to_bytes(4, "big") for i in range(33))
    with RawH2(big_feed.h2) as raw:
        raw.send(len(entries).to_bytes(3, "big") + b"\x04\x00\x00\x00\x00\x00" + entries)  # SETTINGS, 33 entries
        goaway = raw.goaway(5)
        assert goaway is not None and goaway.error_code == ErrorCodes.ENHANCE_YOUR_CALM, goaway
        assert raw.closed_by_server(5)
    after = scrape(big_feed.h2)
    assert metric(after, "chatterd_http2_goaways_sent_total", reason="ENHANCE_YOUR_CALM") == (
        metric(before, "chatterd_http2_goaways_sent_total", reason="ENHANCE_YOUR_CALM") or 0) + 1
    assert_served_promptly(big_feed, bystander)


def test_an_hpack_bomb_is_431_and_costs_no_memory(big_feed, bystander):
    # One 4000-byte field in the dynamic table, then 16 000 one-byte references to it: 18 KB on the wire,
    # 64 MB decoded (RFC 7541 §7.3).
    before = rss_kb(big_feed.tls.process.pid)
    with RawH2(big_feed.h2) as raw:
        block = raw.block(GET_HEALTHZ + [("x-bomb", "b" * 4000)] * 16_000)
        assert len(block) < 20_000
        pieces = [block[i:i + 16_384] for i in range(0, len(block), 16_384)]
        raw.send(frames.HeadersFrame(1, data=pieces[0], flags=["END_STREAM"]),
                 *(frames.ContinuationFrame(1, data=piece) for piece in pieces[1:]))
        raw.send(frames.ContinuationFrame(1, data=b"", flags=["END_HEADERS"]))
        answer = raw.read_until(lambda f: isinstance(f, (frames.HeadersFrame, frames.RstStreamFrame,
                                                         frames.GoAwayFrame)), 10)
        assert isinstance(answer, frames.HeadersFrame) and answer.stream_id == 1, answer
        assert dict(answer.fields)[":status"] == "431"
        # A stream error: the same connection goes on.
        raw.send(raw.headers(3, GET_HEALTHZ))
        after = raw.read_until(lambda f: isinstance(f, frames.HeadersFrame) and f.stream_id == 3, 5)
        assert after is not None and dict(after.fields)[":status"] == "200"
    growth_mb = (rss_kb(big_feed.tls.process.pid) - before) / 1024
    assert growth_mb < 32, f"RSS grew {growth_mb:.0f} MB decoding an HPACK bomb"
    assert_served_promptly(big_feed, bystander)


def test_5000_unread_getmaps_streams_keep_memory_bounded(big_feed, bystander):
    body_bytes = len(big_feed.plain.get("/getmaps").body)
    assert body_bytes > 100_000
    before = rss_kb(big_feed.tls.process.pid)
    clients = []
    try:
        # 50 connections of 100 streams, each granting the server all the window it could want and reading
        # nothing: what bounds the server's memory is its own output limit, not flow control.
        for _ in range(50):
            conn = big_feed.h2.connect(auto_ack=False, settings={SettingCodes.INITIAL_WINDOW_SIZE: 2**31 - 1})
            conn.grant(2**31 - 1 - 65_535)
            fields = conn.request_fields("GET", "/getmaps")
            for _ in range(100):
                conn.send_headers(fields, flush=False)
            conn.flush()
            clients.append(conn)
        samples = scrape(big_feed.h2)
        assert metric(samples, "chatterd_http2_connections_open") >= 50
        time.sleep(1)  # let the server write what the sockets take
        assert_served_promptly(big_feed, bystander)
        growth_mb = (rss_kb(big_feed.tls.process.pid) - before) / 1024
        copied_mb = 5000 * body_bytes / 1048576
        assert growth_mb < 100, f"RSS grew {growth_mb:.0f} MB for 5000 unread streams ({copied_mb:.0f} MB if copied)"
    finally:
        for conn in clients:
            conn.close()
    settled = wait_until(lambda: metric(scrape(big_feed.h2), "chatterd_http2_streams_open") <= 2, 10)
    assert settled, "streams still counted open after their connections closed"

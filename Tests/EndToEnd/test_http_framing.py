"""HTTP/1.1 parsing robustness (RFC 9112), one case per kind of bad framing, over raw sockets.

Every framing error must be answered (JSON error, `Connection: close`) and the socket closed, with
nothing after it: each framing case is followed by a pipelined probe request that must never be
answered, because leftover bytes are never parsed as another request.
"""

from __future__ import annotations

import json

import pytest

from contract import assert_error_then_closed, error_reason
from pgsupport import count_chatts
from wire import build_request, chunked, pipeline

BODY = b'{"name":"f","message":"framing"}'
HEAD = b"POST /postchatt HTTP/1.1\r\nHost: x\r\n"
PROBE = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


def post_with(headers: bytes, body: bytes = BODY, version: bytes = b"HTTP/1.1") -> bytes:
    return b"POST /postchatt " + version + b"\r\nHost: x\r\n" + headers + b"\r\n" + body


def chunk_body(size_line: bytes, data: bytes = BODY, after: bytes = b"\r\n0\r\n\r\n") -> bytes:
    return HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + size_line + data + after


FRAMING_ERRORS = {
    # Content-Length / Transfer-Encoding conflicts and invalid lengths.
    "cl-and-te-chunked": (HEAD + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(BODY), 400),
    "te-chunked-and-cl": (HEAD + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" + chunked(BODY), 400),
    "cl-two-different-lines": (post_with(b"Content-Length: 32\r\nContent-Length: 33\r\n"), 400),
    "cl-list-different": (post_with(b"Content-Length: 32, 33\r\n"), 400),
    "cl-plus-sign": (post_with(b"Content-Length: +32\r\n"), 400),
    "cl-negative": (post_with(b"Content-Length: -1\r\n"), 400),
    "cl-hex": (post_with(b"Content-Length: 0x20\r\n"), 400),
    "cl-underscore": (post_with(b"Content-Length: 3_2\r\n"), 400),
    "cl-space-inside": (post_with(b"Content-Length: 3 2\r\n"), 400),
    "cl-20-digits": (post_with(b"Content-Length: 99999999999999999999\r\n"), 400),
    "cl-empty": (post_with(b"Content-Length: \r\n"), 400),
    "cl-letters": (post_with(b"Content-Length: abc\r\n"), 400),
    "cl-decimal": (post_with(b"Content-Length: 32.0\r\n"), 400),
    # Transfer-Encoding.
    "te-chunked-not-final": (HEAD + b"Transfer-Encoding: chunked, gzip\r\n\r\n" + chunked(BODY), 400),
    "te-gzip": (HEAD + b"Transfer-Encoding: gzip\r\n\r\n" + BODY, 501),
    "te-identity": (HEAD + b"Transfer-Encoding: identity\r\n\r\n" + BODY, 501),
    "te-xchunked": (HEAD + b"Transfer-Encoding: xchunked\r\n\r\n" + chunked(BODY), 501),
    "te-in-http10": (post_with(b"Transfer-Encoding: chunked\r\n", chunked(BODY), b"HTTP/1.0"), 400),
    # Chunk framing.
    "chunk-size-0x-prefix": (chunk_body(b"0x20\r\n"), 400),
    "chunk-size-negative": (chunk_body(b"-1\r\n"), 400),
    "chunk-size-underscore": (chunk_body(b"_\r\n"), 400),
    "chunk-size-leading-space": (chunk_body(b" 20\r\n"), 400),
    "chunk-size-empty": (chunk_body(b"\r\n"), 400),
    "chunk-size-17-hex-digits": (chunk_body(b"10000000000000020\r\n"), (400, 413)),
    "chunk-size-bigger-than-data": (chunk_body(b"30\r\n"), 400),
    "chunk-data-without-crlf": (chunk_body(b"20\r\n", after=b"0\r\n\r\n"), 400),
    "chunk-size-bare-lf": (chunk_body(b"20\n"), 400),
    "chunk-size-bare-cr": (chunk_body(b"20\r"), 400),
    "chunk-huge-extension": (chunk_body(b"20;" + b"e" * 100_000 + b"\r\n"), (400, 413, 431)),
    "chunk-huge-trailers": (chunk_body(b"20\r\n", after=b"\r\n0\r\n" + b"X-T: t\r\n" * 12_000 + b"\r\n"),
                            (400, 413, 431)),
    # Header syntax.
    "obs-fold": (b"GET /getmaps HTTP/1.1\r\nHost: x\r\nX-Foo: a\r\n b\r\n\r\n", 400),
    "obs-fold-tab": (b"GET /getmaps HTTP/1.1\r\nHost: x\r\nX-Foo: a\r\n\tb\r\n\r\n", 400),
    "space-before-colon": (post_with(b"Content-Length : 32\r\n"), 400),
    "header-without-colon": (b"GET /getmaps HTTP/1.1\r\nHost: x\r\nX-Foo\r\n\r\n", 400),
    "header-name-with-space": (b"GET /getmaps HTTP/1.1\r\nHost: x\r\nX Foo: a\r\n\r\n", 400),
    "header-name-empty": (b"GET /getmaps HTTP/1.1\r\nHost: x\r\n: a\r\n\r\n", 400),
    "bare-cr-in-request-line": (b"GET /getmaps\rHTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "bare-cr-in-header-value": (b"GET /getmaps HTTP/1.1\r\nHost: x\r\nX-Foo: a\rb\r\n\r\n", 400),
    "nul-in-header-value": (b"GET /getmaps HTTP/1.1\r\nHost: x\r\nX-Foo: a\x00b\r\n\r\n", 400),
    "nul-in-target": (b"GET /get\x00maps HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    # Request line.
    "version-http1": (b"GET /getmaps HTTP/1\r\nHost: x\r\n\r\n", 400),
    "version-leading-zero": (b"GET /getmaps HTTP/01.1\r\nHost: x\r\n\r\n", 400),
    "version-trailing-space": (b"GET /getmaps HTTP/1.1 \r\nHost: x\r\n\r\n", 400),
    "version-lowercase": (b"GET /getmaps http/1.1\r\nHost: x\r\n\r\n", 400),
    "version-missing-http09": (b"GET /getmaps\r\n\r\n", 400),
    "double-space": (b"GET  /getmaps HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "asterisk-target-with-get": (b"GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "fragment-in-target": (b"GET /getmaps#frag HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "target-without-slash": (b"GET getmaps HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "version-2.0": (b"GET /getmaps HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    "version-3.0": (b"GET /getmaps HTTP/3.0\r\nHost: x\r\n\r\n", 505),
    "version-1.2": (b"GET /getmaps HTTP/1.2\r\nHost: x\r\n\r\n", 505),
    # Limits.
    "target-9KiB": (build_request("GET", "/getmaps?" + "a" * 9216), 414),
    "header-section-17KiB": (build_request("GET", "/getmaps", headers=[(f"X-P{i}", "p" * 1024) for i in range(17)]),
                             431),
    "header-fields-101": (build_request("GET", "/getmaps", headers=[(f"X-F{i}", "1") for i in range(100)]), 431),
}


@pytest.mark.parametrize("raw, expected", FRAMING_ERRORS.values(), ids=FRAMING_ERRORS.keys())
def test_framing_error_is_answered_then_connection_closed(plain_server, database_url, raw, expected):
    before = count_chatts(database_url)
    conn = plain_server.connect()
    conn.try_send(raw + PROBE)
    response = conn.read_response()
    assert_error_then_closed(conn, response, expected)
    conn.close()
    assert count_chatts(database_url) == before


HOST_ERRORS = {
    "host-missing": build_request("GET", "/getmaps", host=None),
    "host-twice": build_request("GET", "/getmaps", headers=[("Host", "a"), ("Host", "a")]),
    "host-userinfo": build_request("GET", "/getmaps", headers=[("Host", "a@b")]),
    "host-slash": build_request("GET", "/getmaps", headers=[("Host", "a/b")]),
    "host-empty": build_request("GET", "/getmaps", headers=[("Host", "")]),
    "host-missing-on-post": build_request("POST", "/postchatt", BODY, host=None),
}


@pytest.mark.parametrize("raw", HOST_ERRORS.values(), ids=HOST_ERRORS.keys())
def test_http11_without_exactly_one_valid_host_is_400(plain_server, database_url, raw):
    before = count_chatts(database_url)
    [response], conn = pipeline(plain_server, raw, 1)
    conn.close()
    assert response.status == 400, response
    error_reason(response)
    assert count_chatts(database_url) == before


ACCEPTED = {
    "http10-without-host": b"GET /healthz HTTP/1.0\r\n\r\n",
    "leading-crlf": b"\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    "te-chunked-any-case": HEAD + b"Transfer-Encoding: Chunked\r\n\r\n" + chunked(BODY),
    "chunked-one-byte-chunks": HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(BODY, 1),
    "chunk-extensions": HEAD + b"Transfer-Encoding: chunked\r\n\r\n20;a=b;c\r\n" + BODY + b"\r\n0;z\r\n\r\n",
    "chunked-trailers": HEAD + b"Transfer-Encoding: chunked\r\n\r\n20\r\n" + BODY + b"\r\n0\r\nX-T: 1\r\n\r\n",
    "chunk-size-uppercase-hex-and-zeros": HEAD + b"Transfer-Encoding: chunked\r\n\r\n0020\r\n" + BODY + b"\r\n000\r\n\r\n",
    "cl-with-ows": post_with(b"Content-Length:   32  \r\n"),
    "header-names-any-case": b"POST /postchatt HTTP/1.1\r\nhOsT: x\r\ncontent-LENGTH: 32\r\n\r\n" + BODY,
    "target-8000-bytes": build_request("GET", "/getmaps?" + "a" * (8000 - len("/getmaps?"))),
    "header-fields-100": build_request("GET", "/healthz", headers=[(f"X-F{i}", "1") for i in range(99)]),
    "header-section-15KiB": build_request("GET", "/healthz", headers=[(f"X-P{i}", "p" * 1000) for i in range(15)]),
    "expect-100-continue-ignored-on-http10": b"POST /postchatt HTTP/1.0\r\nExpect: 100-continue\r\n"
                                             b"Content-Length: 32\r\n\r\n" + BODY,
}


@pytest.mark.parametrize("raw", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_well_formed_variant_is_served(plain_server, raw):
    [response], conn = pipeline(plain_server, raw, 1)
    conn.close()
    assert response.status == 200, response


def test_body_of_exactly_64KiB_is_accepted(plain_server, token):
    prefix = json.dumps({"name": "big", "message": token, "pad": ""}).encode()[:-2]
    body = prefix + b"p" * (65536 - len(prefix) - 2) + b'"}'
    assert len(body) == 65536
    response = plain_server.request("POST", "/postchatt", body=body)
    assert response.status == 200, response


def test_absolute_form_target_is_served_like_origin_form(plain_server):
    origin = plain_server.get("/getchatts")
    target = f"http://127.0.0.1:{plain_server.port}/getchatts"
    response = plain_server.request("GET", target, headers=[("Host", "elsewhere.example")])
    assert response.status == 200, response
    assert response.body == origin.body


# --- limits that must be enforced before the body arrives ------------------------------------------

def test_oversized_content_length_gets_413_before_the_body_is_sent(plain_server):
    with plain_server.connect() as conn:
        conn.send(build_request("POST", "/postchatt", headers=[("Content-Length", "65537")]))
        response = conn.read_response(timeout=5)
        assert_error_then_closed(conn, response, 413)


def test_expect_100_continue_over_limit_gets_413_without_100(plain_server):
    with plain_server.connect() as conn:
        conn.send(build_request("POST", "/postchatt", headers=[("Expect", "100-continue"),
                                                               ("Content-Length", "70000")]))
        response = conn.read_response(timeout=5)
        assert response.status == 413, "server sent 100 Continue (or something else) for an oversized body"
        assert_error_then_closed(conn, response, 413)


def test_chunked_body_over_limit_gets_413(plain_server, database_url):
    before = count_chatts(database_url)
    with plain_server.connect() as conn:
        conn.send(HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
        piece = b"2000\r\n" + b"a" * 0x2000 + b"\r\n"
        for _ in range(10):  # 80 KiB decoded
            if not conn.try_send(piece):
                break
        conn.try_send(b"0\r\n\r\n")
        response = conn.read_response(timeout=5)
        assert_error_then_closed(conn, response, 413)
    assert count_chatts(database_url) == before

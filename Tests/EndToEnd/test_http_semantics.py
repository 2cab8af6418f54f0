"""HTTP/1.1 semantics over raw sockets (RFC 9110, RFC 9112): methods, Expect, pipelining,
keep-alive, and requests that must never be executed."""

from __future__ import annotations

import json
import threading
import time

import pytest

from contract import assert_error_then_closed, error_reason
from pgsupport import count_chatts, count_message
from wire import ConnectionClosed, build_request, chunked, pipeline

BODY = b'{"name":"f","message":"framing"}'
HEAD = b"POST /postchatt HTTP/1.1\r\nHost: x\r\n"
PROBE = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


# --- methods ----------------------------------------------------------------------------------------

def test_unknown_method_is_501(protocol_server):
    response = protocol_server.request("FOO", "/getmaps")
    assert response.status == 501, response
    error_reason(response)


@pytest.mark.parametrize("raw", [b"get /getmaps HTTP/1.1\r\nHost: x\r\n\r\n", b"G=T /getmaps HTTP/1.1\r\nHost: x\r\n\r\n"],
                         ids=["lowercase-get", "separator-in-method"])
def test_method_tokens_are_case_sensitive_and_strict(plain_server, raw):
    [response], conn = pipeline(plain_server, raw, 1)
    conn.close()
    assert response.status in (400, 501), response


WRONG_METHODS = {
    "get-postchatt": ("GET", "/postchatt", "POST"),
    "get-postmaps": ("GET", "/postmaps", "POST"),
    "post-getmaps": ("POST", "/getmaps", "GET"),
    "delete-getchatts": ("DELETE", "/getchatts", "GET"),
    "put-postmaps": ("PUT", "/postmaps", "POST"),
    "trace-root": ("TRACE", "/", "GET"),
    "post-healthz": ("POST", "/healthz", "GET"),
    "patch-getmaps-slash": ("PATCH", "/getmaps/", "GET"),
}


@pytest.mark.parametrize("method, path, allowed", WRONG_METHODS.values(), ids=WRONG_METHODS.keys())
def test_wrong_method_on_known_path_is_405_with_allow(protocol_server, database_url, method, path, allowed):
    before = count_chatts(database_url)
    response = protocol_server.request(method, path, body=BODY if method in ("POST", "PUT") else None)
    assert response.status == 405, response
    error_reason(response)
    methods = {m.strip() for m in (response.header("Allow") or "").split(",")}
    assert allowed in methods and method not in methods, response.header("Allow")
    assert count_chatts(database_url) == before


BODY_ON_ERROR = {
    "post-unknown-path": (b"POST", b"/nope", 404),
    "post-get-route": (b"POST", b"/getmaps", 405),
    "put-post-route": (b"PUT", b"/postmaps", 405),
    "delete-root": (b"DELETE", b"/", 405),
    "post-invalid-body": (b"POST", b"/postmaps", 422),
}


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
@pytest.mark.parametrize("method, path, status", BODY_ON_ERROR.values(), ids=BODY_ON_ERROR.keys())
def test_body_of_a_rejected_request_is_consumed_not_parsed(plain_server, method, path, status, framing):
    # The body is a request; it must be skipped as body, whatever the status of the request carrying it.
    smuggled = b"GET /nope-smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    if framing == "chunked":
        head, body = b"Transfer-Encoding: chunked\r\n", chunked(smuggled)
    else:
        head, body = b"Content-Length: %d\r\n" % len(smuggled), smuggled
    raw = method + b" " + path + b" HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n" + body + PROBE
    with plain_server.connect() as conn:
        conn.send(raw)
        first = conn.read_response()
        assert first.status == status, first
        if not first.says_close:
            second = conn.read_response()
            assert (second.status, second.json()) == (200, {"status": "ok"}), second


# --- Expect -----------------------------------------------------------------------------------------

def test_expect_100_continue_sends_100_then_reads_the_body(plain_server, database_url, token):
    body = json.dumps({"name": "x", "message": token}).encode()
    with plain_server.connect() as conn:
        conn.send(build_request("POST", "/postchatt", headers=[("Expect", "100-continue"),
                                                               ("Content-Length", str(len(body)))]))
        interim = conn.read_response(timeout=5)
        assert interim.status == 100, interim
        conn.send(body)
        final = conn.read_response(timeout=5)
        assert final.status == 200, final
    assert count_message(database_url, token) == 1


def test_unknown_expectation_is_417(protocol_server, database_url):
    before = count_chatts(database_url)
    response = protocol_server.request("POST", "/postchatt", body=BODY, headers=[("Expect", "foo")])
    assert response.status == 417, response
    error_reason(response)
    assert count_chatts(database_url) == before


# --- pipelining and keep-alive ----------------------------------------------------------------------

def test_three_pipelined_requests_are_answered_in_order(http1_server, token):
    raw = (build_request("GET", "/healthz")
           + build_request("POST", "/postchatt", json.dumps({"name": "p", "message": token}).encode())
           + build_request("GET", "/getchatts"))
    responses, conn = pipeline(http1_server, raw, 3)
    conn.close()
    assert [r.status for r in responses] == [200, 200, 200]
    assert responses[0].json() == {"status": "ok"}
    assert responses[1].json() == {}
    assert any(row[1] == token for row in responses[2].json())


def test_framing_error_mid_pipeline_stops_the_pipeline(plain_server, database_url, token):
    first = build_request("POST", "/postchatt", json.dumps({"name": "p", "message": token + "-1"}).encode())
    broken = b"POST /postchatt HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"
    third = build_request("POST", "/postchatt", json.dumps({"name": "p", "message": token + "-3"}).encode())
    conn = plain_server.connect()
    conn.send(first + broken + third)
    assert conn.read_response().status == 200
    assert_error_then_closed(conn, conn.read_response(), 400)
    conn.close()
    assert count_message(database_url, token + "-1") == 1
    assert count_message(database_url, token + "-3") == 0, "request after a framing error was executed"


def test_http11_connection_persists_by_default(plain_server):
    with plain_server.connect() as conn:
        for _ in range(3):
            conn.send(build_request("GET", "/healthz"))
            response = conn.read_response()
            assert response.status == 200 and not response.says_close


def test_http11_connection_close_is_honoured(plain_server):
    with plain_server.connect() as conn:
        conn.send(build_request("GET", "/healthz", headers=[("Connection", "close")]))
        response = conn.read_response()
        assert response.status == 200 and response.says_close
        assert conn.closed_by_server()


def test_http10_closes_unless_keep_alive_is_asked_for(plain_server):
    with plain_server.connect() as conn:
        conn.send(b"GET /healthz HTTP/1.0\r\n\r\n")
        response = conn.read_response()
        assert response.status == 200 and response.says_close, response
        assert conn.closed_by_server()


def test_http10_keep_alive_persists(plain_server):
    with plain_server.connect() as conn:
        for _ in range(2):
            conn.send(b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            response = conn.read_response()
            assert response.status == 200 and not response.says_close, response
            assert "keep-alive" in response.tokens("Connection"), "1.0 client cannot know the connection persists"


CLOSING_FIRST = {
    "http11-connection-close": build_request("GET", "/healthz", headers=[("Connection", "close")]),
    "http10-default": b"GET /healthz HTTP/1.0\r\n\r\n",
    "error-with-connection-close": build_request("POST", "/postchatt", b"{", headers=[("Connection", "close")]),
}


@pytest.mark.parametrize("first", CLOSING_FIRST.values(), ids=CLOSING_FIRST.keys())
def test_request_pipelined_after_a_closing_one_is_never_executed(plain_server, database_url, token, first):
    raw = first + build_request("POST", "/postchatt", json.dumps({"name": "c", "message": token}).encode())
    responses, conn = pipeline(plain_server, raw, 2)
    closed = conn.closed_by_server()
    conn.close()
    assert len(responses) == 1 and responses[0].says_close and closed, responses
    assert count_message(database_url, token) == 0


def test_get_with_a_body_never_parses_the_body_as_a_request(plain_server):
    # The body looks like a request: if it were parsed as one, /nope would answer 404.
    smuggled = b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
    raw = (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(smuggled)) + smuggled + PROBE
    responses, conn = pipeline(plain_server, raw, 2)
    if responses[0].status == 200:
        assert [r.status for r in responses] == [200, 200], responses
        conn.close()
    else:
        assert_error_then_closed(conn, responses[0], 400)


def test_post_without_a_body_is_an_empty_body_and_422(protocol_server, database_url):
    before = count_chatts(database_url)
    response = protocol_server.request("POST", "/postchatt")  # HTTP/1.1: no Content-Length; HTTP/2: END_STREAM
    assert response.status == 422, response
    error_reason(response)
    assert count_chatts(database_url) == before


def test_connection_closed_mid_request_does_not_store(plain_server, database_url, token):
    raw = build_request("POST", "/postchatt", json.dumps({"name": "b", "message": token}).encode())
    with plain_server.connect() as conn:
        conn.send(raw[:-5])
    time.sleep(0.3)
    assert count_message(database_url, token) == 0
    assert plain_server.get("/healthz").status == 200


def test_second_response_on_keep_alive_after_an_ordinary_error(plain_server):
    # 404 and 422 are not framing errors: the connection may keep serving.
    with plain_server.connect() as conn:
        conn.send(build_request("GET", "/nope") + build_request("POST", "/postchatt", b"{") + PROBE)
        statuses = []
        for _ in range(3):
            try:
                statuses.append(conn.read_response().status)
            except ConnectionClosed:
                break
    assert statuses[:2] == [404, 422]
    assert statuses == [404, 422, 200] or len(statuses) == 2


def test_client_streaming_an_oversized_body_still_reads_the_413(plain_server):
    # The server must not reset the connection while unread body bytes arrive (lingering close),
    # or the client loses the 413 it was sent.
    size = 4 * 1024 * 1024
    with plain_server.connect() as conn:
        conn.send(build_request("POST", "/postchatt", headers=[("Content-Length", str(size))]))
        conn.sock.settimeout(2)
        sent = 0
        chunk = b"x" * 65536
        while sent < size and conn.try_send(chunk):
            sent += len(chunk)
        response = conn.read_response(timeout=10)
        assert response.status == 413, response
        assert response.says_close


def test_pipelined_requests_are_answered_in_order_up_to_the_default_cap_of_1000(plain_server):
    targets = ["/healthz", "/nope", "/"] * 334  # 1002 requests
    raw = b"".join(build_request("GET", target) for target in targets)
    with plain_server.connect(timeout=30) as conn:
        sender = threading.Thread(target=conn.try_send, args=(raw,))
        sender.start()
        responses = []
        while True:
            try:
                responses.append(conn.read_response(timeout=30))
            except ConnectionClosed:
                break
        sender.join(30)
    expected = {"/healthz": 200, "/nope": 404, "/": 200}
    assert [r.status for r in responses] == [expected[t] for t in targets[:1000]]
    assert responses[-1].says_close and not any(r.says_close for r in responses[:-1])


@pytest.mark.parametrize("name", ["plain", "tls"])
def test_request_split_into_single_bytes_is_served(request, name, token):
    server = request.getfixturevalue(f"{name}_server")
    raw = build_request("POST", "/postchatt", json.dumps({"name": "b", "message": token}).encode())
    with server.connect() as conn:
        for index in range(len(raw)):
            conn.send(raw[index:index + 1])
        assert conn.read_response().status == 200


def test_chunked_body_and_expect_work_over_tls(tls_server, database_url, token):
    body = json.dumps({"name": "t", "message": token}).encode()
    with tls_server.connect() as conn:
        conn.send(b"POST /postmaps HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
        assert conn.read_response().status == 100
        conn.send(chunked(body, 5))
        assert conn.read_response().status == 200
    assert count_message(database_url, token) == 1

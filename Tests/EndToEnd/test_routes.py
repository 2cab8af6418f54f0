"""docs/API.md routes and headers: trailing slashes, query strings, HEAD, GET /, Content-Type/Length/Date on
every response, and the operations endpoints."""

from __future__ import annotations

import email.utils
import json
import re
import time

import pytest

from contract import assert_ok_empty_object, post_raw, rows_of, rows_with
from wire import build_request, pipeline

IMF_DATE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                      r"\d{4} \d{2}:\d{2}:\d{2} GMT$")


# --- routes -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/getmaps/", "/getchatts/", "/healthz/", "/readyz/", "/metrics/"])
def test_get_routes_answer_with_trailing_slash(protocol_server, path):
    assert protocol_server.get(path).status == 200


@pytest.mark.parametrize("path", ["/postmaps/", "/postchatt/"])
def test_post_routes_answer_with_trailing_slash(protocol_server, token, path):
    assert_ok_empty_object(post_raw(protocol_server, path, json.dumps({"name": "ts", "message": token}).encode()))
    _, rows = rows_of(protocol_server, "/getchatts")
    assert len(rows_with(rows, token)) == 1


@pytest.mark.parametrize("target", ["/getmaps?sincere=0", "/getmaps/?x=1&y", "/getchatts?", "/?a=b", "/healthz?x"])
def test_query_strings_are_ignored_on_get(protocol_server, target):
    path = target.split("?")[0]
    response = protocol_server.get(target)
    assert response.status == 200
    again = protocol_server.get(path)
    # Should they differ (seen once: the first a version behind), the headers say whether it was a stale answer
    # (Age, Warning) and which versions (ETag).
    assert response.body == again.body, (response.headers, again.headers)


def test_query_string_is_ignored_on_post(protocol_server, token):
    body = json.dumps({"name": "q", "message": token}).encode()
    assert_ok_empty_object(post_raw(protocol_server, "/postchatt?name=x&message=y", body))
    _, rows = rows_of(protocol_server, "/getchatts")
    assert [row[0] for row in rows_with(rows, token)] == ["q"]


def test_root_returns_a_json_string(server):
    response = server.get("/")
    assert response.status == 200
    assert isinstance(response.json(), str) and response.json()


@pytest.mark.parametrize("path", ["/", "/getmaps", "/getchatts", "/healthz", "/readyz", "/metrics"])
def test_head_returns_get_headers_without_a_body(http1_server, path):
    # Over HTTP/2: test_http2.py, HEAD and 304 on one connection.
    with http1_server.connect() as conn:
        conn.send(build_request("HEAD", path))
        head = conn.read_response(head_request=True)
        conn.send(build_request("GET", path))
        # If HEAD had carried a body, it would be parsed here as a broken status line.
        get = conn.read_response()
    assert head.status == get.status == 200
    assert head.header("Content-Type") == get.header("Content-Type")
    assert head.header("Content-Length") is not None
    if path != "/metrics":  # metrics change between the two requests
        assert head.header("Content-Length") == get.header("Content-Length")


HEAD_ERRORS = {"not-found": ("/nope", 404), "wrong-method-postmaps": ("/postmaps", 405),
               "wrong-method-postchatt": ("/postchatt/", 405), "not-found-below-route": ("/getmaps/x", 404)}


@pytest.mark.parametrize("path, status", HEAD_ERRORS.values(), ids=HEAD_ERRORS.keys())
def test_head_error_response_has_no_body_and_keeps_the_connection_in_sync(plain_server, path, status):
    with plain_server.connect() as conn:
        conn.send(build_request("HEAD", path) + build_request("GET", "/healthz"))
        head = conn.read_response(head_request=True)
        assert head.status == status, head
        try:
            after = conn.read_response(timeout=3)
        except AssertionError as error:  # the HEAD response's body is being read as the next status line
            raise AssertionError(f"HEAD {path} response carried a body: {error}") from None
        assert (after.status, after.json()) == (200, {"status": "ok"})


REQUESTS_FOR_HEADERS = {
    "getmaps": ("GET", "/getmaps", None),
    "root": ("GET", "/", None),
    "post-ok": ("POST", "/postchatt", b'{"name":"h","message":"headers check"}'),
    "post-422": ("POST", "/postchatt", b"{"),
    "not-found": ("GET", "/nope", None),
    "wrong-method": ("DELETE", "/getmaps", None),
    "unknown-method": ("FOO", "/getmaps", None),
    "healthz": ("GET", "/healthz", None),
    "readyz": ("GET", "/readyz", None),
    "metrics": ("GET", "/metrics", None),
}


@pytest.mark.parametrize("method, target, body", REQUESTS_FOR_HEADERS.values(), ids=REQUESTS_FOR_HEADERS.keys())
def test_every_response_has_content_type_length_and_date(protocol_server, method, target, body):
    response = protocol_server.request(method, target, body=body)
    assert_content_type_length_and_date(response, is_post=method == "POST")


def test_a_framing_error_response_has_content_type_length_and_date(plain_server):
    raw = b"GET /getmaps HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n"
    [response], conn = pipeline(plain_server, raw, 1)
    conn.close()
    assert response.status == 400, response
    assert_content_type_length_and_date(response, is_post=False)


def assert_content_type_length_and_date(response, is_post: bool) -> None:
    assert response.header("Content-Type"), response
    assert len(response.headers_named("Content-Length")) == 1
    assert int(response.header("Content-Length")) == len(response.body)
    date = response.header("Date")
    assert date and IMF_DATE.match(date), date
    skew = abs(email.utils.parsedate_to_datetime(date).timestamp() - time.time())
    assert skew < 60, date
    if response.status != 200 or is_post:
        assert response.header("Content-Type").split(";")[0].strip() == "application/json"


# --- operations endpoints --------------------------------------------------------------------------

def test_healthz_reports_ok(server):
    response = server.get("/healthz")
    assert (response.status, response.json()) == (200, {"status": "ok"})


def test_readyz_reports_ready_when_the_database_answers(server):
    response = server.get("/readyz")
    assert (response.status, response.json()) == (200, {"status": "ready"})


METRIC_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (-?[0-9.eE+]+|[+-]Inf|NaN)( -?\d+)?$')


def parse_metrics(text: str) -> list[tuple[str, str, float]]:
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            assert not line or re.match(r"^# (HELP|TYPE) [a-zA-Z_:]", line) or line.startswith("# "), line
            continue
        match = METRIC_LINE.match(line)
        assert match, f"not Prometheus text format: {line!r}"
        samples.append((match.group(1), match.group(2) or "", float(match.group(3))))
    return samples


def getmaps_request_total(samples) -> float:
    return sum(value for name, labels, value in samples
               if "request" in name and name.endswith("_total") and "getmaps" in labels)


def test_metrics_expose_requests_latency_connections_and_pool(plain_server):
    first = plain_server.get("/metrics")
    assert first.status == 200
    assert first.header("Content-Type").startswith("text/plain")
    before = parse_metrics(first.body.decode())
    plain_server.get("/getmaps")
    text = plain_server.get("/metrics").body.decode()
    after = parse_metrics(text)
    names = {name for name, _, _ in after}
    assert any("request" in n for n in names), names
    assert re.search(r"^# TYPE \S+ histogram$", text, re.M), "no histogram"
    assert any(n.endswith("_bucket") for n in names) and any(n.endswith("_sum") for n in names)
    assert any('le="+Inf"' in labels for _, labels, _ in after)
    assert any("connection" in n for n in names), names
    assert any("pool" in n for n in names), names
    assert any("status" in labels or "code" in labels for n, labels, _ in after if "request" in n)
    assert getmaps_request_total(after) >= getmaps_request_total(before) + 1

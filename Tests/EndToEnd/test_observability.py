"""One structured access line per request (logfmt or JSON) with an echoed request id, an
error line with the cause for server errors, nothing secret in the log, and /metrics in the Prometheus text
format with counters that move."""

from __future__ import annotations

import re
import subprocess
import time
from urllib.parse import urlsplit

import pytest

from conftest import serve_args
from pgsupport import psql
from processes import ChatterdProcess, free_port, wait_healthy
from telemetry import ACCESS_FIELDS, RFC3339_MS, log_records, metric, parse_exposition, parse_line, wait_for_record
from wire import Endpoint

SECRET = "s3cret-e2e-marker"
# start_server's arguments for each protocol, by the name the access line and /metrics give it.
PROTOCOLS = {"HTTP/1.1": {}, "HTTP/2": {"tls": True, "h2": True}}


def scrape(server) -> tuple[dict[str, str], dict[tuple, float]]:
    response = server.get("/metrics")
    assert response.status == 200, response
    assert response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8"
    return parse_exposition(response.body.decode())


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_metrics_page_is_well_formed_and_counters_move(start_server, proto):
    server = start_server(**PROTOCOLS[proto])
    types, before = scrape(server)
    for family, kind in {"chatterd_requests_total": "counter", "chatterd_request_duration_seconds": "histogram",
                         "chatterd_open_connections": "gauge", "chatterd_db_pool_connections": "gauge",
                         "chatterd_db_pool_in_use": "gauge", "chatterd_db_pool_waiting": "gauge",
                         "chatterd_posts_committed_total": "counter",
                         "chatterd_log_lines_dropped_total": "counter"}.items():
        assert types.get(family) == kind, f"{family}: {types.get(family)}"

    for _ in range(3):
        assert server.get("/getmaps").status == 200
    assert server.post_json("/postmaps", {"name": "m", "message": "metrics", "geodata": None}).status == 200
    assert server.post_json("/postchatt", {"name": "m"}).status == 422
    assert server.get("/nowhere").status == 404
    _, after = scrape(server)

    def delta(name, **labels):
        return (metric(after, name, **labels) or 0) - (metric(before, name, **labels) or 0)

    assert delta("chatterd_requests_total", route="/getmaps", status="200") == 3
    assert delta("chatterd_requests_total", route="/postmaps", status="200") == 1
    assert delta("chatterd_requests_total", route="/postchatt", status="422") == 1
    assert delta("chatterd_requests_total", route="other", status="404") == 1
    assert delta("chatterd_requests_total", route="/metrics", status="200") == 1  # the first scrape
    assert delta("chatterd_posts_committed_total") == 1
    assert delta("chatterd_request_duration_seconds_count") == 7
    assert delta("chatterd_requests_by_protocol_total", protocol=proto) == 7
    assert delta("chatterd_request_duration_seconds_sum") > 0
    buckets = sorted((float(dict(labels)["le"].replace("Inf", "inf")), value)
                     for (name, labels), value in after.items() if name == "chatterd_request_duration_seconds_bucket")
    assert [value for _, value in buckets] == sorted(value for _, value in buckets), "buckets not cumulative"
    assert buckets[-1] == (float("inf"), metric(after, "chatterd_request_duration_seconds_count"))
    assert metric(after, "chatterd_db_pool_connections") == 8
    assert metric(after, "chatterd_db_pool_waiting") == 0
    assert metric(after, "chatterd_open_connections") >= 1
    assert metric(after, "chatterd_log_lines_dropped_total") == 0


@pytest.mark.parametrize("proto", PROTOCOLS)
@pytest.mark.parametrize("log_format", ["logfmt", "json"])
def test_access_lines_carry_every_field_and_nothing_secret(start_server, log_format, proto):
    server = start_server("--log-format", log_format, **PROTOCOLS[proto])
    given = server.get("/healthz", headers=[("X-Request-Id", "e2e-trace.1:a_b")])
    assert given.status == 200 and given.header("X-Request-Id") == "e2e-trace.1:a_b"
    made = server.get(f"/getmaps?token={SECRET}", headers=[("X-Request-Id", "bad id with spaces")])
    made_id = made.header("X-Request-Id")
    assert made.status == 200 and made_id and re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]+-\d+", made_id), made
    posted = server.request("POST", "/postchatt", body=f'{{"name":"n","message":"{SECRET}"}}'.encode(),
                            headers=[("Content-Type", "application/json"), ("Authorization", f"Bearer {SECRET}"),
                                     ("X-Request-Id", "e2e-post")])
    assert posted.status == 200 and posted.header("X-Request-Id") == "e2e-post"

    def access(request_id):
        return wait_for_record(server.process, log_format,
                               lambda r: r.get("event") == "request" and r.get("request_id") == request_id)

    health, maps, post = access("e2e-trace.1:a_b"), access(made_id), access("e2e-post")
    for record in (health, maps, post):
        assert set(ACCESS_FIELDS) <= set(record), record
        assert RFC3339_MS.fullmatch(str(record["time"])), record
        assert record["level"] == "info"
        assert re.fullmatch(r"127\.0\.0\.1:\d+", str(record["remote"])), record
        assert float(record["duration_ms"]) >= 0
        assert record["proto"] == proto, record
    assert (health["method"], health["path"], int(health["status"]), int(health["bytes"])) == ("GET", "/healthz", 200, 15)
    assert (maps["method"], maps["path"]) == ("GET", "/getmaps")
    assert int(maps["bytes"]) == len(made.body)
    assert (post["method"], post["path"], int(post["status"]), int(post["bytes"])) == ("POST", "/postchatt", 200, 2)
    if log_format == "json":
        assert isinstance(health["status"], int) and isinstance(health["duration_ms"], float)
    output = "\n".join(server.process.lines)
    assert SECRET not in output and "token" not in output and "Bearer" not in output
    lifecycle = [r["event"] for r in log_records(server.process, log_format)]
    assert "listening" in lifecycle


@pytest.mark.parametrize("log_format", ["logfmt", "json"])
def test_a_server_error_is_logged_with_its_cause(start_server, fresh_database, env, log_format):
    url = fresh_database()
    server = start_server("--log-format", log_format, url=url)
    assert server.get("/readyz").status == 200
    name = urlsplit(url).path.lstrip("/")
    psql(env.admin_url, f"DROP DATABASE {name} WITH (FORCE);")
    # Probes share one check a second, so the one before the drop may still answer for a moment.
    deadline = time.monotonic() + 5
    while (response := server.get("/readyz", headers=[("X-Request-Id", "e2e-down")])).status == 200:
        assert time.monotonic() < deadline, "/readyz still 200 five seconds after the database went away"
        time.sleep(0.1)
    assert response.status == 503, response
    error = wait_for_record(server.process, log_format, lambda r: r.get("event") == "request_failed")
    assert error["level"] == "error" and error["request_id"] == "e2e-down", error
    assert int(error["status"]) == 503 and error["path"] == "/readyz"
    assert "ping" in error["cause"] and "StoreError" in error["cause"], error
    assert name in error["cause"] or "database" in error["cause"]
    assert "StoreError" not in response.body.decode(), "the cause is for the log only"


def test_passwords_in_the_database_url_are_masked(env, start_server, database_url):
    # Trust authentication ignores the password, so the server starts, and must not print it.
    with_password = database_url.replace("postgresql://", f"postgresql://postgres:{SECRET}@", 1)
    server = start_server(url=with_password)
    listening = wait_for_record(server.process, "logfmt", lambda r: r.get("event") == "listening")
    assert "***" in listening["database"], listening
    assert SECRET not in "\n".join(server.process.lines)


def test_log_level_warn_hides_access_and_lifecycle_lines(env, database_url):
    # At warn there is no "listening" line to wait for: poll /healthz instead.
    port = free_port()
    process = ChatterdProcess(env.binary, serve_args(env, port, database_url, None, ["--log-level", "warn"]))
    try:
        server = Endpoint("127.0.0.1", port, None, process)
        wait_healthy(server)
        assert server.get("/healthz", headers=[("X-Request-Id", "e2e-quiet")]).status == 200
    finally:
        assert process.stop() == 0  # the log is written out before exit
    assert process.lines == [], process.log()


def test_a_fatal_startup_error_is_one_structured_line(env, database_url):
    done = subprocess.run([env.binary, "serve", "--log-format", "json", "--plain-http", "--port", "1",
                           "--host", "203.0.113.1", "--database-url", database_url, "--migrations",
                           str(env.migrations)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    records = [parse_line(line, "json") for line in done.stderr.splitlines()]
    fatal = [record for record in records if record["event"] == "fatal"]
    assert len(fatal) == 1 and fatal[0]["level"] == "error", done.stderr
    assert "cannot listen on 203.0.113.1:1" in fatal[0]["cause"], done.stderr


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_access_lines_count_no_body_bytes_for_304_and_head(start_server, proto):
    # Regression: a 304 logged the size of the 200 it stands for, though no body goes on the wire.
    server = start_server(**PROTOCOLS[proto])
    full = server.get("/getmaps", headers=[("X-Request-Id", "e2e-full")])
    assert full.status == 200 and full.header("ETag")
    unchanged = server.get("/getmaps", headers=[("X-Request-Id", "e2e-304"), ("If-None-Match", full.header("ETag"))])
    assert unchanged.status == 304 and unchanged.body == b""
    head = server.request("HEAD", "/getmaps", headers=[("X-Request-Id", "e2e-head")])
    assert head.status == 200

    def bytes_logged(request_id):
        return int(wait_for_record(server.process, "logfmt", lambda r: r.get("event") == "request"
                                   and r.get("request_id") == request_id)["bytes"])

    assert bytes_logged("e2e-full") == len(full.body)
    assert bytes_logged("e2e-304") == 0
    assert bytes_logged("e2e-head") == 0

"""The cached feeds on the wire: ETag and 304, gzip, Vary, HEAD, ?since= and ?limit=, and read-your-writes
while many clients post and read at once (README "Incremental feeds")."""

from __future__ import annotations

import gzip
import json
import re
import threading
import time
import uuid

import pytest

from contract import assert_ok_empty_object, error_reason, rows_of, rows_with
from processes import wait_until
from wire import build_request

FEEDS = ["/getmaps", "/getchatts"]
GZIP = [("Accept-Encoding", "gzip, deflate, br")]
# How long another process may take to hear of a post through its LISTEN connection (1-6 ms measured).
CROSS_PROCESS_WINDOW = 2.0


def post(endpoint, message: str, name: str = "feed") -> None:
    assert_ok_empty_object(endpoint.post_json("/postchatt", {"name": name, "message": message}))


def ids_of(endpoint, token: str) -> list[str]:
    _, rows = rows_of(endpoint, "/getchatts")
    return [row[2] for row in rows if row[1].startswith(token)]


@pytest.mark.parametrize("path", FEEDS)
def test_feed_has_a_strong_etag_and_vary(server, path):
    response = server.get(path)
    assert response.status == 200
    assert re.fullmatch(r'"[0-9a-f]{16}"', response.header("ETag") or ""), response
    assert "accept-encoding" in response.tokens("Vary")
    assert response.header("Content-Encoding") is None


@pytest.mark.parametrize("path", FEEDS)
def test_if_none_match_gets_304_without_a_body_on_a_kept_connection(http1_server, path):
    # Over HTTP/2: test_http2.py, HEAD and 304 on one connection.
    full = http1_server.get(path)
    etag = full.header("ETag")
    with http1_server.connect() as conn:
        # Pipelined: had the 304 carried a body, the next response would be read from its bytes.
        conn.send(build_request("GET", path, headers=[("If-None-Match", etag)])
                  + build_request("GET", path, headers=[("If-None-Match", f'"nope", W/{etag}')])
                  + build_request("GET", "/healthz"))
        for _ in range(2):
            response = conn.read_response()
            assert response.status == 304, response
            assert response.body == b""
            assert response.header("ETag") == etag
            assert "accept-encoding" in response.tokens("Vary")
            assert response.header("Content-Length") == full.header("Content-Length")
            assert response.header("Date") is not None
        assert conn.read_response().json() == {"status": "ok"}


def test_a_post_changes_the_etag(server, token):
    old = server.get("/getmaps").header("ETag")
    post(server, token)
    response = server.get("/getmaps", headers=[("If-None-Match", old)])
    assert response.status == 200 and response.header("ETag") != old
    assert rows_with(response.json(), token)


def test_servers_sharing_a_database_give_a_feed_the_same_etag(plain_server, tls_server, token):
    post(plain_server, token)
    first = plain_server.get("/getmaps")

    def the_same_feed():
        response = tls_server.get("/getmaps")
        return response if response.body == first.body else None

    # The other process hears of the post a moment after its 200 (see CROSS_PROCESS_WINDOW).
    second = wait_until(the_same_feed, CROSS_PROCESS_WINDOW)
    assert second is not None, "the other server never served the same feed"
    assert second.header("ETag") == first.header("ETag")


@pytest.mark.parametrize("path", FEEDS)
def test_gzip_decodes_to_the_identical_json(server, path):
    plain = server.get(path)
    zipped = server.get(path, headers=GZIP)
    assert zipped.status == 200
    assert zipped.header("Content-Encoding") == "gzip"
    assert "accept-encoding" in zipped.tokens("Vary")
    assert gzip.decompress(zipped.body) == plain.body
    assert zipped.header("ETag") not in (None, plain.header("ETag"))
    again = server.get(path, headers=GZIP + [("If-None-Match", zipped.header("ETag"))])
    assert again.status == 304 and again.header("Content-Encoding") == "gzip"


@pytest.mark.parametrize("accept", ["gzip;q=0", "identity", "br", ""])
def test_clients_that_refuse_gzip_get_plain_json(protocol_server, accept):
    response = protocol_server.get("/getmaps", headers=[("Accept-Encoding", accept)])
    assert response.header("Content-Encoding") is None
    assert response.body == protocol_server.get("/getmaps").body


def test_head_answers_like_get_for_gzip_and_304(http1_server):
    zipped = http1_server.get("/getmaps", headers=GZIP)
    with http1_server.connect() as conn:
        conn.send(build_request("HEAD", "/getmaps", headers=GZIP)
                  + build_request("HEAD", "/getmaps", headers=GZIP + [("If-None-Match", zipped.header("ETag"))])
                  + build_request("GET", "/healthz"))
        head = conn.read_response(head_request=True)
        assert head.status == 200 and head.body == b""
        for name in ("ETag", "Content-Encoding", "Content-Length", "Vary"):
            assert head.header(name) == zipped.header(name), name
        conditional = conn.read_response(head_request=True)
        assert conditional.status == 304 and conditional.header("ETag") == zipped.header("ETag")
        assert conn.read_response().json() == {"status": "ok"}


def test_since_and_limit_slice_the_feed(protocol_server, token):
    for index in range(4):
        post(protocol_server, f"{token}-{index}")
    ids = ids_of(protocol_server, token)
    assert len(ids) == 4
    _, after_first = rows_of(protocol_server, f"/getchatts?since={ids[0]}")
    assert [row[2] for row in after_first] == ids[1:]
    _, maps = rows_of(protocol_server, f"/getmaps?limit=2&since={ids[0]}")
    assert [row[2] for row in maps] == ids[1:3] and all(len(row) == 5 for row in maps)
    _, last = rows_of(protocol_server, f"/getmaps/?since={ids[3].upper()}")
    assert last == []
    # An id compares case-insensitively on input (RFC 9562 §4), though the server sends it in lower case.
    for spelling in (ids[0].upper(), "".join(c.upper() if i % 2 else c for i, c in enumerate(ids[0]))):
        assert rows_of(protocol_server, f"/getchatts?since={spelling}")[1] == after_first, spelling
    _, everything = rows_of(protocol_server, "/getchatts")
    _, first_two = rows_of(protocol_server, "/getchatts?limit=2")
    assert first_two == everything[:2]


def test_the_default_feed_is_unchanged_by_other_query_keys(protocol_server):
    assert protocol_server.get("/getmaps?sort=desc&page=2").body == protocol_server.get("/getmaps").body


@pytest.mark.parametrize("query, status", [("since=0", 400), ("since=" + "z" * 36, 400), ("limit=-1", 400),
                                           ("limit=ten", 400), (f"since={uuid.uuid4()}", 404)])
def test_bad_since_and_limit_are_json_errors(protocol_server, query, status):
    response = protocol_server.get("/getmaps?" + query)
    assert response.status == status, response
    assert error_reason(response)


def test_posters_read_their_own_writes_under_concurrency(plain_server, tls_server, token):
    # Each worker posts and at once reads the feed, alternately from the same server and the other one.
    # The same server must show the post on the very next read. The other one learns of it from its LISTEN
    # connection a moment later (README, deploy/SCALING.md): it must show it within CROSS_PROCESS_WINDOW.
    failures: list[str] = []
    servers = [plain_server, tls_server]

    def has(reader, message: str, round_: int) -> bool:
        response = reader.get("/getmaps", headers=GZIP if round_ % 2 else [])
        body = gzip.decompress(response.body) if response.header("Content-Encoding") else response.body
        return bool(rows_with(json.loads(body), message))

    def work(worker: int) -> None:
        for round_ in range(6):
            message = f"{token}-{worker}-{round_}"
            try:
                writer = servers[worker % 2]
                post(writer, message)
                reader = servers[(worker + round_) % 2]
                if reader is writer:
                    if not has(reader, message, round_):
                        failures.append(f"{message} missing from the posting server's next read")
                    continue
                deadline = time.monotonic() + CROSS_PROCESS_WINDOW
                while not has(reader, message, round_):
                    if time.monotonic() > deadline:
                        failures.append(f"{message} not on the other server within {CROSS_PROCESS_WINDOW} s")
                        break
                    time.sleep(0.005)
            except Exception as error:  # reported below
                failures.append(repr(error))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures, failures[:5]

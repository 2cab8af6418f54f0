"""The wire contract of API.md as the iOS app sees it: payloads, row shapes, bytes, routes, headers."""

from __future__ import annotations

import email.utils
import json
import re
import time
from datetime import datetime, timedelta, timezone

import pytest

from pgsupport import psql
from wire import build_request, pipeline

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
IMF_DATE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                      r"\d{4} \d{2}:\d{2}:\d{2} GMT$")
IOS_GEODATA = '[42.2936,-83.7166,"North","walking"]'
JSON_UTF8 = [("Content-Type", "application/json; charset=utf-8")]


def post_raw(endpoint, path: str, body: bytes, headers=JSON_UTF8):
    return endpoint.request("POST", path, body=body, headers=headers)


def rows_of(endpoint, path: str) -> tuple[object, list]:
    response = endpoint.get(path)
    assert response.status == 200, response
    return response, response.json()


def rows_with(rows: list, message: str) -> list:
    return [row for row in rows if row[1] == message]


def assert_ok_empty_object(response) -> None:
    assert response.status == 200, response
    assert response.json() == {}, response


# --- payload round trips -------------------------------------------------------------------------

def test_ios_postmaps_payload_round_trips_with_geodata_byte_for_byte(server, token):
    message = f"hi {token}"
    body = ('{"name": "alice", "message": "%s", "geodata": "[42.2936,-83.7166,\\"North\\",\\"walking\\"]"}'
            % message).encode()
    assert_ok_empty_object(post_raw(server, "/postmaps", body))
    response, rows = rows_of(server, "/getmaps")
    [row] = rows_with(rows, message)
    assert row[0] == "alice" and row[4] == IOS_GEODATA
    # The geodata element appears in the response exactly as the client wrote it in its request.
    assert b'"[42.2936,-83.7166,\\"North\\",\\"walking\\"]"' in response.body


def test_postchatt_payload_round_trips_with_null_geodata_in_getmaps(server, token):
    message = f"no location {token}"
    assert_ok_empty_object(post_raw(server, "/postchatt", json.dumps({"name": "bob", "message": message}).encode()))
    _, maps = rows_of(server, "/getmaps")
    [row] = rows_with(maps, message)
    assert row[0] == "bob" and row[4] is None and len(row) == 5
    _, chatts = rows_of(server, "/getchatts")
    [chatt] = rows_with(chatts, message)
    assert chatt == row[:4]


@pytest.mark.parametrize("path", ["/postmaps", "/postchatt"])
def test_username_key_is_accepted_when_name_is_absent(server, token, path):
    message = f"legacy {token}"
    assert_ok_empty_object(post_raw(server, path, json.dumps({"username": "carol", "message": message}).encode()))
    _, rows = rows_of(server, "/getchatts")
    assert [row[0] for row in rows_with(rows, message)] == ["carol"]


def test_name_wins_over_username_when_both_are_sent(server, token):
    message = f"both {token}"
    body = json.dumps({"username": "old", "name": "new", "message": message}).encode()
    assert_ok_empty_object(post_raw(server, "/postchatt", body))
    _, rows = rows_of(server, "/getchatts")
    assert [row[0] for row in rows_with(rows, message)] == ["new"]


@pytest.mark.parametrize("geodata", ['[1.5,2.5,"E","run"]', 5, {"x": 1}, "not geodata"],
                         ids=["valid-string", "number", "object", "invalid-string"])
def test_postchatt_ignores_any_geodata_key(plain_server, token, geodata):
    message = f"ignored geo {token}"
    body = json.dumps({"name": "dan", "message": message, "geodata": geodata}).encode()
    assert_ok_empty_object(post_raw(plain_server, "/postchatt", body))
    _, rows = rows_of(plain_server, "/getmaps")
    [row] = rows_with(rows, message)
    assert row[4] is None


@pytest.mark.parametrize("geodata_json", ["null", None], ids=["explicit-null", "absent"])
def test_postmaps_without_geodata_stores_null(plain_server, token, geodata_json):
    message = f"nogeo {token}"
    body = '{"name":"eve","message":"%s"%s}' % (message, "" if geodata_json is None else ',"geodata":null')
    assert_ok_empty_object(post_raw(plain_server, "/postmaps", body.encode()))
    _, rows = rows_of(plain_server, "/getmaps")
    [row] = rows_with(rows, message)
    assert row[4] is None


def test_unknown_keys_are_ignored(plain_server, token):
    message = f"extra keys {token}"
    body = json.dumps({"name": "fay", "message": message, "extra": [1, {"a": None}], "id": "x", "time": 1})
    assert_ok_empty_object(post_raw(plain_server, "/postmaps", body.encode()))
    _, rows = rows_of(plain_server, "/getmaps")
    [row] = rows_with(rows, message)
    assert row[0] == "fay" and row[2] != "x"


@pytest.mark.parametrize("headers", [[], [("Content-Type", "text/plain")], [("Content-Type", "application/json")]],
                         ids=["no-content-type", "text-plain", "application-json"])
def test_content_type_of_request_is_not_checked(plain_server, token, headers):
    body = json.dumps({"name": "gus", "message": token}).encode()
    assert_ok_empty_object(post_raw(plain_server, "/postchatt", body, headers=headers))


GEODATA_VARIANTS = {
    "ios": IOS_GEODATA,
    "spaces-and-unicode": '[ 42.2936 , -83.7166 , "Nörth ↗ 北" , "walking 🚶‍♀️" ]',
    "number-spellings": '[42.29360,-8.37166e1,"N","w"]',
    "boundaries": '[-90,180.0,"",""]',
    "escapes-inside": '[0,0,"a\\"b\\\\c\\u00e9","tab\\tx/y"]',
    "negative-zero": '[-0.0,-0,"S","still"]',
}


@pytest.mark.parametrize("geodata", GEODATA_VARIANTS.values(), ids=GEODATA_VARIANTS.keys())
def test_geodata_is_returned_byte_for_byte_as_posted(server, token, geodata):
    literal = json.dumps(geodata, ensure_ascii=False).encode()
    body = b'{"name":"geo","message":"%s","geodata":%s}' % (token.encode(), literal)
    assert_ok_empty_object(post_raw(server, "/postmaps", body))
    response, rows = rows_of(server, "/getmaps")
    [row] = rows_with(rows, token)
    assert row[4] == geodata
    assert literal in response.body, "geodata element not returned with the bytes it was posted with"


def test_names_and_messages_round_trip_unicode_and_escapes(plain_server, token):
    name = "Zoë 👨‍👩‍👧‍👦"
    message = f'{token} "quoted" back\\slash tab\t newline\n ctrl\x01 é e\u0301 𝄞'
    assert_ok_empty_object(post_raw(plain_server, "/postmaps",
                                    json.dumps({"name": name, "message": message}).encode()))
    _, rows = rows_of(plain_server, "/getmaps")
    [row] = rows_with(rows, message)
    assert row[0] == name


# --- row shapes ------------------------------------------------------------------------------------

def test_getmaps_rows_have_five_strings_with_null_only_for_missing_geodata(server, token):
    post_raw(server, "/postmaps", json.dumps({"name": "s", "message": token, "geodata": IOS_GEODATA}).encode())
    post_raw(server, "/postchatt", json.dumps({"name": "s", "message": token + "-c"}).encode())
    _, rows = rows_of(server, "/getmaps")
    assert isinstance(rows, list) and rows
    for row in rows:
        assert isinstance(row, list) and len(row) == 5, row
        assert all(isinstance(element, str) for element in row[:4]), row
        assert row[4] is None or isinstance(row[4], str), row
    assert rows_with(rows, token)[0][4] == IOS_GEODATA
    assert rows_with(rows, token + "-c")[0][4] is None


def test_getchatts_rows_have_four_strings_and_cover_every_chatt(server, token):
    post_raw(server, "/postmaps", json.dumps({"name": "s", "message": token, "geodata": IOS_GEODATA}).encode())
    _, chatts = rows_of(server, "/getchatts")
    _, maps = rows_of(server, "/getmaps")
    for row in chatts:
        assert isinstance(row, list) and len(row) == 4 and all(isinstance(e, str) for e in row), row
    assert [row[:4] for row in maps] == chatts


def test_ids_are_unique_lower_case_canonical_uuids(plain_server, token):
    for index in range(3):
        post_raw(plain_server, "/postchatt", json.dumps({"name": "u", "message": f"{token}-{index}"}).encode())
    _, rows = rows_of(plain_server, "/getmaps")
    ids = [row[2] for row in rows]
    assert all(UUID.match(value) for value in ids), [v for v in ids if not UUID.match(v)]
    assert len(set(ids)) == len(ids)


def test_timestamps_are_utc_iso8601_with_microseconds_and_recent(plain_server, token):
    before = datetime.now(timezone.utc)
    post_raw(plain_server, "/postchatt", json.dumps({"name": "t", "message": token}).encode())
    _, rows = rows_of(plain_server, "/getmaps")
    assert all(TIMESTAMP.match(row[3]) for row in rows), [row[3] for row in rows if not TIMESTAMP.match(row[3])]
    [row] = rows_with(rows, token)
    stamp = datetime.strptime(row[3], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    assert before - timedelta(seconds=60) <= stamp <= datetime.now(timezone.utc) + timedelta(seconds=60)


def test_rows_come_back_in_posting_order_even_when_pipelined(plain_server, token):
    sequential = [f"{token}-s{index}" for index in range(5)]
    with plain_server.connect() as conn:
        for message in sequential:
            conn.send(build_request("POST", "/postchatt", json.dumps({"name": "o", "message": message}).encode()))
            assert conn.read_response().status == 200
    piped = [f"{token}-p{index:02d}" for index in range(20)]
    raw = b"".join(build_request("POST", "/postmaps", json.dumps({"name": "o", "message": m}).encode())
                   for m in piped)
    responses, conn = pipeline(plain_server, raw, len(piped))
    conn.close()
    assert [r.status for r in responses] == [200] * len(piped)
    expected = sequential + piped
    for path in ("/getmaps", "/getchatts"):
        _, rows = rows_of(plain_server, path)
        mine = [row for row in rows if row[1].startswith(token)]
        assert [row[1] for row in mine] == expected, path
        stamps = [row[3] for row in mine]
        assert stamps == sorted(stamps), "timestamps go backwards in posting order"


# --- routes -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/getmaps/", "/getchatts/", "/healthz/", "/readyz/", "/metrics/"])
def test_get_routes_answer_with_trailing_slash(plain_server, path):
    assert plain_server.get(path).status == 200


@pytest.mark.parametrize("path", ["/postmaps/", "/postchatt/"])
def test_post_routes_answer_with_trailing_slash(plain_server, token, path):
    assert_ok_empty_object(post_raw(plain_server, path, json.dumps({"name": "ts", "message": token}).encode()))
    _, rows = rows_of(plain_server, "/getchatts")
    assert len(rows_with(rows, token)) == 1


@pytest.mark.parametrize("target", ["/getmaps?since=0", "/getmaps/?x=1&y", "/getchatts?", "/?a=b", "/healthz?x"])
def test_query_strings_are_ignored_on_get(plain_server, target):
    path = target.split("?")[0]
    response = plain_server.get(target)
    assert response.status == 200
    assert response.body == plain_server.get(path).body


def test_query_string_is_ignored_on_post(plain_server, token):
    body = json.dumps({"name": "q", "message": token}).encode()
    assert_ok_empty_object(post_raw(plain_server, "/postchatt?name=x&message=y", body))
    _, rows = rows_of(plain_server, "/getchatts")
    assert [row[0] for row in rows_with(rows, token)] == ["q"]


def test_root_returns_a_json_string(server):
    response = server.get("/")
    assert response.status == 200
    assert isinstance(response.json(), str) and response.json()


@pytest.mark.parametrize("path", ["/", "/getmaps", "/getchatts", "/healthz", "/readyz", "/metrics"])
def test_head_returns_get_headers_without_a_body(server, path):
    with server.connect() as conn:
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
    "getmaps": build_request("GET", "/getmaps"),
    "root": build_request("GET", "/"),
    "post-ok": build_request("POST", "/postchatt", b'{"name":"h","message":"headers check"}'),
    "post-422": build_request("POST", "/postchatt", b"{"),
    "not-found": build_request("GET", "/nope"),
    "wrong-method": build_request("DELETE", "/getmaps"),
    "unknown-method": build_request("FOO", "/getmaps"),
    "framing-400": b"GET /getmaps HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n",
    "healthz": build_request("GET", "/healthz"),
    "readyz": build_request("GET", "/readyz"),
    "metrics": build_request("GET", "/metrics"),
}


@pytest.mark.parametrize("raw", REQUESTS_FOR_HEADERS.values(), ids=REQUESTS_FOR_HEADERS.keys())
def test_every_response_has_content_type_length_and_date(plain_server, raw):
    [response], conn = pipeline(plain_server, raw, 1)
    conn.close()
    assert response.header("Content-Type"), response
    assert len(response.headers_named("Content-Length")) == 1
    assert int(response.header("Content-Length")) == len(response.body)
    date = response.header("Date")
    assert date and IMF_DATE.match(date), date
    skew = abs(email.utils.parsedate_to_datetime(date).timestamp() - time.time())
    assert skew < 60, date
    if response.status != 200 or raw.startswith(b"POST"):
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


# --- the store is the database, not a per-process copy ----------------------------------------------

def test_chatt_posted_through_one_server_is_visible_through_another(plain_server, tls_server, token):
    for source, reader in ((tls_server, plain_server), (plain_server, tls_server)):
        message = f"{token}-{source.tls}"
        reader.get("/getmaps")  # let the reader cache what it has
        assert_ok_empty_object(post_raw(source, "/postmaps", json.dumps({"name": "x", "message": message}).encode()))
        for path in ("/getmaps", "/getchatts"):
            _, rows = rows_of(reader, path)
            assert len(rows_with(rows, message)) == 1, f"{path} on the other server misses a committed chatt"


def test_row_written_by_another_database_client_is_served(plain_server, database_url, token):
    plain_server.get("/getmaps")
    psql(database_url, "INSERT INTO chatts (name, message, geodata) VALUES ('other', :'m', NULL);", {"m": token})
    _, rows = rows_of(plain_server, "/getmaps")
    assert [row[0] for row in rows_with(rows, token)] == ["other"]


@pytest.mark.parametrize("text", ["x'); DROP TABLE chatts; --", "$1 $2 %s %n \\x00 '' \"\" ;", "' OR '1'='1"],
                         ids=["drop-table", "placeholders", "or-true"])
def test_sql_looking_text_is_stored_as_data(plain_server, token, text):
    message = f"{token} {text}"
    geodata = json.dumps([1, 2, text, text])
    body = json.dumps({"name": text[:32], "message": message, "geodata": geodata}).encode()
    assert_ok_empty_object(post_raw(plain_server, "/postmaps", body))
    _, rows = rows_of(plain_server, "/getmaps")
    [row] = rows_with(rows, message)
    assert (row[0], row[4]) == (text[:32], geodata)


def test_metrics_do_not_grow_a_series_per_unknown_path(plain_server, token):
    for index in range(30):
        plain_server.get(f"/{token}-{index}")
    text = plain_server.get("/metrics").body.decode()
    assert token not in text, "request paths leak into metric labels (unbounded cardinality)"


def test_empty_store_returns_empty_arrays(start_server, fresh_database):
    server = start_server(url=fresh_database())
    for path in ("/getmaps", "/getchatts"):
        response = server.get(path)
        assert (response.status, response.body.strip()) == (200, b"[]")

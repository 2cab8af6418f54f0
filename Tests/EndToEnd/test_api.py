"""The wire contract of docs/API.md as the iOS app sees it: payloads, row shapes, bytes, routes, headers."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest

from contract import assert_ok_empty_object, post_raw, rows_of, rows_with
from pgsupport import psql
from processes import wait_until
from wire import build_request, pipeline

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
IOS_GEODATA = '[42.2936,-83.7166,"North","walking"]'


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
def test_postchatt_ignores_any_geodata_key(protocol_server, token, geodata):
    message = f"ignored geo {token}"
    body = json.dumps({"name": "dan", "message": message, "geodata": geodata}).encode()
    assert_ok_empty_object(post_raw(protocol_server, "/postchatt", body))
    _, rows = rows_of(protocol_server, "/getmaps")
    [row] = rows_with(rows, message)
    assert row[4] is None


@pytest.mark.parametrize("geodata_json", ["null", None], ids=["explicit-null", "absent"])
def test_postmaps_without_geodata_stores_null(protocol_server, token, geodata_json):
    message = f"nogeo {token}"
    body = '{"name":"eve","message":"%s"%s}' % (message, "" if geodata_json is None else ',"geodata":null')
    assert_ok_empty_object(post_raw(protocol_server, "/postmaps", body.encode()))
    _, rows = rows_of(protocol_server, "/getmaps")
    [row] = rows_with(rows, message)
    assert row[4] is None


def test_unknown_keys_are_ignored(protocol_server, token):
    message = f"extra keys {token}"
    body = json.dumps({"name": "fay", "message": message, "extra": [1, {"a": None}], "id": "x", "time": 1})
    assert_ok_empty_object(post_raw(protocol_server, "/postmaps", body.encode()))
    _, rows = rows_of(protocol_server, "/getmaps")
    [row] = rows_with(rows, message)
    assert row[0] == "fay" and row[2] != "x"


@pytest.mark.parametrize("headers", [[], [("Content-Type", "text/plain")], [("Content-Type", "application/json")]],
                         ids=["no-content-type", "text-plain", "application-json"])
def test_content_type_of_request_is_not_checked(protocol_server, token, headers):
    body = json.dumps({"name": "gus", "message": token}).encode()
    assert_ok_empty_object(post_raw(protocol_server, "/postchatt", body, headers=headers))


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


def test_names_and_messages_round_trip_unicode_and_escapes(protocol_server, token):
    name = "Zoë 👨‍👩‍👧‍👦"
    message = f'{token} "quoted" back\\slash tab\t newline\n ctrl\x01 é e\u0301 𝄞'
    assert_ok_empty_object(post_raw(protocol_server, "/postmaps",
                                    json.dumps({"name": name, "message": message}).encode()))
    _, rows = rows_of(protocol_server, "/getmaps")
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


def test_ids_are_unique_lower_case_canonical_uuids(protocol_server, token):
    for index in range(3):
        post_raw(protocol_server, "/postchatt", json.dumps({"name": "u", "message": f"{token}-{index}"}).encode())
    _, rows = rows_of(protocol_server, "/getmaps")
    ids = [row[2] for row in rows]
    assert all(UUID.match(value) for value in ids), [v for v in ids if not UUID.match(v)]
    assert len(set(ids)) == len(ids)


def test_timestamps_are_utc_iso8601_with_microseconds_and_recent(protocol_server, token):
    before = datetime.now(timezone.utc)
    post_raw(protocol_server, "/postchatt", json.dumps({"name": "t", "message": token}).encode())
    _, rows = rows_of(protocol_server, "/getmaps")
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


# --- the store is the database, not a per-process copy ----------------------------------------------

# Another process hears of a change through its LISTEN connection, a few milliseconds after the commit
# (README, "Several processes"); only --strict-feeds promises the very next read (test_scale_out.py).
HEARS_WITHIN_SECONDS = 2


def test_chatt_posted_through_one_server_is_visible_through_another(plain_server, tls_server, token):
    for source, reader in ((tls_server, plain_server), (plain_server, tls_server)):
        message = f"{token}-{source.tls}"
        reader.get("/getmaps")  # let the reader cache what it has
        assert_ok_empty_object(post_raw(source, "/postmaps", json.dumps({"name": "x", "message": message}).encode()))
        for path in ("/getmaps", "/getchatts"):
            found = wait_until(lambda: rows_with(rows_of(reader, path)[1], message), HEARS_WITHIN_SECONDS)
            assert len(found) == 1, f"{path} on the other server misses a committed chatt"


def test_row_written_by_another_database_client_is_served(plain_server, database_url, token):
    plain_server.get("/getmaps")
    psql(database_url, "INSERT INTO chatts (name, message, geodata) VALUES ('other', :'m', NULL);", {"m": token})
    found = wait_until(lambda: rows_with(rows_of(plain_server, "/getmaps")[1], token), HEARS_WITHIN_SECONDS)
    assert [row[0] for row in found] == ["other"]


@pytest.mark.parametrize("text", ["x'); DROP TABLE chatts; --", "$1 $2 %s %n \\x00 '' \"\" ;", "' OR '1'='1"],
                         ids=["drop-table", "placeholders", "or-true"])
def test_sql_looking_text_is_stored_as_data(protocol_server, token, text):
    message = f"{token} {text}"
    geodata = json.dumps([1, 2, text, text])
    body = json.dumps({"name": text[:32], "message": message, "geodata": geodata}).encode()
    assert_ok_empty_object(post_raw(protocol_server, "/postmaps", body))
    _, rows = rows_of(protocol_server, "/getmaps")
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

"""`Feed-Position` (docs/API.md): the position of the store's change log a feed answer shows, moving with every
commit (chatterd's posts and psql's inserts alike) and with every edit, the same in every process."""

from __future__ import annotations

import json

from contract import assert_ok_empty_object, post_raw
from pgsupport import psql
from processes import wait_until
from streamsupport import POSITION, parse_position, store_position

# A psql commit reaches the server through its LISTEN connection within milliseconds (README, "Several processes").
HEARS_WITHIN_SECONDS = 2


def position(endpoint, path: str = "/getmaps", headers=None) -> str:
    response = endpoint.get(path, headers=headers or [])
    assert response.status in (200, 304), response
    value = response.header("Feed-Position")
    assert value and POSITION.match(value), response
    return value


def tick(text: str) -> int:
    return parse_position(text)[0]


def test_the_position_advances_with_every_post_and_every_psql_insert(start_server, fresh_database, token):
    url = fresh_database()
    server = start_server(url=url)
    h2 = start_server(url=url, h2=True)
    first = position(server)
    assert position(server, "/getchatts") == first and first == store_position(url), "a new store's first tick"
    last = first
    for count in range(1, 4):
        body = json.dumps({"name": "n", "message": f"{token}-{count}"}).encode()
        assert_ok_empty_object(post_raw(server, "/postchatt", body))
        # The posting server shows its own post at once (read your writes), in a later tick.
        now = position(server)
        assert tick(now) > tick(last) and position(server, "/getchatts") == now
        assert len(server.get("/getchatts").json()) == count
        last = now
    # The other server hears of it and shows the same position.
    assert wait_until(lambda: position(h2) == last, HEARS_WITHIN_SECONDS), (position(h2), last)
    for count in range(4, 6):
        psql(url, "INSERT INTO chatts (name, message) VALUES ('psql', :'m');", {"m": f"{token}-psql-{count}"})
        assert wait_until(lambda: len(server.get("/getchatts").json()) == count, HEARS_WITHIN_SECONDS)
        assert tick(position(server)) > tick(last)
        last = position(server)
        assert wait_until(lambda: position(h2, "/getchatts") == last, HEARS_WITHIN_SECONDS)
    assert store_position(url) == last


def test_slices_and_304_carry_the_whole_feeds_position(start_server, fresh_database, token):
    url = fresh_database()
    server = start_server(url=url)
    for index in range(3):
        assert_ok_empty_object(post_raw(server, "/postmaps", json.dumps({"name": "n", "message": f"{index}"}).encode()))
    whole = server.get("/getmaps")
    current = whole.header("Feed-Position")
    assert current == store_position(url) and len(parse_position(current)) == 3 and current.count(".") == 1
    first = whole.json()[0][2]
    assert position(server, "/getmaps?limit=1") == current
    assert position(server, f"/getmaps?since={first}") == current
    not_modified = server.get("/getmaps", headers=[("If-None-Match", whole.header("ETag"))])
    assert not_modified.status == 304 and not_modified.header("Feed-Position") == current
    assert position(server, "/getmaps", [("Accept-Encoding", "gzip")]) == current


def test_an_edit_in_psql_moves_the_position(start_server, fresh_database, token):
    url = fresh_database()
    server = start_server(url=url)
    assert_ok_empty_object(post_raw(server, "/postchatt", json.dumps({"name": "n", "message": token}).encode()))
    before = position(server)
    psql(url, "UPDATE chatts SET message = :'m';", {"m": token + "-edited"})
    assert wait_until(lambda: tick(position(server)) > tick(before), HEARS_WITHIN_SECONDS), position(server)
    assert server.get("/getchatts").json()[0][1] == token + "-edited"
    edited = position(server)
    psql(url, "DELETE FROM chatts;")
    assert wait_until(lambda: tick(position(server)) > tick(edited), HEARS_WITHIN_SECONDS), position(server)
    assert server.get("/getmaps").json() == []
    assert position(server) == store_position(url)

"""`Feed-Position: E-N` (docs/API.md): the commit position of the feed an answer shows, moving with every commit
(chatterd's posts and psql's inserts alike, in commit order) and with a new epoch on every edit."""

from __future__ import annotations

import json
import re

from contract import assert_ok_empty_object, post_raw
from pgsupport import psql
from processes import wait_until

POSITION = re.compile(r"^[0-9]{1,18}-[0-9]{1,18}$")
# A psql commit reaches the server through its LISTEN connection within milliseconds (README, "Several processes").
HEARS_WITHIN_SECONDS = 2


def position(endpoint, path: str = "/getmaps", headers=None) -> str:
    response = endpoint.get(path, headers=headers or [])
    assert response.status in (200, 304), response
    value = response.header("Feed-Position")
    assert value and POSITION.match(value), response
    return value


def test_the_position_advances_with_every_post_and_every_psql_insert(start_server, fresh_database, token):
    url = fresh_database()
    server = start_server(url=url)
    h2 = start_server(url=url, h2=True)
    assert position(server) == "1-0" and position(server, "/getchatts") == "1-0"
    for count in range(1, 4):
        body = json.dumps({"name": "n", "message": f"{token}-{count}"}).encode()
        assert_ok_empty_object(post_raw(server, "/postchatt", body))
        # The posting server shows its own post at once (read your writes).
        assert position(server) == f"1-{count}" and position(server, "/getchatts") == f"1-{count}"
    # The other server hears of it and shows the same position.
    assert wait_until(lambda: position(h2) == "1-3", HEARS_WITHIN_SECONDS)
    for count in range(4, 6):
        psql(url, "INSERT INTO chatts (name, message) VALUES ('psql', :'m');", {"m": f"{token}-psql-{count}"})
        assert wait_until(lambda: position(server) == f"1-{count}", HEARS_WITHIN_SECONDS), position(server)
        assert wait_until(lambda: position(h2, "/getchatts") == f"1-{count}", HEARS_WITHIN_SECONDS)
    assert_ok_empty_object(post_raw(server, "/postmaps", json.dumps({"name": "n", "message": token}).encode()))
    assert position(server) == "1-6"


def test_slices_and_304_carry_the_whole_feeds_position(start_server, fresh_database, token):
    url = fresh_database()
    server = start_server(url=url)
    for index in range(3):
        assert_ok_empty_object(post_raw(server, "/postmaps", json.dumps({"name": "n", "message": f"{index}"}).encode()))
    whole = server.get("/getmaps")
    assert whole.header("Feed-Position") == "1-3"
    first = whole.json()[0][2]
    assert position(server, "/getmaps?limit=1") == "1-3"
    assert position(server, f"/getmaps?since={first}") == "1-3"
    not_modified = server.get("/getmaps", headers=[("If-None-Match", whole.header("ETag"))])
    assert not_modified.status == 304 and not_modified.header("Feed-Position") == "1-3"
    assert position(server, "/getmaps", [("Accept-Encoding", "gzip")]) == "1-3"


def test_an_edit_in_psql_starts_a_new_epoch(start_server, fresh_database, token):
    url = fresh_database()
    server = start_server(url=url)
    assert_ok_empty_object(post_raw(server, "/postchatt", json.dumps({"name": "n", "message": token}).encode()))
    assert position(server) == "1-1"
    psql(url, "UPDATE chatts SET message = :'m';", {"m": token + "-edited"})
    assert wait_until(lambda: position(server) == "2-1", HEARS_WITHIN_SECONDS), position(server)
    psql(url, "DELETE FROM chatts;")
    assert wait_until(lambda: position(server) == "3-1", HEARS_WITHIN_SECONDS), position(server)
    assert server.get("/getmaps").json() == []

"""Removals (docs/API.md, `DELETE /chatts/<id>` and the live feed's "Removals"): a chatt deleted in psql or by a
moderator is an event of the store's change log like a post, in commit order, on every stream over HTTP/1.1 and
HTTP/2 (`event: delete`, its position, the chatt's id as a JSON string); the feeds of every process leave it out
with no full read of the store; nobody is reset, and a client resuming across it gets it once. A moderator is
named by a token of `--admin-token-file`, reloaded on SIGHUP; the store records who removed what and why."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess

import pytest

from pgsupport import psql
from processes import wait_until
from sse import subscribe
from streamsupport import log_ids, post, settled_position
from telemetry import log_records

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"


@pytest.fixture(params=["plain", "tls", "h2"])
def stream_server(request):
    return request.getfixturevalue(f"{request.param}_server")


def delete_event(position: str, chatt_id: str) -> bytes:
    return f'event: delete\nid: {position}\ndata: "{chatt_id}"\n\n'.encode()


def full_reads(endpoint) -> int:
    response = endpoint.get("/metrics")
    assert response.status == 200, response
    found = re.search(rb"^chatterd_feed_full_reads_total (\d+)$", response.body, re.MULTILINE)
    assert found, "no full-read counter in /metrics"
    return int(found.group(1))


def ids_in(endpoint, path: str) -> list[str]:
    response = endpoint.get(path)
    assert response.status == 200, response
    return [row[2] for row in response.json()]


def test_a_psql_delete_reaches_every_stream_once_in_log_order_and_resets_no_one(stream_server, database_url, token):
    post(stream_server, f"{token}-kept")
    post(stream_server, f"{token}-removed")
    before = settled_position(stream_server, database_url)
    chatts = {row[1]: row[2] for row in stream_server.get("/getmaps").json()}
    removed, kept = chatts[f"{token}-removed"], chatts[f"{token}-kept"]
    ids_in(stream_server, "/getchatts")
    reads = full_reads(stream_server)
    with subscribe(stream_server, "/getmaps/stream") as maps, subscribe(stream_server, "/getchatts/stream") as plain:
        assert maps.response.status == 200 and plain.response.status == 200
        assert psql(database_url, "DELETE FROM chatts WHERE id = :'id' RETURNING 1;", {"id": removed}).split() == ["1"]
        post(stream_server, f"{token}-after")
        for sub in (maps, plain):
            events = sub.wait_events(2)
            assert events[0].raw == delete_event(events[0].id, removed), events[0].raw
            assert events[0].event == "delete" and json.loads(events[0].data) == removed
            assert events[1].event is None and events[1].row[1] == f"{token}-after"
            assert [event.id for event in events] == log_ids(database_url, before)
            sub.quiet(0.3)
            assert len(sub.events) == 2 and not sub.done, "nothing more, and no reset"
    for path in ("/getmaps", "/getchatts"):
        shown = ids_in(stream_server, path)
        assert removed not in shown and kept in shown
    assert full_reads(stream_server) == reads, "the feeds left the chatt out without reading the store in full"
    # A client resuming from before the removal gets it once, in its place; one from after it, only the post.
    with subscribe(stream_server, "/getmaps/stream", last_event_id=before) as sub:
        events = sub.wait_events(2)
        assert events[0].raw == delete_event(events[0].id, removed) and events[1].row[1] == f"{token}-after"
        sub.quiet(0.3)
        assert len(sub.events) == 2
        after_removal = events[0].id
    with subscribe(stream_server, "/getchatts/stream", last_event_id=after_removal) as sub:
        events = sub.wait_events(1)
        assert events[0].row[1] == f"{token}-after"
    # A cursor at the removed chatt still works: the chatts after where it stood.
    for path in ("/getmaps", "/getchatts"):
        response = stream_server.get(f"{path}?since={removed}")
        assert response.status == 200, response
        assert [row[1] for row in response.json()] == [f"{token}-after"]


def test_a_delete_of_many_chatts_in_one_transaction_is_one_event_each(stream_server, database_url, token):
    for index in range(5):
        post(stream_server, f"{token}-{index}")
    before = settled_position(stream_server, database_url)
    mine = [row[2] for row in stream_server.get("/getmaps").json() if row[1].startswith(f"{token}-")]
    with subscribe(stream_server, "/getmaps/stream", last_event_id=before) as sub:
        psql(database_url, "DELETE FROM chatts WHERE message LIKE :'prefix';", {"prefix": f"{token}-%"})
        events = sub.wait_events(5)
        assert sorted(json.loads(event.data) for event in events) == sorted(mine)
        assert all(event.event == "delete" for event in events)
        assert [event.id for event in events] == log_ids(database_url, before)
        sub.quiet(0.3)
        assert len(sub.events) == 5 and not sub.done
    assert not set(mine) & set(ids_in(stream_server, "/getmaps"))


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "admin-tokens"
    path.write_text(f"# who may remove chatts\nalice:{ALICE}\n")
    os.chmod(path, 0o600)
    return path


def delete(endpoint, chatt_id: str, bearer: str | None = ALICE, body: bytes | None = None):
    headers = [("Content-Type", "application/json")]
    if bearer is not None:
        headers.append(("Authorization", f"Bearer {bearer}"))
    payload = json.dumps({"reason": "spam"}).encode() if body is None else body
    return endpoint.request("DELETE", f"/chatts/{chatt_id}", body=payload, headers=headers)


@pytest.mark.parametrize("transport", ["plain", "tls", "h2"])
def test_a_moderators_removal_is_gone_from_both_processes_and_reaches_their_streams(
        start_server, token_file, database_url, token, transport):
    server = start_server("--admin-token-file", str(token_file), tls=transport != "plain", h2=transport == "h2")
    other = start_server()
    post(server, f"{token}-doomed")
    post(server, f"{token}-kept")
    before = settled_position(server, database_url)
    doomed = next(row[2] for row in server.get("/getmaps").json() if row[1] == f"{token}-doomed")
    assert wait_until(lambda: doomed in ids_in(other, "/getmaps"), 5)
    with subscribe(other, "/getmaps/stream", last_event_id=before) as remote:
        response = delete(server, doomed)
        assert response.status == 200 and response.json() == {}, response
        # Read your writes: gone from the next read of the process that answered.
        assert doomed not in ids_in(server, "/getmaps") and doomed not in ids_in(server, "/getchatts")
        event = remote.wait_events(1)[0]
        assert event.raw == delete_event(event.id, doomed)
    assert wait_until(lambda: doomed not in ids_in(other, "/getmaps"), 5), "the other process still shows it"
    again = delete(server, doomed)
    assert again.status == 404 and "error" in again.json()
    audit = psql(database_url, "SELECT removed_by || ' ' || reason FROM chatts_removals WHERE id = :'id';",
                 {"id": doomed})
    assert audit.split("\n")[0] == "alice spam"


def test_refusals_and_a_reloaded_token_file(start_server, token_file, token):
    unconfigured = start_server()
    post(unconfigured, f"{token}-target")
    target = next(row[2] for row in unconfigured.get("/getmaps").json() if row[1] == f"{token}-target")
    refused = delete(unconfigured, target)
    assert refused.status == 403 and "error" in refused.json()
    server = start_server("--admin-token-file", str(token_file))
    for bearer in (None, BOB, ALICE + "x"):
        response = delete(server, target, bearer=bearer)
        assert response.status == 401 and response.header("WWW-Authenticate") == "Bearer", response
    assert delete(server, "not-a-uuid").status == 400
    assert delete(server, target, body=b'{"reason": ""}').status == 400
    assert delete(server, target, body=b"{}").status == 400
    assert target in ids_in(server, "/getmaps"), "nothing refused removed anything"
    token_file.write_text(f"bob:{BOB}\n")
    os.chmod(token_file, 0o600)
    before = len([r for r in log_records(server.process, "logfmt") if r.get("event") == "admin_tokens_reloaded"])
    server.process.signal(signal.SIGHUP)
    assert wait_until(lambda: len([r for r in log_records(server.process, "logfmt")
                                   if r.get("event") == "admin_tokens_reloaded"]) > before, 10)
    assert delete(server, target).status == 401, "alice's token went with the reload"
    assert delete(server, target, bearer=BOB).status == 200
    assert not any(ALICE in line or BOB in line for line in list(server.process.lines)), "a token was logged"


def test_a_token_file_others_may_read_stops_the_server(env, token_file, database_url):
    os.chmod(token_file, 0o644)
    done = subprocess.run([env.binary, "serve", "--plain-http", "--port", "0", "--database-url", database_url,
                           "--admin-token-file", str(token_file)], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "chmod 600" in done.stderr, done.stderr


def test_retention_removes_expired_chatts_as_removals_every_process_follows(start_server, fresh_database, token):
    url = fresh_database()
    server = start_server(url=url)
    post(server, f"{token}-new")
    psql(url, "INSERT INTO chatts (name, message, time) SELECT 'old', :'prefix' || i, now() - interval '40 days' "
              "FROM generate_series(1, 3) AS i;", {"prefix": f"{token}-old-"})
    before = settled_position(server, url)
    with subscribe(server, "/getmaps/stream", last_event_id=before) as sub:
        start_server("--retention-days", "30", url=url)
        events = sub.wait_events(3)
        assert [event.event for event in events] == ["delete"] * 3
        sub.quiet(0.3)
        assert len(sub.events) == 3 and not sub.done
    assert wait_until(lambda: [row[1] for row in server.get("/getmaps").json()] == [f"{token}-new"], 5)
    audit = psql(url, "SELECT count(*) FROM chatts_removals WHERE removed_by = 'retention' "
                      "AND reason = 'older than 30 days';")
    assert audit.strip() == "3"

"""The feed cache and the change listener together: while chatterd listens for chatts_changed, a cached feed is
served without touching the database, and any change to the table, by anyone (another chatterd, an operator's
psql), reaches the next reads; while the listener is down, every read checks the store's version instead."""

from __future__ import annotations

import subprocess
import time

from contract import rows_of, rows_with
from pgsupport import psql
from telemetry import metric, parse_exposition

VISIBLE_WITHIN = 2.0  # seconds from the operator's commit to the change showing in a feed


def cache_counts(endpoint) -> tuple[float, float]:
    _, samples = parse_exposition(endpoint.get("/metrics").body.decode())
    return metric(samples, "chatterd_feed_cache_hits_total"), metric(samples, "chatterd_feed_cache_misses_total")


def post(endpoint, message: str) -> None:
    response = endpoint.post_json("/postmaps", {"name": "listener", "message": message,
                                                "geodata": "[42.29,-83.71,\"North\",\"walking\"]"})
    assert response.status == 200, response


def wait_for(endpoint, path: str, condition, what: str) -> float:
    started = time.monotonic()
    while not condition(rows_of(endpoint, path)[1]):
        assert time.monotonic() - started < VISIBLE_WITHIN, what
        time.sleep(0.01)
    return time.monotonic() - started


def mine(rows: list, token: str) -> list:
    return [row for row in rows if row[1].startswith(token)]


def listening(endpoint) -> bool:
    return any("event=change_listener_up" in line for line in list(endpoint.process.lines))


def started_listening(start_server, fresh_database):
    url = fresh_database()
    endpoint = start_server(url=url)
    deadline = time.monotonic() + 10
    while not listening(endpoint):
        assert time.monotonic() < deadline, endpoint.process.log()
        time.sleep(0.02)
    return endpoint, url


def test_a_current_feed_is_served_while_the_table_is_locked(start_server, fresh_database, token):
    """A current, trusted feed needs no query at all, so even a table lock (which would stall any query,
    the version check included) does not delay it."""
    endpoint, url = started_listening(start_server, fresh_database)
    post(endpoint, token)
    # The post's own notification arrives a moment after its 200 and invalidates the feed once more:
    # wait until a read no longer misses, so the lock below meets a settled cache.
    deadline = time.monotonic() + 10
    while True:
        rows_of(endpoint, "/getmaps")
        hits, misses = cache_counts(endpoint)
        rows_of(endpoint, "/getmaps")
        if cache_counts(endpoint)[1] == misses:
            break
        assert time.monotonic() < deadline, "the feed never settled"
        time.sleep(0.05)
    hits, misses = cache_counts(endpoint)
    locker = subprocess.Popen(["psql", "-X", "-q", "-d", url], stdin=subprocess.PIPE, text=True)
    try:
        locker.stdin.write("BEGIN; LOCK TABLE chatts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(30);\n")
        locker.stdin.flush()
        deadline = time.monotonic() + 10
        while psql(url, "SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND granted "
                        "AND relation = 'chatts'::regclass;").strip() != "1":
            assert time.monotonic() < deadline, "the lock was never taken"
            time.sleep(0.05)
        for _ in range(20):
            response, rows = rows_of(endpoint, "/getmaps")
            assert response.status == 200 and rows_with(rows, token)
    finally:
        locker.kill()
        locker.wait()
    after_hits, after_misses = cache_counts(endpoint)
    assert after_misses == misses, "a current feed was read from the database again"
    assert after_hits >= hits + 20


def test_operator_delete_and_update_reach_the_cached_feed(start_server, fresh_database, token):
    endpoint, url = started_listening(start_server, fresh_database)
    for suffix in ("keep", "edit", "spam"):
        post(endpoint, f"{token}-{suffix}")
    assert len(mine(rows_of(endpoint, "/getmaps")[1], token)) == 3
    rows_of(endpoint, "/getchatts")

    psql(url, f"DELETE FROM chatts WHERE message = '{token}-spam';")
    wait_for(endpoint, "/getmaps", lambda rows: not rows_with(rows, f"{token}-spam"), "deleted chatt still served")
    # An in-place edit keeps count(*) and max(seq): only the notification can tell the cache.
    psql(url, f"UPDATE chatts SET message = '{token}-edited' WHERE message = '{token}-edit';")
    wait_for(endpoint, "/getchatts", lambda rows: rows_with(rows, f"{token}-edited"), "edit not served")
    wait_for(endpoint, "/getmaps", lambda rows: rows_with(rows, f"{token}-edited"), "edit not served")
    assert [row[1] for row in mine(rows_of(endpoint, "/getmaps")[1], token)] == \
        [f"{token}-keep", f"{token}-edited"]


def test_reads_stay_correct_while_the_listener_reconnects(start_server, fresh_database, token):
    endpoint, url = started_listening(start_server, fresh_database)
    post(endpoint, f"{token}-a")
    post(endpoint, f"{token}-b")
    rows_of(endpoint, "/getmaps")
    psql(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              "WHERE query LIKE '%chatts_changed%' AND pid <> pg_backend_pid();")
    # Whether the listener is down or already back, a delete must show up.
    psql(url, f"DELETE FROM chatts WHERE message = '{token}-a';")
    wait_for(endpoint, "/getmaps", lambda rows: not rows_with(rows, f"{token}-a"), "delete lost across reconnect")
    deadline = time.monotonic() + 10
    while sum("event=change_listener_up" in line for line in list(endpoint.process.lines)) < 2:
        assert time.monotonic() < deadline, "the listener did not reconnect:\n" + endpoint.process.log()
        time.sleep(0.05)
    psql(url, f"DELETE FROM chatts WHERE message = '{token}-b';")
    wait_for(endpoint, "/getmaps", lambda rows: not rows_with(rows, f"{token}-b"), "delete lost after reconnect")


def test_a_disabled_trigger_makes_reads_check_the_store_again(start_server, fresh_database, token):
    """An operator's bulk load with the trigger disabled must not leave the cache trusting notifications
    that no longer come: the listener notices and reads go back to checking the store's version."""
    endpoint, url = started_listening(start_server, fresh_database)
    post(endpoint, f"{token}-a")
    rows_of(endpoint, "/getmaps")
    psql(url, "ALTER TABLE chatts DISABLE TRIGGER chatts_changed;")
    deadline = time.monotonic() + 10
    while not any("event=change_listener_down" in line for line in list(endpoint.process.lines)):
        assert time.monotonic() < deadline, "the disabled trigger went unnoticed:\n" + endpoint.process.log()
        time.sleep(0.05)
    psql(url, f"INSERT INTO chatts (name, message) VALUES ('bulk', '{token}-bulk');")
    wait_for(endpoint, "/getmaps", lambda rows: rows_with(rows, f"{token}-bulk"), "bulk-loaded chatt not served")
    psql(url, "ALTER TABLE chatts ENABLE TRIGGER chatts_changed;")
    deadline = time.monotonic() + 10
    while sum("event=change_listener_up" in line for line in list(endpoint.process.lines)) < 2:
        assert time.monotonic() < deadline, "trust was not restored:\n" + endpoint.process.log()
        time.sleep(0.05)

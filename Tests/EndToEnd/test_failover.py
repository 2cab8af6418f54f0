"""Failover to a hot standby: a primary and a `pg_basebackup -R` standby streaming synchronously, posts flowing,
the primary killed (`pg_ctl stop -m immediate`) and the standby promoted (`pg_ctl promote`), as Patroni or repmgr
would. chatterd reaches both through one libpq multi-host URL and must find the new primary by itself.

The cluster pair is this module's own (free ports, temporary directories), removed whatever happens.
"""

from __future__ import annotations

import time

import pytest

from contract import rows_of, rows_with
from pgsupport import Cluster, message_counts, psql, wait_for_cluster, with_database
from poststream import BOUND, PostStream, assert_unavailable
from processes import free_port, wait_until

DATABASE = "chatterdb"
OUTAGE_SECONDS = 3.0  # how long the test leaves chatterd without a primary
RECOVERY_BOUND = 15.0  # seconds from the promotion to posts answered 200 again


@pytest.fixture
def replicated_pair():
    """(primary, standby): synchronous streaming replication on loopback TCP."""
    made: list[Cluster] = []
    try:
        # fsync off: no machine crashes here (only the server is killed), so the OS cache keeps what the
        # standby has "flushed", and what the test checks is the acknowledgement, not the disk.
        settings = {"fsync": "off", "full_page_writes": "off"}
        primary = Cluster(port=free_port(), listen="127.0.0.1", settings=settings)
        made.append(primary)
        primary.start()
        wait_for_cluster(primary.url)
        psql(primary.url, f"CREATE DATABASE {DATABASE};")
        # As an operator would: the setting lands in postgresql.auto.conf, which the base backup copies.
        psql(primary.url, "ALTER SYSTEM SET synchronous_standby_names = '*';")
        psql(primary.url, "SELECT pg_reload_conf();")
        standby = Cluster(port=free_port(), listen="127.0.0.1", settings=settings, standby_of=primary)
        made.append(standby)
        standby.start()
        synchronous = wait_until(lambda: psql(primary.url, "SELECT sync_state FROM pg_stat_replication;").strip()
                                 == "sync", 30)
        assert synchronous, f"the standby never became synchronous:\n{standby.server_log()}"
        yield primary, standby
    finally:
        for cluster in made:
            cluster.destroy()


def promote(standby: Cluster) -> None:
    """Makes the standby the primary, as a failover manager would."""
    # The standby inherited synchronous_standby_names; as a primary without standbys it would wait for ever
    # at every commit. Patroni rewrites it itself; here it is reset before the promotion.
    psql(standby.url, "ALTER SYSTEM RESET synchronous_standby_names;")
    psql(standby.url, "SELECT pg_reload_conf();")
    standby.promote()


def listener_ups(server) -> int:
    return sum(1 for line in list(server.process.lines) if "event=change_listener_up" in line)


def test_failover_to_a_promoted_standby_loses_no_acknowledged_post(start_server, replicated_pair, token):
    primary, standby = replicated_pair
    hosts = f"127.0.0.1:{primary.port},127.0.0.1:{standby.port}"
    # The form an operator writes, and the standby first without target_session_attrs: chatterd asks for a
    # read-write session by default, so libpq must skip the standby.
    servers = [
        start_server("--pool-size", "4", url=f"postgresql://postgres@{hosts}/{DATABASE}?target_session_attrs=read-write"),
        start_server("--pool-size", "4",
                     url=f"postgresql://postgres@127.0.0.1:{standby.port},127.0.0.1:{primary.port}/{DATABASE}"),
    ]
    streams = [PostStream(server, f"{token}-{index}").start() for index, server in enumerate(servers)]
    new_primary_url = with_database(standby.url, DATABASE)
    try:
        assert wait_until(lambda: all(s.count(200) >= 20 for s in streams), 20), [s.outcomes[-3:] for s in streams]
        for server in servers:
            assert wait_until(lambda: listener_ups(server) == 1, 5), server.process.log()

        primary.stop("immediate")
        killed = time.monotonic()
        for server in servers:
            response = server.post_json("/postmaps", {"name": "x", "message": token + "-no-primary"},
                                        timeout=BOUND + 5)
            assert_unavailable(response)
            ready = server.get("/readyz", timeout=BOUND + 5)
            assert (ready.status, ready.json()) == (503, {"status": "unavailable"})
            assert server.get("/healthz").status == 200
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - killed)))

        # The standby takes writes from the moment it leaves recovery, a little before pg_ctl sees it and returns.
        promoted = time.monotonic()
        promote(standby)
        for stream in streams:
            assert wait_until(lambda: any(o.status == 200 and o.started > promoted for o in stream.outcomes),
                              RECOVERY_BOUND), f"posts not accepted again: {stream.outcomes[-3:]}"
        for server in servers:
            assert wait_until(lambda: server.get("/readyz", timeout=BOUND).status == 200, 5), "/readyz not back"
        recovered = [min(o.finished for o in s.outcomes if o.status == 200 and o.started > promoted) - promoted
                     for s in streams]
        during = [[o for o in s.outcomes if o.started > killed and o.finished < promoted] for s in streams]
        time.sleep(0.5)  # a few more posts on the new primary
    finally:
        for stream in streams:
            stream.stop()

    for stream, outage in zip(streams, during):
        assert not stream.odd(), f"outcomes other than 200/503 with Retry-After within {BOUND}s: {stream.odd()[:5]}"
        assert outage and all(o.status == 503 for o in outage), \
            f"while there was no primary: {sorted({str(o.status) for o in outage})}"

    stored = message_counts(new_primary_url, token + "-")
    acknowledged = [m for stream in streams for m in stream.acknowledged()]
    lost = [m for m in acknowledged if stored.get(m) != 1]
    assert not lost, f"acknowledged chatts missing or duplicated on the new primary: {lost[:10]}"
    assert all(count == 1 for count in stored.values()), "a chatt was stored twice"
    print(f"\nfailover: {len(acknowledged)} posts acknowledged, "
          f"{sum(len(o) for o in during)} answered 503 while there was no primary, "
          f"first 200 {', '.join(f'{s:.2f}' for s in recovered)} s after the promotion, lost 0")

    def feed_matches(server) -> bool:
        in_feed = [row[1] for row in rows_of(server, "/getmaps")[1] if row[1].startswith(token + "-")]
        return sorted(in_feed) == sorted(stored)
    for server in servers:  # the other server's last posts reach this one's cache by notification, within ms
        assert wait_until(lambda: feed_matches(server), 5), "the feed and the new primary disagree"

    # The listener must be subscribed on the new primary: an in-place UPDATE changes neither the row count nor the
    # highest sequence number, so only its notification can bring it into a cached feed.
    for server in servers:
        assert wait_until(lambda: listener_ups(server) == 2, 10), "change listener not back:\n" + server.process.log()
    edited = acknowledged[0]
    psql(new_primary_url, "UPDATE chatts SET message = :'new' WHERE message = :'old';",
         {"new": edited + "-edited", "old": edited})
    psql(new_primary_url, "INSERT INTO chatts (name, message) VALUES ('psql', :'m');", {"m": token + "-psql"})
    for server in servers:
        for message in (edited + "-edited", token + "-psql"):
            assert wait_until(lambda: rows_with(rows_of(server, "/getmaps")[1], message), 5), \
                f"{message} written on the new primary did not reach the feed"
        assert server.get("/readyz").status == 200

"""`/readyz` is public: a flood of probes must not cost the database a round trip each, or it would compete
with posts for the pool. Probes within a second share one check."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from pgsupport import psql


def committed_transactions(url: str) -> int:
    """Transactions committed in the database `url` names, as PostgreSQL's statistics count them. A session
    reports its counts when it ends (or when idle, up to 10 s late), so count after chatterd's have ended."""
    return int(psql(url, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database();").strip())


def test_three_hundred_concurrent_probes_cost_a_few_round_trips(start_server, fresh_database):
    url = fresh_database()
    # A server that starts, answers one probe and stops: what starting and stopping cost.
    quiet = start_server(url=url)
    assert quiet.get("/readyz").status == 200
    assert quiet.process.stop(timeout=15) == 0
    time.sleep(0.5)
    before = committed_transactions(url)
    server = start_server(url=url)
    assert server.get("/readyz").status == 200
    with ThreadPoolExecutor(max_workers=100) as pool:
        statuses = list(pool.map(lambda _: server.get("/readyz", timeout=10).status, range(300)))
    assert statuses == [200] * 300
    assert server.process.stop(timeout=15) == 0
    time.sleep(0.5)
    spent = committed_transactions(url) - before
    baseline = before - 1  # the first server's whole life, less the first count's own query
    assert spent <= baseline + 30, (f"300 probes and a start and stop cost {spent} transactions on the database;"
                                    f" a start, one probe and a stop cost {baseline}")

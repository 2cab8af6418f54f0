"""Database outages and lock waits answer 503 with Retry-After, never hang or 500,
recover without a restart, and never lose or duplicate an acknowledged chatt.

Uses its own throwaway PostgreSQL cluster, because the tests stop and lock it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

import pytest

from pgsupport import Cluster, count_message, message_counts, psql, wait_for_cluster
from processes import wait_until
import procfs
from contract import error_reason
from wire import Response, build_request

BOUND = 10.0  # no request may take longer than this, outage or not


@pytest.fixture(scope="module")
def cluster():
    try:
        made = Cluster(port=5461)
    except FileNotFoundError as error:
        pytest.skip(str(error))
    made.start()
    wait_for_cluster(made.url)
    yield made
    made.destroy()


def assert_unavailable(response: Response) -> None:
    assert response.status == 503, response
    retry_after = response.header("Retry-After") or ""
    assert retry_after.isdigit() or retry_after.endswith("GMT"), f"503 without a valid Retry-After: {retry_after!r}"
    reason = error_reason(response)
    leaks = ("/tmp", ".s.pgsql", "postgres", "sqlstate", "select ", "insert ", "libpq", "socket")
    assert not any(leak in reason.lower() for leak in leaks), f"503 reason leaks internals: {reason!r}"


def assert_pool_settles(server) -> None:
    """Once idle, no database connection may stay checked out (a leak would starve the pool)."""
    def idle() -> bool:
        text = server.get("/metrics").body.decode()
        match = re.search(r"^\w*pool\w*in_use\w* (\d+)", text, re.M)
        assert match, "no pool in-use gauge in /metrics"
        return int(match.group(1)) == 0
    assert wait_until(idle, 5), "database connections still checked out while idle"


def timed(call):
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


@dataclass
class Stream:
    """Posts chatts with unique messages from a thread, recording every outcome."""

    server: object
    prefix: str
    outcomes: list = field(default_factory=list)  # (message, status or error text, seconds)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        index = 0
        while not self.stop.is_set():
            message = f"{self.prefix}-{index:05d}"
            index += 1
            started = time.monotonic()
            try:
                response = self.server.post_json("/postmaps", {"name": "s", "message": message}, timeout=BOUND + 5)
                status = response.status
                if status == 503 and not response.header("Retry-After"):
                    status = "503 without Retry-After"
            except Exception as error:  # a hang or a dropped connection is a finding, not a crash of the test
                status = repr(error)
            self.outcomes.append((message, status, time.monotonic() - started))
            time.sleep(0.01)

    def count(self, status) -> int:
        return sum(1 for _, s, _ in self.outcomes if s == status)


def test_outage_answers_503_and_recovers_without_losing_acknowledged_chatts(start_server, cluster, token):
    server = start_server("--pool-size", "2", url=cluster.url)
    stream = Stream(server, token)
    thread = threading.Thread(target=stream.run, daemon=True)
    thread.start()
    try:
        assert wait_until(lambda: stream.count(200) >= 20, 10), stream.outcomes[-5:]
        cluster.stop("immediate")
        before_outage = len(stream.outcomes)

        response, seconds = timed(lambda: server.post_json("/postmaps", {"name": "o", "message": token + "-x"},
                                                           timeout=BOUND + 5))
        assert seconds < BOUND
        assert_unavailable(response)
        response, seconds = timed(lambda: server.get("/getmaps", timeout=BOUND + 5))
        assert seconds < BOUND
        assert_unavailable(response)
        ready = server.get("/readyz", timeout=BOUND + 5)
        assert (ready.status, ready.json()) == (503, {"status": "unavailable"})
        with server.connect() as conn:  # HEAD of a 503 carries no body either
            conn.send(build_request("HEAD", "/getmaps") + build_request("GET", "/healthz"))
            assert conn.read_response(head_request=True, timeout=BOUND).status == 503
            assert conn.read_response(timeout=BOUND).status == 200, "HEAD 503 response carried a body"
        assert server.get("/healthz").status == 200
        assert wait_until(lambda: len(stream.outcomes) >= before_outage + 5, BOUND * 2)

        cluster.start()
        restarted = time.monotonic()
        assert wait_until(lambda: server.get("/readyz", timeout=BOUND).status == 200, 10), "/readyz not back"
        acked = stream.count(200)
        assert wait_until(lambda: stream.count(200) >= acked + 10, 10), "posts did not recover"
        assert time.monotonic() - restarted < 15
    finally:
        stream.stop.set()
        thread.join(BOUND + 10)
        if not cluster.is_running():
            cluster.start()

    odd = [(m, s, round(t, 2)) for m, s, t in stream.outcomes if s not in (200, 503) or t >= BOUND]
    assert not odd, f"outcomes other than 200/503 within {BOUND}s: {odd[:10]}"
    assert stream.count(503) > 0, "the stream never saw the outage"
    stored = message_counts(cluster.url, token + "-0")
    acknowledged = [m for m, s, _ in stream.outcomes if s == 200]
    lost = [m for m in acknowledged if stored.get(m) != 1]
    assert not lost, f"acknowledged chatts missing or duplicated: {lost[:10]}"
    assert all(count == 1 for count in stored.values()), "a chatt was stored twice"
    assert_pool_settles(server)


@pytest.mark.parametrize("h2", [False, True], ids=["http1", "h2"])
def test_locked_table_answers_503_within_the_statement_timeout_then_recovers(start_server, cluster, token, h2):
    server = start_server(url=cluster.url, tls=h2, h2=h2)
    locker = subprocess.Popen(["psql", "-X", "-q", "-A", "-t", "-d", cluster.url], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        locker.stdin.write("BEGIN;\nLOCK TABLE chatts IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n")
        locker.stdin.flush()
        assert locker.stdout.readline().strip() == "locked"

        response, seconds = timed(lambda: server.post_json("/postchatt", {"name": "l", "message": token + "-locked"},
                                                           timeout=BOUND + 5))
        assert_unavailable(response)
        assert seconds < 8, f"POST under lock took {seconds:.1f}s (statement timeout is 5s)"
        response, seconds = timed(lambda: server.get("/getmaps", timeout=BOUND + 5))
        assert_unavailable(response)
        assert seconds < 8
    finally:
        locker.stdin.write("COMMIT;\n\\q\n")
        locker.stdin.flush()
        locker.wait(10)

    response, seconds = timed(lambda: server.post_json("/postchatt", {"name": "l", "message": token + "-after"}))
    assert response.status == 200 and seconds < 5, response
    assert count_message(cluster.url, token + "-after") == 1
    assert count_message(cluster.url, token + "-locked") == 0, "a 503 left a half-written chatt"
    assert server.get("/readyz").status == 200
    assert_pool_settles(server)


def client_backends(postmaster: int) -> list[int]:
    """The postmaster's children that serve a client: their titles name the client's address, "[local]" for a
    Unix socket ("postgres: user db [local] idle"), which no auxiliary process's title has."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent, title = procfs.parent(int(entry)), procfs.cmdline(int(entry))
        except OSError:
            continue
        if parent == postmaster and ("[local]" in title or re.search(r"\(\d+\) ", title)):
            pids.append(int(entry))
    return pids


def test_hung_postmaster_answers_503_within_the_bound_then_recovers(start_server, cluster, token):
    server = start_server("--pool-size", "2", url=cluster.url)
    assert server.post_json("/postchatt", {"name": "h", "message": token + "-before"}).status == 200
    # Freeze the postmaster, then end chatterd's database sessions as pg_terminate_backend would: every
    # reconnect now hangs. In this order, no session chatterd opens meanwhile (its stream hub reads the store
    # every second) escapes.
    postmaster = int((cluster.dir / "data" / "postmaster.pid").read_text().split()[0])
    os.kill(postmaster, signal.SIGSTOP)
    for backend in client_backends(postmaster):
        os.kill(backend, signal.SIGTERM)
    try:
        response, seconds = timed(lambda: server.post_json("/postchatt", {"name": "h", "message": token + "-hung"},
                                                           timeout=BOUND + 10))
        assert seconds < BOUND, f"POST took {seconds:.1f}s against a hung database"
        assert_unavailable(response)
        ready, seconds = timed(lambda: server.get("/readyz", timeout=BOUND + 10))
        assert seconds < BOUND and ready.status == 503, ready
        assert server.get("/healthz").status == 200
    finally:
        os.kill(postmaster, signal.SIGCONT)
    assert wait_until(lambda: server.post_json("/postchatt", {"name": "h", "message": token + "-after"},
                                               timeout=BOUND + 5).status == 200, 15), "no recovery after SIGCONT"
    assert count_message(cluster.url, token + "-before") == 1
    assert_pool_settles(server)


class TableLock:
    """Another session holding ACCESS EXCLUSIVE on chatts until released."""

    def __init__(self, url: str):
        self.psql = subprocess.Popen(["psql", "-X", "-q", "-A", "-t", "-d", url], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.psql.stdin.write("BEGIN;\nLOCK TABLE chatts IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n")
        self.psql.stdin.flush()
        line = self.psql.stdout.readline().strip()
        assert line == "locked", line

    def release(self) -> None:
        self.psql.stdin.write("COMMIT;\n\\q\n")
        self.psql.stdin.flush()
        self.psql.wait(10)


def test_many_requests_queued_behind_a_lock_all_get_503_within_the_bound(start_server, cluster, token):
    # More posts than pool connections: the batch being written fails at the statement timeout, and the
    # posts queued behind it give up at the pool's acquire timeout. Nothing may wait past the bound.
    server = start_server(url=cluster.url)
    assert server.post_json("/postchatt", {"name": "q", "message": token + "-warm"}).status == 200
    outcomes: list = []

    def post(index: int) -> None:
        started = time.monotonic()
        try:
            response = server.post_json("/postchatt", {"name": "q", "message": f"{token}-{index}"}, timeout=40)
            outcome = (response.status, response.header("Retry-After"))
        except Exception as error:
            outcome = (repr(error), None)
        outcomes.append((index, *outcome, round(time.monotonic() - started, 1)))

    lock = TableLock(cluster.url)
    try:
        threads = [threading.Thread(target=post, args=(i,)) for i in range(24)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        ready, ready_seconds = timed(lambda: server.get("/readyz", timeout=40))
        for thread in threads:
            thread.join(60)
    finally:
        lock.release()
    slow = [o for o in outcomes if o[1] != 503 or not o[2] or o[3] >= BOUND]
    assert not slow, f"(index, status, Retry-After, seconds) past {BOUND}s or not 503: {sorted(slow, key=lambda o: o[3])}"
    # Queued posts share one batch, so one connection waits on the lock and /readyz still gets one: the
    # database does answer, and says so promptly.
    assert ready.status == 200 and ready_seconds < 5, f"/readyz answered {ready.status} after {ready_seconds:.1f}s"
    assert server.post_json("/postchatt", {"name": "q", "message": token + "-after"}, timeout=BOUND).status == 200
    assert_pool_settles(server)


def test_terminated_database_sessions_are_replaced_without_500s(start_server, cluster, token):
    server = start_server("--pool-size", "4", url=cluster.url)
    threads = [threading.Thread(target=server.get, args=("/getmaps",)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(BOUND)
    psql(cluster.url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid();")
    statuses = []
    for index in range(10):
        response = server.post_json("/postchatt", {"name": "t", "message": f"{token}-{index}"}, timeout=BOUND)
        statuses.append(response.status)
        if response.status == 503:
            assert_unavailable(response)
    assert set(statuses) <= {200, 503}, statuses
    assert statuses[-5:] == [200] * 5, statuses
    stored = message_counts(cluster.url, token)
    assert all(stored.get(f"{token}-{i}") == 1 for i, s in enumerate(statuses) if s == 200), stored
    assert_pool_settles(server)




def test_sigterm_while_a_request_waits_on_the_database_exits_zero_in_time(start_server, cluster, token):
    server = start_server("--drain-timeout", "2", url=cluster.url)
    assert server.get("/getmaps").status == 200
    lock = TableLock(cluster.url)
    try:
        conn = server.connect()
        conn.send(build_request("POST", "/postchatt", json.dumps({"name": "w", "message": token}).encode()))
        time.sleep(0.5)  # the insert is now waiting for the lock
        server.process.signal(signal.SIGTERM)
        started = time.monotonic()
        status = server.process.wait(timeout=10)
        elapsed = time.monotonic() - started
        conn.close()
    finally:
        lock.release()
    assert status == 0, f"exit status {status} (None = still running)\n{server.process.log()}"
    assert elapsed < 4.5, f"took {elapsed:.1f}s with a 2s drain deadline"


def test_stale_if_error_serves_the_last_whole_feed_with_its_age_while_the_database_is_down(start_server, cluster,
                                                                                          token):
    """--stale-if-error: the feed last known current, byte for byte, with Age, instead of a 503; posts and /readyz
    still say the database is down."""
    server = start_server("--stale-if-error", "120", url=cluster.url)
    assert server.post_json("/postchatt", {"name": "s", "message": token}).status == 200
    before = server.get("/getmaps")
    assert before.status == 200 and before.header("Age") is None
    cluster.stop("immediate")
    try:
        stale = server.get("/getmaps", timeout=BOUND + 5)
        assert stale.status == 200, stale
        assert stale.body == before.body and stale.header("ETag") == before.header("ETag")
        assert stale.header("Age") is not None and 0 <= int(stale.header("Age")) < 120
        assert_unavailable(server.post_json("/postchatt", {"name": "s", "message": token + "-down"}, timeout=BOUND))
        assert server.get("/readyz", timeout=BOUND).status == 503
        assert wait_until(lambda: any("event=stale_feed_served" in line for line in server.process.lines), 5), \
            server.process.log()
    finally:
        cluster.start()
    assert wait_until(lambda: server.get("/readyz", timeout=BOUND).status == 200, 15)
    assert server.get("/getmaps").header("Age") is None

"""Transaction pooling with PgBouncer (Debian 12's 1.18): chatterd's pool goes through a real pgbouncer in
transaction mode whose server pool is smaller than chatterd's, while migrations and LISTEN use
--direct-database-url. PgBouncer 1.18 keeps no prepared statements across server connections, so the pool
must send unnamed statements only.

Each test runs its own pgbouncer (a free port, a temporary directory) on a fresh database of the suite's cluster.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from contract import rows_of, rows_with
from pgsupport import message_counts, psql
from poststream import BOUND, PostStream, assert_unavailable
from processes import free_port, wait_until
from test_database_faults import TableLock

SERVER_POOL = 2  # server connections PgBouncer may open to PostgreSQL
CHATTERD_POOL = 8  # chatterd's own pool, all of them clients of PgBouncer
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


class PgBouncer:
    """A pgbouncer in transaction mode in front of one database, on 127.0.0.1:port; stopped by the test."""

    def __init__(self, database_url: str):
        if not os.access(PGBOUNCER, os.X_OK):
            pytest.fail("pgbouncer is not installed (scripts/test installs the Debian package)")
        parts = urlsplit(database_url)
        query = parse_qs(parts.query)
        self.database = parts.path.lstrip("/")
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="e2e-pgbouncer-"))
        # PgBouncer refuses to run as root; as root it runs as postgres, which must own its directory.
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.dir, "postgres")
        (self.dir / "pgbouncer.ini").write_text(f"""\
[databases]
{self.database} = host={query["host"][0]} port={query["port"][0]} dbname={self.database} user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
; trust-like: the user comes from the database line above. Fine on loopback for a test, never in production.
auth_type = any
pool_mode = transaction
default_pool_size = {SERVER_POOL}
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 200
; Stock: no ignore_startup_parameters, so PgBouncer refuses chatterd's startup parameter "options"; chatterd
; connects again without it, and the database carries the timeouts instead (see the fixture).
logfile = {self.dir}/pgbouncer.log
""")
        self.popen: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{self.database}"

    def start(self) -> None:
        command = [PGBOUNCER, str(self.dir / "pgbouncer.ini")]
        if self.as_root:  # setpriv execs in place, so the pid is pgbouncer's own
            command = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *command]
        self.popen = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)

        def accepting() -> bool:
            assert self.popen.poll() is None, f"pgbouncer exited:\n{self.log()}"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                return False
        assert wait_until(accepting, 10), f"pgbouncer not listening:\n{self.log()}"

    def stop(self) -> None:
        """Immediate shutdown (SIGTERM): every client connection is closed."""
        if self.popen and self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)

    def log(self) -> str:
        try:
            return (self.dir / "pgbouncer.log").read_text()[-3000:]
        except OSError:
            return ""

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def pooled(fresh_database, start_server):
    """(chatterd, pgbouncer, direct database URL): chatterd's pool through PgBouncer, LISTEN and migrations direct."""
    direct = fresh_database()
    name = urlsplit(direct).path.lstrip("/")
    # What chatterd's startup "options" would have set, on the database, where PgBouncer's sessions get it.
    psql(direct, f"ALTER DATABASE {name} SET statement_timeout = '5s';"
                 f"ALTER DATABASE {name} SET idle_in_transaction_session_timeout = '10s';")
    bouncer = PgBouncer(direct)
    try:
        server = start_server("--pool-size", str(CHATTERD_POOL), "--direct-database-url", direct, url=bouncer.url)
        yield server, bouncer, direct
    finally:
        bouncer.destroy()


def server_connections(direct: str) -> int:
    """Sessions PgBouncer holds on the database (chatterd's direct listener and psql itself excluded)."""
    return int(psql(direct, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                            "AND backend_type = 'client backend' AND query NOT LIKE '%chatts_changed%' "
                            "AND pid <> pg_backend_pid();").strip())


def test_migrations_and_the_listener_use_only_the_direct_url(env, fresh_database, start_server):
    """Nothing that needs a session of its own goes through --database-url: here it leads nowhere at all."""
    direct = fresh_database()
    nowhere = f"postgresql://postgres@127.0.0.1:{free_port()}/chatterdb"
    done = subprocess.run([env.binary, "migrate", "--database-url", nowhere, "--direct-database-url", direct,
                           "--migrations", str(env.migrations)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    migrations = len(list(env.migrations.glob("*.sql")))
    assert psql(direct, "SELECT count(*) FROM schema_migrations;").strip() == str(migrations)
    direct = fresh_database()  # serve must migrate an empty one by itself, directly
    server = start_server("--direct-database-url", direct, url=nowhere)
    assert psql(direct, "SELECT count(*) FROM schema_migrations;").strip() == str(migrations)
    assert wait_until(lambda: any("event=change_listener_up" in line for line in server.process.lines), 5), \
        server.process.log()
    assert server.get("/readyz", timeout=BOUND).status == 503, "the pool should be the one that cannot connect"


def test_a_stock_pgbouncer_refusing_options_is_named_once_at_start_and_served(pooled, token):
    """PgBouncer without ignore_startup_parameters refuses `options`: chatterd connects without them, serves, and
    says once, at start-up, that its timeouts must then come from the role."""
    server, bouncer, _ = pooled
    assert server.post_json("/postchatt", {"name": "pool", "message": token}, timeout=BOUND).status == 200
    assert server.get("/readyz", timeout=BOUND).status == 200
    warnings = [line for line in server.process.lines if "event=pooler_refuses_options" in line]
    assert len(warnings) == 1 and "statement_timeout" in warnings[0], server.process.log()
    assert "unsupported startup parameter: options" in bouncer.log(), "this PgBouncer should refuse options"


def test_concurrent_posts_through_a_smaller_transaction_pool_are_all_stored(pooled, token):
    server, bouncer, direct = pooled
    outcomes: list = []
    seen_connections: list[int] = []

    def post(index: int) -> None:
        response = server.post_json("/postmaps", {"name": "pool", "message": f"{token}-{index:03d}"}, timeout=BOUND)
        outcomes.append((index, response.status, response.body[:200]))

    for round_ in range(3):
        if round_:
            # PostgreSQL ends PgBouncer's idle server sessions (as server_lifetime or a restart would), while
            # chatterd's client connections stay up: a statement prepared by name would be gone from the
            # next server connection, an unnamed one is sent whole every time.
            psql(direct, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                         "AND backend_type = 'client backend' AND query NOT LIKE '%chatts_changed%' "
                         "AND pid <> pg_backend_pid();")
            assert wait_until(lambda: server_connections(direct) == 0, 5)
            time.sleep(0.5)  # PgBouncer drops the closed server connections from its pool
        threads = [threading.Thread(target=post, args=(round_ * 100 + i,)) for i in range(48)]
        for thread in threads:
            thread.start()
        seen_connections.append(server_connections(direct))
        for thread in threads:
            thread.join(BOUND + 5)
    bad = [o for o in outcomes if o[1] != 200]
    assert not bad, f"posts through PgBouncer not answered 200: {bad[:5]}\n{server.process.log(20)}"
    stored = message_counts(direct, token + "-")
    assert len(outcomes) == 144 and len(stored) == 144 and set(stored.values()) == {1}, stored
    assert max(seen_connections) <= SERVER_POOL, f"PgBouncer opened more than its pool: {seen_connections}"
    in_feed = {row[1] for row in rows_of(server, "/getmaps")[1] if row[1].startswith(token)}
    assert in_feed == set(stored), "the feed lacks posts that got their 200"
    assert "prepared statement" not in bouncer.log() + server.process.log(200)


def test_the_feed_follows_other_writers_through_the_direct_listener(pooled, token):
    server, _, direct = pooled
    assert wait_until(lambda: any("event=change_listener_up" in line for line in server.process.lines), 5), \
        "the change listener never came up on the direct URL:\n" + server.process.log()
    assert server.post_json("/postchatt", {"name": "pool", "message": token + "-own"}).status == 200
    rows_of(server, "/getmaps")  # cached now
    psql(direct, "INSERT INTO chatts (name, message) VALUES ('psql', :'m');", {"m": token + "-other"})
    assert wait_until(lambda: rows_with(rows_of(server, "/getmaps")[1], token + "-other"), 2), \
        "another writer's chatt did not reach the feed"
    # Only a notification brings an in-place edit into the cache (row count and last sequence stay the same).
    psql(direct, "UPDATE chatts SET message = :'new' WHERE message = :'old';",
         {"new": token + "-edited", "old": token + "-own"})
    assert wait_until(lambda: rows_with(rows_of(server, "/getmaps")[1], token + "-edited"), 2), \
        "an UPDATE by another writer did not reach the feed: LISTEN is not on a session of its own"


def test_a_pgbouncer_restart_gives_503s_then_recovers(pooled, token):
    server, bouncer, direct = pooled
    stream = PostStream(server, token).start()
    try:
        assert wait_until(lambda: stream.count(200) >= 20, 10), stream.outcomes[-3:]
        bouncer.stop()
        stopped = time.monotonic()
        response = server.post_json("/postmaps", {"name": "x", "message": token + "-down"}, timeout=BOUND + 5)
        assert_unavailable(response)
        assert server.get("/readyz", timeout=BOUND + 5).status == 503
        assert wait_until(lambda: any(o.status == 503 and o.started > stopped for o in stream.outcomes), 5)
        time.sleep(1)
        bouncer.start()
        restarted = time.monotonic()
        assert wait_until(lambda: any(o.status == 200 and o.started > restarted for o in stream.outcomes), 10), \
            f"posts did not recover after the restart: {stream.outcomes[-3:]}"
        assert wait_until(lambda: server.get("/readyz", timeout=BOUND).status == 200, 5)
        first = min(o.finished for o in stream.outcomes if o.status == 200 and o.started > restarted)
    finally:
        stream.stop()
    print(f"\npgbouncer restart: {sum(1 for o in stream.outcomes if o.status == 503)} posts answered 503, "
          f"first 200 {first - restarted:.2f} s after pgbouncer listened again, "
          f"{len(stream.acknowledged())} acknowledged")
    assert not stream.odd(), f"outcomes other than 200/503 with Retry-After: {stream.odd()[:5]}"
    stored = message_counts(direct, token + "-")
    lost = [m for m in stream.acknowledged() if stored.get(m) != 1]
    assert not lost and set(stored.values()) == {1}, f"lost or duplicated: {lost[:5]}"


def test_the_statement_timeout_holds_through_pgbouncer(pooled, token):
    server, _, direct = pooled
    assert server.post_json("/postchatt", {"name": "t", "message": token + "-warm"}).status == 200
    lock = TableLock(direct)
    try:
        started = time.monotonic()
        response = server.post_json("/postchatt", {"name": "t", "message": token + "-locked"}, timeout=BOUND + 10)
        seconds = time.monotonic() - started
    finally:
        lock.release()
    assert_unavailable(response)
    assert seconds < 8, f"a post behind a lock took {seconds:.1f}s: the 5 s statement timeout is not in force"
    assert server.post_json("/postchatt", {"name": "t", "message": token + "-after"}).status == 200

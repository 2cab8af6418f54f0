"""What chatterd holds during the soak (soak.py): resident memory and descriptors from /proc (Tests/Clients/procfs.py),
its database sessions from PostgreSQL, its open client connections from /metrics; one Sample of them at a time."""

from __future__ import annotations

import http.client
import os
import re
import ssl
import subprocess
import sys
import threading
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Clients"))
import procfs  # noqa: E402 (Tests/Clients)


@dataclass
class Sample:
    offset: int
    phase: str
    rss: int
    fds: int
    db: object
    clients: object
    requests: int
    http2: int
    unavailable: int


class Probe:
    """What chatterd holds: resident memory and descriptors from /proc, sessions from PostgreSQL."""

    def __init__(self, args, timeout: float):
        self.args = args
        self.timeout = timeout
        self.context = ssl.create_default_context(cafile=args.cacert)

    def sample(self, offset: int, phase: str, tally) -> Sample:
        """Everything at once, with the tally's counts so far."""
        return Sample(offset, phase, self.rss_bytes(), self.fds(), self.db_sessions(), self.client_connections(),
                      tally.requests, tally.http2_requests, tally.count(503))

    def rss_bytes(self) -> int:
        return procfs.rss_bytes(self.args.pid)

    def fds(self) -> int:
        return procfs.fd_count(self.args.pid)

    def db_sessions(self):
        """chatterd's sessions on the database (pool and listener), or None while it is down."""
        done = subprocess.run(["psql", "-X", "-A", "-t", "-d", self.args.database_url, "-c",
                               "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'chatterd'"],
                              capture_output=True, text=True, timeout=10)
        return int(done.stdout.strip()) if done.returncode == 0 else None

    def get(self, target: str):
        conn = http.client.HTTPSConnection("127.0.0.1", self.args.port, context=self.context, timeout=self.timeout)
        try:
            conn.request("GET", target)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def client_connections(self):
        """Open client connections, less the one asking."""
        status, body = self.get("/metrics")
        if status != 200:
            return None
        match = re.search(rb"^chatterd_open_connections (\d+)", body, re.M)
        return int(match.group(1)) - 1 if match else None

    def feed_bytes(self) -> int:
        status, body = self.get("/getmaps")
        return len(body) if status == 200 else 0

    def settle_pool(self) -> None:
        """Checks out every pooled connection at once (concurrent /readyz), so dead ones left by a restart are
        closed and every descriptor still open is a live session that pg_stat_activity counts."""
        threads = [threading.Thread(target=lambda: self.get("/readyz")) for _ in range(2 * self.args.pool_size)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(self.timeout)


"""Soak load for bench/soak.sh: mixed traffic against one chatterd, a PostgreSQL restart every minute, and
clients that vanish mid-request, while chatterd's memory and descriptors are sampled every 10 s.

Python standard library only; loopback only; bounded in time (the deadline) and in count (MAX_REQUESTS per
thread). Prints the series, writes a Markdown report, and exits 1 when an invariant is violated:
  - every post answered 200 is stored exactly once, and no chatt is stored twice;
  - every answer is one API.md allows here (200, 304, 503 with Retry-After), never a 500 or a dropped connection;
  - once the load is gone, chatterd's descriptors (less its database sessions) are back at their baseline,
    no client connection is left open, and its resident memory is back within RSS_SLACK_BYTES of its baseline;
  - chatterd is alive, /readyz answers 200 and SIGTERM later exits 0 (checked by soak.sh).

The store is held at about KEEP_ROWS chatts by another writer that moves older rows into soak_archive every
TRIM_SECONDS (a DELETE the change listener hears of): chatterd's memory follows the feed's size, so a store that
grew for the whole run would hide a leak behind its growth. Acknowledged posts are looked for in both tables.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import re
import socket
import ssl
import statistics
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

SAMPLE_SECONDS = 10
RESTART_EVERY_SECONDS = 60
FIRST_RESTART_SECONDS = 30
WARMUP_SECONDS = 15
MAX_REQUESTS = 200_000  # per thread: the count bound, far above what the deadline allows
TIMEOUT = 15.0
# With the store's size held, resident memory stays within a megabyte of its baseline here; a leak of a
# few hundred bytes per request or a few kilobytes per vanished client passes this within minutes.
RSS_SLACK_BYTES = 8 * 1024 * 1024
KEEP_ROWS = 1000
TRIM_SECONDS = 5
TRIMMED = "404 (since a chatt the trimming writer moved away)"
GEODATA = '[42.2936,-83.7166,"North","walking"]'


@dataclass
class Tally:
    """Answers by kind, plus what violated the contract."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: dict = field(default_factory=dict)
    violations: list = field(default_factory=list)
    acknowledged: list = field(default_factory=list)
    requests: int = 0

    def record(self, what: str, status, response=None) -> None:
        with self.lock:
            self.requests += 1
            self.statuses[status] = self.statuses.get(status, 0) + 1
            if status == 503 and response is not None and not response.getheader("Retry-After"):
                self.violations.append(f"{what}: 503 without Retry-After")
            elif status not in (200, 304, 503, TRIMMED):
                self.violations.append(f"{what}: {status}")

    def count(self, status) -> int:
        with self.lock:
            return self.statuses.get(status, 0)


class Load:
    def __init__(self, args, tally: Tally):
        self.args = args
        self.tally = tally
        self.stop = threading.Event()
        self.context = ssl.create_default_context(cafile=args.cacert)
        self.threads: list[threading.Thread] = []
        self.vanished = 0
        # Message numbers go on across start() calls, so every post of a run has a message of its own.
        self.numbers = itertools.count()

    def connection(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.args.port, context=self.context, timeout=TIMEOUT)

    def exchange(self, conn, method: str, target: str, body: bytes | None = None, headers=None):
        """One request on a keep-alive connection; returns (connection to use next, response, body)."""
        try:
            conn.request(method, target, body=body, headers=headers or {})
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            conn.close()
            self.tally.record(f"{method} {target}", f"client error {type(error).__name__}: {error}")
            return self.connection(), None, b""
        if response.will_close:
            conn.close()
            conn = self.connection()
        return conn, response, data

    def poster(self, index: int) -> None:
        conn = self.connection()
        for number in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            message = f"{self.args.prefix}-p-{next(self.numbers):07d}"
            payload = {"name": f"soak{index}", "message": message}
            if number % 2:
                payload["geodata"] = GEODATA
            path = "/postmaps" if number % 3 else "/postchatt"
            conn, response, _ = self.exchange(conn, "POST", path, json.dumps(payload).encode(),
                                              {"Content-Type": "application/json; charset=utf-8"})
            if response is not None:
                self.tally.record("POST " + path, response.status, response)
                if response.status == 200:
                    with self.tally.lock:
                        self.tally.acknowledged.append(message)
            self.stop.wait(self.args.post_pause)
        conn.close()

    def reader(self, index: int) -> None:
        conn = self.connection()
        etag = None
        last_id = None
        for number in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            choice = number % 4
            if choice == 0:  # the iOS client: gzip, revalidating with its last ETag
                headers = {"Accept-Encoding": "gzip"}
                if etag:
                    headers["If-None-Match"] = etag
                conn, response, _ = self.exchange(conn, "GET", "/getmaps", headers=headers)
                if response is not None:
                    self.tally.record("GET /getmaps", response.status, response)
                    etag = response.getheader("ETag") or etag
            elif choice == 1:  # an incremental read after the last chatt seen
                target = "/getchatts?limit=50" + (f"&since={last_id}" if last_id else "")
                conn, response, data = self.exchange(conn, "GET", target)
                if response is not None:
                    status = response.status
                    if status == 404 and not archived(self.args, last_id):
                        status = "404 for a chatt id that was neither deleted nor lost"
                    elif status == 404:  # the trimming writer moved it away: start again from the top
                        last_id = None
                        status = TRIMMED
                    self.tally.record("GET /getchatts?since", status, response)
                    if response.status == 200:
                        rows = json.loads(data)
                        if rows:
                            last_id = rows[-1][2]
            elif choice == 2:
                conn, response, data = self.exchange(conn, "GET", "/getchatts")
                if response is not None:
                    self.tally.record("GET /getchatts", response.status, response)
                    if response.status == 200 and last_id is None:
                        rows = json.loads(data)
                        last_id = rows[len(rows) // 2][2] if rows else None
            else:
                conn, response, _ = self.exchange(conn, "GET", "/healthz")
                if response is not None:
                    self.tally.record("GET /healthz", response.status, response)
            self.stop.wait(self.args.read_pause)
        conn.close()

    def vanisher(self) -> None:
        """Clients that go away mid-request, each a different way, over TLS unless noted."""
        for number in range(MAX_REQUESTS):
            if self.stop.is_set():
                break
            kind = number % 5
            try:
                raw = socket.create_connection(("127.0.0.1", self.args.port), timeout=TIMEOUT)
                if kind == 0:  # abandons the TLS handshake: TCP only, then a reset
                    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    raw.close()
                else:
                    conn = self.context.wrap_socket(raw, server_hostname="localhost")
                    if kind == 1:  # half a header section
                        conn.sendall(b"GET /getmaps HTTP/1.1\r\nHost: localhost\r\nAccept-Enc")
                    elif kind == 2:  # a body cut short
                        conn.sendall(b"POST /postmaps HTTP/1.1\r\nHost: localhost\r\nContent-Length: 80\r\n\r\n"
                                     b'{"name":"gone","mess')
                    elif kind == 3:  # a whole post, gone before the answer (it may or may not be stored)
                        message = f"{self.args.prefix}-v-{next(self.numbers):07d}"
                        body = json.dumps({"name": "gone", "message": message}).encode()
                        conn.sendall(b"POST /postchatt HTTP/1.1\r\nHost: localhost\r\nContent-Length: "
                                     + str(len(body)).encode() + b"\r\n\r\n" + body)
                    else:  # reads a few bytes of a feed, then resets mid-response
                        conn.sendall(b"GET /getmaps HTTP/1.1\r\nHost: localhost\r\n\r\n")
                        conn.recv(100)
                    # A reset, not an orderly close: the client is simply gone.
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    conn.close()
                self.vanished += 1
            except OSError as error:
                self.tally.record("vanishing client", f"client error {type(error).__name__}: {error}")
            self.stop.wait(self.args.vanish_pause)

    def trimmer(self) -> None:
        """Another writer: keeps the newest KEEP_ROWS chatts, moving older ones to soak_archive in one statement."""
        while not self.stop.wait(TRIM_SECONDS):
            # Fails while PostgreSQL restarts; the next round catches up.
            psql(self.args, TRIM_SQL, check=False)

    def start(self) -> None:
        self.stop.clear()
        self.threads = [threading.Thread(target=self.trimmer, daemon=True)]
        self.threads += [threading.Thread(target=self.poster, args=(i,), daemon=True) for i in range(self.args.posters)]
        self.threads += [threading.Thread(target=self.reader, args=(i,), daemon=True) for i in range(self.args.readers)]
        self.threads.append(threading.Thread(target=self.vanisher, daemon=True))
        for thread in self.threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(TIMEOUT + 5)


class Probe:
    """What chatterd holds: resident memory and descriptors from /proc, sessions from PostgreSQL."""

    def __init__(self, args):
        self.args = args
        self.context = ssl.create_default_context(cafile=args.cacert)

    def rss_bytes(self) -> int:
        with open(f"/proc/{self.args.pid}/status") as status:
            kilobytes = re.search(r"^VmRSS:\s+(\d+) kB", status.read(), re.M).group(1)
        return int(kilobytes) * 1024

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.args.pid}/fd"))

    def db_sessions(self):
        """chatterd's sessions on the database (pool and listener), or None while it is down."""
        done = subprocess.run(["psql", "-X", "-A", "-t", "-d", self.args.database_url, "-c",
                               "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'chatterd'"],
                              capture_output=True, text=True, timeout=10)
        return int(done.stdout.strip()) if done.returncode == 0 else None

    def get(self, target: str):
        conn = http.client.HTTPSConnection("127.0.0.1", self.args.port, context=self.context, timeout=TIMEOUT)
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
            thread.join(TIMEOUT)


class Database:
    """Restarts the throwaway cluster as an operator or a crash would."""

    def __init__(self, args):
        self.args = args
        self.restarts: list[tuple[float, str, float]] = []  # (offset, mode, seconds down)

    def restart(self, offset: float) -> None:
        mode = "fast" if len(self.restarts) % 2 == 0 else "immediate"
        command = [os.path.join(self.args.pg_bindir, "pg_ctl"), "-D", self.args.pgdata, "-m", mode, "-w",
                   "-t", "60", "-l", self.args.pg_log, "restart"]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        started = time.monotonic()
        subprocess.run(command, check=True, capture_output=True, timeout=90, cwd="/")
        self.restarts.append((offset, mode, time.monotonic() - started))


ARCHIVE_SQL = "CREATE TABLE IF NOT EXISTS soak_archive (id uuid, message text)"
TRIM_SQL = f"""WITH moved AS (
    DELETE FROM chatts WHERE seq <= (SELECT max(seq) - {KEEP_ROWS} FROM chatts) RETURNING id, message)
    INSERT INTO soak_archive SELECT id, message FROM moved"""


def psql(args, sql: str, check: bool = True) -> str:
    try:
        done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d",
                               args.database_url, "-c", sql], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        if check:
            raise
        return ""
    if check and done.returncode != 0:
        raise RuntimeError(f"psql failed: {done.stderr.strip()}")
    return done.stdout


def archived(args, chatt_id: str | None) -> bool:
    """Whether the trimming writer moved the chatt with this id away (ids come from the server: no quoting issue)."""
    if not chatt_id or not re.fullmatch(r"[0-9a-f-]{36}", chatt_id):
        return False
    return psql(args, f"SELECT count(*) FROM soak_archive WHERE id = '{chatt_id}'", check=False).strip() == "1"


def stored_counts(args) -> dict[str, int]:
    """message -> copies, in the store and in the archive together."""
    out = psql(args, f"SELECT message, count(*) FROM (SELECT message FROM chatts UNION ALL "
                     f"SELECT message FROM soak_archive) AS m WHERE message LIKE '{args.prefix}-%' GROUP BY 1")
    counts = {}
    for line in out.splitlines():
        if line:
            message, count = line.rsplit("\t", 1)
            counts[message] = int(count)
    return counts


@dataclass
class Sample:
    offset: int
    phase: str
    rss: int
    fds: int
    db: object
    clients: object
    requests: int
    unavailable: int


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--cacert", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--pgdata", required=True)
    parser.add_argument("--pg-bindir", required=True)
    parser.add_argument("--pg-log", required=True)
    parser.add_argument("--pool-size", type=int, default=8)
    parser.add_argument("--posters", type=int, default=3)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--post-pause", type=float, default=0.2)
    parser.add_argument("--read-pause", type=float, default=0.01)
    parser.add_argument("--vanish-pause", type=float, default=0.05)
    parser.add_argument("--report", required=True)
    parser.add_argument("--command", default="bench/soak.sh")
    args = parser.parse_args()
    args.prefix = f"soak{os.getpid()}"

    tally, probe, database = Tally(), Probe(args), Database(args)
    load = Load(args, tally)
    samples: list[Sample] = []

    def sample(offset: int, phase: str) -> Sample:
        taken = Sample(offset, phase, probe.rss_bytes(), probe.fds(), probe.db_sessions(), probe.client_connections(),
                       tally.requests, tally.count(503))
        samples.append(taken)
        print(f"{taken.offset:6d}  {taken.phase:9s} {taken.rss / 1048576:7.1f} {taken.fds:5d} {str(taken.db):>3s} "
              f"{str(taken.clients):>7s} {taken.requests:9d} {taken.unavailable:6d} {len(tally.violations):6d}",
              flush=True)
        return taken

    def idle_sample(offset: int, phase: str) -> Sample:
        """A sample once the load's connections are gone and the pool holds only live sessions."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (probe.client_connections() or 0) > 0:
            time.sleep(0.2)
        probe.settle_pool()
        time.sleep(0.5)
        return sample(offset, phase)

    psql(args, ARCHIVE_SQL)
    print(f"soak: {args.minutes:g} min, PostgreSQL restart every {RESTART_EVERY_SECONDS} s from "
          f"{FIRST_RESTART_SECONDS} s, samples every {SAMPLE_SECONDS} s", flush=True)
    print("   t s  phase      RSS MB   fds  db clients  requests   503s  wrong", flush=True)
    load.start()
    time.sleep(WARMUP_SECONDS)
    load.finish()
    baseline = idle_sample(0, "baseline")
    baseline_feed = probe.feed_bytes()

    load.start()
    started = time.monotonic()
    duration = args.minutes * 60
    next_sample, next_restart = SAMPLE_SECONDS, FIRST_RESTART_SECONDS
    while True:
        elapsed = time.monotonic() - started
        if elapsed >= duration:
            break
        if elapsed >= next_restart:
            database.restart(round(elapsed))
            next_restart += RESTART_EVERY_SECONDS
            continue
        if elapsed >= next_sample:
            sample(next_sample, "load")
            next_sample += SAMPLE_SECONDS
            continue
        time.sleep(min(next_sample, next_restart, duration) - elapsed)
    load.finish()
    final = idle_sample(round(time.monotonic() - started), "after")
    final_feed = probe.feed_bytes()
    ready = probe.get("/readyz")[0]

    counts = stored_counts(args)
    acknowledged = set(tally.acknowledged)
    missing = [m for m in acknowledged if counts.get(m, 0) != 1]
    doubled = [m for m, n in counts.items() if n > 1]
    baseline_other = baseline.fds - (baseline.db or 0)
    final_other = final.fds - (final.db or 0)
    rss_allowed = baseline.rss + RSS_SLACK_BYTES
    load_rss = [s.rss for s in samples if s.phase == "load"]
    checks = [
        (f"{len(acknowledged)} posts acknowledged, every one stored once (in chatts or soak_archive)", not missing,
         f"missing or not once: {missing[:5]}"),
        ("no chatt stored twice", not doubled, f"doubled: {doubled[:5]}"),
        ("only 200, 304, 503 with Retry-After (and 404 for a since id trimmed away), no client error",
         not tally.violations,
         f"{len(tally.violations)}: {tally.violations[:5]}"),
        (f"descriptors back at baseline: {final.fds} open, {final.db} database sessions "
         f"(baseline {baseline.fds}, {baseline.db})", final_other <= baseline_other and final.db is not None,
         f"{final_other - baseline_other} more descriptors than database sessions explain"),
        ("no client connection left open", final.clients == 0, f"{final.clients} open"),
        (f"resident memory back near baseline: {final.rss / 1048576:.1f} MB "
         f"(baseline {baseline.rss / 1048576:.1f} MB, allowed {rss_allowed / 1048576:.1f} MB)",
         final.rss <= rss_allowed, "grew past the allowance"),
        ("/readyz 200 after the load", ready == 200, f"/readyz {ready}"),
        (f"{len(database.restarts)} PostgreSQL restarts", len(database.restarts) >= max(1, int(args.minutes)),
         "fewer restarts than minutes"),
    ]
    summary = [
        f"requests: {tally.requests} ({', '.join(f'{k}: {v}' for k, v in sorted(tally.statuses.items(), key=str))}); "
        f"clients vanished mid-request: {load.vanished}",
        f"restarts (offset s, mode, seconds down): "
        + ", ".join(f"{o:g} {m} {d:.1f}" for o, m, d in database.restarts),
        f"feed (held near {KEEP_ROWS} chatts): {baseline_feed} bytes at baseline, {final_feed} after; RSS under load: median "
        f"{statistics.median(load_rss) / 1048576:.1f} MB, peak {max(load_rss) / 1048576:.1f} MB" if load_rss else "",
    ]
    failed = [c for c in checks if not c[1]]
    for line in summary:
        print(line)
    for text, ok, detail in checks:
        print(("ok:   " if ok else "FAIL: ") + text + ("" if ok else f" ({detail})"))

    with open(args.report, "w") as report:
        report.write(f"## Soak run of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n")
        report.write(f"- command: `{args.command}`\n")
        report.write(f"- machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end\n")
        for line in summary:
            if line:
                report.write(f"- {line}\n")
        report.write("\n| t s | phase | RSS MB | fds | db sessions | client conns | requests | 503s |\n")
        report.write("|--:|---|--:|--:|--:|--:|--:|--:|\n")
        for s in samples:
            report.write(f"| {s.offset} | {s.phase} | {s.rss / 1048576:.1f} | {s.fds} | {s.db} | {s.clients} | "
                         f"{s.requests} | {s.unavailable} |\n")
        report.write("\n")
        for text, ok, detail in checks:
            report.write(f"- {'ok' if ok else '**FAIL**'}: {text}{'' if ok else f' ({detail})'}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

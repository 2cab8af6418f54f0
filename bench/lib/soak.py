"""Soak load for bench/soak.sh: mixed traffic against one chatterd over HTTP/1.1 and HTTP/2, a PostgreSQL restart
every minute, and clients that vanish mid-request, while chatterd's memory and descriptors are sampled every 10 s.

Python standard library plus PyPI's h2 for the HTTP/2 clients (scripts/test installs it; see
scripts/lib/deps.sh); loopback only; bounded in time (the deadline) and in count (MAX_REQUESTS per thread).
Each HTTP/2 client keeps one connection with several streams in flight, and opens a new one when the server
goes away (its stream cap is the requests-per-connection cap). Prints the series, writes a Markdown report,
and exits 1 when an invariant is violated (soak_verdict.py):
  - every post answered 200 is stored exactly once, and no chatt is stored twice;
  - every answer is one API.md allows here (200, 304, 503 with Retry-After), never a 500 or a dropped connection;
  - an HTTP/2 stream the server refused unprocessed (above the last stream id of its GOAWAY, or reset with
    REFUSED_STREAM; RFC 9113 §6.8, §8.7) is no error, and a post on such a stream is not stored;
  - once the load is gone, chatterd's descriptors (less its database sessions) are back at their baseline,
    no client connection is left open, and its resident memory is back within RSS_SLACK_BYTES of its baseline;
  - chatterd is alive, /readyz answers 200 and SIGTERM later exits 0 (checked by soak.sh).

The store is held at about KEEP_ROWS chatts by another writer that moves older rows into soak_archive every
TRIM_SECONDS (a DELETE the change listener hears of): chatterd's memory follows the feed's size, so a store that
grew for the whole run would hide a leak behind its growth. Acknowledged posts are looked for in both tables.

This file is the schedule: a warm-up, the idle baseline, the load with its restarts and samples, the idle sample
after it. The pieces: soak_load.py (the load's threads; soak_h2.py its HTTP/2 requests), soak_tally.py (the
answers), soak_probe.py (what chatterd holds), soak_store.py (PostgreSQL: restarts and queries), soak_verdict.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import soak_verdict
from soak_load import TIMEOUT, Load
from soak_probe import Probe, Sample
from soak_store import ARCHIVE_SQL, Database, psql, stored_counts
from soak_tally import Tally

SAMPLE_SECONDS = 10
RESTART_EVERY_SECONDS = 60
FIRST_RESTART_SECONDS = 30
WARMUP_SECONDS = 15


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
    parser.add_argument("--h2-posters", type=int, default=1)
    parser.add_argument("--h2-readers", type=int, default=1)
    parser.add_argument("--post-pause", type=float, default=0.2)
    parser.add_argument("--read-pause", type=float, default=0.01)
    parser.add_argument("--vanish-pause", type=float, default=0.05)
    parser.add_argument("--report", required=True)
    parser.add_argument("--command", default="bench/soak.sh")
    args = parser.parse_args()
    args.prefix = f"soak{os.getpid()}"

    tally, probe, database = Tally(), Probe(args, TIMEOUT), Database(args)
    load = Load(args, tally)
    samples: list[Sample] = []

    def sample(offset: int, phase: str) -> Sample:
        taken = probe.sample(offset, phase, tally)
        samples.append(taken)
        print(f"{taken.offset:6d}  {taken.phase:9s} {taken.rss / 1048576:7.1f} {taken.fds:5d} {str(taken.db):>3s} "
              f"{str(taken.clients):>7s} {taken.requests:9d} {taken.http2:7d} {taken.unavailable:6d} "
              f"{len(tally.violations):6d}",
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
    print("   t s  phase      RSS MB   fds  db clients  requests  HTTP/2   503s  wrong", flush=True)
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
    results = soak_verdict.checks(args, tally, counts, baseline, final, ready, database.restarts)
    lines = soak_verdict.summary(tally, load.vanished, database.restarts, baseline_feed, final_feed, samples)
    soak_verdict.show(lines, results)
    soak_verdict.write_report(args.report, args.command, lines, samples, results)
    return 1 if any(not ok for _, ok, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Removals under fan-out (their targets: bench/RESULTS.md): N live-feed subscribers split over two chatterd
processes sharing one store, a moderator removing chatts one at a time, and both processes' /getmaps polled as the
iOS app reads it (gzip): how long each removal takes to reach every subscriber as event: delete and to leave each
process's /getmaps, counted from its 200.

Subscribers are fanout.py's (its Worker: TLS, half HTTP/1.1 and half HTTP/2 by default, one per connection, or
--h2-streams to an HTTP/2 connection), half on each URL. Once all have their 200 and --settle seconds have passed,
each process's /getmaps is read with gzip and its `chatterd_feed_full_reads_total` noted. Then --removals removals of
the ids in --ids-file, one every --interval seconds, each a DELETE /chatts/<id> sent to the processes by turns
(Authorization: Bearer, the token in --token-file). After each 200, a client process for each server asks
GET /getmaps (Accept-Encoding: gzip, If-None-Match: the last tag) every --poll-ms milliseconds until a 200 whose body
no longer holds the id: gone = the arrival of that answer's head - the DELETE's 200. Subscribers note when each
delete event arrives (time.monotonic, one clock for every process); latency = that - the 200 (negative when the event
came first). Every subscriber should get every removal once, in order, and no reset. Bytes per subscriber per
removal: the stream bytes subscribers read from the first DELETE to the end (HTTP/1.1 chunk framing counted, HTTP/2
frame headers and TLS records not), over subscribers x removals.

Prints one line "REMOVALS key=value ...".

Usage: removals.py URL1 URL2 --pids P1,P2 --token-file F --ids-file F [--subscribers N] [--removals K]
       [--interval S] [--cacert FILE] [--h2-share F] [--h2-streams K] [--workers W] [--settle S] [--grace S]
       [--poll-ms MS]
"""

import argparse
import collections
import copy
import gzip
import http.client
import json
import multiprocessing
import os
import random
import re
import ssl
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fanout  # noqa: E402 (beside this file)
import procfs  # noqa: E402 (Tests/Clients, which fanout puts on sys.path)

DELETE_EVENT = re.compile(rb'event: delete\n(?:id: [^\n]*\n)?data: "([0-9a-fA-F-]{36})"')


class RemovalWorker(fanout.Worker):
    """fanout.py's subscribers, counting delete events by the removal they announce instead of marked posts."""

    def __init__(self, args, plan, run, pipe, order, phase):
        super().__init__(args, plan, run, pipe)
        self.order = order  # chatt id (bytes, lower case) -> removal index
        self.phase = phase  # when the first DELETE was sent (0 before)
        self.phase_bytes = 0

    def marked(self, whole):
        """The indices of the removals that the whole events in `whole` announce, in order."""
        found = (self.order.get(chatt.lower()) for chatt in DELETE_EVENT.findall(whole))
        return [i for i in found if i is not None]

    def events(self, sub, data, now):
        start = self.phase.value
        if start and now >= start:
            self.phase_bytes += len(data)
        super().events(sub, data, now)

    def summary(self, result):
        result["bytes"] = self.phase_bytes
        return result


class Client:
    """One kept-alive HTTPS connection (HTTP/1.1) to one process."""

    def __init__(self, url, cacert):
        split = urllib.parse.urlsplit(url)
        self.host, self.port = split.hostname, split.port or 443
        self.context = ssl.create_default_context(cafile=cacert)
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        """(status, headers as a dict of lower-case names, the time the head arrived, body bytes)."""
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=30)
                self.conn.request(method, path, body=body, headers=headers or {})
                response = self.conn.getresponse()
                arrived = time.monotonic()
                data = response.read()
                return response.status, {k.lower(): v for k, v in response.getheaders()}, arrived, data
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


def metric(client, name):
    status, _, _, body = client.request("GET", "/metrics")
    if status != 200:
        raise SystemExit("removals.py: GET /metrics answered %d" % status)
    total = 0.0
    for line in body.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


class Poller:
    """Reads one process's /getmaps with gzip as the app does, the last tag in If-None-Match."""

    def __init__(self, url, cacert):
        self.client = Client(url, cacert)
        self.etag = None

    def read(self):
        headers = {"Accept-Encoding": "gzip"}
        if self.etag:
            headers["If-None-Match"] = self.etag
        status, head, arrived, body = self.client.request("GET", "/getmaps", headers=headers)
        if status == 200:
            self.etag = head.get("etag")
            if head.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
        elif status != 304:
            raise SystemExit("removals.py: GET /getmaps answered %d" % status)
        return status, arrived, body

    def until_gone(self, chatt, answered, poll, limit):
        """Polls until a body without `chatt`: seconds from `answered`, or None past `limit`."""
        needle = chatt.encode()
        while True:
            status, arrived, body = self.read()
            if status == 200 and needle not in body:
                return arrived - answered
            if arrived - answered > limit:
                return None
            time.sleep(poll)


def poll(url, cacert, pipe):
    """A process of its own for each server's poller, so that one's gunzip never delays the other's clock."""
    poller = Poller(url, cacert)
    poller.read()
    pipe.send("ready")
    while True:
        job = pipe.recv()
        if job is None:
            return
        pipe.send(poller.until_gone(*job))


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))] if values else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("urls", nargs=2)
    parser.add_argument("--pids", required=True, help="the two servers' pids, comma-separated")
    parser.add_argument("--token-file", required=True, help="the servers' token file: its first name:token is used")
    parser.add_argument("--ids-file", required=True)
    parser.add_argument("--subscribers", type=int, default=10000)
    parser.add_argument("--removals", type=int, default=20)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--cacert")
    parser.add_argument("--h2-share", type=float, default=0.5)
    parser.add_argument("--h2-streams", type=int, default=1, help="HTTP/2 subscribers a connection")
    parser.add_argument("--workers", type=int, default=2, help="subscriber processes, shared by the two URLs")
    parser.add_argument("--sources", type=int, default=8)
    parser.add_argument("--opening", type=int, default=64)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--grace", type=float, default=3.0)
    parser.add_argument("--poll-ms", type=float, default=5.0, help="0: /getmaps is not polled")
    args = parser.parse_args()
    pids = [int(p) for p in args.pids.split(",")]
    with open(args.token_file) as f:
        token = f.readline().strip().split(":", 1)[1]
    with open(args.ids_file) as f:
        ids = [line.strip().lower() for line in f if line.strip()][:args.removals]
    if len(ids) < args.removals:
        raise SystemExit("removals.py: %s holds %d ids, not %d" % (args.ids_file, len(ids), args.removals))
    order = {chatt.encode(): i for i, chatt in enumerate(ids)}

    # fanout.py's plan: h2 subscribers one stream a connection; half on each URL, each URL's half over its workers.
    h2_subs = int(round(args.subscribers * args.h2_share))
    plan = [(False, 1)] * (args.subscribers - h2_subs)
    left = h2_subs
    while left > 0:
        plan.append((True, min(args.h2_streams, left)))
        left -= args.h2_streams
    random.Random(1).shuffle(plan)
    context = multiprocessing.get_context("fork")
    phase = context.Value("d", 0.0, lock=False)
    pipes, procs = [], []
    per_url = max(1, args.workers // 2)
    for u, url in enumerate(args.urls):
        mine = copy.copy(args)
        mine.url, mine.path, mine.connect_only = url, "/getmaps/stream", False
        share = plan[u::2]
        for w in range(per_url):
            ours, theirs = context.Pipe()
            proc = context.Process(
                target=fanout.work, args=(RemovalWorker, mine, share[w::per_url], "removals", theirs, order, phase),
                daemon=True)
            proc.start()
            pipes.append(ours)
            procs.append(proc)
    subscribed = failed = 0
    unexpected = collections.Counter()
    started = time.monotonic()
    for pipe in pipes:
        message = pipe.recv()
        if message[0] != "subscribed":
            raise SystemExit("removals.py: a worker failed: %s" % (message,))
        subscribed += message[1]
        failed += message[2]
        unexpected.update(message[3])
    print("removals.py: %d subscribed (%d failed: %s) in %.1f s; settling %.0f s" % (
        subscribed, failed, dict(unexpected), time.monotonic() - started, args.settle), file=sys.stderr, flush=True)
    time.sleep(args.settle)

    pollers = []
    for url in args.urls if args.poll_ms > 0 else []:
        ours, theirs = context.Pipe()
        proc = context.Process(target=poll, args=(url, args.cacert, theirs), daemon=True)
        proc.start()
        pollers.append(ours)
        procs.append(proc)
    for poller in pollers:
        if poller.recv() != "ready":
            raise SystemExit("removals.py: a poller failed")
    watchers = [Client(url, args.cacert) for url in args.urls]
    full_reads_before = [metric(c, "chatterd_feed_full_reads_total") for c in watchers]
    removers = [Client(url, args.cacert) for url in args.urls]
    answered, sent, delete_ms, gone = [], [], [], [[], []]
    cpu_before = [procfs.cpu_seconds(p) for p in pids]
    phase.value = time.monotonic()
    begin = phase.value
    for i, chatt in enumerate(ids):
        due = begin + i * args.interval
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        body = json.dumps({"reason": "bench removal %d" % i}).encode()
        t = time.monotonic()
        status, _, arrived, _ = removers[i % 2].request(
            "DELETE", "/chatts/" + chatt, body=body,
            headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        sent.append(t)
        if status != 200:
            print("removals.py: DELETE %s answered %d" % (chatt, status), file=sys.stderr)
            answered.append(None)
            continue
        answered.append(arrived)
        delete_ms.append((arrived - t) * 1000)
        for poller in pollers:
            poller.send((chatt, arrived, args.poll_ms / 1000, 10.0))
        for n, poller in enumerate(pollers):
            gone[n].append(poller.recv())
        if not pollers:
            gone[0].append(None)
            gone[1].append(None)
    span = time.monotonic() - begin
    time.sleep(args.grace)
    cpu_server = [procfs.cpu_seconds(p) - c for p, c in zip(pids, cpu_before)]
    full_reads = [metric(c, "chatterd_feed_full_reads_total") - b for c, b in zip(watchers, full_reads_before)]

    bins = collections.Counter()
    missing = duplicates = streaming = phase_bytes = 0
    ended = collections.Counter()
    for poller in pollers:
        poller.send(None)
    for pipe in pipes:
        pipe.send(("stop", answered, sent))
    for pipe in pipes:
        result = pipe.recv()
        if isinstance(result, tuple):
            raise SystemExit("removals.py: a worker failed: %s" % (result,))
        bins.update(result["bins"])
        missing += result["missing"]
        duplicates += result["duplicates"]
        streaming += result["streaming"]
        phase_bytes += result["bytes"]
        ended.update(result["ended"])
    for proc in procs:
        proc.join(5)
    removed = sum(1 for t in answered if t is not None)
    gone_ms = [[g * 1000 for g in per if g is not None] for per in gone]
    fields = dict(
        subscribers=args.subscribers, subscribed=subscribed, subscribe_failed=failed, removals=len(ids),
        removed=removed, delete_p50_ms="%.1f" % quantile(delete_ms, 0.5),
        delete_p99_ms="%.1f" % quantile(delete_ms, 0.99),
        deliveries=sum(bins.values()), expected=removed * subscribed,
        event_p50_ms="%.1f" % fanout.percentile(bins, 0.5), event_p99_ms="%.1f" % fanout.percentile(bins, 0.99),
        event_max_ms="%.1f" % (max(bins) / 10.0 if bins else 0),
        missing=missing, duplicates=duplicates, resets=ended.get("reset event", 0), streams_ended=sum(ended.values()),
        streaming=streaming,
        bytes_per_sub_per_removal="%.0f" % (phase_bytes / (subscribed * removed) if subscribed and removed else 0),
        gone1_p50_ms="%.1f" % quantile(gone_ms[0], 0.5), gone1_p99_ms="%.1f" % quantile(gone_ms[0], 0.99),
        gone1_max_ms="%.1f" % max(gone_ms[0] or [0]), gone1_never=sum(g is None for g in gone[0]),
        gone2_p50_ms="%.1f" % quantile(gone_ms[1], 0.5), gone2_p99_ms="%.1f" % quantile(gone_ms[1], 0.99),
        gone2_max_ms="%.1f" % max(gone_ms[1] or [0]), gone2_never=sum(g is None for g in gone[1]),
        full_reads1="%.0f" % full_reads[0], full_reads2="%.0f" % full_reads[1],
        cpu_server1_s="%.2f" % cpu_server[0], cpu_server2_s="%.2f" % cpu_server[1], span_s="%.1f" % span)
    if ended:
        print("removals.py: streams the server ended: %s" % dict(ended), file=sys.stderr)
    print("REMOVALS " + " ".join("%s=%s" % kv for kv in fields.items()), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fan-out load for chatterd's live feed (GET /getmaps/stream): N subscribers over TLS, HTTP/1.1 and HTTP/2, then a
poster at a fixed rate; how long each post takes to reach every subscriber, and what the idle subscribers cost the
server in memory.

Subscribers: a share of them (--h2-share) are HTTP/2 streams, --h2-streams to a connection (1: one subscriber per TLS
connection, as phones hold them; more is legitimate for HTTP/2 and cheaper for the client), the rest HTTP/1.1, one
per TLS connection. They are spread over --workers processes, each one thread with an epoll loop over non-blocking
sockets (the ssl module; HTTP/2 framing by hand: the preface, SETTINGS with the largest window, one HEADERS per
stream; DATA, SETTINGS, PING, RST_STREAM and GOAWAY read). Each connection binds a source address among 127.0.0.2 ..
127.0.0.(1 + --sources), so that 10 000 connections do not run one address's ephemeral ports short. Connections open
--opening at a time per worker.

The run: the server's VmRSS before the first connection; every subscriber's 200 awaited (a failure is counted, not
retried); --settle seconds idle; VmRSS again: (idle - before) / subscribed is the RSS per idle subscriber. Then one
poster (this process, its own kept-alive TLS connection, HTTP/1.1) posts at --rate a second for --duration seconds on
a fixed schedule (a post due while the last is unanswered goes when it returns, late: its lateness is reported);
each post's message names the run and its index, and its 200's arrival time is noted. Subscribers note the arrival
time of each event they read (time.monotonic, which is one clock for every process). --grace seconds after the last
post the workers stop and compare: latency = an event's arrival at a subscriber - its post's 200 (negative when the
event came first: the hub appends a commit before the 200 leaves). Every subscriber should see every answered post
once, in order; missing and duplicate events are counted, and streams the server ended (cut, reset, closed).

Prints one line "FANOUT key=value ...": subscribers asked and subscribed (h1, h2, h2 connections), subscribe errors,
RSS before/idle/peak (kB), RSS per idle subscriber (bytes), posts answered, post p50/p99 (ms), the poster's worst
lateness, deliveries, deliveries/s over the posting span, delivery latency p50/p99/max (ms, from the 200, and p99
from the post's send), missing, duplicates, streams ended by the server (cut, reset), the server's CPU seconds over
the posting span and the workers' CPU seconds.

With --connect-only the connections only open (the TLS handshake; HTTP/2's preface and SETTINGS) and wait: the memory
figures alone, for a server that is not chatterd (nginx: its master's and workers' VmRSS summed).

Usage: fanout.py URL --pid PID --subscribers N --rate R --duration S [--cacert FILE] [--h2-share F] [--h2-streams K]
       [--workers W] [--sources K] [--opening K] [--settle S] [--grace S] [--path P] [--connect-only]
"""

import argparse
import array
import collections
import errno
import multiprocessing
import os
import random
import re
import select
import socket
import ssl
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Clients"))
import h2frames  # noqa: E402 (Tests/Clients)
from eventstream import whole_events  # noqa: E402
from procfs import cpu_seconds, family_kb  # noqa: E402

MARK = re.compile(rb"fanout ([0-9a-z]+) (\d+)")
READ = 256 * 1024


class Sub:
    """One subscriber: an HTTP/1.1 connection's response or one HTTP/2 stream."""

    __slots__ = ("expect", "tail", "ok", "ended", "seen")

    def __init__(self):
        self.expect = 0  # the next post index it should see
        self.tail = b""  # bytes after its last whole event
        self.ok = False  # its 200 came
        self.ended = None  # why the server ended it
        self.seen = 0


class Conn:
    __slots__ = ("sock", "raw", "fd", "h2", "state", "out", "inbuf", "subs", "consumed")

    def __init__(self, h2, streams):
        self.h2 = h2
        self.state = "connecting"
        self.out = b""
        self.inbuf = b""
        # HTTP/1.1: one subscriber under key 0; HTTP/2: by stream id.
        self.subs = {(2 * i + 1 if h2 else 0): Sub() for i in range(streams)}
        self.consumed = 0
        self.sock = self.raw = None
        self.fd = -1


class Worker:
    def __init__(self, args, plan, run, pipe):
        url = urllib.parse.urlsplit(args.url)
        self.host, self.port = url.hostname, url.port or 443
        self.args, self.run, self.pipe = args, run.encode(), pipe
        self.contexts = {}
        for h2 in (False, True):
            context = ssl.create_default_context(cafile=args.cacert)
            context.set_alpn_protocols(["h2"] if h2 else ["http/1.1"])
            self.contexts[h2] = context
        self.pending = collections.deque(Conn(h2, streams) for h2, streams in plan)
        self.conns = {}
        self.ep = select.epoll()
        self.opening = 0
        self.failed = 0  # subscribers whose connection or request failed before the 200
        self.unexpected = collections.Counter()
        self.receipts = collections.defaultdict(lambda: array.array("d"))
        self.missing = self.duplicates = 0
        self.ended = collections.Counter()
        path, authority = args.path, "%s:%d" % (self.host, self.port)
        self.h1_request = ("GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n" % (path, authority)).encode()
        # :method GET and :scheme https are static table entries 2 and 7; :path, :authority and accept are names 4, 1
        # and 19 of it.
        self.h2_block = (b"\x82\x87" + h2frames.hpack_literal(4, path) + h2frames.hpack_literal(1, authority)
                         + h2frames.hpack_literal(19, "text/event-stream"))
        self.h2_start = (h2frames.PREFACE
                         + h2frames.settings({h2frames.INITIAL_WINDOW_SIZE: h2frames.MAX_WINDOW, h2frames.ENABLE_PUSH: 0})
                         + h2frames.window_update(0, h2frames.MAX_WINDOW - h2frames.INITIAL_WINDOW))

    # -- opening

    def open_more(self):
        while self.pending and self.opening < self.args.opening:
            conn = self.pending.popleft()
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.bind(("127.0.0.%d" % (2 + random.randrange(self.args.sources)), 0))
            err = sock.connect_ex((self.host, self.port))
            if err not in (0, errno.EINPROGRESS):
                sock.close()
                self.fail(conn, "connect")
                continue
            conn.raw, conn.fd = sock, sock.fileno()
            self.conns[conn.fd] = conn
            self.ep.register(sock.fileno(), select.EPOLLOUT)
            self.opening += 1

    def fail(self, conn, why):
        self.failed += sum(not sub.ok and not sub.ended for sub in conn.subs.values())
        self.unexpected[why] += 1
        self.close(conn)

    def close(self, conn):
        if conn.raw is not None:
            fd = conn.fd
            if fd >= 0 and self.conns.pop(fd, None) is conn:
                self.ep.unregister(fd)
            (conn.sock or conn.raw).close()
        if conn.state in ("connecting", "handshake", "subscribing"):
            self.opening -= 1
        conn.state = "closed"

    def subscribed_all(self):
        return not self.pending and self.opening == 0

    def step_open(self, conn, events):
        fd = conn.fd
        if conn.state == "connecting":
            if conn.raw.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                return self.fail(conn, "connect")
            conn.sock = self.contexts[conn.h2].wrap_socket(conn.raw, server_hostname=self.host,
                                                           do_handshake_on_connect=False)
            conn.state = "handshake"
        if conn.state == "handshake":
            try:
                conn.sock.do_handshake()
            except ssl.SSLWantReadError:
                return self.ep.modify(fd, select.EPOLLIN)
            except ssl.SSLWantWriteError:
                return self.ep.modify(fd, select.EPOLLOUT)
            except (OSError, ssl.SSLError):
                return self.fail(conn, "handshake")
            if conn.h2 != (conn.sock.selected_alpn_protocol() == "h2"):
                return self.fail(conn, "alpn")
            conn.state = "subscribing"
            if self.args.connect_only:
                # An idle connection: HTTP/2's preface and SETTINGS, nothing for HTTP/1.1.
                conn.out = self.h2_start if conn.h2 else b""
                for sub in conn.subs.values():
                    sub.ok = True
                self.settle(conn)
                self.ep.modify(fd, select.EPOLLIN)
                return self.flush(conn)
            if conn.h2:
                flags = h2frames.END_STREAM | h2frames.END_HEADERS
                conn.out = self.h2_start + b"".join(h2frames.frame(h2frames.HEADERS, flags, stream, self.h2_block)
                                                    for stream in conn.subs)
            else:
                conn.out = self.h1_request
            self.ep.modify(fd, select.EPOLLIN)
        self.flush(conn)
        if conn.state == "subscribing":
            self.read(conn, time.monotonic())

    def flush(self, conn):
        while conn.out:
            try:
                n = conn.sock.send(conn.out)
            except (ssl.SSLWantWriteError, BlockingIOError):
                self.ep.modify(conn.fd, select.EPOLLIN | select.EPOLLOUT)
                return
            except ssl.SSLWantReadError:
                return
            except (OSError, ssl.SSLError):
                return self.fail(conn, "write")
            conn.out = conn.out[n:]
        self.ep.modify(conn.fd, select.EPOLLIN)

    def now_subscribed(self, conn, sub):
        sub.ok = True
        self.settle(conn)

    def settle(self, conn):
        """The connection is streaming once each of its subscribers has its answer."""
        if conn.state == "subscribing" and all(s.ok or s.ended for s in conn.subs.values()):
            conn.state = "streaming"
            self.opening -= 1

    # -- reading

    def read(self, conn, now):
        while conn.state != "closed":
            try:
                data = conn.sock.recv(READ)
            except (ssl.SSLWantReadError, BlockingIOError):
                return
            except ssl.SSLWantWriteError:
                return
            except (OSError, ssl.SSLError):
                data = b""
            if not data:
                for sub in conn.subs.values():
                    if sub.ok and not sub.ended:
                        sub.ended = "closed"
                        self.ended["closed"] += 1
                if conn.state != "streaming":
                    return self.fail(conn, "closed before 200")
                return self.close(conn)
            if conn.h2:
                self.h2_input(conn, data, now)
            else:
                self.h1_input(conn, data, now)
            # The epoll set is level-triggered: the socket is reported again while it holds more, so only what the
            # TLS layer holds decrypted is read on now (a read that would block raises, which costs more than a turn).
            if conn.state == "closed" or not conn.sock.pending():
                return

    def h1_input(self, conn, data, now):
        sub = conn.subs[0]
        if not sub.ok:
            conn.inbuf += data
            end = conn.inbuf.find(b"\r\n\r\n")
            if end < 0:
                return
            head, data = conn.inbuf[:end], conn.inbuf[end + 4:]
            conn.inbuf = b""
            if not head.startswith(b"HTTP/1.1 200"):
                return self.fail(conn, head.split(b"\r\n", 1)[0].decode(errors="replace"))
            self.now_subscribed(conn, sub)
        self.events(sub, data, now)

    def h2_input(self, conn, data, now):
        frames, conn.inbuf = h2frames.parse(conn.inbuf + data if conn.inbuf else data)
        for kind, flags, stream, payload in frames:
            sub = conn.subs.get(stream)
            if kind == h2frames.DATA:
                conn.consumed += len(payload)
                if sub is not None:
                    self.events(sub, payload, now)
                    if flags & h2frames.END_STREAM:
                        self.end(sub, "ended")
            elif kind == h2frames.HEADERS:  # one frame: chatterd's are small
                if sub is not None and not sub.ok:
                    if payload[:1] == b"\x88":  # :status 200, static table index 8
                        self.now_subscribed(conn, sub)
                    else:
                        sub.ended = "refused"
                        self.failed += 1
                        self.unexpected["h2 status"] += 1
                        self.settle(conn)
            elif kind == h2frames.RST_STREAM:
                if sub is not None:
                    self.end(sub, "reset %d" % int.from_bytes(payload, "big"))
            elif kind == h2frames.SETTINGS and not flags & h2frames.ACK:
                conn.out += h2frames.frame(h2frames.SETTINGS, h2frames.ACK, 0)
            elif kind == h2frames.PING and not flags & h2frames.ACK:
                conn.out += h2frames.frame(h2frames.PING, h2frames.ACK, 0, payload)
            elif kind == h2frames.GOAWAY:
                self.ended["goaway"] += 1
        if conn.consumed > (1 << 24):
            conn.out += h2frames.window_update(0, conn.consumed)
            conn.consumed = 0
        if conn.out:
            self.flush(conn)

    def end(self, sub, why):
        if sub.ended:
            return
        sub.ended = why
        self.ended[why.split(" ")[0] if not why.startswith("reset") else why] += 1

    def marked(self, whole):
        """The indices of this run's posts that the whole events in `whole` carry, in order."""
        return [int(index) for run, index in MARK.findall(whole) if run == self.run]

    def events(self, sub, data, now):
        if sub.tail:
            data = sub.tail + data
        whole, sub.tail = whole_events(data)
        if not whole:
            return
        for i in self.marked(whole):
            if i == sub.expect:
                sub.expect += 1
            elif i > sub.expect:
                self.missing += i - sub.expect
                sub.expect = i + 1
            else:
                self.duplicates += 1
                continue
            sub.seen += 1
            self.receipts[i].append(now)
        if b"event: reset" in whole:
            self.end(sub, "reset event")

    # -- the loop

    def loop(self):
        control = self.pipe.fileno()
        self.ep.register(control, select.EPOLLIN)
        self.open_more()
        told = False
        while True:
            if not told and self.subscribed_all():
                subs = [s for c in self.conns.values() for s in c.subs.values()]
                self.pipe.send(("subscribed", sum(s.ok for s in subs), self.failed, dict(self.unexpected)))
                told = True
            for fd, events in self.ep.poll(1.0, 4096):
                if fd == control:
                    message = self.pipe.recv()
                    if message[0] == "stop":
                        return self.finish(*message[1:])
                    continue
                conn = self.conns.get(fd)
                if conn is None:
                    continue
                if conn.state == "streaming":
                    if events & select.EPOLLOUT:
                        self.flush(conn)
                    self.read(conn, time.monotonic())
                else:
                    self.step_open(conn, events)
            if self.pending:
                self.open_more()

    def finish(self, answered, sent):
        """answered[i]: the monotonic time of post i's 200 (None when it failed); sent[i]: when it was sent."""
        bins, bins_sent = collections.Counter(), collections.Counter()
        for i, times in self.receipts.items():
            if i >= len(answered) or answered[i] is None:
                continue
            base, started = answered[i], sent[i]
            for t in times:
                bins[round((t - base) * 10000)] += 1  # 0.1 ms bins
                bins_sent[round((t - started) * 10000)] += 1
        total = len(answered)
        streaming = 0
        for conn in self.conns.values():
            for sub in conn.subs.values():
                if sub.ok and not sub.ended:
                    streaming += 1
                    self.missing += max(0, total - sub.expect)
        usage = os.times()
        self.pipe.send(self.summary(dict(bins=bins, bins_sent=bins_sent, missing=self.missing,
                                         duplicates=self.duplicates, ended=dict(self.ended), streaming=streaming,
                                         cpu=usage.user + usage.system)))

    def summary(self, result):
        """What the worker reports at the end: `result`, for a subclass to add to."""
        return result


def work(worker, *arguments):
    """Runs `worker` (Worker or a subclass) made with `arguments` in a process of its own."""
    pipe = arguments[3]
    try:
        worker(*arguments).loop()
    except BaseException as error:  # noqa: BLE001 (reported to the parent)
        pipe.send(("error", repr(error)))
        raise


def percentile(bins, q):
    total = sum(bins.values())
    if total == 0:
        return 0.0
    rank, seen = q * (total - 1), 0
    for key in sorted(bins):
        seen += bins[key]
        if seen > rank:
            return key / 10.0  # ms
    return max(bins) / 10.0


class Poster:
    def __init__(self, args, run):
        url = urllib.parse.urlsplit(args.url)
        self.host, self.port, self.run = url.hostname, url.port or 443, run
        context = ssl.create_default_context(cafile=args.cacert)
        context.set_alpn_protocols(["http/1.1"])
        self.context = context
        self.sock = None
        self.authority = "%s:%d" % (self.host, self.port)

    def connect(self):
        raw = socket.create_connection((self.host, self.port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self.context.wrap_socket(raw, server_hostname=self.host)
        self.buf = b""

    def post(self, index):
        """Posts chatt `index`; its 200's time, or None."""
        geodata = '[%.16g,%.16g,\\"North\\",\\"walking\\"]' % (42.2 + random.random() * 0.1, -83.8 + random.random() * 0.1)
        body = ('{"name":"fanout","message":"fanout %s %d","geodata":"%s"}' % (self.run, index, geodata)).encode()
        request = ("POST /postmaps HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json; charset=utf-8\r\n"
                   "Content-Length: %d\r\n\r\n" % (self.authority, len(body))).encode() + body
        for attempt in range(2):
            try:
                if self.sock is None:
                    self.connect()
                self.sock.sendall(request)
                status, close = self.response()
                if close:
                    self.sock.close()
                    self.sock = None
                return time.monotonic() if status == 200 else None
            except (OSError, ssl.SSLError):
                self.sock = None
                if attempt:
                    return None
        return None

    def response(self):
        while b"\r\n\r\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise OSError("closed")
            self.buf += data
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length, close = 0, False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
            elif name.strip().lower() == b"connection" and b"close" in value.lower():
                close = True
        while len(self.buf) < length:
            data = self.sock.recv(65536)
            if not data:
                raise OSError("closed")
            self.buf += data
        self.buf = self.buf[length:]
        return status, close


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--pid", type=int, required=True, help="the server's pid (its VmRSS and CPU are read)")
    parser.add_argument("--subscribers", type=int, default=10000)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--cacert")
    parser.add_argument("--h2-share", type=float, default=0.5)
    parser.add_argument("--h2-streams", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sources", type=int, default=8)
    parser.add_argument("--opening", type=int, default=64)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--grace", type=float, default=3.0)
    parser.add_argument("--path", default="/getmaps/stream")
    parser.add_argument("--connect-only", action="store_true",
                        help="open the connections (TLS handshake, and HTTP/2's preface), measure memory, post nothing")
    args = parser.parse_args()

    run = "%x" % random.randrange(1 << 40)
    h2_subs = int(round(args.subscribers * args.h2_share))
    h1_subs = args.subscribers - h2_subs
    plan = [(False, 1)] * h1_subs
    left = h2_subs
    while left > 0:
        plan.append((True, min(args.h2_streams, left)))
        left -= args.h2_streams
    random.Random(1).shuffle(plan)
    h2_conns = sum(1 for h2, _ in plan if h2)

    rss_before = family_kb(args.pid)
    started = time.monotonic()
    context = multiprocessing.get_context("fork")
    pipes, procs = [], []
    for w in range(args.workers):
        mine, theirs = context.Pipe()
        proc = context.Process(target=work, args=(Worker, args, plan[w::args.workers], run, theirs), daemon=True)
        proc.start()
        pipes.append(mine)
        procs.append(proc)
    subscribed = failed = 0
    unexpected = collections.Counter()
    for pipe in pipes:
        message = pipe.recv()
        if message[0] != "subscribed":
            raise SystemExit("fanout.py: a worker failed: %s" % (message,))
        subscribed += message[1]
        failed += message[2]
        unexpected.update(message[3])
    opened = time.monotonic() - started
    print("fanout.py: %d subscribed (%d failed: %s) in %.1f s; settling %.0f s" % (
        subscribed, failed, dict(unexpected), opened, args.settle), file=sys.stderr, flush=True)
    time.sleep(args.settle)
    rss_idle = family_kb(args.pid)
    if args.connect_only:
        for pipe in pipes:
            pipe.send(("stop", [], []))
        for pipe in pipes:
            pipe.recv()
        print("FANOUT subscribers=%d subscribed=%d h1=%d h2=%d h2_conns=%d connect_only=1 subscribe_failed=%d "
              "open_s=%.1f rss_before_kb=%d rss_idle_kb=%d rss_per_sub_b=%d" % (
                  args.subscribers, subscribed, h1_subs, h2_subs, h2_conns, failed, opened, rss_before, rss_idle,
                  int((rss_idle - rss_before) * 1024 / subscribed) if subscribed else 0), flush=True)
        return

    poster = Poster(args, run)
    poster.connect()
    total = max(1, int(round(args.rate * args.duration)))
    answered, sent = [], []
    post_ms, worst_late = [], 0.0
    rss_peak = rss_idle
    cpu_start = cpu_seconds(args.pid)
    begin = time.monotonic()
    for i in range(total):
        due = begin + i / args.rate
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        t = time.monotonic()
        worst_late = max(worst_late, t - due)
        sent.append(t)
        done = poster.post(i)
        answered.append(done)
        if done is not None:
            post_ms.append((done - t) * 1000)
        if i % max(1, int(args.rate / 2)) == 0:
            rss_peak = max(rss_peak, family_kb(args.pid))
    span = time.monotonic() - begin
    deadline = time.monotonic() + args.grace
    while time.monotonic() < deadline:
        rss_peak = max(rss_peak, family_kb(args.pid))
        time.sleep(0.25)
    cpu_server = cpu_seconds(args.pid) - cpu_start

    bins, bins_sent = collections.Counter(), collections.Counter()
    missing = duplicates = streaming = 0
    ended = collections.Counter()
    cpu_workers = 0.0
    for pipe in pipes:
        pipe.send(("stop", answered, sent))
    for pipe in pipes:
        result = pipe.recv()
        if isinstance(result, tuple):
            raise SystemExit("fanout.py: a worker failed: %s" % (result,))
        bins.update(result["bins"])
        bins_sent.update(result["bins_sent"])
        missing += result["missing"]
        duplicates += result["duplicates"]
        streaming += result["streaming"]
        ended.update(result["ended"])
        cpu_workers += result["cpu"]
    for proc in procs:
        proc.join(5)
    post_ms.sort()
    ok_posts = len(post_ms)
    deliveries = sum(bins.values())
    fields = dict(
        subscribers=args.subscribers, subscribed=subscribed, h1=h1_subs, h2=h2_subs, h2_conns=h2_conns,
        h2_streams=args.h2_streams, subscribe_failed=failed, open_s="%.1f" % opened,
        rss_before_kb=rss_before, rss_idle_kb=rss_idle, rss_peak_kb=rss_peak,
        rss_per_sub_b=int((rss_idle - rss_before) * 1024 / subscribed) if subscribed else 0,
        rate=args.rate, duration=args.duration, posts=total, posts_ok=ok_posts,
        post_p50_ms="%.2f" % (post_ms[len(post_ms) // 2] if post_ms else 0),
        post_p99_ms="%.2f" % (post_ms[int((len(post_ms) - 1) * 0.99)] if post_ms else 0),
        poster_late_ms="%.1f" % (worst_late * 1000),
        deliveries=deliveries, expected=ok_posts * subscribed,
        deliveries_per_s="%.0f" % (deliveries / span if span > 0 else 0),
        p50_ms="%.1f" % percentile(bins, 0.5), p99_ms="%.1f" % percentile(bins, 0.99),
        max_ms="%.1f" % (max(bins) / 10.0 if bins else 0), min_ms="%.1f" % (min(bins) / 10.0 if bins else 0),
        p99_from_send_ms="%.1f" % percentile(bins_sent, 0.99),
        missing=missing, duplicates=duplicates, streaming=streaming,
        ended=sum(ended.values()), cpu_server_s="%.2f" % cpu_server, cpu_workers_s="%.2f" % cpu_workers,
        span_s="%.1f" % span)
    if ended:
        print("fanout.py: streams the server ended: %s" % dict(ended), file=sys.stderr)
    print("FANOUT " + " ".join("%s=%s" % kv for kv in fields.items()), flush=True)


if __name__ == "__main__":
    main()

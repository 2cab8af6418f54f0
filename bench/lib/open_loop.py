#!/usr/bin/env python3
"""Open-loop load for chatterd over HTTP/1.1 with TLS: requests are offered at a fixed rate, whatever the server's
answers do, and each one's latency counts from the moment it was due, not from when a connection was free to send
it, so a stalled server is charged for every request that waited behind the stall (no coordinated omission, as
wrk2 does it; wrk and the other closed-loop scenarios send the next request only once the last one is answered).

The schedule: request i is due at start + i / RATE (evenly spaced, a fixed rate); every POST_EVERY-th request (the
10th, 20th, ...) is POST /postmaps with a body no other request sends, the others GET /getmaps with the iOS app's
Accept-Encoding, as bench/lua/mix.lua interleaves them. A due request goes out on an idle kept-alive connection of a
pool of CONNECTIONS opened before the clock starts (the most recently freed first), one request at a time on each,
as a phone's; when every connection is busy it waits in the generator, its clock running. Each connection opens with
a GET /healthz that counts nowhere (so the server holds it to its kept-alive deadline, not to the shorter one for a
new connection's first byte); one the server closes (its request cap) is opened again in the background. One
thread: a select loop (microsecond timeouts), TLS by the ssl module, bodies counted, not kept.

Prints one "BENCH ..." line in the form of bench/lua/report.lua's (latencies in microseconds over every answered
request) and one "OPEN ..." line: the rate offered, reads' and posts' own percentiles, the generator's own lateness
(lag: how long after its due time the loop found each request due, the part of a latency that is the generator's,
not the server's), how long requests then waited for a free connection (wait: every one busy with earlier requests)
and the most that waited at once, and the generator's CPU seconds.

With --targets, the GETs ask the file's targets in turn (a viewport's boxes, bench/viewport.sh) instead of /getmaps;
--post-every 0 posts nothing.

Usage: open_loop.py URL --rate R --duration S [--connections C] [--cacert FILE] [--post-every N] [--targets FILE]
                    [--timeout S]
"""

import argparse
import collections
import gc
import random
import select
import socket
import ssl
import sys
import time
import urllib.parse

BUFFER = bytearray(256 * 1024)
VIEW = memoryview(BUFFER)


class Request:
    __slots__ = ("index", "due", "post", "noticed", "sent")

    def __init__(self, index, due, post, noticed):
        self.index, self.due, self.post, self.noticed, self.sent = index, due, post, noticed, 0.0


class Connection:
    """One HTTP/1.1 connection: connecting, handshake, idle, or busy with one request (or its priming one)."""

    __slots__ = ("sock", "fd", "state", "output", "request", "head", "remaining", "status", "close_after")

    def __init__(self):
        self.sock = None
        self.fd = -1
        self.state = "closed"
        self.output = b""
        self.request = None
        self.head = bytearray()
        self.remaining = -1
        self.status = 0
        self.close_after = False


class Generator:
    def __init__(self, args):
        url = urllib.parse.urlsplit(args.url)
        if url.scheme != "https":
            raise SystemExit("open_loop.py: the URL must be https://")
        self.host, self.port = url.hostname, url.port or 443
        self.context = ssl.create_default_context(cafile=args.cacert)
        self.context.set_alpn_protocols(["http/1.1"])
        self.rate, self.duration, self.timeout, self.post_every = args.rate, args.duration, args.timeout, args.post_every
        self.total = max(1, int(round(args.rate * args.duration)))
        self.connections = [Connection() for _ in range(args.connections)]
        self.idle = []  # a stack: the most recently freed connection goes first
        self.backlog = collections.deque()
        # Kept up to date as connections change, so that a turn of the loop costs no walk over every connection:
        # the connected ones by descriptor (watched for reading, idle ones too, so that one the server closes is
        # opened again before it is needed), and those waiting to write.
        self.connected_by_fd = {}
        self.read_fds = []
        self.writers = {}
        self.busy = 0
        self.run = "%d-%d" % (time.time(), random.randrange(1 << 30))
        host = "%s:%d" % (self.host, self.port)
        self.primer = ("GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode()
        targets = ["/getmaps"]
        if args.targets:
            with open(args.targets) as listed:
                targets = [line.strip() for line in listed if line.strip()]
        self.gets = [("GET %s HTTP/1.1\r\nHost: %s\r\nAccept-Encoding: gzip, deflate, br\r\n\r\n" % (target, host))
                     .encode() for target in targets]
        self.post_head = "POST /postmaps HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json; charset=utf-8\r\n" % host
        # Figures in seconds: the latency of answered requests by kind (post or not); for every request, how late the
        # loop found it due (the generator's own lateness) and how long it then waited for a connection to send it.
        self.latency = {False: [], True: []}
        self.lag = []
        self.waits = []
        self.bytes = 0
        self.status_errors = 0
        self.socket_errors = 0
        self.last_answer = 0.0
        self.most_waiting = 0
        self.reconnects = 0
        self.primer_errors = 0
        self.start = None

    def body(self, index):
        lat = 42.2 + random.random() * 0.1
        lon = -83.8 + random.random() * 0.1
        facing = ("North", "NE", "East", "SE", "South", "SW", "West", "NW")[index % 8]
        speed = ("stopped", "walking", "running", "cycling", "driving")[index % 5]
        geodata = '[%.16g,%.16g,\\"%s\\",\\"%s\\"]' % (lat, lon, facing, speed)
        return ('{"name":"open","message":"run %s chatt %d","geodata":"%s"}' % (self.run, index, geodata)).encode()

    def watch(self, connection):
        connection.fd = connection.sock.fileno()
        self.connected_by_fd[connection.fd] = connection
        self.read_fds = list(self.connected_by_fd)

    def unwatch(self, connection):
        self.connected_by_fd.pop(connection.fd, None)
        self.writers.pop(connection.fd, None)
        self.read_fds = list(self.connected_by_fd)

    def want_write(self, connection, wanted):
        if wanted:
            self.writers[connection.fd] = connection
        else:
            self.writers.pop(connection.fd, None)

    def open_background(self, connection):
        """Starts a non-blocking connect; the loop finishes it, the TLS handshake and the priming request."""
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.connect_ex((self.host, self.port))
        connection.sock = sock
        connection.fd = sock.fileno()
        connection.state = "connecting"
        self.want_write(connection, True)
        self.reconnects += 1

    def connected(self, connection):
        self.want_write(connection, False)
        if connection.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
            self.fail(connection)
            return
        connection.sock = self.context.wrap_socket(connection.sock, server_hostname=self.host,
                                                   do_handshake_on_connect=False)
        connection.state = "handshake"
        self.watch(connection)
        self.handshake(connection)

    def handshake(self, connection):
        try:
            connection.sock.do_handshake()
        except ssl.SSLWantReadError:
            self.want_write(connection, False)
            return
        except ssl.SSLWantWriteError:
            self.want_write(connection, True)
            return
        except (OSError, ssl.SSLError):
            self.fail(connection)
            return
        self.want_write(connection, False)
        # A first request, so that the connection is held to the server's kept-alive deadline (a minute), not to
        # its deadline for a new connection's first byte (10 s), which a connection left unused at the bottom of
        # the pool would meet, perhaps just as a request is sent on it.
        self.send(connection, PRIMER, time.monotonic())

    def close(self, connection):
        self.unwatch(connection)
        if connection in self.idle:
            self.idle.remove(connection)
        try:
            connection.sock.close()
        except OSError:
            pass
        connection.state = "closed"

    def fail(self, connection):
        """A connection broke: its request (if any) is a socket error; it is opened again."""
        if connection.request is PRIMER:
            self.primer_errors += 1
        elif connection.request is not None:
            self.socket_errors += 1
            self.busy -= 1
        connection.request = None
        self.close(connection)
        self.open_background(connection)

    def send(self, connection, request, now):
        if request is PRIMER:
            data = self.primer
        elif request.post:
            body = self.body(request.index)
            data = (self.post_head + "Content-Length: %d\r\n\r\n" % len(body)).encode() + body
        else:
            data = self.gets[request.index % len(self.gets)]
        connection.state = "busy"
        connection.request = request
        connection.head.clear()
        connection.remaining = -1
        connection.close_after = False
        if request is not PRIMER:
            self.busy += 1
            request.sent = now
            self.waits.append(now - request.noticed)
        connection.output = data
        self.flush(connection)

    def flush(self, connection):
        try:
            while connection.output:
                written = connection.sock.send(connection.output)
                connection.output = connection.output[written:]
            self.want_write(connection, False)
        except (ssl.SSLWantWriteError, BlockingIOError):
            self.want_write(connection, True)
        except ssl.SSLWantReadError:
            self.want_write(connection, False)
        except (OSError, ssl.SSLError):
            self.fail(connection)

    def receive(self, connection):
        while True:
            try:
                n = connection.sock.recv_into(BUFFER)
            except (ssl.SSLWantReadError, BlockingIOError):
                return
            except ssl.SSLWantWriteError:
                self.want_write(connection, True)
                return
            except (OSError, ssl.SSLError):
                self.fail(connection)
                return
            if n == 0 or connection.state != "busy":
                # Closed by the server, or bytes nobody asked for: the connection is out of step.
                self.fail(connection)
                return
            self.bytes += n
            if connection.remaining < 0:
                connection.head += VIEW[:n]
                end = connection.head.find(b"\r\n\r\n")
                if end < 0:
                    continue
                if not self.parse_head(connection, end):
                    self.fail(connection)
                    return
                connection.remaining -= len(connection.head) - end - 4
            else:
                connection.remaining -= n
            if connection.remaining == 0:
                self.answered(connection)
                return
            if connection.remaining < 0:
                self.fail(connection)
                return

    def parse_head(self, connection, end):
        lines = bytes(connection.head[:end]).split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[1].isdigit():
            return False
        connection.status = int(parts[1])
        length = None
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value.strip())
            elif name == b"connection" and b"close" in value.lower():
                connection.close_after = True
        if length is None:
            return False
        connection.remaining = length
        return True

    def answered(self, connection):
        now = time.monotonic()
        request = connection.request
        connection.request = None
        if request is PRIMER:
            if connection.status != 200:
                self.primer_errors += 1
        else:
            self.busy -= 1
            self.latency[request.post].append(now - request.due)
            self.last_answer = now
            if connection.status >= 400:
                self.status_errors += 1
        if connection.close_after:
            self.close(connection)
            self.open_background(connection)
            return
        connection.state = "idle"
        self.idle.append(connection)

    def issue(self):
        """Queues the requests due by now and sends the oldest waiting ones on idle connections; returns now."""
        now = time.monotonic()
        if self.start is None:
            return now
        due = self.start + self.issued * self.interval
        while self.issued < self.total and due <= now:
            post = self.post_every > 0 and (self.issued + 1) % self.post_every == 0
            self.backlog.append(Request(self.issued, due, post, now))
            self.lag.append(now - due)
            self.issued += 1
            due = self.start + self.issued * self.interval
        while self.backlog and self.idle:
            self.send(self.idle.pop(), self.backlog.popleft(), now)
        if len(self.backlog) > self.most_waiting:
            self.most_waiting = len(self.backlog)
        return now

    def turn(self, wait):
        """Waits up to WAIT seconds for the connections and does what they are ready for."""
        # select, not epoll: its timeout has microseconds, epoll's milliseconds (a send up to 1 ms late).
        readable, writable, _ = select.select(self.read_fds, list(self.writers), [], max(0.0, wait))
        for fd in writable:
            connection = self.writers.get(fd)
            if connection is None:
                continue
            if connection.state == "connecting":
                self.connected(connection)
            elif connection.state == "handshake":
                self.handshake(connection)
            else:
                self.flush(connection)
        for fd in readable:
            connection = self.connected_by_fd.get(fd)
            if connection is None:
                continue
            if connection.state == "handshake":
                self.handshake(connection)
            elif connection.state in ("busy", "idle"):
                self.receive(connection)
                # Between one connection's reading and the next, requests that fell due meanwhile go out.
                self.issue()

    def main(self):
        less_slack()
        # The pool, opened and primed before the clock starts.
        for connection in self.connections:
            self.open_background(connection)
        ready_by = time.monotonic() + 30
        while len(self.idle) < len(self.connections):
            if time.monotonic() > ready_by or self.primer_errors > len(self.connections):
                raise SystemExit("open_loop.py: could not open %d connections to %s:%d" % (
                    len(self.connections), self.host, self.port))
            self.turn(1)
        self.reconnects = 0
        gc.disable()
        cpu = time.process_time()
        start = time.monotonic() + 0.05
        interval = 1.0 / self.rate
        deadline = start + self.duration + self.timeout
        self.start, self.interval, self.issued = start, interval, 0
        while True:
            now = self.issue()
            if self.issued == self.total and not self.backlog and self.busy == 0:
                break
            if now >= deadline:
                break
            self.turn((start + self.issued * interval - now) if self.issued < self.total else deadline - now)
        cpu = time.process_time() - cpu
        # What the deadline left unanswered or unsent counts as timed out, as wrk's --timeout does.
        self.socket_errors += len(self.backlog) + self.busy + (self.total - self.issued)
        self.report(start, cpu)

    def report(self, start, cpu):
        every = sorted(self.latency[False] + self.latency[True])
        reads, posts = sorted(self.latency[False]), sorted(self.latency[True])
        lag, waits = sorted(self.lag), sorted(self.waits)
        seconds = max(self.last_answer - start, 1e-9) if every else self.duration
        print("BENCH requests=%d bytes=%d seconds=%.3f rps=%.1f p50_us=%d p99_us=%d max_us=%d status_errors=%d "
              "socket_errors=%d" % (len(every), self.bytes, seconds, len(every) / seconds, us(every, 0.5),
                                    us(every, 0.99), us(every, 1), self.status_errors, self.socket_errors))
        print("OPEN offered_rps=%.1f offered=%d reads=%d reads_p50_us=%d reads_p99_us=%d reads_max_us=%d posts=%d "
              "posts_p50_us=%d posts_p99_us=%d posts_max_us=%d lag_p50_us=%d lag_p99_us=%d lag_max_us=%d "
              "wait_p99_us=%d wait_max_us=%d most_waiting=%d reconnects=%d cpu_s=%.2f" % (
                  self.rate, self.total, len(reads), us(reads, 0.5), us(reads, 0.99), us(reads, 1), len(posts),
                  us(posts, 0.5), us(posts, 0.99), us(posts, 1), us(lag, 0.5), us(lag, 0.99), us(lag, 1),
                  us(waits, 0.99), us(waits, 1), self.most_waiting, self.reconnects, cpu))


# The request each connection opens with, whose answer counts nowhere.
PRIMER = Request(-1, 0.0, False, 0.0)


def less_slack():
    """Asks Linux to wake the loop within a microsecond of its timeout rather than the default 50 (timer slack):
    a send's lateness counts in its latency. Nothing elsewhere."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(29, 1000, 0, 0, 0)  # PR_SET_TIMERSLACK, in nanoseconds
    except (OSError, AttributeError):
        pass


def us(values, q):
    """The q quantile (nearest rank, as bench/lib/h2load.sh's) of sorted seconds, in microseconds; 0 if none."""
    if not values:
        return 0
    return int(values[int((len(values) - 1) * q)] * 1e6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--rate", type=float, required=True, help="requests a second, offered")
    parser.add_argument("--duration", type=float, required=True, help="seconds of offering")
    parser.add_argument("--connections", type=int, default=64, help="kept-alive connections (default 64)")
    parser.add_argument("--cacert", help="the certificate authority to trust")
    parser.add_argument("--post-every", type=int, default=10, help="every Nth request posts (default 10; 0: none)")
    parser.add_argument("--targets", help="a file of GET targets, one a line, asked in turn (default /getmaps)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds an answer may take after the last is due")
    args = parser.parse_args()
    if args.rate <= 0 or args.duration <= 0 or args.connections < 1 or args.post_every < 0:
        parser.error("--rate, --duration and --connections must be positive, --post-every not negative")
    Generator(args).main()
    return 0


if __name__ == "__main__":
    sys.exit(main())

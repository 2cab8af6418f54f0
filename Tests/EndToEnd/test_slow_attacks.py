"""Slow HTTP attacks with slowhttptest (Debian's, which scripts/test installs): slow read (-X), slowloris (-H)
and slow body (-B), each from 127.0.0.1 with 1000 connections, twice the default cap of 512, while other clients
(from 127.0.0.2) open a new connection every PROBE_EVERY seconds and time each request. Service must stay
available: every probe answered 200, none slower than SLOWEST_PROBE_SECONDS. With the defaults this rests on the
rate floor (--min-transfer-rate), which frees the attacker's slots within a window, and on shedding at the cap
(an idle connection, or one slower than the floor, gives its slot to a waiting client); with
--max-connections-per-ip the attacker never fills the cap.

A control shows the floor is what keeps service up: slow readers driven from here, a fixed count of them that
fills a small cap exactly, hold every slot without the floor (probes go unanswered until the readers let go), and
give their slots up with it (probes answered, every reader closed by the server). It counts on the server's own
gauge, not on how fast slowhttptest opens connections on a loaded machine.

Each run prints its figures; with CHATTERD_SLOW_ATTACK_FIGURES=FILE they are also appended to FILE as JSON lines,
and CHATTERD_SLOW_ATTACK_ALL=1 adds the runs without the floor that only measure (bench/RESULTS.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field

import pytest

from h2wire import H2Conn, SettingCodes
from pgsupport import migrated_database
from wire import Conn, build_request

ROWS = 1000  # a /getmaps of about 160 KB, as bench/soak.sh serves
CONNECTIONS = 1000
CONNECT_RATE = 200  # per second: the cap is full after 2.5 s, every connection is open after 5
ATTACK_SECONDS = 15
PROBE_EVERY = 0.25
PROBE_TIMEOUT = 10.0
SLOWEST_PROBE_SECONDS = 5.0
PER_IP_LIMIT = 50
DEFAULT_CAP = 512

# The control: SLOW_READERS readers fill a cap of as many slots (--max-connections). Each asks for /getmaps
# PIPELINED times, about 700 KB, ten times what the kernel takes for it (TCP_NOTSENT_LOWAT's 64 KiB unsent and a
# 4 KiB receive buffer), and reads only the status line, so the server always has output waiting for it.
SLOW_READERS = 48
PIPELINED = 4
READER_RECEIVE_BUFFER = 4096
HELD_PROBES = 4
# How long a probe waits for an answer while the readers hold the cap: well past the second a slow connection
# takes to become sheddable at the cap with the floor (ConnectionTimeouts.sheddableAfterSeconds).
HELD_PROBE_PATIENCE = 4.0

# slowhttptest's options for each mode, and what it asks for.
MODES = {
    # A 512-1024 byte receive window, 32 bytes read every 5 s, 3 requests pipelined.
    "slow-read": (["-X", "-w", "512", "-y", "1024", "-n", "5", "-z", "32", "-k", "3"], "/getmaps"),
    # A header line of up to 24 bytes every 5 s, after the request line.
    "slowloris": (["-H", "-i", "5", "-x", "24"], "/getmaps"),
    # Content-Length 8192, then up to 24 bytes of body every 5 s.
    "slow-body": (["-B", "-i", "5", "-x", "24", "-s", "8192"], "/postchatt"),
}

# Server flags of each configuration, and whether service must stay available under it.
CONFIGS = {
    "defaults": ([], True),
    "per-ip": (["--max-connections-per-ip", str(PER_IP_LIMIT)], True),
    "no-floor": (["--min-transfer-rate", "0"], None),  # measured only
    "no-floor-per-ip": (["--min-transfer-rate", "0", "--max-connections-per-ip", str(PER_IP_LIMIT)], True),
}


@pytest.fixture(scope="module")
def slowhttptest() -> str:
    path = shutil.which("slowhttptest")
    if not path:
        pytest.fail("slowhttptest is not installed (apt-get install slowhttptest; scripts/test installs it)")
    return path


@pytest.fixture(scope="module")
def feed_url(env):
    """A database of its own with ROWS chatts, so the shared one stays small."""
    seed = f"""INSERT INTO chatts (name, message, geodata)
               SELECT 'user' || (g % 50), 'Hello from the Diag #' || g,
                      format('[%s,%s,"North","walking"]', 42.2 + g / 1e5, -83.8 + g / 1e5)
               FROM generate_series(1, {ROWS}) AS g;"""
    with migrated_database(env.admin_url, env.binary, env.migrations, "e2e_slow_", seed) as url:
        yield url


@dataclass
class Probe:
    offset: float  # seconds from the start of the attack
    target: str
    seconds: float | None = None  # None: no answer (see failure)
    status: int | None = None
    failure: str | None = None
    open_connections: int | None = None  # from /metrics probes


def probe_once(host: str, port: int, probe: Probe, timeout: float) -> None:
    """A new connection from 127.0.0.2 and one GET of `probe.target` on it, answered within `timeout` or not."""
    started = time.monotonic()
    try:
        sock = socket.create_connection((host, port), timeout=timeout, source_address=("127.0.0.2", 0))
        with Conn(sock) as conn:
            conn.send(build_request("GET", probe.target))
            response = conn.read_response(timeout=max(0.1, timeout - (time.monotonic() - started)))
        probe.status = response.status
        probe.seconds = time.monotonic() - started
        if probe.target == "/metrics":
            match = re.search(rb"^chatterd_open_connections (\d+)", response.body, re.M)
            probe.open_connections = int(match.group(1)) if match else None
    except (OSError, AssertionError) as error:
        probe.failure = f"{type(error).__name__}: {error}"


@dataclass
class Prober:
    """Opens a new connection from 127.0.0.2 every PROBE_EVERY seconds, whatever earlier probes are waiting
    for, and times one request on it: /healthz, /getmaps and /metrics in turn."""

    host: str
    port: int
    probes: list[Probe] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)

    TARGETS = ("/healthz", "/getmaps", "/metrics")

    def one(self, probe: Probe) -> None:
        probe_once(self.host, self.port, probe, PROBE_TIMEOUT)

    def run(self, began: float) -> None:
        for number in range(int(4 * ATTACK_SECONDS / PROBE_EVERY)):  # bounded; stop ends it first
            if self.stop.is_set():
                return
            probe = Probe(time.monotonic() - began, self.TARGETS[number % len(self.TARGETS)])
            self.probes.append(probe)
            thread = threading.Thread(target=self.one, args=(probe,), daemon=True)
            thread.start()
            self.threads.append(thread)
            self.stop.wait(PROBE_EVERY)

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(PROBE_TIMEOUT + 2)


@dataclass
class Figures:
    mode: str
    config: str
    probes: int
    failures: int
    p50: float
    p99: float
    max: float
    peak_open: int
    refused: int
    shed: int
    attacker: str

    def line(self) -> str:
        return (f"{self.mode:9s} {self.config:15s} probes {self.probes:3d}  failed {self.failures:3d}  "
                f"p50 {self.p50:.3f} s  p99 {self.p99:.3f} s  max {self.max:.3f} s  "
                f"peak open {self.peak_open}  refused {self.refused}  shed {self.shed}  ({self.attacker})")


def quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))] if sorted_values else float("nan")


def counters(server) -> tuple[int, int]:
    """Connections refused at the per-address limit, and shed at the cap, so far."""
    text = server.get("/metrics").body.decode()
    refused = re.search(r'^chatterd_connections_refused_total\{reason="client_connection_limit"\} (\d+)', text, re.M)
    shed = re.search(r"^chatterd_connections_shed_total (\d+)", text, re.M)
    return int(refused.group(1)) if refused else 0, int(shed.group(1)) if shed else 0


def attacker_summary(output: str) -> str:
    """slowhttptest's last status: connected, closed and its own verdict, without the colour codes."""
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", output)
    last = {key: re.findall(rf"{key}:\s+(\w+)", plain) for key in ("connected", "closed", "error")}
    verdict = re.findall(r"service available:\s+(\w+)", plain)
    return ", ".join(f"{key} {values[-1]}" for key, values in last.items() if values) + (
        f", says available {verdict[-1]}" if verdict else "")


def attack(slowhttptest, start_server, url, mode: str, config: str) -> tuple[Figures, list[Probe], object]:
    flags, _ = CONFIGS[config]
    options, target = MODES[mode]
    server = start_server(*flags, url=url)
    assert server.get("/getmaps", timeout=30).status == 200  # the feed is cached before the attack
    refused_before, shed_before = counters(server)
    command = [slowhttptest, *options, "-c", str(CONNECTIONS), "-r", str(CONNECT_RATE), "-l", str(ATTACK_SECONDS),
               "-p", "3", "-u", f"http://127.0.0.1:{server.port}{target}"]
    prober = Prober(server.host, server.port)
    began = time.monotonic()
    attacker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    probing = threading.Thread(target=prober.run, args=(began,), daemon=True)
    probing.start()
    try:
        output, _ = attacker.communicate(timeout=ATTACK_SECONDS + 30)
    finally:
        if attacker.poll() is None:
            attacker.kill()
            attacker.wait(5)
        prober.stop.set()
        probing.join(5)  # no probe starts after this, so finish() waits for every one that started
        prober.finish()
    answered = sorted(p.seconds for p in prober.probes if p.status == 200)
    failed = [p for p in prober.probes if p.status != 200]
    refused, shed = counters(server)
    figures = Figures(
        mode, config, len(prober.probes), len(failed), quantile(answered, 0.5), quantile(answered, 0.99),
        answered[-1] if answered else float("nan"), max((p.open_connections or 0) for p in prober.probes),
        refused - refused_before, shed - shed_before, attacker_summary(output))
    print(figures.line())
    report = os.environ.get("CHATTERD_SLOW_ATTACK_FIGURES")
    if report:
        with open(report, "a") as out:
            out.write(json.dumps({**figures.__dict__, "command": " ".join(command[1:-2]),
                                  "server_flags": flags}) + "\n")
    assert server.process.alive(), server.process.log()
    return figures, failed, server


def describe(failed: list[Probe]) -> str:
    return "; ".join(f"{p.target} at {p.offset:.1f} s: {p.failure or p.status}" for p in failed[:5])


def check_available(figures: Figures, failed: list[Probe]) -> None:
    assert figures.failures == 0, f"{figures.line()}\nunanswered probes: {describe(failed)}"
    assert figures.max < SLOWEST_PROBE_SECONDS, f"a probe took {figures.max:.1f} s: {figures.line()}"


@pytest.mark.parametrize("config", ["defaults", "per-ip"])
@pytest.mark.parametrize("mode", list(MODES))
def test_other_clients_are_served_throughout_a_slow_attack(slowhttptest, start_server, feed_url, mode, config):
    figures, failed, server = attack(slowhttptest, start_server, feed_url, mode, config)
    check_available(figures, failed)
    if config == "defaults":
        # The attack did fill the cap, so the probes were answered because slots were freed.
        assert figures.peak_open >= DEFAULT_CAP * 9 // 10, f"the attack never filled the cap: {figures.line()}"
        assert figures.shed > 0, f"no connection shed at the cap: {figures.line()}"
    else:
        assert figures.peak_open <= PER_IP_LIMIT + 10, figures.line()
        assert figures.refused > 0, f"no connection refused at the per-address limit: {figures.line()}"
    # Once the attacker is gone, so are its connections.
    assert wait_for_open(server, lambda n: n <= 1, 15), "attack connections left open after slowhttptest exited"


def slow_reader(server) -> socket.socket:
    """A connection from 127.0.0.1 with a small receive buffer that asks for /getmaps PIPELINED times and reads
    the first status line only, once the server has accepted it and begun to answer."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, READER_RECEIVE_BUFFER)  # before connect: the window
    sock.settimeout(PROBE_TIMEOUT)
    sock.bind(("127.0.0.1", 0))
    sock.connect((server.host, server.port))
    sock.sendall(build_request("GET", "/getmaps") * PIPELINED)
    status_line = b""
    while not status_line.endswith(b"\r\n"):
        byte = sock.recv(1)
        assert byte, f"the server closed a slow reader before answering: {status_line!r}"
        status_line += byte
    assert status_line.startswith(b"HTTP/1.1 200 "), status_line
    return sock


def fill_the_cap_with_slow_readers(server, readers: list[socket.socket]) -> None:
    """SLOW_READERS readers, each in the server, appended to `readers`. Before the last, the server's own gauge
    is read through the one slot left: it must count every reader and the connection reading it."""
    while len(readers) < SLOW_READERS - 1:
        readers.append(slow_reader(server))
    assert wait_for_open(server, lambda n: n == SLOW_READERS, 10), "the readers do not hold a slot each"
    readers.append(slow_reader(server))


def probe_while_held(server, count: int, timeout: float) -> list[Probe]:
    """`count` probes at once, from 127.0.0.2, each waiting up to `timeout` for its answer."""
    probes = [Probe(0.0, "/healthz") for _ in range(count)]
    threads = [threading.Thread(target=probe_once, args=(server.host, server.port, probe, timeout), daemon=True)
               for probe in probes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 5)
    return probes


def closed_counts(server) -> dict[str, int]:
    """chatterd_connections_closed_total by reason, and chatterd_connections_shed_total as "shed_total"."""
    text = server.get("/metrics").body.decode()
    counts = {reason: int(value) for reason, value in
              re.findall(r'^chatterd_connections_closed_total\{reason="(\w+)"\} (\d+)', text, re.M)}
    counts["shed_total"] = counters(server)[1]
    return counts


def freed_by_the_server(before: dict[str, int], after: dict[str, int]) -> int:
    """Connections the server closed on its own to free a slot between two readings: shed at the cap, or closed
    for a send that stalled (no progress for the send idle deadline, or a window below the floor)."""
    return sum(after.get(reason, 0) - before.get(reason, 0) for reason in ("shed", "send_stalled"))


def close_all(readers: list[socket.socket]) -> None:
    for reader in readers:
        reader.close()


def test_without_the_floor_slow_readers_hold_every_slot(start_server, feed_url):
    """The control: without the floor (--min-transfer-rate 0), slow readers that fill the cap keep it full, and
    nobody else is served until they let go; so the slow-read runs above pass because of the floor, not because
    the attack missed. (The send idle deadline, 30 s, would free them, but after far longer than this takes.)"""
    server = start_server("--min-transfer-rate", "0", "--max-connections", str(SLOW_READERS), url=feed_url)
    assert server.get("/getmaps", timeout=30).status == 200  # the feed is cached before the readers come
    before = closed_counts(server)
    readers: list[socket.socket] = []
    try:
        fill_the_cap_with_slow_readers(server, readers)
        held = probe_while_held(server, HELD_PROBES, HELD_PROBE_PATIENCE)
    finally:
        close_all(readers)
    answered = [probe for probe in held if probe.status is not None]
    print(f"no floor: {len(held) - len(answered)} of {len(held)} probes unanswered in {HELD_PROBE_PATIENCE} s "
          f"while {len(readers)} slow readers held a cap of {SLOW_READERS}")
    assert not answered, f"answered while slow readers held the cap: {[(p.status, p.seconds) for p in answered]}"
    # Once they let go, the same probe is served: it was the readers that held service, not a broken server.
    after = Probe(0.0, "/healthz")
    probe_once(server.host, server.port, after, PROBE_TIMEOUT)
    assert after.status == 200, after
    # Nothing on the server's side let a reader go meanwhile (without the floor, only the send idle deadline could).
    stalled = closed_counts(server)["send_stalled"] - before["send_stalled"]
    assert stalled == 0, f"{stalled} slow readers closed for a stalled send while they held the cap"
    assert wait_for_open(server, lambda n: n <= 1, 15), "slow readers' connections left open after they closed"


def test_with_the_floor_slow_readers_give_up_their_slots(start_server, feed_url):
    """The control's sibling: the same readers filling the same cap, with the default floor. Probes are served
    while the readers still hold their sockets open, because the floor frees the slots: readers are shed at the
    cap, and each is closed by the server for missing the floor, without its client closing anything."""
    server = start_server("--max-connections", str(SLOW_READERS), url=feed_url)
    assert server.get("/getmaps", timeout=30).status == 200
    before = closed_counts(server)
    readers: list[socket.socket] = []
    try:
        fill_the_cap_with_slow_readers(server, readers)
        held = probe_while_held(server, HELD_PROBES, PROBE_TIMEOUT)
        unanswered = [probe for probe in held if probe.status != 200]
        assert not unanswered, f"not served while slow readers filled the cap: {describe(unanswered)}"
        slowest = max(probe.seconds for probe in held)
        print(f"floor: {len(held)} probes answered, slowest in {slowest:.2f} s, while {len(readers)} slow readers "
              f"filled a cap of {SLOW_READERS}")
        assert slowest < SLOWEST_PROBE_SECONDS, f"a probe took {slowest:.1f} s"
        assert wait_for_open(server, lambda n: n <= 1, 15), "slow readers kept their slots with the floor"
    finally:
        close_all(readers)
    freed = freed_by_the_server(before, closed_counts(server))
    assert freed >= SLOW_READERS, f"the server closed {freed} of {SLOW_READERS} slow readers itself"


@pytest.mark.skipif(os.environ.get("CHATTERD_SLOW_ATTACK_ALL") != "1", reason="measurement runs for bench/RESULTS.md")
@pytest.mark.parametrize("config", ["no-floor", "no-floor-per-ip"])
@pytest.mark.parametrize("mode", list(MODES))
def test_measure_without_the_floor(slowhttptest, start_server, feed_url, mode, config):
    figures, failed, _ = attack(slowhttptest, start_server, feed_url, mode, config)
    if CONFIGS[config][1]:
        check_available(figures, failed)


def test_an_http2_client_that_reads_slower_than_the_floor_is_closed(start_server, feed_url):
    """slowhttptest speaks only HTTP/1.1: the same slow read over h2c, its flow-control windows wide open so that
    only the socket holds the server back. The send idle deadline is far off, so the floor is what closes it."""
    server = start_server("--send-timeout", "120", url=feed_url)
    assert server.get("/getmaps", timeout=30).status == 200
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect, so the window stays small
    sock.settimeout(10)
    sock.connect((server.host, server.port))
    with H2Conn(sock, tls=False, settings={SettingCodes.INITIAL_WINDOW_SIZE: 2**31 - 1}) as conn:
        conn.grant(2**30)
        for _ in range(8):  # about 1.3 MB of /getmaps, and nothing of it read
            conn.send_headers([(":method", "GET"), (":scheme", "http"), (":authority", "localhost"),
                               (":path", "/getmaps")])
        started = time.monotonic()
        assert wait_for_open(server, lambda n: n >= 2, 5), "the h2 connection is open"
        assert wait_for_open(server, lambda n: n <= 1, 20), "a reader taking nothing kept its connection"
        elapsed = time.monotonic() - started
    print(f"h2c reader taking nothing closed after {elapsed:.1f} s")


def wait_for_open(server, predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = server.get("/metrics").body.decode()
        match = re.search(r"^chatterd_open_connections (\d+)", text, re.M)
        if match and predicate(int(match.group(1))):
            return True
        time.sleep(0.2)
    return False

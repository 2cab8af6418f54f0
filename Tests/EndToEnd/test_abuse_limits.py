"""Per-client limits (connections, post rate) and where the client address comes from: the socket's peer, or
only from a proxy listed in --trusted-proxy, its PROXY protocol header or X-Forwarded-For (on TLS only with
--trusted-proxy-terminates-tls). IPv6 clients count per /64 (--ipv6-client-prefix), IPv4 per address.

Loopback has a whole /8 on Linux, so a test binds its client sockets to 127.0.0.2, 127.0.0.3 ... to be several
clients on one machine. Loopback IPv6 is ::1 alone, so IPv6 clients come through a trusted proxy's PROXY header."""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import struct

import pytest

from processes import wait_until
from telemetry import log_records, metric, parse_exposition
from wire import Conn, build_request


def connect_from(server, source: str, timeout: float = 10.0) -> Conn:
    """A plain connection to `server` whose source address is `source`."""
    sock = socket.create_connection((server.host, server.port), timeout=timeout, source_address=(source, 0))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return Conn(sock)


def post_from(server, source: str, message: str, headers=(), prefix: bytes = b"") -> tuple[int, dict, bytes]:
    body = json.dumps({"name": "limits", "message": message}).encode()
    with connect_from(server, source) as conn:
        conn.send(prefix + build_request("POST", "/postchatt", body=body, headers=list(headers)))
        response = conn.read_response()
    return response.status, dict((n.lower(), v) for n, v in response.headers), response.body


def stored(server, token: str) -> int:
    rows = json.loads(server.get("/getchatts").body)
    return sum(1 for row in rows if token in row[1])


def refused(server) -> float:
    samples = parse_exposition(server.get("/metrics").body.decode())[1]
    return metric(samples, "chatterd_connections_refused_total", reason="client_connection_limit") or 0


def remotes(server, path: str) -> list[str]:
    return [r["remote"] for r in log_records(server.process, "logfmt") if r.get("event") == "request"
            and r.get("path") == path]


def test_an_address_at_its_connection_limit_is_refused_and_others_are_served(start_server):
    server = start_server("--max-connections-per-ip", "3")
    held = [connect_from(server, "127.0.0.2") for _ in range(3)]
    try:
        for conn in held:
            conn.send(build_request("GET", "/healthz"))
            assert conn.read_response().status == 200
        extra = connect_from(server, "127.0.0.2")
        assert extra.closed_by_server(), "a fourth connection from the same address is closed at once"
        other = connect_from(server, "127.0.0.3")
        other.send(build_request("GET", "/healthz"))
        assert other.read_response().status == 200, "another address is served"
        other.close()
        assert refused(server) >= 1
        held.pop().close()

        def served_again():
            with connect_from(server, "127.0.0.2") as conn:
                conn.send(build_request("GET", "/healthz"))
                try:
                    return conn.read_response(timeout=2).status == 200
                except AssertionError:
                    return False
        assert wait_until(served_again, timeout=5), "a freed slot is usable again"
    finally:
        for conn in held:
            conn.close()


def test_posts_past_the_rate_get_429_and_nothing_is_stored(start_server, token):
    server = start_server("--post-rate-per-ip", "2")
    statuses = [post_from(server, "127.0.0.4", f"{token}-{n}")[0] for n in range(4)]
    assert statuses == [200] * 4, "a burst of twice the rate"
    status, headers, body = post_from(server, "127.0.0.4", f"{token}-refused")
    assert status == 429
    assert headers["retry-after"].isdigit() and int(headers["retry-after"]) >= 1
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": "too many posts from this address"}
    assert stored(server, f"{token}-refused") == 0, "a refused post stores nothing"
    assert post_from(server, "127.0.0.5", f"{token}-other")[0] == 200, "another address has its own allowance"
    assert server.get("/getmaps").status == 200, "reads are not limited"
    assert wait_until(lambda: post_from(server, "127.0.0.4", f"{token}-later")[0] == 200, timeout=5)


def test_a_trusted_proxys_proxy_header_names_the_client(start_server, token):
    server = start_server("--trusted-proxy", "127.0.0.6", "--max-connections-per-ip", "1")
    header = b"PROXY TCP4 198.51.100.7 127.0.0.1 5555 443\r\n"
    with connect_from(server, "127.0.0.6") as first:
        first.send(header + build_request("GET", "/healthz"))
        assert first.read_response().status == 200
        assert wait_until(lambda: "198.51.100.7:5555" in remotes(server, "/healthz"), timeout=5)
        second = connect_from(server, "127.0.0.6")
        second.send(b"PROXY TCP4 198.51.100.7 127.0.0.1 5556 443\r\n" + build_request("GET", "/healthz"))
        assert second.closed_by_server(), "the proxied client is at its one connection"
        third = connect_from(server, "127.0.0.6")
        third.send(b"PROXY TCP4 198.51.100.8 127.0.0.1 5557 443\r\n" + build_request("GET", "/healthz"))
        assert third.read_response().status == 200, "another proxied client is served over the same proxy"
        third.close()


def test_a_proxy_header_from_an_untrusted_peer_is_not_believed(start_server):
    server = start_server("--trusted-proxy", "127.0.0.6")
    with connect_from(server, "127.0.0.7") as conn:
        conn.send(b"PROXY TCP4 198.51.100.9 127.0.0.1 5555 443\r\n" + build_request("GET", "/healthz"))
        assert conn.read_response().status == 400, "an untrusted peer's PROXY line is not HTTP"
    assert not any("198.51.100.9" in remote for remote in remotes(server, "-"))


def test_a_proxy_header_before_tls_is_read_and_the_handshake_goes_on(start_server):
    server = start_server("--trusted-proxy", "127.0.0.1", tls=True)
    raw = socket.create_connection((server.host, server.port), timeout=10)
    raw.sendall(b"PROXY TCP6 2001:db8::7 2001:db8::1 4000 443\r\n")
    with server.tls_context.wrap_socket(raw, server_hostname="localhost") as tls:
        conn = Conn(tls)
        conn.send(build_request("GET", "/healthz"))
        assert conn.read_response().status == 200
    assert wait_until(lambda: "[2001:db8::7]:4000" in remotes(server, "/healthz"), timeout=5)


def test_forwarded_for_counts_only_behind_a_trusted_proxy(start_server, token):
    server = start_server("--trusted-proxy", "127.0.0.8", "--post-rate-per-ip", "1")
    # Behind the proxy, each forwarded client has its own allowance (a burst of 2).
    for client in ("203.0.113.1", "203.0.113.2"):
        statuses = [post_from(server, "127.0.0.8", f"{token}-{client}-{n}",
                              headers=[("X-Forwarded-For", f"198.51.100.1, {client}")])[0] for n in range(3)]
        assert statuses == [200, 200, 429], client
    # Anyone else's X-Forwarded-For is ignored: the peer itself is the client.
    spoofed = [post_from(server, "127.0.0.9", f"{token}-spoof-{n}", headers=[("X-Forwarded-For", f"203.0.113.{n + 50}")])[0]
               for n in range(3)]
    assert spoofed == [200, 200, 429], "a made-up X-Forwarded-For does not earn a fresh allowance"
    assert wait_until(lambda: any(r.startswith("203.0.113.1") for r in remotes(server, "/postchatt")), timeout=5)
    assert not any(r.startswith("203.0.113.5") for r in remotes(server, "/postchatt"))


# PROXY protocol version 2's signature (HAProxy's proxy-protocol.txt, section 2.2).
PROXY_V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"


def proxy_v1(client: str, port: int) -> bytes:
    """A version 1 PROXY header naming `client`."""
    family, server = ("TCP6", "2001:db8::ffff") if ":" in client else ("TCP4", "127.0.0.1")
    return f"PROXY {family} {client} {server} {port} 443\r\n".encode()


def proxy_v2(client: str, port: int) -> bytes:
    """A version 2 PROXY header naming `client`; an IPv4-mapped IPv6 address goes as AF_INET6, as a proxy
    listening on :: would send it."""
    address = ipaddress.ip_address(client)
    family = 0x21 if address.version == 6 else 0x11  # AF_INET6 or AF_INET, over TCP
    server = ipaddress.ip_address("2001:db8::ffff" if address.version == 6 else "127.0.0.1")
    addresses = address.packed + server.packed + struct.pack("!HH", port, 443)
    return PROXY_V2_SIGNATURE + bytes([0x21, family]) + struct.pack("!H", len(addresses)) + addresses


def proxied(server, header: bytes) -> Conn:
    """A connection from the trusted proxy 127.0.0.6 that has sent `header` and one GET /healthz."""
    conn = connect_from(server, "127.0.0.6")
    conn.send(header + build_request("GET", "/healthz"))
    return conn


def test_an_ipv6_slash_64_is_one_client_at_the_connection_limit(start_server):
    server = start_server("--trusted-proxy", "127.0.0.6", "--max-connections-per-ip", "2")
    held = [proxied(server, proxy_v1("2001:db8::1", 4001)), proxied(server, proxy_v2("2001:db8::2", 4002)),
            proxied(server, proxy_v1("198.51.100.1", 4003)), proxied(server, proxy_v2("198.51.100.1", 4004))]
    try:
        for conn in held:
            assert conn.read_response().status == 200
        third = proxied(server, proxy_v1("2001:db8::3", 4005))
        assert third.closed_by_server(), "a third address of the same /64 is the same client, at its limit"
        far = proxied(server, proxy_v2("2001:db8::ffff:ffff:ffff:ffff", 4006))
        assert far.closed_by_server(), "the last address of the /64 too"
        with proxied(server, proxy_v1("2001:db8:0:1::1", 4007)) as other:
            assert other.read_response().status == 200, "another /64 is another client"
        mapped = proxied(server, proxy_v2("::ffff:198.51.100.1", 4008))
        assert mapped.closed_by_server(), "an IPv4-mapped address is its IPv4 address, at its limit"
        with proxied(server, proxy_v1("198.51.100.2", 4009)) as neighbour:
            assert neighbour.read_response().status == 200, "IPv4 counts per address"
        assert refused(server) >= 3
        assert wait_until(lambda: "[2001:db8::2]:4002" in remotes(server, "/healthz"), timeout=5), \
            "logs show the whole address"
    finally:
        for conn in held:
            conn.close()


def post_as(server, client: str, message: str, header=proxy_v1) -> int:
    """The status of a post from `client`, named by the trusted proxy 127.0.0.6."""
    return post_from(server, "127.0.0.6", message, prefix=header(client, 5000))[0]


def test_an_ipv6_slash_64_is_one_client_for_the_post_rate(start_server, token):
    server = start_server("--trusted-proxy", "127.0.0.6", "--post-rate-per-ip", "1")
    # Six addresses of one /64 share one burst of two (the issue: each used to get its own).
    statuses = [post_as(server, f"2001:db8::{n}", f"{token}-v6-{n}", proxy_v1 if n % 2 else proxy_v2)
                for n in range(1, 7)]
    assert statuses == [200, 200, 429, 429, 429, 429]
    assert post_as(server, "2001:db8:0:1::1", f"{token}-next") == 200, "another /64 has its own allowance"
    # IPv4 per address; an IPv4-mapped address draws on its IPv4 address's allowance.
    assert [post_as(server, "198.51.100.1", f"{token}-v4-{n}") for n in range(2)] == [200, 200]
    assert post_as(server, "198.51.100.2", f"{token}-v4-other") == 200
    assert post_as(server, "::ffff:198.51.100.1", f"{token}-mapped", proxy_v2) == 429
    assert stored(server, f"{token}-v6-") == 2
    assert wait_until(lambda: any(r.startswith("[2001:db8::2]:") for r in remotes(server, "/postchatt")), timeout=5)


def test_an_ipv6_client_prefix_of_128_counts_each_address(start_server, token):
    server = start_server("--trusted-proxy", "127.0.0.6", "--post-rate-per-ip", "1", "--ipv6-client-prefix", "128")
    assert [post_as(server, f"2001:db8::{n}", f"{token}-{n}") for n in range(1, 5)] == [200] * 4
    assert [post_as(server, "2001:db8::1", f"{token}-again-{n}") for n in range(2)] == [200, 429]


def tls_post(server, message: str, forwarded_for: str) -> int:
    """The status of a post over TLS from the trusted proxy 127.0.0.1, without a PROXY header, carrying
    `X-Forwarded-For` as a client behind a TLS-passthrough proxy could write it."""
    raw = socket.create_connection((server.host, server.port), timeout=10, source_address=("127.0.0.1", 0))
    body = json.dumps({"name": "limits", "message": message}).encode()
    with server.tls_context.wrap_socket(raw, server_hostname="localhost") as tls:
        conn = Conn(tls)
        conn.send(build_request("POST", "/postchatt", body=body, headers=[("X-Forwarded-For", forwarded_for)]))
        return conn.read_response().status


def test_on_tls_forwarded_for_names_nobody_unless_the_proxy_terminates_tls(start_server, token):
    server = start_server("--trusted-proxy", "127.0.0.1", "--post-rate-per-ip", "1", tls=True)
    statuses = [tls_post(server, f"{token}-{n}", f"203.0.113.{9 + n}") for n in range(3)]
    assert statuses == [200, 200, 429], "each made-up X-Forwarded-For is still the proxy, one client"
    assert wait_until(lambda: len(remotes(server, "/postchatt")) == 3, timeout=5)
    assert all(r.startswith("127.0.0.1:") for r in remotes(server, "/postchatt")), remotes(server, "/postchatt")


def test_on_tls_a_proxy_that_terminates_tls_names_the_client(start_server, token):
    server = start_server("--trusted-proxy", "127.0.0.1", "--post-rate-per-ip", "1",
                          "--trusted-proxy-terminates-tls", tls=True)
    assert [tls_post(server, f"{token}-a{n}", "203.0.113.9") for n in range(3)] == [200, 200, 429]
    assert tls_post(server, f"{token}-b", "203.0.113.10") == 200, "another forwarded client"
    assert wait_until(lambda: "203.0.113.9" in remotes(server, "/postchatt"), timeout=5)


@pytest.mark.parametrize("switch", [(), ("--trusted-proxy-terminates-tls",)], ids=["without", "with"])
def test_on_plain_http_an_http_proxys_forwarded_for_names_the_client(start_server, token, switch):
    server = start_server("--trusted-proxy", "127.0.0.8", "--post-rate-per-ip", "1", *switch)
    for client in ("203.0.113.21", "203.0.113.22"):
        statuses = [post_from(server, "127.0.0.8", f"{token}-{client}-{n}",
                              headers=[("X-Forwarded-For", client)])[0] for n in range(3)]
        assert statuses == [200, 200, 429], client
    assert wait_until(lambda: "203.0.113.21" in remotes(server, "/postchatt"), timeout=5)

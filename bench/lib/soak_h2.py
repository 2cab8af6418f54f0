"""The soak's HTTP/2 requests (soak_load.py), on Tests/Clients/h2wire.py's H2Conn: a batch sent at once as the
streams of one connection over TLS (ALPN h2), read until each is answered. After the server's GOAWAY (`gone`),
streams above its last stream id were not processed, and neither was one reset with REFUSED_STREAM (RFC 9113 §6.8,
§8.7): both come back as REFUSED, safe to send again."""

from __future__ import annotations

import os
import socket
import ssl
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Clients"))
try:
    import h2.exceptions
    from h2wire import ErrorCodes, H2Conn
    from wire import ProtocolError
except ImportError:
    sys.exit("soak.py: the HTTP/2 clients need PyPI's h2 (python3 -m pip install 'h2>=4.1,<5'; scripts/test installs it)")

REFUSED = "refused unprocessed"


class H2Failure(Exception):
    """The HTTP/2 connection broke a rule, ended or stalled with streams unanswered."""


# What ends an exchange without answers: each is a client error in the tally.
ERRORS = (OSError, H2Failure, h2.exceptions.H2Error, ProtocolError)


@dataclass
class H2Answer:
    """One stream's response, read like http.client's for Tally.record."""

    status: int
    headers: dict
    body: bytes

    def getheader(self, name: str):
        return self.headers.get(name.lower())


def connect(port: int, context: ssl.SSLContext, timeout: float) -> H2Conn:
    """A new connection to 127.0.0.1:`port`; H2Failure when ALPN does not choose h2."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        sock = context.wrap_socket(raw, server_hostname="localhost")
    except OSError:
        raw.close()
        raise
    if sock.selected_alpn_protocol() != "h2":
        sock.close()
        raise H2Failure(f"ALPN chose {sock.selected_alpn_protocol()!r}, not h2")
    return H2Conn(sock, tls=True, timeout=timeout)


def gone(conn: H2Conn) -> bool:
    """The server sent GOAWAY: no new stream on this connection."""
    return bool(conn.goaways)


def send(conn: H2Conn, requests) -> list[int]:
    """Sends `requests` (method, path, headers, body or None) in one write; their stream ids."""
    ids = [conn.queue_request([(":method", method), (":scheme", "https"), (":authority", "localhost"),
                               (":path", path)] + list(headers), body)
           for method, path, headers, body in requests]
    conn.flush()
    return ids


def exchange(conn: H2Conn, requests, timeout: float) -> list:
    """The answers to `requests` (method, path, headers, body or None), in order; REFUSED for a stream the server
    did not process."""
    ids = send(conn, requests)
    deadline = time.monotonic() + timeout
    while True:
        for code, _ in conn.goaways:
            if code != ErrorCodes.NO_ERROR:
                raise H2Failure(f"GOAWAY with {code!r}")
        last_stream = conn.goaways[-1][1] if conn.goaways else None
        refused = set()
        for stream_id in ids:
            stream = conn.streams[stream_id]
            if stream.reset is not None and not stream.ended:
                if stream.reset != ErrorCodes.REFUSED_STREAM:
                    raise H2Failure(f"stream {stream_id} reset with {stream.reset!r}")
                refused.add(stream_id)
            elif last_stream is not None and stream_id > last_stream:
                refused.add(stream_id)
        if all(stream_id in refused or conn.streams[stream_id].ended for stream_id in ids):
            break
        try:
            alive = conn.pump(deadline)
        except TimeoutError:
            raise H2Failure(f"streams unanswered after {timeout:g} s") from None
        if not alive:
            raise H2Failure(f"connection closed with streams unanswered (GOAWAY last stream {last_stream})")
    streams = [conn.streams[stream_id] for stream_id in ids]
    conn.forget(ids)
    if any(stream.fields is None for stream in streams if stream.stream_id not in refused):
        raise H2Failure("a stream ended without a response")
    return [REFUSED if stream.stream_id in refused else
            H2Answer(int(dict(stream.fields)[":status"]), dict(stream.fields), bytes(stream.body))
            for stream in streams]

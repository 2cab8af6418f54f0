"""Raw HTTP/1.x over plain TCP or TLS: build exact request bytes, parse responses, detect closes.

Deliberately minimal and strict: the point of this suite is to see the server's bytes, so nothing
here normalises or repairs what the server sends.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import time
from dataclasses import dataclass, field


class ProtocolError(AssertionError):
    """The server sent bytes that are not a well-formed HTTP/1.x response."""


class ConnectionClosed(AssertionError):
    """The server closed the connection before a complete response arrived."""


@dataclass
class Response:
    """One parsed HTTP response, with the raw bytes kept for byte-exact checks."""

    version: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    raw: bytes = b""

    def header(self, name: str) -> str | None:
        """First value of header `name` (case-insensitive), or None."""
        values = self.headers_named(name)
        return values[0] if values else None

    def headers_named(self, name: str) -> list[str]:
        return [v for (n, v) in self.headers if n.lower() == name.lower()]

    def tokens(self, name: str) -> set[str]:
        """Comma-separated tokens of all `name` headers, lower-cased."""
        out: set[str] = set()
        for value in self.headers_named(name):
            out.update(t.strip().lower() for t in value.split(",") if t.strip())
        return out

    @property
    def says_close(self) -> bool:
        return "close" in self.tokens("Connection")

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self) -> str:
        body = self.body if len(self.body) < 300 else self.body[:300] + b"..."
        return f"<Response {self.status} {self.headers!r} {body!r}>"


@dataclass
class Endpoint:
    """Where a server listens and how to talk to it."""

    host: str
    port: int
    tls_context: ssl.SSLContext | None = None
    process: object = None
    extra: dict = field(default_factory=dict)

    @property
    def tls(self) -> bool:
        return self.tls_context is not None

    def open_socket(self, timeout: float = 10.0, context: ssl.SSLContext | None = None) -> socket.socket:
        """A connected socket, the TLS handshake done (with `context`, else the endpoint's) when it uses TLS."""
        sock = socket.create_connection((self.host, self.port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ctx = context or self.tls_context
        if ctx is not None:
            sock = ctx.wrap_socket(sock, server_hostname="localhost")
        return sock

    def connect(self, timeout: float = 10.0, context: ssl.SSLContext | None = None) -> "Conn":
        """A new connection (TLS handshake done when the endpoint uses TLS)."""
        return Conn(self.open_socket(timeout, context))

    def request(self, method: str, target: str, body: bytes | None = None,
                headers: list[tuple[str, str]] | None = None, timeout: float = 10.0) -> Response:
        """One request on a fresh connection."""
        with self.connect(timeout=timeout) as conn:
            conn.send(build_request(method, target, body=body, headers=headers))
            return conn.read_response(head_request=(method == "HEAD"), timeout=timeout)

    def get(self, target: str, **kw) -> Response:
        return self.request("GET", target, **kw)

    def post_json(self, target: str, payload, **kw) -> Response:
        data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
        headers = [("Content-Type", "application/json; charset=utf-8")]
        return self.request("POST", target, body=data, headers=headers, **kw)


def build_request(method: str, target: str, body: bytes | None = None,
                  headers: list[tuple[str, str]] | None = None, version: str = "HTTP/1.1",
                  host: str | None = "localhost") -> bytes:
    """Exact request bytes. Adds Host (unless given or host=None) and Content-Length for a body."""
    headers = list(headers or [])
    names = {n.lower() for n, _ in headers}
    if host is not None and "host" not in names:
        headers.insert(0, ("Host", host))
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        headers.append(("Content-Length", str(len(body))))
    head = f"{method} {target} {version}\r\n".encode("latin-1")
    for name, value in headers:
        head += name.encode("latin-1") + b": " + value.encode("utf-8") + b"\r\n"
    return head + b"\r\n" + (body or b"")


def recv_some(sock: socket.socket, deadline: float) -> bytes:
    """What one recv gives before `deadline`, b"" when the server closed or reset. Raises TimeoutError."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("no response from server before the deadline")
    sock.settimeout(remaining)
    try:
        return sock.recv(65536)
    except (socket.timeout, TimeoutError):
        raise TimeoutError("no response from server before the deadline") from None
    except (ConnectionResetError, ssl.SSLEOFError, ssl.SSLZeroReturnError):
        return b""
    except ssl.SSLError as error:
        # An abrupt TLS close shows up as various SSL errors: treat as EOF.
        if "EOF" in str(error) or "UNEXPECTED" in str(error).upper():
            return b""
        raise


class SocketOwner:
    """A client connection's socket, closed on leaving a `with` block."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class Conn(SocketOwner):
    """A client connection with a read buffer; reads responses one at a time (pipelining-safe)."""

    def __init__(self, sock: socket.socket):
        super().__init__(sock)
        self.buf = bytearray()
        self.eof = False

    def abort(self) -> None:
        """Close with RST (SO_LINGER 0) instead of FIN."""
        try:
            raw = self.sock
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            raw.close()
        except OSError:
            pass

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def try_send(self, data: bytes) -> bool:
        """Send, reporting False instead of raising if the server already closed/reset."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            return False

    def _fill(self, deadline: float) -> bool:
        """Read more bytes into the buffer; False on EOF/reset. Raises TimeoutError at the deadline."""
        if self.eof:
            return False
        chunk = recv_some(self.sock, deadline)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def _read_until(self, marker: bytes, deadline: float, limit: int = 1 << 22) -> bytes:
        while True:
            index = self.buf.find(marker)
            if index >= 0:
                out = bytes(self.buf[: index + len(marker)])
                del self.buf[: index + len(marker)]
                return out
            if len(self.buf) > limit:
                raise ProtocolError(f"no {marker!r} within {limit} bytes")
            if not self._fill(deadline):
                raise ConnectionClosed(f"closed while waiting for {marker!r}; got {bytes(self.buf)!r}")

    def _read_exact(self, count: int, deadline: float) -> bytes:
        while len(self.buf) < count:
            if not self._fill(deadline):
                raise ConnectionClosed(f"closed after {len(self.buf)} of {count} body bytes")
        out = bytes(self.buf[:count])
        del self.buf[:count]
        return out

    def read_response(self, head_request: bool = False, timeout: float = 10.0,
                      skip_interim: bool = False) -> Response:
        """Next response. 1xx responses are returned as such unless skip_interim."""
        deadline = time.monotonic() + timeout
        while True:
            response = self._read_one(head_request, deadline)
            if skip_interim and 100 <= response.status < 200:
                continue
            return response

    def _read_one(self, head_request: bool, deadline: float) -> Response:
        head = self._read_until(b"\r\n\r\n", deadline)
        lines = head[:-4].split(b"\r\n")
        status_line = lines[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit() or len(parts[1]) != 3:
            raise ProtocolError(f"bad status line {status_line!r}")
        headers = []
        for line in lines[1:]:
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep or not name or name != name.strip():
                raise ProtocolError(f"bad response header line {line!r}")
            headers.append((name, value.strip(" \t")))
        response = Response(parts[0], int(parts[1]), parts[2] if len(parts) > 2 else "", headers, b"", head)
        if head_request or 100 <= response.status < 200 or response.status in (204, 304):
            return response
        if "chunked" in response.tokens("Transfer-Encoding"):
            response.body = self._read_chunked(deadline)
        elif response.header("Content-Length") is not None:
            lengths = response.headers_named("Content-Length")
            if len(lengths) != 1 or not lengths[0].isdigit():
                raise ProtocolError(f"bad Content-Length in response: {lengths!r}")
            response.body = self._read_exact(int(lengths[0]), deadline)
        else:
            while self._fill(deadline):
                pass
            response.body = bytes(self.buf)
            self.buf.clear()
        response.raw = head + response.body
        return response

    def _read_chunked(self, deadline: float) -> bytes:
        body = b""
        while True:
            size_line = self._read_until(b"\r\n", deadline)
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                while self._read_until(b"\r\n", deadline) != b"\r\n":
                    pass
                return body
            body += self._read_exact(size, deadline)
            self._read_exact(2, deadline)

    def closed_by_server(self, timeout: float = 3.0) -> bool:
        """True if the server closes (EOF or reset) within `timeout` and sends nothing more.

        Raises ProtocolError if more bytes arrive: after a framing error nothing may follow.
        """
        deadline = time.monotonic() + timeout
        try:
            while self._fill(deadline):
                pass
        except TimeoutError:
            return False
        if self.buf:
            raise ProtocolError(f"server sent more bytes before closing: {bytes(self.buf)[:500]!r}")
        return True

    def still_open(self, wait: float = 0.3) -> bool:
        """True if the connection stays open (no EOF) for `wait` seconds."""
        return not self.closed_by_server(timeout=wait)


def pipeline(endpoint: Endpoint, raw: bytes, count: int, timeout: float = 10.0) -> tuple[list[Response], Conn]:
    """Send `raw` in one write and read up to `count` responses (stopping early on close)."""
    conn = endpoint.connect(timeout=timeout)
    conn.send(raw)
    responses = []
    for _ in range(count):
        try:
            responses.append(conn.read_response(timeout=timeout))
        except ConnectionClosed:
            break
    return responses, conn


def chunked(data: bytes, size: int = 7) -> bytes:
    out = b""
    for start in range(0, len(data), size):
        piece = data[start:start + size]
        out += b"%x\r\n%s\r\n" % (len(piece), piece)
    return out + b"0\r\n\r\n"

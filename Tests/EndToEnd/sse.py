"""Server-sent events (the feed streams, docs/API.md) read off the wire: over HTTP/1.1 from a raw socket (TLS or
plain), undoing the chunked framing by hand so its every byte is checked, and over HTTP/2 with PyPI's `h2`.

Both readers give the same record (eventstream.py parses the events): each event's `id`, `event` type and `data`
line and its exact bytes, each comment line with the time it arrived, and how the stream ended (the chunked end,
END_STREAM, a close without either, or RST_STREAM). Nothing is repaired: a field line the contract does not allow,
a second `data:` line in one event, or a malformed chunk is an AssertionError at once.
"""

from __future__ import annotations

import json
import socket
import time

from eventstream import BOM, Comment, Event, EventStream
from h2wire import H2Conn, H2Endpoint
from wire import Conn, Endpoint, ProtocolError, Response, build_request


class EventParser(EventStream):
    """eventstream.py's parser, held to the event-stream format as chatterd writes it: `id:`, `event:` and one
    `data:` line per event (each once, `name: value`), comment lines only between events, `\\n` line ends, no BOM
    and no blank line alone. Anything else is an AssertionError at once."""

    def __init__(self):
        super().__init__()
        self.received = bytearray()  # every byte of the body, as it came
        self.events: list[Event] = []
        self.comments: list[tuple[float, str]] = []

    def feed(self, data: bytes, at: float = 0.0) -> list:
        self.received += data
        assert b"\r" not in data, f"CR in an event-stream line: {bytes(self.received[-200:])!r}"
        assert not self.received.startswith(BOM), "a BOM before the first event"
        items = super().feed(data, at)
        for item in items:
            if isinstance(item, Comment):
                assert not item.inside, f"a comment inside an event: {bytes(self._raw)!r} then {item.text!r}"
                self.comments.append((item.at, item.text))
                continue
            names = set()
            for line in item.lines:
                name, sep, _ = line.partition(b": ")
                assert sep and name in (b"id", b"event", b"data"), f"unexpected line {line!r}"
                assert name not in names, f"{name.decode()!r} twice in one event: {item.lines!r}"
                names.add(name)
            self.events.append(item)
        assert not self.blank_lines, "an empty line with no event before it"
        return items


class Subscription:
    """One feed stream as a client sees it. `response` has the status and headers (and, for an answer other than
    a stream, its whole body); `ended` is the clean end (the chunked end or END_STREAM), `closed` a connection
    that ended without it, `reset` an HTTP/2 RST_STREAM code."""

    response: Response
    parser: EventParser
    ended: bool = False
    closed: bool = False
    reset: int | None = None

    @property
    def events(self) -> list[Event]:
        return self.parser.events

    @property
    def comments(self) -> list[tuple[float, str]]:
        return self.parser.comments

    @property
    def ids(self) -> list[str]:
        return [event.id for event in self.events]

    @property
    def done(self) -> bool:
        return self.ended or self.closed or self.reset is not None

    def pump(self, deadline: float) -> bool:
        raise NotImplementedError

    def wait_for(self, predicate, timeout: float = 10.0) -> bool:
        """Reads until `predicate()` holds; False if the stream ends or `timeout` passes first."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.done:
                return bool(predicate())
            try:
                self.pump(deadline)
            except TimeoutError:
                return bool(predicate())
        return True

    def wait_events(self, count: int, timeout: float = 10.0) -> list[Event]:
        """The first `count` events; AssertionError if they do not all come within `timeout`."""
        got = self.wait_for(lambda: len(self.events) >= count, timeout)
        assert got, f"{len(self.events)} of {count} events within {timeout}s (done: {self.done}): {self.ids}"
        return self.events[:count]

    def wait_end(self, timeout: float = 10.0) -> bool:
        """Reads to the end of the stream; False if it is still open after `timeout`."""
        return self.wait_for(lambda: self.done, timeout)

    def quiet(self, seconds: float) -> None:
        """Reads whatever arrives for `seconds`."""
        self.wait_for(lambda: False, seconds)

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Subscription1(Subscription):
    """A feed stream over HTTP/1.1 on a raw socket; the chunked body is decoded here, byte by byte."""

    def __init__(self, conn: Conn, response: Response):
        self.conn = conn
        self.response = response
        self.parser = EventParser()
        self.raw = bytearray()  # the body as it came, chunk framing included
        self.chunked = "chunked" in response.tokens("Transfer-Encoding")
        self.ended = self.closed = False
        self.reset = None

    def pump(self, deadline: float) -> bool:
        if self.done:
            return False
        before = len(self.conn.buf)
        if not self.conn._fill(deadline):
            self.closed = True
            return False
        self.raw += self.conn.buf[before:]
        self._decode(time.monotonic())
        return True

    def _decode(self, at: float) -> None:
        buf = self.conn.buf
        if not self.chunked:  # HTTP/1.0: the body runs to the close
            self.parser.feed(bytes(buf), at)
            buf.clear()
            return
        while not self.ended:
            line_end = buf.find(b"\r\n")
            if line_end < 0:
                return
            size_text = bytes(buf[:line_end])
            if not size_text or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
                raise ProtocolError(f"bad chunk size line {size_text!r}")
            size = int(size_text, 16)
            if size == 0:
                if len(buf) < line_end + 4:
                    return
                if bytes(buf[line_end:line_end + 4]) != b"\r\n\r\n":
                    raise ProtocolError(f"trailers or junk after the last chunk: {bytes(buf)!r}")
                del buf[:line_end + 4]
                self.ended = True
                if buf:
                    raise ProtocolError(f"bytes after the chunked end: {bytes(buf)!r}")
                return
            if len(buf) < line_end + 2 + size + 2:
                return
            data = bytes(buf[line_end + 2:line_end + 2 + size])
            if bytes(buf[line_end + 2 + size:line_end + 4 + size]) != b"\r\n":
                raise ProtocolError("a chunk not followed by CRLF")
            del buf[:line_end + 4 + size]
            self.parser.feed(data, at)

    def close(self) -> None:
        self.conn.close()


class Subscription2(Subscription):
    """A feed stream on one HTTP/2 stream of an `H2Conn` (which may carry others)."""

    def __init__(self, conn: H2Conn, stream_id: int, owns: bool):
        self.conn = conn
        self.stream_id = stream_id
        self.owns = owns
        self.parser = EventParser()
        self.offset = 0

    @property
    def stream(self):
        return self.conn.streams[self.stream_id]

    @property
    def ended(self) -> bool:
        return self.stream.ended

    @property
    def reset(self) -> int | None:
        return self.stream.reset

    @property
    def closed(self) -> bool:
        return self.conn.eof and not self.stream.done

    @property
    def response(self) -> Response:
        return self.stream.response()

    def pump(self, deadline: float) -> bool:
        if self.done:
            return False
        alive = self.conn.pump(deadline)
        self._decode(time.monotonic())
        return alive

    def _decode(self, at: float) -> None:
        body = self.stream.body
        if len(body) > self.offset:
            self.parser.feed(bytes(body[self.offset:]), at)
            self.offset = len(body)

    def close(self) -> None:
        if self.owns:
            self.conn.close()
        elif not self.stream.done:
            try:
                self.conn.reset(self.stream_id)
            except OSError:
                pass


def stream_headers(last_event_id) -> list[tuple[str, str]]:
    """`Last-Event-ID` as given: None for none, a string for one, a list for several."""
    if last_event_id is None:
        return []
    values = last_event_id if isinstance(last_event_id, list) else [last_event_id]
    return [("Last-Event-ID", value) for value in values]


def subscribe(endpoint: Endpoint, path: str = "/getmaps/stream", last_event_id=None, headers=(),
              method: str = "GET", timeout: float = 10.0, conn: H2Conn | None = None,
              rcvbuf: int | None = None, version: str = "HTTP/1.1") -> Subscription:
    """Opens a feed stream and reads its head: over HTTP/2 when `endpoint` is an `H2Endpoint` (on `conn` when given,
    else on a connection of its own), else HTTP/1.1. An answer that is not a stream is read whole. `rcvbuf` sets
    SO_RCVBUF (HTTP/1.1) before connecting; `version` may be HTTP/1.0."""
    fields = stream_headers(last_event_id) + list(headers)
    if isinstance(endpoint, H2Endpoint):
        owns = conn is None
        conn = conn or endpoint.connect(timeout=timeout)
        stream_id = conn.send_request(method, path, headers=fields)
        subscription = Subscription2(conn, stream_id, owns)
        got = conn.wait_for(lambda: subscription.stream.fields is not None or subscription.stream.done, timeout)
        assert got and subscription.stream.fields is not None, f"no response head on stream {stream_id}"
        subscription._decode(time.monotonic())
        if subscription.response.status != 200:
            conn.wait_for(lambda: subscription.stream.done, timeout)
        return subscription
    if rcvbuf is None:
        sock = endpoint.open_socket(timeout)
    else:
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        raw.settimeout(timeout)
        raw.connect((endpoint.host, endpoint.port))
        sock = endpoint.tls_context.wrap_socket(raw, server_hostname="localhost") if endpoint.tls else raw
    conn = Conn(sock)
    conn.send(build_request(method, path, headers=fields, version=version))
    head = conn.read_response(head_request=True, timeout=timeout)
    subscription = Subscription1(conn, head)
    if method == "HEAD":
        return subscription
    if head.status != 200 or head.header("Content-Type") != "text/event-stream":
        length = head.header("Content-Length")
        if length is not None:
            head.body = conn._read_exact(int(length), time.monotonic() + timeout)
        return subscription
    subscription.raw += conn.buf
    subscription._decode(time.monotonic())
    return subscription


# --- the feed's rows, byte for byte --------------------------------------------------------------------

def feed_rows(body: bytes) -> list[bytes]:
    """The exact bytes of each row of a feed body (a JSON array of arrays of strings and nulls)."""
    assert body[:1] == b"[", body[:100]
    rows, depth, start, in_string, escaped = [], 0, None, False, False
    for index, byte in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte == 0x5B:
            depth += 1
            if depth == 2:
                start = index
        elif byte == 0x5D:
            if depth == 2:
                rows.append(body[start:index + 1])
            depth -= 1
    assert depth == 0, "unbalanced feed body"
    return rows


def feed_rows_by_id(body: bytes) -> dict[str, bytes]:
    return {json.loads(row)[2]: row for row in feed_rows(body)}

"""HTTP/2 for the end-to-end suite (RFC 9113), with PyPI's `h2` as the client.

`H2Endpoint` is an `Endpoint` whose `request`/`get`/`post_json` speak HTTP/2 (TLS with ALPN `h2`, or h2c
with prior knowledge on the plain listener) and return the same `wire.Response`, so request-level tests run
over either protocol unchanged. `H2Conn` is one connection for many streams, flow control by hand, GOAWAY.
`RawH2` writes frames with `hyperframe` and `hpack` for what no polite client sends (floods, HPACK bombs).

Every response is checked as it arrives: no connection-specific field (RFC 9113 §8.2.2), names in lower
case, one `:status`; the `h2` state machine checks framing, stream states and content-length.
"""

from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
from h2.connection import ConnectionInputs, ConnectionState
import hpack
import hyperframe.frame

from h2frames import PREFACE
from wire import ConnectionClosed, Endpoint, ProtocolError, Response, SocketOwner, recv_some

# RFC 9113 §8.2.2: fields that only mean something to one HTTP/1.1 connection.
CONNECTION_SPECIFIC = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}
ErrorCodes = h2.errors.ErrorCodes
SettingCodes = h2.settings.SettingCodes


class StreamReset(AssertionError):
    """The server reset the stream before a complete response."""

    def __init__(self, stream_id: int, code: int):
        super().__init__(f"stream {stream_id} reset by the server with {ErrorCodes(code).name}")
        self.stream_id = stream_id
        self.code = code


def h2_context(cafile, alpn: list[str] | None = None) -> ssl.SSLContext:
    """A client context trusting only the test certificate, offering `alpn` (default: h2 alone)."""
    ctx = ssl.create_default_context(cafile=str(cafile))
    ctx.set_alpn_protocols(alpn or ["h2"])
    return ctx


def check_response_fields(fields: list[tuple[str, str]]) -> None:
    """Raises ProtocolError for a response field no HTTP/2 server may send."""
    statuses = [value for name, value in fields if name == ":status"]
    if len(statuses) != 1 or not (statuses[0].isdigit() and len(statuses[0]) == 3):
        raise ProtocolError(f"response without exactly one valid :status: {fields!r}")
    for name, _ in fields:
        if name != name.lower():
            raise ProtocolError(f"upper-case field name {name!r} in an HTTP/2 response")
        if name in CONNECTION_SPECIFIC:
            raise ProtocolError(f"connection-specific field {name!r} in an HTTP/2 response")
        if name.startswith(":") and name != ":status":
            raise ProtocolError(f"request pseudo-header {name!r} in a response")


@dataclass
class Stream:
    """What arrived on one stream."""

    stream_id: int
    fields: list[tuple[str, str]] | None = None
    interim: list[list[tuple[str, str]]] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)
    ended: bool = False
    reset: int | None = None

    @property
    def done(self) -> bool:
        return self.ended or self.reset is not None

    def response(self) -> Response:
        assert self.fields is not None, f"stream {self.stream_id}: no response headers"
        status = int(next(value for name, value in self.fields if name == ":status"))
        headers = [(name, value) for name, value in self.fields if not name.startswith(":")]
        return Response("HTTP/2", status, "", headers, bytes(self.body))


class H2Conn(SocketOwner):
    """One HTTP/2 client connection over a connected socket (TLS already negotiated `h2`, or plain).

    With `validate=False` the `h2` library sends header fields exactly as given (names unchecked, not
    lower-cased), for malformed requests. With `auto_ack=False` received DATA is never acknowledged, so
    the server sees the stream and connection windows only shrink. `settings` go in our first SETTINGS.
    `write_size` (bytes per send, 0: no limit) cuts everything sent, preface included, into small writes.
    """

    def __init__(self, sock: socket.socket, *, tls: bool, validate: bool = True, auto_ack: bool = True,
                 settings: dict | None = None, timeout: float = 10.0, write_size: int = 0):
        super().__init__(sock)
        self.scheme = "https" if tls else "http"
        self.auto_ack = auto_ack
        self.timeout = timeout
        self.write_size = write_size
        config = h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8", validate_outbound_headers=validate,
            normalize_outbound_headers=validate, validate_inbound_headers=True)
        self.h2 = h2.connection.H2Connection(config)
        # h2 ends the whole connection when a GOAWAY arrives, but the streams up to its last stream id may
        # still finish (RFC 9113 §6.8): keep its state machine open for them.
        machine = self.h2.state_machine
        machine._transitions = {**machine._transitions, (ConnectionState.CLIENT_OPEN, ConnectionInputs.RECV_GOAWAY):
                                (None, ConnectionState.CLIENT_OPEN)}
        if settings:
            self.h2.local_settings = h2.settings.Settings(client=True, initial_values=settings)
        self.h2.initiate_connection()
        self.streams: dict[int, Stream] = {}
        self.events: list[h2.events.Event] = []
        # (error code, last stream id) of each GOAWAY received.
        self.goaways: list[tuple[int, int]] = []
        self.eof = False
        self.flush()

    # --- sending

    def flush(self) -> None:
        data = self.h2.data_to_send()
        step = self.write_size or len(data) or 1
        for start in range(0, len(data), step):
            self.sock.sendall(data[start:start + step])

    def send_headers(self, fields: list[tuple[str, str]], end_stream: bool = True, flush: bool = True) -> int:
        """A new stream with exactly these fields (pseudo-headers included); returns its id. Without `flush`
        the frame waits for the next write, so several can go out in one."""
        stream_id = self.h2.get_next_available_stream_id()
        self.streams[stream_id] = Stream(stream_id)
        self.h2.send_headers(stream_id, fields, end_stream=end_stream)
        if flush:
            self.flush()
        return stream_id

    def queue_request(self, fields: list[tuple[str, str]], body: bytes | None = None) -> int:
        """A new stream with exactly these fields and, in one DATA frame with END_STREAM, a body that fits the
        windows, held for the next `flush`: requests queued together reach the server in one write, as from a
        client that had them all at once. Returns the stream id."""
        stream_id = self.send_headers(fields, end_stream=body is None, flush=False)
        if body is not None:
            self.h2.send_data(stream_id, body, end_stream=True)
        return stream_id

    def forget(self, stream_ids) -> None:
        """Drops what arrived on these finished streams, and the events so far (DATA included): a client that keeps
        one connection for thousands of requests (the soak's) would otherwise hold every response it read."""
        for stream_id in stream_ids:
            self.streams.pop(stream_id, None)
        self.events.clear()

    def request_fields(self, method: str, target: str, headers=None, body: bytes | None = None):
        """The fields of a request as a browser sends them: pseudo-headers, then lower-cased names, and
        content-length for a body unless the headers have one."""
        fields = [(":method", method), (":scheme", self.scheme), (":authority", "localhost"), (":path", target)]
        fields += [(name.lower(), value) for name, value in headers or []]
        if body is not None and not any(name == "content-length" for name, _ in fields):
            fields.append(("content-length", str(len(body))))
        return fields

    def send_request(self, method: str, target: str, body: bytes | None = None, headers=None,
                     end_stream: bool = True) -> int:
        """Starts a request; returns its stream id. A request that declares a content-length but has no
        body keeps its stream open: the body never comes, and the server must answer from the head."""
        fields = self.request_fields(method, target, headers, body)
        declared = any(name == "content-length" for name, _ in fields)
        stream_id = self.send_headers(fields, end_stream=end_stream and body is None and not declared)
        if body is not None:
            self.send_body(stream_id, body, end_stream=end_stream)
        return stream_id

    def send_body(self, stream_id: int, data: bytes, end_stream: bool = True) -> int:
        """Sends `data` as the flow-control windows allow; stops early if the stream ends. Returns the
        number of bytes sent."""
        deadline = time.monotonic() + self.timeout
        sent = 0
        while True:
            stream = self.streams[stream_id]
            if stream.done or self.eof:
                return sent
            if sent == len(data):
                if end_stream:
                    self.h2.end_stream(stream_id)
                    self.flush()
                return sent
            room = min(self.h2.local_flow_control_window(stream_id), self.h2.max_outbound_frame_size,
                       len(data) - sent)
            if room <= 0:
                self.pump(deadline)
                continue
            self.h2.send_data(stream_id, data[sent:sent + room])
            self.flush()
            sent += room

    def reset(self, stream_id: int, code: int = ErrorCodes.CANCEL) -> None:
        self.h2.reset_stream(stream_id, code)
        self.flush()

    def grant(self, increment: int, stream_id: int | None = None) -> None:
        """WINDOW_UPDATE for `stream_id` (None: the connection)."""
        self.h2.increment_flow_control_window(increment, stream_id)
        self.flush()

    # --- receiving

    def pump(self, deadline: float) -> bool:
        """Reads once and handles what arrived; False at EOF. Raises TimeoutError past the deadline."""
        if self.eof:
            return False
        data = recv_some(self.sock, deadline)
        if not data:
            self.eof = True
            return False
        for event in self.h2.receive_data(data):
            self._handle(event)
        try:
            self.flush()
        except OSError:
            pass  # the server may have closed after its GOAWAY; what it sent is handled already
        return True

    def _handle(self, event) -> None:
        self.events.append(event)
        if isinstance(event, h2.events.InformationalResponseReceived):
            self._stream(event.stream_id).interim.append(list(event.headers))
        elif isinstance(event, h2.events.ResponseReceived):
            fields = list(event.headers)
            check_response_fields(fields)
            self._stream(event.stream_id).fields = fields
        elif isinstance(event, h2.events.TrailersReceived):
            raise ProtocolError(f"trailers on stream {event.stream_id}: {event.headers!r}")
        elif isinstance(event, h2.events.DataReceived):
            self._stream(event.stream_id).body += event.data
            if self.auto_ack:
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self._stream(event.stream_id).ended = True
        elif isinstance(event, h2.events.StreamReset):
            self._stream(event.stream_id).reset = event.error_code
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaways.append((event.error_code, event.last_stream_id))
        elif isinstance(event, h2.events.PushedStreamReceived):
            raise ProtocolError("the server pushed a stream though SETTINGS_ENABLE_PUSH is 0")

    def _stream(self, stream_id: int) -> Stream:
        return self.streams.setdefault(stream_id, Stream(stream_id))

    def wait_for(self, predicate, timeout: float | None = None) -> bool:
        """Reads until `predicate()` holds; False if the connection ends first."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while not predicate():
            if not self.pump(deadline):
                return bool(predicate())
        return True

    def quiet_for(self, seconds: float) -> None:
        """Reads whatever arrives until nothing has for `seconds`."""
        while True:
            try:
                if not self.pump(time.monotonic() + seconds):
                    return
            except TimeoutError:
                return

    def stream(self, stream_id: int, timeout: float | None = None) -> Stream:
        """The stream once it ended or was reset."""
        stream = self.streams[stream_id]
        if not self.wait_for(lambda: stream.done, timeout):
            raise ConnectionClosed(f"connection closed with stream {stream_id} unfinished (GOAWAY {self.goaways})")
        return stream

    def response(self, stream_id: int, timeout: float | None = None) -> Response:
        """The complete response on `stream_id`; StreamReset if the server reset it before the end."""
        stream = self.stream(stream_id, timeout)
        if not stream.ended:
            raise StreamReset(stream_id, stream.reset)
        return stream.response()

    def request(self, method: str, target: str, body: bytes | None = None, headers=None,
                timeout: float | None = None) -> Response:
        return self.response(self.send_request(method, target, body=body, headers=headers), timeout)

    def get(self, target: str, **kw) -> Response:
        return self.request("GET", target, **kw)

    def closed_by_server(self, timeout: float = 3.0) -> bool:
        """True if the server closes the connection within `timeout`."""
        deadline = time.monotonic() + timeout
        try:
            while self.pump(deadline):
                pass
        except TimeoutError:
            return False
        return True


@dataclass
class H2Endpoint(Endpoint):
    """The same listener as an `Endpoint`, spoken to in HTTP/2: over TLS when `tls_context` is set (it must
    offer ALPN `h2`), else h2c with prior knowledge. `connect` gives an `H2Conn`."""

    def connect(self, timeout: float = 10.0, context: ssl.SSLContext | None = None, **options) -> H2Conn:
        sock = self.open_socket(timeout, context)
        tls = isinstance(sock, ssl.SSLSocket)
        if tls and sock.selected_alpn_protocol() != "h2":
            sock.close()
            raise ProtocolError(f"ALPN chose {sock.selected_alpn_protocol()!r}, not h2")
        return H2Conn(sock, tls=tls, timeout=timeout, **options)

    def request(self, method: str, target: str, body: bytes | None = None,
                headers: list[tuple[str, str]] | None = None, timeout: float = 10.0) -> Response:
        """One request on a fresh connection."""
        with self.connect(timeout=timeout) as conn:
            return conn.request(method, target, body=body, headers=headers, timeout=timeout)


def over_h2(endpoint: Endpoint, cafile=None) -> H2Endpoint:
    """`endpoint`'s listener spoken to in HTTP/2: TLS with ALPN h2 if it is a TLS endpoint, else h2c."""
    context = h2_context(cafile) if endpoint.tls else None
    return H2Endpoint(endpoint.host, endpoint.port, context, endpoint.process, dict(endpoint.extra))


class RawH2(SocketOwner):
    """HTTP/2 written frame by frame (hyperframe, hpack), with no state machine: floods and bombs.

    It keeps its own HPACK encoder and decoder, so the server's tables stay in step with it."""

    def __init__(self, endpoint: H2Endpoint, timeout: float = 10.0, settings: dict | None = None):
        super().__init__(endpoint.open_socket(timeout))
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 65536
        self.buf = bytearray()
        self.frames: list = []
        self.eof = False
        self.sock.sendall(PREFACE + hyperframe.frame.SettingsFrame(0, settings=settings or {}).serialize())

    def send(self, *frames) -> bool:
        """Sends frames (hyperframe objects or bytes); False if the server has closed the connection."""
        data = b"".join(f if isinstance(f, bytes) else f.serialize() for f in frames)
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            return False

    def block(self, fields, huffman: bool = True) -> bytes:
        return self.encoder.encode(fields, huffman=huffman)

    def headers(self, stream_id: int, fields, end_stream: bool = True) -> hyperframe.frame.HeadersFrame:
        flags = ["END_HEADERS"] + (["END_STREAM"] if end_stream else [])
        return hyperframe.frame.HeadersFrame(stream_id, data=self.block(fields), flags=flags)

    def read_frame(self, deadline: float):
        """The next frame, or None at EOF. Raises TimeoutError past the deadline."""
        while True:
            if len(self.buf) >= 9:
                frame, length = hyperframe.frame.Frame.parse_frame_header(memoryview(self.buf[:9]))
                if len(self.buf) >= 9 + length:
                    frame.parse_body(memoryview(self.buf[9:9 + length]))
                    del self.buf[:9 + length]
                    self.frames.append(frame)
                    return frame
            if self.eof:
                return None
            data = recv_some(self.sock, deadline)
            if not data:
                self.eof = True
            self.buf += data

    def read_until(self, predicate, timeout: float = 10.0):
        """Frames until one satisfies `predicate` (returned), or None at EOF or when `timeout` passes."""
        deadline = time.monotonic() + timeout
        try:
            while (frame := self.read_frame(deadline)) is not None:
                if isinstance(frame, hyperframe.frame.SettingsFrame) and "ACK" not in frame.flags:
                    self.send(hyperframe.frame.SettingsFrame(0, flags=["ACK"]))
                if isinstance(frame, (hyperframe.frame.HeadersFrame, hyperframe.frame.ContinuationFrame)):
                    frame.fields = self.decoder.decode(frame.data) if "END_HEADERS" in frame.flags else None
                if predicate(frame):
                    return frame
        except TimeoutError:
            return None
        return None

    def goaway(self, timeout: float = 10.0):
        """The server's GOAWAY frame, reading until it comes (None at EOF or timeout)."""
        return self.read_until(lambda f: isinstance(f, hyperframe.frame.GoAwayFrame), timeout)

    def closed_by_server(self, timeout: float = 5.0) -> bool:
        """True if the connection ends within `timeout` (whatever frames come first)."""
        self.read_until(lambda f: False, timeout)
        return self.eof

import CNGHTTP2
import HTTPCore

/// One server-side HTTP/2 session in libnghttp2, which owns framing, HPACK, flow control and stream states
/// (RFC 9113) and does no I/O: bytes go in through `receive`, bytes to send come out of `send`, and what
/// happened on streams is collected as `events`. Request semantics are ours (`HTTP2RequestHead`).
///
/// Response bodies are never copied: DATA frames are produced with `NGHTTP2_DATA_FLAG_NO_COPY`, and each
/// frame's payload goes out as a slice of the response's own (shared) body.
final class HTTP2Session {
    /// What happened on the session, in order.
    enum Event: Equatable {
        /// A client opened a stream (its request's header block began).
        case streamOpened(Int32)
        /// A complete request on a stream.
        case request(Int32, HTTPRequest)
        /// A request the stream must be answered with an error for (its head or body broke a limit).
        case rejected(Int32, HTTPParseError)
        /// Body bytes arrived on a stream whose request is not complete yet.
        case bodyProgress(Int32)
        /// A stream ended (answered, reset by either side, or refused).
        case streamClosed(Int32)
        /// We sent GOAWAY with this error code (ours, or nghttp2's for a protocol error or a flood).
        case goawaySent(UInt32)
    }

    /// Why `receive` or `send` failed; the connection must close (after sending what `send` still gives).
    struct Failure: Error, Equatable {
        /// nghttp2's error code (e.g. `NGHTTP2_ERR_FLOODED`, `NGHTTP2_ERR_BAD_CLIENT_MAGIC`).
        let code: Int32
        var description: String { String(cString: nghttp2_strerror(code)) }
    }

    /// A request being received.
    private struct Incoming {
        var head: HTTP2RequestHead
        /// Set once the header block ended and was acceptable.
        var request: HTTPRequest?
        var body: [UInt8] = []
        /// Answered with an error already: further body bytes are dropped.
        var rejected = false
    }

    /// A response body being sent.
    private struct Outgoing {
        let body: [UInt8]
        var offset = 0
        /// After its last frame, reset the stream with NO_ERROR: the client is still sending a body we refused,
        /// and RFC 9113 §8.1 lets a server that has answered ask it to stop this way.
        var resetWhenSent: Bool
    }

    private var session: OpaquePointer?
    private let limits: HTTPLimits
    private var incoming: [Int32: Incoming] = [:]
    private var outgoing: [Int32: Outgoing] = [:]
    /// Response streams to reset with NO_ERROR once their last frame is sent (bodyless responses).
    private var resetAfterHeaders: Set<Int32> = []
    private(set) var events: [Event] = []
    /// Bytes produced while `send` runs: copied frames and, for DATA, a frame header and a slice of a body.
    private var produced: [ArraySlice<UInt8>] = []

    /// A server session that will send `settings` first.
    init(limits: HTTPLimits, configuration: HTTP2Configuration) {
        self.limits = limits
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        Self.install(callbacks)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_max_settings(option, configuration.maxSettingsEntries)
        nghttp2_option_set_max_outbound_ack(option, configuration.maxQueuedAcks)
        nghttp2_option_set_max_continuations(option, configuration.maxContinuations)
        nghttp2_option_set_stream_reset_rate_limit(
            option, configuration.resetBurst, configuration.resetsPerSecond)
        // Closed streams are not kept for the RFC 7540 priority tree (RFC 9113 deprecates it).
        nghttp2_option_set_no_closed_streams(option, 1)
        nghttp2_session_server_new2(&session, callbacks, Unmanaged.passUnretained(self).toOpaque(), option)
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: configuration.maxConcurrentStreams),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: UInt32(clamping: limits.maxHeaderBytes)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
    }

    deinit {
        nghttp2_session_del(session)
    }

    /// Feeds received bytes (the client preface first). Collects what they caused in `events`.
    /// - Throws: `Failure` when the connection must end (bad preface, a flood, an internal error); nghttp2 has
    ///   queued a GOAWAY where one is due, which `send` then yields.
    func receive(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let result = nghttp2_session_mem_recv(session, base, bytes.count)
        if result < 0 { throw Failure(code: Int32(result)) }
    }

    /// Every frame nghttp2 has ready (at most about `limit` bytes' worth), as chunks to write in order.
    func send(limit: Int) throws(Failure) -> [ArraySlice<UInt8>] {
        var total = 0
        while total < limit {
            var data: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(session, &data)
            if length < 0 { throw Failure(code: Int32(length)) }
            if length == 0 { break }
            if let data {
                produced.append(Array(UnsafeBufferPointer(start: data, count: length))[...])
            }
            total += length
        }
        defer { produced.removeAll(keepingCapacity: true) }
        return produced
    }

    /// Takes the events collected since the last call.
    func takeEvents() -> [Event] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// Whether nghttp2 still wants to read or write; when neither, the session is over.
    var isActive: Bool { wantsRead || nghttp2_session_want_write(session) != 0 }

    /// Whether nghttp2 still reads: false once it has ended the session (a GOAWAY for a protocol error).
    var wantsRead: Bool { nghttp2_session_want_read(session) != 0 }

    /// The highest client stream id handed to the application so far (for GOAWAY, RFC 9113 §6.8).
    var lastStreamID: Int32 { nghttp2_session_get_last_proc_stream_id(session) }

    /// Queues the response on `stream`: HEADERS with `:status` and `fields` (lower-case names), then the body
    /// unless `includeBody` is false. With `resetAfter`, the stream is reset with NO_ERROR once it is sent.
    func respond(
        on stream: Int32, status: Int, fields: [(name: String, value: String)], body: [UInt8], includeBody: Bool,
        resetAfter: Bool
    ) {
        let sendsData = includeBody && !body.isEmpty
        if sendsData {
            outgoing[stream] = Outgoing(body: body, resetWhenSent: resetAfter)
        } else if resetAfter {
            resetAfterHeaders.insert(stream)
        }
        let nameValues = [(":status", String(status))] + fields.map { ($0.name, $0.value) }
        let result = Self.withHeaderArray(nameValues) { nva in
            guard sendsData else { return nghttp2_submit_response(session, stream, nva.baseAddress, nva.count, nil) }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: readBody)
            return nghttp2_submit_response(session, stream, nva.baseAddress, nva.count, &provider)
        }
        // Fails only for a stream that is already closed (the client reset it meanwhile): nothing to send.
        if result != 0 {
            outgoing[stream] = nil
            resetAfterHeaders.remove(stream)
        }
    }

    /// Whether the request arriving or refused on `stream` is a HEAD.
    func isHeadRequest(on stream: Int32) -> Bool {
        incoming[stream]?.head.isHead ?? false
    }

    /// Resets `stream` with `code` (a stream error, RFC 9113 §5.4.2).
    func reset(_ stream: Int32, code: UInt32) {
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, code)
    }

    /// Queues GOAWAY with the last stream we processed: no new streams; those below finish (RFC 9113 §6.8).
    func goAway(code: UInt32) {
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, code, nil, 0)
    }

    // MARK: - Callbacks

    private static func install(_ callbacks: OpaquePointer?) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, isRequestHeaders(frame) else { return 0 }
            let session = this(user)
            let stream = frame.pointee.hd.stream_id
            session.incoming[stream] = Incoming(head: HTTP2RequestHead(limits: session.limits))
            session.events.append(.streamOpened(stream))
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, isRequestHeaders(frame) else { return 0 }
            let session = this(user)
            let stream = frame.pointee.hd.stream_id
            session.incoming[stream]?.head.add(
                name: UnsafeRawBufferPointer(start: name, count: nameLength),
                value: UnsafeRawBufferPointer(start: value, count: valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            this(user).frameReceived(frame.pointee.hd)
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, user in
            this(user).bodyReceived(stream, UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, _, user in
            let session = this(user)
            session.incoming[stream] = nil
            session.outgoing[stream] = nil
            session.resetAfterHeaders.remove(stream)
            session.events.append(.streamClosed(stream))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            this(user).frameSent(frame.pointee)
            return 0
        }
        nghttp2_session_callbacks_set_send_data_callback(callbacks) { _, frame, header, length, _, user in
            guard let frame, let header, frame.pointee.data.padlen == 0 else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
            return this(user).sendData(on: frame.pointee.hd.stream_id, header: header, length: length)
        }
    }

    /// A HEADERS or DATA frame ended: the header block may be complete, and with END_STREAM the request.
    private func frameReceived(_ header: nghttp2_frame_hd) {
        let stream = header.stream_id
        guard var state = incoming[stream] else { return }
        let endStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if header.type == UInt8(NGHTTP2_HEADERS.rawValue), state.request == nil, !state.rejected {
            do {
                state.request = try state.head.request(body: [])
            } catch {
                state.rejected = true
                incoming[stream] = state
                events.append(.rejected(stream, error))
                return
            }
        }
        guard endStream, !state.rejected, var request = state.request else {
            incoming[stream] = state
            return
        }
        request.body = state.body
        incoming[stream] = nil
        events.append(.request(stream, request))
    }

    private func bodyReceived(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard var state = incoming[stream], !state.rejected else { return }
        guard state.body.count + bytes.count <= limits.maxBodyBytes else {
            state.rejected = true
            state.body = []
            incoming[stream] = state
            events.append(.rejected(stream, .bodyTooLarge))
            return
        }
        state.body.append(contentsOf: bytes)
        incoming[stream] = state
        events.append(.bodyProgress(stream))
    }

    private func frameSent(_ frame: nghttp2_frame) {
        let stream = frame.hd.stream_id
        switch frame.hd.type {
        case UInt8(NGHTTP2_GOAWAY.rawValue):
            events.append(.goawaySent(frame.goaway.error_code))
        case UInt8(NGHTTP2_HEADERS.rawValue) where resetAfterHeaders.remove(stream) != nil:
            reset(stream, code: NGHTTP2_NO_ERROR.rawValue)
        default:
            break
        }
    }

    /// Writes one DATA frame of `stream`'s body without copying the payload: the frame header, then a slice.
    private func sendData(on stream: Int32, header: UnsafePointer<UInt8>, length: Int) -> Int32 {
        guard var body = outgoing[stream] else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
        produced.append(Array(UnsafeBufferPointer(start: header, count: 9))[...])
        produced.append(body.body[body.offset..<(body.offset + length)])
        body.offset += length
        if body.offset == body.body.count {
            outgoing[stream] = nil
            if body.resetWhenSent { reset(stream, code: NGHTTP2_NO_ERROR.rawValue) }
        } else {
            outgoing[stream] = body
        }
        return 0
    }

    /// How much of `stream`'s body the next DATA frame carries (at most `length`), and whether it is the last.
    fileprivate func nextFrame(of stream: Int32, length: Int) -> (count: Int, isLast: Bool)? {
        guard let body = outgoing[stream] else { return nil }
        let count = min(length, body.body.count - body.offset)
        return (count, body.offset + count == body.body.count)
    }

    /// Calls `body` with `fields` as an `nghttp2_nv` array, whose pointers are valid only inside `body`.
    private static func withHeaderArray<Result>(
        _ fields: [(String, String)], _ body: (UnsafeMutableBufferPointer<nghttp2_nv>) -> Result
    ) -> Result {
        // Every name and value in one buffer, so the array needs no allocation per field.
        var bytes: [UInt8] = []
        var bounds: [(name: Range<Int>, value: Range<Int>)] = []
        for (name, value) in fields {
            let nameStart = bytes.count
            bytes.append(contentsOf: name.utf8)
            let valueStart = bytes.count
            bytes.append(contentsOf: value.utf8)
            bounds.append((nameStart..<valueStart, valueStart..<bytes.count))
        }
        return bytes.withUnsafeMutableBufferPointer { buffer in
            var nva = bounds.map { field in
                nghttp2_nv(
                    name: buffer.baseAddress.map { $0 + field.name.lowerBound }, value: buffer.baseAddress.map {
                        $0 + field.value.lowerBound
                    }, namelen: field.name.count, valuelen: field.value.count,
                    flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            return nva.withUnsafeMutableBufferPointer { body($0) }
        }
    }
}

/// The session behind a callback's user data.
private func this(_ user: UnsafeMutableRawPointer?) -> HTTP2Session {
    // Invariant: nghttp2 passes back the pointer given at creation, and the nghttp2 session dies with ours.
    Unmanaged<HTTP2Session>.fromOpaque(user!).takeUnretainedValue()
}

private func isRequestHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Bool {
    frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) && frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
}

/// The data source read callback: sizes the next DATA frame, whose payload `sendData` then writes uncopied.
private func readBody(
    _ session: OpaquePointer?, _ stream: Int32, _ buffer: UnsafeMutablePointer<UInt8>?, _ length: Int,
    _ flags: UnsafeMutablePointer<UInt32>?, _ source: UnsafeMutablePointer<nghttp2_data_source>?,
    _ user: UnsafeMutableRawPointer?
) -> Int {
    guard let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
    guard let frame = this(user).nextFrame(of: stream, length: length) else {
        return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    }
    flags.pointee |= NGHTTP2_DATA_FLAG_NO_COPY.rawValue
    if frame.isLast { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
    return frame.count
}

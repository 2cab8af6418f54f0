import CNGHTTP2
import HTTPCore

/// One server-side HTTP/2 session in libnghttp2, which owns framing, HPACK, flow control and stream states
/// (RFC 9113) and does no I/O: bytes go in through `receive`, bytes to send come out of `send`. What happened on
/// each stream is kept in its `HTTP2Stream` record, in `streams`, where requests to answer (and requests refused
/// with an error) queue in arrival order. Request semantics are ours (`HTTP2RequestHead`).
///
/// Frames are written straight into the connection's output. Response bodies are never copied: DATA frames are
/// produced with `NGHTTP2_DATA_FLAG_NO_COPY`, and each payload goes out as slices of the response body's segments.
final class HTTP2Session {
    /// What happened to the connection as a whole, in order, for the machine.
    enum Event: Equatable {
        /// A client opened a stream (its request's header block began).
        case streamOpened(Int32)
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

    private var session: OpaquePointer?
    private let limits: HTTPLimits
    /// Every stream's record, and the queues of requests to answer and to refuse.
    let streams: HTTP2StreamTable
    private(set) var events: [Event] = []
    /// The instant of the bytes `receive` is reading, for the records its callbacks update.
    private var receivedAt = Instant(nanoseconds: 0)
    /// The output `send` is writing into, while it runs.
    private var sink: UnsafeMutablePointer<OutputBuffer>?
    /// Where each response's header fields are assembled for nghttp2.
    private var fields = HTTP2ResponseFieldList()

    /// A server session that will send `settings` first.
    init(limits: HTTPLimits, configuration: HTTP2Configuration) {
        self.limits = limits
        // Past the budget, the stream whose DATA would pass it is refused (REFUSED_STREAM), so its client may send
        // it again.
        let (budget, overflow) = limits.maxBodyBytes.multipliedReportingOverflow(by: configuration.maxBufferedBodies)
        streams = HTTP2StreamTable(maxBodyBytes: limits.maxBodyBytes, maxBufferedBodyBytes: overflow ? .max : budget)
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        HTTP2Callbacks.install(callbacks)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_max_settings(option, configuration.maxSettingsEntries)
        nghttp2_option_set_max_outbound_ack(option, configuration.maxQueuedAcks)
        nghttp2_option_set_max_continuations(option, configuration.maxContinuations)
        nghttp2_option_set_stream_reset_rate_limit(option, configuration.resetBurst, configuration.resetsPerSecond)
        // Closed streams are not kept for the RFC 7540 priority tree (RFC 9113 deprecates it).
        nghttp2_option_set_no_closed_streams(option, 1)
        // Large blocks (the 16 KiB outbound frame buffer) in pages of their own: an idle or feed-stream connection
        // touches only the first (see CNGHTTP2_paged_mem).
        nghttp2_session_server_new3(
            &session, callbacks, Unmanaged.passUnretained(self).toOpaque(), option, CNGHTTP2_paged_mem())
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
        for stream in streams.records.values { stream.changeResponse(.drop) }
        nghttp2_session_del(session)
    }

    /// Feeds bytes received at `now` (the client preface first); what they cause lands in the stream records, the
    /// queues and `events`.
    /// - Throws: `Failure` when the connection must end (bad preface, a flood, an internal error); nghttp2 has
    ///   queued a GOAWAY where one is due, which `send` then yields.
    func receive(_ bytes: UnsafeRawBufferPointer, at now: Instant) throws(Failure) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        receivedAt = now
        let result = nghttp2_session_mem_recv(session, base, bytes.count)
        if result < 0 { throw Failure(code: Int32(result)) }
    }

    /// Writes the frames nghttp2 has ready into `output`, until about `limit` bytes have been added.
    func send(into output: inout OutputBuffer, limit: Int) throws(Failure) {
        let start = output.byteCount
        try withUnsafeMutablePointer(to: &output) { (output) throws(Failure) in
            sink = output
            defer { sink = nil }
            while output.pointee.byteCount - start < limit {
                let before = output.pointee.byteCount
                var data: UnsafePointer<UInt8>?
                let length = nghttp2_session_mem_send(session, &data)
                if length < 0 { throw Failure(code: Int32(length)) }
                if length > 0, let data { output.pointee.append(UnsafeBufferPointer(start: data, count: length)) }
                // A DATA frame sent without copying is written by `sendData` and may return 0 here.
                if output.pointee.byteCount == before, !resetCutStreams() { break }
            }
        }
    }

    /// Takes the events collected since the last call, calling `handle` with each.
    func takeEvents(_ handle: (Event) -> Void) {
        for event in events { handle(event) }
        events.removeAll(keepingCapacity: true)
    }

    /// Refuses `stream`'s request with `response` (queued for the driver to report and send).
    func reject(_ stream: Int32, with response: HTTPResponse) {
        streams.reject(stream, with: response)
    }

    /// Resets `stream` with `code` and gives it up: nothing more of it is read, handed out or sent.
    func abandon(_ stream: Int32, code: UInt32) {
        if streams.abandon(stream) { reset(stream, code: code) }
    }

    /// Notes, for each response with body still to send, whether the client's flow-control window (the stream's
    /// and the connection's) lets it move now. Call when everything sent has left the connection's output.
    func observeWindows(at now: Instant) {
        guard streams.sendingCount > 0 else { return }
        let connectionWindow = nghttp2_session_get_remote_window_size(session)
        for (id, stream) in streams.records where stream.hasBodyToSend {
            let window = min(connectionWindow, nghttp2_session_get_stream_remote_window_size(session, id))
            stream.pace.windowObserved(open: window > 0, at: now)
        }
    }

    /// Whether nghttp2 still wants to read or write; when neither, the session is over.
    var isActive: Bool { wantsRead || nghttp2_session_want_write(session) != 0 }

    /// Whether nghttp2 still reads: false once it has ended the session (a GOAWAY for a protocol error).
    var wantsRead: Bool { nghttp2_session_want_read(session) != 0 }

    /// The highest client stream id handed to the application so far (for GOAWAY, RFC 9113 §6.8).
    var lastStreamID: Int32 { nghttp2_session_get_last_proc_stream_id(session) }

    /// Queues `response` on `stream`: HEADERS with `:status`, its fields as `HTTP2ResponseFields` lists them and
    /// `x-request-id`, then the body unless `includeBody` is false. With `resetAfter`, the stream is reset with
    /// NO_ERROR once it is sent. A stream closed meanwhile (reset by the client) has nothing sent; its record goes.
    func respond(
        on id: Int32, _ response: HTTPResponse, requestID: String, date: String, includeBody: Bool,
        resetAfter: Bool, wake: @escaping @Sendable () -> Void = {}
    ) {
        guard let stream = streams[id], stream.isOpen else { return streams.forget(id) }
        let live = includeBody ? response.stream : nil
        live?.open(wake: wake)
        let body = HTTP2ResponseBody(includeBody ? response.body : HTTPBody(), live: live)
        streams.respond(stream, body, resetWhenSent: resetAfter)
        fields.assemble(response, requestID: requestID, date: date)
        let sendsData = body.unsent > 0 || body.isLive
        let result = fields.withArray { nva in
            guard sendsData else { return nghttp2_submit_response(session, id, nva.baseAddress, nva.count, nil) }
            var provider = nghttp2_data_provider(
                source: nghttp2_data_source(ptr: nil), read_callback: HTTP2Callbacks.readBody)
            return nghttp2_submit_response(session, id, nva.baseAddress, nva.count, &provider)
        }
        // Fails only for a stream nghttp2 has closed already: nothing to send.
        if result != 0 { streams.respond(stream, HTTP2ResponseBody(HTTPBody()), resetWhenSent: false) }
    }

    /// Lets live bodies move after their streams' wake: cut ones are reset (CANCEL), the rest sent as far as
    /// they have something.
    func liveBodiesWoke() {
        for (id, stream) in streams.records where stream.response.isLive {
            // Held back or not, a body is asked whether it is cut (see `HTTP2ResponseBody.Event.woke`).
            streams.changeResponse(of: stream, .woke)
            nghttp2_session_resume_data(session, id)
        }
        resetCutStreams()
    }

    /// Resets the streams whose live body was cut (found while nghttp2 asked for their data, where no frame can
    /// be submitted); whether there were any.
    @discardableResult
    private func resetCutStreams() -> Bool {
        var any = false
        for (id, stream) in streams.records where stream.response.isCut && !stream.isAbandoned {
            abandon(id, code: NGHTTP2_CANCEL.rawValue)
            any = true
        }
        return any
    }

    /// Ends every live body after what it has given (the server is draining): each stream ends cleanly.
    func endLiveBodies() {
        for (id, stream) in streams.records where stream.response.isLive {
            streams.changeResponse(of: stream, .finish)
            nghttp2_session_resume_data(session, id)
        }
    }

    /// Resets `stream` with `code` (a stream error, RFC 9113 §5.4.2).
    func reset(_ stream: Int32, code: UInt32) {
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, code)
    }

    /// Queues GOAWAY with the last stream we processed: no new streams; those below finish (RFC 9113 §6.8).
    func goAway(code: UInt32) {
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, code, nil, 0)
    }

    // MARK: - What the callbacks do (see HTTP2Callbacks)

    func headersBegan(_ stream: Int32) {
        streams.open(stream, head: HTTP2RequestHead(limits: limits), at: receivedAt)
        events.append(.streamOpened(stream))
    }

    func fieldReceived(_ stream: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        streams[stream]?.head.add(name: name, value: value)
    }

    /// A HEADERS or DATA frame ended: the header block may be complete, and with END_STREAM the request.
    func frameReceived(_ header: nghttp2_frame_hd) {
        let id = header.stream_id
        guard let stream = streams[id], case .arriving = stream.phase else { return }
        let endsStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if header.type == UInt8(NGHTTP2_HEADERS.rawValue), stream.request == nil {
            do {
                stream.request = try stream.head.request(body: [])
            } catch {
                return reject(id, with: error.response)
            }
            // A body is measured from the end of its head, as HTTP/1.1 measures one.
            if !endsStream { stream.bodyRate = RateWindow(startingAt: receivedAt) }
        }
        guard endsStream, let request = stream.request else { return }
        streams.requestEnded(id, request)
    }

    func bodyReceived(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard case .arriving? = streams[stream]?.phase else { return }
        switch streams.bodyArrived(stream, bytes, at: receivedAt) {
        case .taken: break
        case .tooLarge: reject(stream, with: HTTPParseError.bodyTooLarge.response)
        case .overBudget: abandon(stream, code: NGHTTP2_REFUSED_STREAM.rawValue)
        }
    }

    func streamClosed(_ stream: Int32) {
        if streams.close(stream) { events.append(.streamClosed(stream)) }
    }

    func frameSent(_ frame: nghttp2_frame) {
        let id = frame.hd.stream_id
        switch frame.hd.type {
        case UInt8(NGHTTP2_GOAWAY.rawValue):
            events.append(.goawaySent(frame.goaway.error_code))
        case UInt8(NGHTTP2_HEADERS.rawValue):
            if let stream = streams[id], stream.resetsWhenSent, !stream.hasBodyToSend, !stream.response.isLive {
                reset(id, code: NGHTTP2_NO_ERROR.rawValue)
            }
        default:
            break
        }
    }

    /// The next DATA frame of `stream`, at most `length` bytes; a live body is pulled when what it gave is sent.
    func nextFrame(of id: Int32, length: Int) -> HTTP2ResponseBody.Frame {
        guard let stream = streams[id] else { return .none }
        streams.changeResponse(of: stream, .frameWanted(limit: length))
        return stream.response.frame(limit: length)
    }

    /// Writes one DATA frame of `stream`'s body without copying the payload: the frame header, then slices of the
    /// body's segments (a frame may span two).
    func sendData(on id: Int32, header: UnsafePointer<UInt8>, length: Int) -> Bool {
        guard let sink, let stream = streams[id] else { return false }
        sink.pointee.append(UnsafeBufferPointer(start: header, count: 9))
        stream.response.forEachSlice(count: length) { sink.pointee.append(shared: $0) }
        streams.changeResponse(of: stream, .sent(length))
        if stream.resetsWhenSent, !stream.hasBodyToSend { reset(id, code: NGHTTP2_NO_ERROR.rawValue) }
        return true
    }
}

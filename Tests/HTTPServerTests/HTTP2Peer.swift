import CNGHTTP2
import Foundation

/// An HTTP/2 client made of nghttp2's client session, for driving the server's machine without sockets: it
/// makes the bytes a client sends and reads the ones it gets back.
final class HTTP2Peer {
    struct Response {
        var status: Int?
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []
        /// END_STREAM seen.
        var complete = false
        /// The RST_STREAM error code, if the server reset the stream.
        var resetCode: UInt32?

        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    }

    private var session: OpaquePointer?
    private(set) var responses: [Int32: Response] = [:]
    /// GOAWAY frames received: last stream id and error code.
    private(set) var goaways: [(lastStream: Int32, code: UInt32)] = []
    /// Request bodies being sent: the bytes supplied so far, how many went out, and whether that is all.
    private var bodies: [Int32: (bytes: [UInt8], offset: Int, ended: Bool)] = [:]
    /// Whether to answer the server's DATA with WINDOW_UPDATE (off: the client's windows only shrink).
    private let consumesData: Bool

    /// A client that announces `initialWindow` as its stream window (RFC 9113 §6.9.2) and, until the server's
    /// SETTINGS arrive, assumes it may open `assumedStreamLimit` streams.
    init(initialWindow: UInt32 = 65_535, consumesData: Bool = true, assumedStreamLimit: UInt32 = 100) {
        self.consumesData = consumesData
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame else { return 0 }
            let peer = Unmanaged<HTTP2Peer>.fromOpaque(user!).takeUnretainedValue()
            let key = String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)
            let text = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
            let stream = frame.pointee.hd.stream_id
            if key == ":status" {
                peer.responses[stream, default: Response()].status = Int(text)
            } else {
                peer.responses[stream, default: Response()].headers.append((key, text))
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, user in
            let peer = Unmanaged<HTTP2Peer>.fromOpaque(user!).takeUnretainedValue()
            peer.responses[stream, default: Response()].body += UnsafeBufferPointer(start: data, count: length)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            let peer = Unmanaged<HTTP2Peer>.fromOpaque(user!).takeUnretainedValue()
            let header = frame.pointee.hd
            if header.type == UInt8(NGHTTP2_GOAWAY.rawValue) {
                peer.goaways.append((frame.pointee.goaway.last_stream_id, frame.pointee.goaway.error_code))
            }
            if header.type == UInt8(NGHTTP2_RST_STREAM.rawValue) {
                peer.responses[header.stream_id, default: Response()].resetCode = frame.pointee.rst_stream.error_code
            }
            if header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0, header.stream_id != 0 {
                peer.responses[header.stream_id, default: Response()].complete = true
            }
            return 0
        }
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        if !consumesData { nghttp2_option_set_no_auto_window_update(option, 1) }
        nghttp2_option_set_peer_max_concurrent_streams(option, assumedStreamLimit)
        nghttp2_session_client_new2(&session, callbacks, Unmanaged.passUnretained(self).toOpaque(), option)
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: initialWindow),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
    }

    deinit {
        nghttp2_session_del(session)
    }

    /// Queues a request; returns its stream id. With `holdBody`, the HEADERS (and `body`, if any) go out without
    /// END_STREAM, and more of the body follows only as `supply` gives it.
    @discardableResult
    func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        holdBody: Bool = false
    ) -> Int32 {
        let fields = [(":method", method), (":scheme", "https"), (":authority", "localhost"), (":path", path)] + headers
        var bytes: [UInt8] = []
        var bounds: [(Range<Int>, Range<Int>)] = []
        for (name, value) in fields {
            let nameStart = bytes.count
            bytes += name.utf8
            let valueStart = bytes.count
            bytes += value.utf8
            bounds.append((nameStart..<valueStart, valueStart..<bytes.count))
        }
        // nghttp2 copies the fields while submitting, so the pointers need only last through the call.
        let stream = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var nva = bounds.map { name, value in
                nghttp2_nv(
                    name: buffer.baseAddress! + name.lowerBound, value: buffer.baseAddress! + value.lowerBound,
                    namelen: name.count, valuelen: value.count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            guard body != nil || holdBody else { return nghttp2_submit_request(session, nil, &nva, nva.count, nil, nil) }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: peerBody)
            return nghttp2_submit_request(session, nil, &nva, nva.count, &provider, nil)
        }
        if body != nil || holdBody { bodies[stream] = (body ?? [], 0, !holdBody) }
        return stream
    }

    /// More of a held body (see `request`), and whether it ends there.
    func supply(_ bytes: [UInt8], on stream: Int32, ending: Bool = false) {
        bodies[stream]?.bytes += bytes
        if ending { bodies[stream]?.ended = true }
        nghttp2_session_resume_data(session, stream)
    }

    /// Resets `stream` from the client side.
    func reset(_ stream: Int32, code: UInt32 = NGHTTP2_CANCEL.rawValue) {
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, code)
    }

    /// Sends a PING.
    func ping() {
        nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
    }

    /// Grants the server `bytes` more of `stream`'s window (and the connection's).
    func allow(_ bytes: Int32, on stream: Int32) {
        nghttp2_submit_window_update(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, bytes)
        nghttp2_submit_window_update(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, bytes)
    }

    /// Everything the client has to send now (the connection preface first).
    func output() -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            var data: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(session, &data)
            guard length > 0, let data else { break }
            bytes += UnsafeBufferPointer(start: data, count: length)
        }
        return bytes
    }

    /// Reads what the server sent; false if the client session refused it.
    @discardableResult
    func receive(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) } == bytes.count
    }

    /// Copies up to `length` bytes of `stream`'s body into `buffer`: how many, and whether the body ended; nil when
    /// nothing is there yet.
    fileprivate func nextBody(_ stream: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ length: Int) -> (Int, Bool)? {
        guard var body = bodies[stream] else { return (0, true) }
        let count = min(length, body.bytes.count - body.offset)
        let ends = body.ended && body.offset + count == body.bytes.count
        guard count > 0 || ends else { return nil }
        for index in 0..<count { buffer[index] = body.bytes[body.offset + index] }
        body.offset += count
        bodies[stream] = body
        return (count, ends)
    }
}

private func peerBody(
    _ session: OpaquePointer?, _ stream: Int32, _ buffer: UnsafeMutablePointer<UInt8>?, _ length: Int,
    _ flags: UnsafeMutablePointer<UInt32>?, _ source: UnsafeMutablePointer<nghttp2_data_source>?,
    _ user: UnsafeMutableRawPointer?
) -> Int {
    guard let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
    let peer = Unmanaged<HTTP2Peer>.fromOpaque(user!).takeUnretainedValue()
    guard let (count, done) = peer.nextBody(stream, buffer, length) else {
        return Int(NGHTTP2_ERR_DEFERRED.rawValue)  // a held body: resumed by `supply`
    }
    if done { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
    return count
}

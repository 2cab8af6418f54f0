import CNGHTTP2

/// The callbacks nghttp2 calls while `HTTP2Session` receives and sends: each finds its session through the user
/// data and passes on what happened. Plain functions, so no closure is made per frame.
enum HTTP2Callbacks {
    static func install(_ callbacks: OpaquePointer?) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, isRequestHeaders(frame) else { return 0 }
            session(user).headersBegan(frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, isRequestHeaders(frame) else { return 0 }
            session(user).fieldReceived(
                frame.pointee.hd.stream_id, name: UnsafeRawBufferPointer(start: name, count: nameLength),
                value: UnsafeRawBufferPointer(start: value, count: valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            session(user).frameReceived(frame.pointee.hd)
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, user in
            session(user).bodyReceived(stream, UnsafeRawBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, _, user in
            session(user).streamClosed(stream)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            session(user).frameSent(frame.pointee)
            return 0
        }
        nghttp2_session_callbacks_set_send_data_callback(callbacks) { _, frame, header, length, _, user in
            guard let frame, let header, frame.pointee.data.padlen == 0,
                session(user).sendData(on: frame.pointee.hd.stream_id, header: header, length: length)
            else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
            return 0
        }
    }

    /// The data source read callback: sizes the next DATA frame, whose payload `sendData` then writes uncopied.
    static let readBody: nghttp2_data_source_read_callback = { _, stream, _, length, flags, _, user in
        guard let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        switch session(user).nextFrame(of: stream, length: length) {
        case .data(let count, let isLast):
            flags.pointee |= NGHTTP2_DATA_FLAG_NO_COPY.rawValue
            if isLast { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
            return count
        case .end:
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            return 0
        case .wait:
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        case .none:
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
    }
}

/// The session behind a callback's user data.
private func session(_ user: UnsafeMutableRawPointer?) -> HTTP2Session {
    // Invariant: nghttp2 passes back the pointer given at creation, and the nghttp2 session dies with ours.
    Unmanaged<HTTP2Session>.fromOpaque(user!).takeUnretainedValue()
}

private func isRequestHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Bool {
    frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) && frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
}

/// What the decoder produced from the bytes so far.
public enum HTTPDecoderEvent: Sendable, Equatable {
    /// The head of a request with `Expect: 100-continue` and a body still to come was read;
    /// the server should send `100 Continue` once, then keep feeding bytes.
    case expectContinue
    /// A complete request.
    case request(HTTPRequest)
}

/// Incremental HTTP/1.1 request decoder (RFC 9112), strict by default.
///
/// Feed bytes as they arrive with `append`, then call `next()` until it returns nil (more bytes needed).
/// Bytes after a complete request stay buffered for the next call (pipelining). After `next()` throws,
/// the decoder is finished: the caller answers `error.status` with `Connection: close` and closes.
public struct HTTPRequestDecoder: Sendable {
    public let limits: HTTPLimits

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        fatalError("not implemented")
    }

    public mutating func next() throws(HTTPParseError) -> HTTPDecoderEvent? {
        fatalError("not implemented")
    }

    /// True while part of a request (at least one byte other than leading CRLF) is buffered.
    public var isMidRequest: Bool { fatalError("not implemented") }

    /// True once the head of the current request is complete and its body is being read.
    public var isReadingBody: Bool { fatalError("not implemented") }

    /// Number of bytes buffered and not yet consumed.
    public var bufferedByteCount: Int { fatalError("not implemented") }
}

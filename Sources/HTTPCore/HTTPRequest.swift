/// A complete, framed request (HTTP/1.x, or one HTTP/2 stream).
public struct HTTPRequest: Sendable, Equatable {
    public var method: HTTPMethod
    /// The request target exactly as sent (origin-form or absolute-form).
    public var target: String
    /// The path of the target, without query; for absolute-form, the path after the authority ("/" if empty).
    public var path: String
    /// The query after "?", if any.
    public var query: String?
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// The decoded body (de-chunked when it was sent chunked).
    public var body: [UInt8]
    /// Who the per-client limits count this request against, set by the server: the group (see `ClientGroup`) of
    /// the socket's peer, or of the client a trusted proxy names. Nil where no server set it (tests).
    public var clientGroup: ClientGroup?
    /// The id the response echoes in `X-Request-Id`, set by the server: the client's when acceptable, else one
    /// it made. Nil where no server set it (tests).
    public var requestID: String?

    public init(
        method: HTTPMethod, target: String, path: String, query: String? = nil,
        version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// Whether the connection may stay open after this request (RFC 9112 §9.3).
    public var keepAlive: Bool {
        let tokens = headers.values("Connection")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingSpaces().lowercased() }
        switch version {
        case .http1_1: return !tokens.contains("close")
        case .http1_0: return tokens.contains("keep-alive") && !tokens.contains("close")
        case .http2: return true  // streams end, the connection does not
        }
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}

import HTTPCore

/// One answered request, as the server reports it to `HTTPHandler.observe` (for access logs and metrics).
public struct HTTPExchange: Sendable {
    /// The request; nil when it could not be parsed (the response is then the parse error's).
    public var request: HTTPRequest?
    /// The response as the handler made it (the server then adds `X-Request-Id`, `Content-Length`, `Date`, ...).
    public var response: HTTPResponse
    /// Body bytes the response puts on the wire: 0 for `HEAD`.
    public var bodyBytes: Int
    /// Seconds from the complete request to the queued response.
    public var seconds: Double
    /// The client's address as `ip:port` (`[ip]:port` for IPv6).
    public var remoteAddress: String
    /// The `X-Request-Id` echoed in the response: the client's when acceptable, else one the server made.
    public var requestID: String
    /// The protocol that carried the exchange (for an unreadable HTTP/1 request, HTTP/1.1).
    public var version: HTTPVersion

    /// An exchange with every field given.
    public init(
        request: HTTPRequest?, response: HTTPResponse, bodyBytes: Int, seconds: Double, remoteAddress: String,
        requestID: String, version: HTTPVersion = .http1_1
    ) {
        self.request = request
        self.response = response
        self.bodyBytes = bodyBytes
        self.seconds = seconds
        self.remoteAddress = remoteAddress
        self.requestID = requestID
        self.version = version
    }
}

/// A complete HTTP response as the client received it, with any chunked framing removed.
public struct HTTPClientResponse: Equatable, Sendable {
    /// The status code, 100...999 (RFC 9110 §15).
    public var status: Int
    /// The reason phrase, possibly empty.
    public var reason: String
    /// Header fields in received order; names as sent.
    public var headers: [(name: String, value: String)]
    /// The message body.
    public var body: [UInt8]

    /// A response with the given parts.
    public init(status: Int, reason: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// The values of every field called `name` (case-insensitive), in order.
    public func values(of name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// Compares status, reason, headers and body.
    public static func == (lhs: HTTPClientResponse, rhs: HTTPClientResponse) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

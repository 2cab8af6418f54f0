/// One HTTP/1.1 request as `chatter` sends it: one request per connection, so `Connection: close`.
public struct HTTPClientRequest: Equatable, Sendable {
    /// `GET` or `POST`.
    public var method: String
    /// Origin-form request target, e.g. `/getmaps`.
    public var target: String
    /// The `Host` header value.
    public var host: String
    /// Sent with `Content-Type: application/json; charset=utf-8` when not nil.
    public var jsonBody: [UInt8]?
    /// The `Accept` header value: JSON, or `text/event-stream` for a live feed.
    public var accept: String
    /// `Last-Event-ID`, sent when not nil: where a live feed resumes. Checked by the caller to be visible ASCII.
    public var lastEventID: String?
    /// A bearer token for `Authorization`, sent when not nil.
    public var bearerToken: String?

    /// `User-Agent` value.
    public static let userAgent = "chatter/\(chatterVersion)"

    /// A request for `target` on `host`.
    public init(
        method: String, target: String, host: String, jsonBody: [UInt8]? = nil, accept: String = "application/json",
        lastEventID: String? = nil, bearerToken: String? = nil
    ) {
        self.bearerToken = bearerToken
        self.method = method
        self.target = target
        self.host = host
        self.jsonBody = jsonBody
        self.accept = accept
        self.lastEventID = lastEventID
    }

    /// The bytes on the wire (RFC 9112 §3), head and body.
    public var bytes: [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: \(Self.userAgent)\r\n"
        head += "Accept: \(accept)\r\nConnection: close\r\n"
        if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
        if let bearerToken { head += "Authorization: Bearer \(bearerToken)\r\n" }
        if let jsonBody {
            head += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(jsonBody.count)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + (jsonBody ?? [])
    }
}

/// The HTTP versions chatterd serves; any other well-formed HTTP/1 version is answered 505.
public enum HTTPVersion: Sendable, Equatable {
    case http1_0
    case http1_1
    /// RFC 9113, negotiated by ALPN `h2` (or sent with prior knowledge on the plain listener).
    case http2

    /// The protocol's name as logs and metrics show it.
    public var name: String {
        switch self {
        case .http1_0: "HTTP/1.0"
        case .http1_1: "HTTP/1.1"
        case .http2: "HTTP/2"
        }
    }
}

/// The request methods chatterd recognises (RFC 9110 §9). Any other token is answered 501.
public enum HTTPMethod: String, Sendable, CaseIterable {
    case GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE, PATCH
}

/// Why a request could not be decoded. Every case ends the connection after its response.
public enum HTTPParseError: Error, Sendable, Equatable {
    /// Request line is not `method SP target SP HTTP/x.y` (RFC 9112 §3), or has bad bytes.
    case invalidRequestLine
    /// The method is a valid token but not one we know.
    case unknownMethod
    /// The target is not origin-form or absolute-form, or holds a fragment or bad bytes.
    case invalidTarget
    /// The request line is longer than the limit.
    case requestLineTooLong
    /// A well-formed version that is not 1.0 or 1.1.
    case unsupportedVersion
    /// A field line that is not `token ":" OWS value OWS` (obs-fold, space before colon, CTL, bare CR).
    case invalidHeader
    /// The header section or field count is over the limit.
    case headerTooLarge
    /// HTTP/1.1 without exactly one valid Host.
    case invalidHost
    /// Content-Length not 1*DIGIT, duplicated with different values, or overflowing.
    case invalidContentLength
    /// Both Content-Length and Transfer-Encoding.
    case conflictingLengthHeaders
    /// Transfer-Encoding whose last coding is not chunked, or sent in HTTP/1.0.
    case invalidTransferEncoding
    /// Transfer-Encoding with a coding other than chunked.
    case unsupportedTransferEncoding
    /// Malformed chunk size, chunk data, chunk CRLF or trailer section.
    case invalidChunk
    /// The declared or decoded body is over the limit.
    case bodyTooLarge
    /// An Expect value other than 100-continue.
    case unsupportedExpectation

    /// The status docs/API.md assigns to this error.
    public var status: HTTPStatus {
        switch self {
        case .invalidRequestLine, .invalidTarget, .invalidHeader, .invalidHost, .invalidContentLength,
            .conflictingLengthHeaders, .invalidTransferEncoding, .invalidChunk:
            return .badRequest
        case .unknownMethod, .unsupportedTransferEncoding: return .notImplemented
        case .requestLineTooLong: return .uriTooLong
        case .unsupportedVersion: return .httpVersionNotSupported
        case .headerTooLarge: return .requestHeaderFieldsTooLarge
        case .bodyTooLarge: return .contentTooLarge
        case .unsupportedExpectation: return .expectationFailed
        }
    }

    /// A short reason for the JSON error body.
    public var reason: String {
        switch self {
        case .invalidRequestLine: return "malformed request line"
        case .unknownMethod: return "method not implemented"
        case .invalidTarget: return "malformed request target"
        case .requestLineTooLong: return "request target too long"
        case .unsupportedVersion: return "HTTP version not supported"
        case .invalidHeader: return "malformed header field"
        case .headerTooLarge: return "header section too large"
        case .invalidHost: return "missing or invalid Host header"
        case .invalidContentLength: return "invalid Content-Length"
        case .conflictingLengthHeaders: return "both Content-Length and Transfer-Encoding"
        case .invalidTransferEncoding: return "invalid Transfer-Encoding"
        case .unsupportedTransferEncoding: return "unsupported Transfer-Encoding"
        case .invalidChunk: return "malformed chunked body"
        case .bodyTooLarge: return "request body too large"
        case .unsupportedExpectation: return "unsupported expectation"
        }
    }

    /// The error response: JSON body, and the connection closes after it.
    public var response: HTTPResponse { .error(status, reason) }
}

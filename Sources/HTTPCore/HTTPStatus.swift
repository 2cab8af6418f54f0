/// A response status code with its reason phrase.
public struct HTTPStatus: Sendable, Equatable, Hashable {
    public let code: Int
    public let reason: String
    /// `HTTP/1.1 <code> <reason>` and CRLF, made once per status.
    public let statusLine: [UInt8]

    /// False for the statuses whose responses never carry content: 1xx, 204 and 304 (RFC 9112 §6.3).
    public var allowsContent: Bool {
        code >= 200 && code != 204 && code != 304
    }

    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
        statusLine = Array("HTTP/1.1 \(code) \(reason)\r\n".utf8)
    }

    public static let `continue` = HTTPStatus(100, "Continue")
    public static let ok = HTTPStatus(200, "OK")
    public static let notModified = HTTPStatus(304, "Not Modified")
    public static let badRequest = HTTPStatus(400, "Bad Request")
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    public static let forbidden = HTTPStatus(403, "Forbidden")
    public static let notFound = HTTPStatus(404, "Not Found")
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    public static let uriTooLong = HTTPStatus(414, "URI Too Long")
    public static let expectationFailed = HTTPStatus(417, "Expectation Failed")
    public static let unprocessableContent = HTTPStatus(422, "Unprocessable Content")
    public static let tooManyRequests = HTTPStatus(429, "Too Many Requests")
    public static let requestHeaderFieldsTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(500, "Internal Server Error")
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    public static let httpVersionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")
}

import JSON

/// A response to be serialized. `Content-Length`, `Date` and `Connection` are added by the serializer.
public struct HTTPResponse: Sendable, Equatable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    /// The body bytes, in shared segments: a cached body is never copied per connection.
    public var body: HTTPBody
    /// The route that answered, as logs and metrics name it; nil when no route did (an unknown path or a
    /// request that could not be parsed). Never sent.
    public var route: String?
    /// Why a server error happened, for the operator's log line; never sent (clients get only the status and
    /// a generic reason).
    public var cause: String?
    /// Where the body comes from while the response lasts, instead of `body` (server-sent events); not compared.
    public var stream: (any ResponseBodyStream)?

    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.init(status: status, headers: headers, body: HTTPBody(body))
    }

    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: HTTPBody) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Equal on the wire: status, headers and body. `route`, `cause` and `stream` are not compared.
    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.headers == rhs.headers && lhs.body == rhs.body
    }

    /// This response, reported under `route`.
    public func routed(_ route: String) -> HTTPResponse {
        var response = self
        response.route = route
        return response
    }

    /// Whether `body` goes on the wire after the head. Not for HEAD (RFC 9110 §9.3.2) nor a status without
    /// content (304): there `body` only sets `Content-Length`, which then names the length of the 200 the
    /// client would have had, as RFC 9110 §8.6 allows, and a cached body is still shared rather than copied.
    public func sendsBody(inAnswerTo method: HTTPMethod) -> Bool {
        method != .HEAD && status.allowsContent
    }

    /// A JSON response: `Content-Type: application/json` and the given body.
    public static func json(_ status: HTTPStatus, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders, body: body)
    }

    /// Made once and shared (copied only by a response that adds to it).
    private static let jsonHeaders = HTTPHeaders([("Content-Type", "application/json")])

    /// The one error shape of docs/API.md: `{"error":"<reason>"}`. The reason is also the cause, until a caller
    /// that knows more sets one.
    public static func error(_ status: HTTPStatus, _ reason: String, headers extra: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var response = json(status, Array("{\"error\":".utf8) + JSONString.encode(reason) + [UInt8(ascii: "}")])
        for field in extra { response.headers.add(field.name, field.value) }
        response.cause = reason
        return response
    }
}

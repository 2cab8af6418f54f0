import HTTPCore
import JSON

/// An error a client sees: a status and a short reason, sent as `{"error":"<reason>"}` (docs/API.md "Errors").
public struct APIError: Error, Sendable, Equatable {
    /// The response status: 400, 404, 405, 422, 500 or 503.
    public var status: HTTPStatus
    /// Short and human-readable; never contains input, SQL, paths or internal detail.
    public var reason: String
    /// Extra headers, such as `Allow` on 405 or `Retry-After` on 503.
    public var headers: HTTPHeaders
    /// What went wrong underneath, for the operator's log only (see `HTTPResponse.cause`).
    public var cause: String?

    /// An error with the given status, reason and extra headers.
    public init(_ status: HTTPStatus, _ reason: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// The response that carries this error.
    public var response: HTTPResponse {
        var response = HTTPResponse.error(status, reason, headers: headers)
        if let cause { response.cause = cause }
        return response
    }

    /// 400: the body is well-formed but a value is unacceptable (length, NUL, encoding).
    public static func badRequest(_ reason: String) -> APIError {
        APIError(.badRequest, reason)
    }

    /// 422: the body is not the JSON shape the endpoint expects.
    public static func unprocessable(_ reason: String) -> APIError {
        APIError(.unprocessableContent, reason)
    }

    /// 404 for a path no route serves.
    public static let notFound = APIError(.notFound, "not found")

    /// 405 with the `Allow` header RFC 9110 §15.5.6 requires.
    public static func methodNotAllowed(allow: String) -> APIError {
        APIError(.methodNotAllowed, "method not allowed", headers: HTTPHeaders([("Allow", allow)]))
    }

    /// The client-facing form of a repository failure. The repository's own message becomes the cause.
    public init(_ error: RepositoryError) {
        switch error {
        case .unavailable:
            self.init(.serviceUnavailable, "database unavailable", headers: HTTPHeaders([("Retry-After", "1")]))
        case .rejected:
            self.init(.badRequest, "value rejected by the database")
        case .failed:
            self.init(.internalServerError, "internal error")
        }
        cause = error.detail
    }
}

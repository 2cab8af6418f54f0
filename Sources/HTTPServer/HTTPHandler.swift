import HTTPCore

/// What the server calls for each request. `respond` may block (it runs on a handler thread,
/// never on an I/O queue); `observe` runs on the I/O queue after the response is queued and must be quick.
/// The request `respond` gets always carries an `X-Request-Id` (see `RequestID`), which the response echoes.
public struct HTTPHandler: Sendable {
    public var respond: @Sendable (HTTPRequest) -> HTTPResponse
    /// The response when it can be made at once without blocking, else nil (then `respond` runs on a handler
    /// thread). Runs on the I/O queue: answers made here skip the hop to a handler thread, and stay fast even
    /// while every handler thread waits on a slow database.
    public var respondImmediately: @Sendable (HTTPRequest) -> HTTPResponse?
    /// Called once per response (see `HTTPExchange`).
    public var observe: @Sendable (HTTPExchange) -> Void

    public init(
        respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        respondImmediately: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
        observe: @escaping @Sendable (HTTPExchange) -> Void = { _ in }
    ) {
        self.respond = respond
        self.respondImmediately = respondImmediately
        self.observe = observe
    }
}

import HTTPCore

/// What the server calls for each request. `respond` may block (it runs on a handler thread,
/// never on an I/O queue); `observe` runs on the I/O queue after the response is queued and must be quick.
/// The request `respond` gets always carries an `X-Request-Id` (see `RequestID`), which the response echoes.
public struct HTTPHandler: Sendable {
    public var respond: @Sendable (HTTPRequest) -> HTTPResponse
    /// False for requests `respond` answers at once without blocking; those skip the hop to a handler thread,
    /// so they stay fast even while every handler thread waits on a slow database.
    public var mayBlock: @Sendable (HTTPRequest) -> Bool
    /// Called once per response (see `HTTPExchange`).
    public var observe: @Sendable (HTTPExchange) -> Void

    public init(
        respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        mayBlock: @escaping @Sendable (HTTPRequest) -> Bool = { _ in true },
        observe: @escaping @Sendable (HTTPExchange) -> Void = { _ in }
    ) {
        self.respond = respond
        self.mayBlock = mayBlock
        self.observe = observe
    }
}

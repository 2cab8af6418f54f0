import HTTPCore

/// What the server calls for each request. The request `plan` gets always carries its `requestID` (see
/// `RequestID`), which the response echoes in `X-Request-Id`.
public struct HTTPHandler: Sendable {
    /// How to answer a request; runs on the I/O queue, so it must not block: work that waits (on the database)
    /// goes in a `.deferred` plan, which responds when it is done, from any thread.
    public var plan: @Sendable (HTTPRequest) -> ResponsePlan
    /// Called once per response, on the I/O queue, after the response is made; must be quick (see `HTTPExchange`).
    public var observe: @Sendable (HTTPExchange) -> Void

    public init(
        plan: @escaping @Sendable (HTTPRequest) -> ResponsePlan,
        observe: @escaping @Sendable (HTTPExchange) -> Void = { _ in }
    ) {
        self.plan = plan
        self.observe = observe
    }
}

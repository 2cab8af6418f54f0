import HTTPCore

/// What the server calls for each request. `respond` may block (it runs on a handler thread,
/// never on an I/O queue); `observe` runs on the I/O queue after the response is queued and must be quick.
public struct HTTPHandler: Sendable {
    public var respond: @Sendable (HTTPRequest) -> HTTPResponse
    /// False for requests `respond` answers at once without blocking; those skip the hop to a handler thread,
    /// so they stay fast even while every handler thread waits on a slow database.
    public var mayBlock: @Sendable (HTTPRequest) -> Bool
    /// The request (nil when it could not be parsed), the response, and seconds from complete request to response.
    public var observe: @Sendable (HTTPRequest?, HTTPResponse, Double) -> Void

    public init(
        respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        mayBlock: @escaping @Sendable (HTTPRequest) -> Bool = { _ in true },
        observe: @escaping @Sendable (HTTPRequest?, HTTPResponse, Double) -> Void = { _, _, _ in }
    ) {
        self.respond = respond
        self.mayBlock = mayBlock
        self.observe = observe
    }
}

import Locking

/// Counts a server keeps for metrics. Made before the server and handed to it, so whatever renders metrics
/// (a route of the server's own handler, say) reads them without holding the server.
public final class ServerStatistics: Sendable {
    private let openConnectionCount = Locked(0)

    public init() {}

    /// Client connections open now.
    public var openConnections: Int {
        openConnectionCount.withLock { $0 }
    }

    func connectionOpened() {
        openConnectionCount.withLock { $0 += 1 }
    }

    func connectionClosed() {
        openConnectionCount.withLock { $0 -= 1 }
    }
}

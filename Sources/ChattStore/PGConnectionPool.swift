import Dispatch
import Locking

/// A fixed number of lazily opened PostgreSQL connections, each lent to one caller at a time.
///
/// Waiting for a free connection is bounded by the acquire timeout. A connection found broken is dropped and
/// replaced on a later call; failed connects back off (see `ConnectBackoff`) so a dead database is not hammered.
public final class PGConnectionPool: Sendable {
    /// How many connections are lent out and idle, and how many callers wait for one, for /metrics.
    public struct Stats: Sendable, Equatable {
        /// The most connections the pool will open.
        public let size: Int
        /// Connections currently lent to callers (including ones being opened).
        public let inUse: Int
        /// Open connections waiting in the pool.
        public let idle: Int
        /// Callers waiting for a connection to come free.
        public var waiting = 0
    }

    private struct State {
        var idle: [PGConnection] = []
        var inUse = 0
        var waiting = 0
        var isClosed = false
        var backoff = ConnectBackoff()
    }

    /// The most connections the pool will open.
    public let size: Int
    /// The longest a caller waits for a free connection.
    let acquireTimeout: DispatchTimeInterval
    /// Whether its connections keep named prepared statements (see `PGConnection+Prepared`).
    let preparesStatements: Bool
    private let parameters: Result<ConnectionParameters, StoreError>
    // One permit per connection: a caller holding a permit owns exactly one lent connection.
    private let permits: DispatchSemaphore
    private let state = Locked(State())

    /// Creates a pool; no connection is opened until first use.
    /// - Parameters:
    ///   - conninfo: a libpq URI, `key=value` string, or "" for libpq defaults and `PG*` variables.
    ///   - size: the most connections to open.
    ///   - acquireTimeout: the longest a caller waits for a free connection.
    ///   - statementTimeout: the server cancels any statement running longer than this.
    ///   - preparesStatements: false when `conninfo` may lead to a transaction-mode pooler, which can run a
    ///     statement prepared on one server connection on another: every statement is then sent unnamed.
    public init(
        conninfo: String, size: Int = 4, acquireTimeout: Duration = .seconds(2),
        statementTimeout: Duration = .seconds(5), preparesStatements: Bool = true
    ) {
        precondition(size > 0, "a connection pool needs at least one connection")
        self.size = size
        self.preparesStatements = preparesStatements
        let (seconds, attoseconds) = acquireTimeout.components
        self.acquireTimeout = .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        // An unparsable conninfo surfaces as `.invalidConninfo` on first use (and so at migration, at start-up).
        parameters = Result { () throws(StoreError) in
            try ConnectionParameters(conninfo: conninfo, statementTimeout: statementTimeout)
        }
        permits = DispatchSemaphore(value: size)
    }

    /// Lends a connection to `body` and takes it back afterwards, even if `body` throws.
    /// - Throws: `.poolTimeout` when none is free within the acquire timeout, `.poolClosed`, `.backingOff`,
    ///   `.connectFailed`, or whatever `body` throws.
    public func withConnection<T>(_ body: (PGConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Closes idle connections now and lent ones when they come back; later calls fail with `.poolClosed`.
    public func close() {
        // The connections are released after withLock returns, so PQfinish's socket write is not under the lock.
        _ = state.withLock { state in
            state.isClosed = true
            defer { state.idle = [] }
            return state.idle
        }
    }

    /// Current usage.
    public var stats: Stats {
        state.withLock { Stats(size: size, inUse: $0.inUse, idle: $0.idle.count, waiting: $0.waiting) }
    }

    /// Lends a connection until `checkIn`, for a caller that hands it on to another thread (`InsertBatcher`).
    /// - Throws: as `withConnection`, before calling its body.
    func checkOut() throws(StoreError) -> PGConnection {
        guard !state.withLock({ $0.isClosed }) else { throw StoreError(.poolClosed) }
        guard permits.wait(timeout: .now()) == .success || waitForPermit() else {
            throw StoreError(.poolTimeout)
        }
        // From here the caller holds a permit, which every failure must give back.
        let reserved = state.withLock { state in
            guard !state.isClosed else { return false }
            state.inUse += 1
            return true
        }
        guard reserved else {
            permits.signal()
            throw StoreError(.poolClosed)
        }
        do {
            return try idleOrNewConnection()
        } catch {
            state.withLock { $0.inUse -= 1 }
            permits.signal()
            throw error
        }
    }

    /// Waits up to the acquire timeout for a permit, counted in `stats.waiting` meanwhile.
    private func waitForPermit() -> Bool {
        state.withLock { $0.waiting += 1 }
        defer { state.withLock { $0.waiting -= 1 } }
        return permits.wait(timeout: .now() + acquireTimeout) == .success
    }

    private func idleOrNewConnection() throws(StoreError) -> PGConnection {
        while let candidate = state.withLock({ $0.idle.popLast() }) {
            // A dead one is simply dropped here; its replacement needs no back-off, the server may be fine.
            if candidate.isAlive() { return candidate }
        }
        return try connect()
    }

    private func connect() throws(StoreError) -> PGConnection {
        let parameters = try parameters.get()
        guard state.withLock({ $0.backoff.startAttempt(at: .now) }) else {
            throw StoreError(.backingOff)
        }
        do {
            let connection = try PGConnection(parameters: parameters, preparesStatements: preparesStatements)
            state.withLock { $0.backoff.recordSuccess() }
            return connection
        } catch {
            state.withLock { $0.backoff.recordFailure(at: .now) }
            throw error
        }
    }

    /// Takes back a connection from `checkOut`.
    func checkIn(_ connection: PGConnection) {
        // A broken connection, or one left inside a transaction, is dropped rather than lent again.
        let reusable = connection.isReusable
        state.withLock { state in
            state.inUse -= 1
            if reusable && !state.isClosed { state.idle.append(connection) }
        }
        permits.signal()
    }
}

import Dispatch
import Locking

/// A fixed number of lazily opened PostgreSQL connections, each lent to one caller at a time.
///
/// A caller either blocks its thread (`withConnection`, `checkOut`) or suspends (`withSession`, which runs its
/// statements on the pool's `PGEventLoop`); both wait in one first-come queue, bounded by the acquire timeout.
/// A connection found broken is dropped and replaced on a later call; failed connects back off (see
/// `ConnectBackoff`) so a dead database is not hammered.
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

    /// A caller waiting for a connection; told once, with the slot of a connection that came back (and the
    /// connection, or nil when it was dropped and the caller opens another), or why it waits no more.
    fileprivate struct Waiter {
        let id: Int
        let grant: @Sendable (Result<PGConnection?, StoreError>) -> Void
    }

    fileprivate struct State {
        var idle: [PGConnection] = []
        /// Slots taken: connections lent out or being opened. Never more than `size`.
        var inUse = 0
        /// First come, first served.
        var waiters: [Waiter] = []
        var lastWaiterID = 0
        var isClosed = false
        var backoff = ConnectBackoff()
    }

    /// What a caller gets at once: a slot, a place in the queue, or a refusal.
    enum Claim {
        case slot
        case waiting(Int)
        case refused(StoreError)
    }

    /// The most connections the pool will open.
    public let size: Int
    /// The longest a caller waits for a free connection.
    let acquireTimeout: DispatchTimeInterval
    /// The longest the server lets a statement run (sent with every connection).
    let statementTimeout: DispatchTimeInterval
    /// Whether its connections keep named prepared statements (see `PGConnection+Prepared`).
    let preparesStatements: Bool
    /// Where the statements of suspended callers are sent and read.
    let loop = PGEventLoop()
    /// Opens connections for suspended callers, one at a time, so that none of their threads blocks on a connect.
    let connector = DispatchQueue(label: "chatterd.db-connect")
    private let parameters: Result<ConnectionParameters, StoreError>
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
        self.acquireTimeout = Self.interval(acquireTimeout)
        self.statementTimeout = Self.interval(statementTimeout)
        // An unparsable conninfo surfaces as `.invalidConninfo` on first use (and so at migration, at start-up).
        parameters = Result { () throws(StoreError) in
            try ConnectionParameters(conninfo: conninfo, statementTimeout: statementTimeout)
        }
    }

    private static func interval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// Lends a connection to `body` and takes it back afterwards, even if `body` throws. Blocks the thread.
    /// - Throws: `.poolTimeout` when none is free within the acquire timeout, `.poolClosed`, `.backingOff`,
    ///   `.connectFailed`, or whatever `body` throws.
    public func withConnection<T>(_ body: (PGConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Closes idle connections now and lent ones when they come back; waiting and later calls fail with
    /// `.poolClosed`.
    public func close() {
        // The connections are released after withLock returns, so PQfinish's socket write is not under the lock.
        let (_, waiters) = state.withLock { state in
            state.isClosed = true
            defer { (state.idle, state.waiters) = ([], []) }
            return (state.idle, state.waiters)
        }
        for waiter in waiters { waiter.grant(.failure(StoreError(.poolClosed))) }
    }

    /// Current usage.
    public var stats: Stats {
        state.withLock { Stats(size: size, inUse: $0.inUse, idle: $0.idle.count, waiting: $0.waiters.count) }
    }

    /// Lends a connection until `checkIn`, blocking the thread.
    /// - Throws: as `withConnection`, before calling its body.
    func checkOut() throws(StoreError) -> PGConnection {
        let granted = Locked<Result<PGConnection?, StoreError>?>(nil)
        let told = DispatchSemaphore(value: 0)
        switch claim(orWait: { outcome in
            granted.withLock { $0 = outcome }
            told.signal()
        }) {
        case .refused(let error):
            throw error
        case .slot:
            return try idleOrNewConnection()
        case .waiting(let id):
            if told.wait(timeout: .now() + acquireTimeout) == .timedOut {
                if stopWaiting(id) { throw StoreError(.poolTimeout) }
                // Granted just as the wait ran out: the grant is on its way.
                told.wait()
            }
            guard let connection = try granted.withLock({ $0! }).get() else { return try idleOrNewConnection() }
            return connection
        }
    }

    /// Takes back a connection from `checkOut` or `checkOut(before:)`.
    func checkIn(_ connection: PGConnection) {
        // A broken connection, or one left inside a transaction, is dropped rather than lent again.
        releaseSlot(keeping: connection.isReusable ? connection : nil)
    }

    /// Takes a slot when one is free; else queues `wait`, which is told once a slot comes back.
    func claim(orWait wait: @escaping @Sendable (Result<PGConnection?, StoreError>) -> Void) -> Claim {
        state.withLock { state in
            guard !state.isClosed else { return .refused(StoreError(.poolClosed)) }
            guard state.inUse == size else {
                state.inUse += 1
                return .slot
            }
            state.lastWaiterID += 1
            state.waiters.append(Waiter(id: state.lastWaiterID, grant: wait))
            return .waiting(state.lastWaiterID)
        }
    }

    /// Takes waiter `id` out of the queue; false when it was granted a slot already.
    func stopWaiting(_ id: Int) -> Bool {
        state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return false }
            state.waiters.remove(at: index)
            return true
        }
    }

    /// Gives up a slot, with its connection when it may be lent again: to the first waiter, else back to the pool.
    func releaseSlot(keeping connection: PGConnection?) {
        let next = state.withLock { state -> Waiter? in
            guard state.waiters.isEmpty else { return state.waiters.removeFirst() }
            state.inUse -= 1
            if let connection, !state.isClosed { state.idle.append(connection) }
            return nil
        }
        next?.grant(.success(connection))
    }

    /// An idle connection that is still alive, if there is one; dead ones are dropped on the way.
    func aliveIdleConnection() -> PGConnection? {
        while let candidate = state.withLock({ $0.idle.popLast() }) {
            // A dead one is simply dropped here; its replacement needs no back-off, the server may be fine.
            if candidate.isAlive() { return candidate }
        }
        return nil
    }

    /// For a caller holding a slot: an idle connection, else a new one; the slot is given up if none comes.
    private func idleOrNewConnection() throws(StoreError) -> PGConnection {
        if let connection = aliveIdleConnection() { return connection }
        do {
            return try connect()
        } catch {
            releaseSlot(keeping: nil)
            throw error
        }
    }

    /// Opens a connection, blocking for at most its connect timeout; refused while backing off.
    func connect() throws(StoreError) -> PGConnection {
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
}

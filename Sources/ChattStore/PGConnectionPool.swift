import Dispatch
import Locking

/// A fixed number of lazily opened PostgreSQL connections, each lent to one caller at a time.
///
/// A caller suspends (`withSession`, whose statements run on the pool's `PGEventLoop`) while it waits for a
/// connection, in one first-come queue bounded by the acquire timeout. Pooled connections are non-blocking from
/// the moment they open.
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
    let acquireTimeout: Duration
    /// The longest the server lets a statement run (sent with every connection).
    let statementTimeout: DispatchTimeInterval
    /// Whether its connections keep named prepared statements (see `PreparedStatement`).
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
        self.acquireTimeout = acquireTimeout
        self.statementTimeout = Self.interval(statementTimeout)
        // An unparsable conninfo surfaces as `.invalidConninfo` on first use.
        parameters = Result { () throws(StoreError) in
            try ConnectionParameters(conninfo: conninfo, statementTimeout: statementTimeout)
        }
    }

    /// `duration` for Dispatch's timers, to the nanosecond.
    static func interval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
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

    /// Takes back a connection from `checkOut(before:)`.
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

    /// Opens a non-blocking connection, blocking for at most its connect timeout; refused while backing off.
    func connect() throws(StoreError) -> PGConnection {
        let parameters = try parameters.get()
        guard state.withLock({ $0.backoff.startAttempt(at: .now) }) else {
            throw StoreError(.backingOff)
        }
        do {
            let connection = try PGConnection(parameters: parameters, preparesStatements: preparesStatements)
            try connection.makeNonBlocking()
            state.withLock { $0.backoff.recordSuccess() }
            return connection
        } catch {
            state.withLock { $0.backoff.recordFailure(at: .now) }
            throw error
        }
    }
}

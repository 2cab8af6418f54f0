/// The connection pool's bookkeeping: which connections are idle, how many are lent or being opened, who waits
/// and until when, and whether the database may be tried again. Pure: events in, actions out. The store's loop
/// is its only caller and performs what it returns (`PGConnectionPool`), so tests drive it with made-up
/// connections and instants.
///
/// Callers are served first come, first served. A connection is not opened for one caller: it goes to whoever
/// is first in line when it is ready, as one given back does. The most recently returned idle connection is lent
/// first, so the others can time out at the server when load drops. While connects fail, only one probe at a
/// time is let through (`ConnectBackoff`), and a caller that would need a new connection fails at once.
struct PoolMachine<Connection> {
    /// Names one caller's lease.
    typealias RequestID = Int

    enum Action {
        /// Lend `Connection` to the caller.
        case grant(RequestID, Connection)
        /// Tell the caller why it gets no connection.
        case fail(RequestID, StoreError)
        /// Open one connection, then report `connected` or `connectFailed`.
        case connect
        /// Report `waitExpired` for the caller at the instant, unless cancelled first.
        case armTimer(RequestID, ContinuousClock.Instant)
        case cancelTimer(RequestID)
        /// The pool lets go of the connection: close it.
        case close(Connection)
    }

    private struct Waiter {
        let id: RequestID
        let deadline: ContinuousClock.Instant
    }

    /// The most connections open or being opened at once.
    let size: Int
    private(set) var idle: [Connection] = []
    private(set) var leased = 0
    private(set) var connecting = 0
    private var waiters: [Waiter] = []
    private var backoff = ConnectBackoff()
    private(set) var isClosed = false

    init(size: Int) {
        precondition(size > 0, "a connection pool needs at least one connection")
        self.size = size
    }

    /// Connections lent out or being opened.
    var inUse: Int { leased + connecting }
    /// Callers waiting for a connection.
    var waiting: Int { waiters.count }
    private var opened: Int { idle.count + leased + connecting }

    /// A caller asks for a connection, waiting until `deadline` at most.
    mutating func leaseConnection(
        _ id: RequestID, deadline: ContinuousClock.Instant, at now: ContinuousClock.Instant
    ) -> [Action] {
        guard !isClosed else { return [.fail(id, StoreError(.poolClosed))] }
        return lease(Waiter(id: id, deadline: deadline), inFront: false, at: now)
    }

    /// The connection granted to `id` turned out dead before the caller used it: it is dropped, and the caller
    /// keeps its place at the front of the line.
    mutating func grantedConnectionDead(
        _ connection: Connection, _ id: RequestID, deadline: ContinuousClock.Instant, at now: ContinuousClock.Instant
    ) -> [Action] {
        leased -= 1
        let waiter = Waiter(id: id, deadline: deadline)
        if isClosed { return [.close(connection), .fail(id, StoreError(.poolClosed))] }
        return [.close(connection)] + lease(waiter, inFront: true, at: now)
    }

    /// A caller gives back its connection; `reusable` tells whether it may be lent again.
    mutating func connectionReleased(
        _ connection: Connection, reusable: Bool, at now: ContinuousClock.Instant
    ) -> [Action] {
        leased -= 1
        guard reusable, !isClosed else { return [.close(connection)] + connectForWaiters(at: now) }
        return handOut(connection)
    }

    /// A connect reported by `.connect` succeeded.
    mutating func connected(_ connection: Connection, at now: ContinuousClock.Instant) -> [Action] {
        connecting -= 1
        backoff.recordSuccess()
        guard !isClosed else { return [.close(connection)] }
        return handOut(connection)
    }

    /// A connect reported by `.connect` failed: the first caller in line is told why, and the others wait for a
    /// connection that is lent or being opened, or fail fast when there is none and the back-off says wait.
    mutating func connectFailed(_ error: StoreError, at now: ContinuousClock.Instant) -> [Action] {
        connecting -= 1
        backoff.recordFailure(at: now)
        guard !waiters.isEmpty else { return [] }
        let first = waiters.removeFirst()
        return [.cancelTimer(first.id), .fail(first.id, error)] + connectForWaiters(at: now)
    }

    /// The timer of `.armTimer` fired: the caller stops waiting if it still does.
    mutating func waitExpired(_ id: RequestID) -> [Action] {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return [] }
        waiters.remove(at: index)
        return [.fail(id, StoreError(.poolTimeout))]
    }

    /// Closes idle connections now and lent ones when they come back; waiting and later callers fail.
    mutating func close() -> [Action] {
        isClosed = true
        defer { (idle, waiters) = ([], []) }
        return idle.map(Action.close) + waiters.flatMap { [.cancelTimer($0.id), .fail($0.id, StoreError(.poolClosed))] }
    }

    private mutating func lease(_ waiter: Waiter, inFront: Bool, at now: ContinuousClock.Instant) -> [Action] {
        if let connection = idle.popLast() {
            leased += 1
            return [.grant(waiter.id, connection)]
        }
        let needsConnect = waiters.count >= connecting && opened < size
        // A caller that needs a new connection while the database is failing is told so at once.
        if needsConnect, !backoff.startAttempt(at: now) { return [.fail(waiter.id, StoreError(.backingOff))] }
        if inFront { waiters.insert(waiter, at: 0) } else { waiters.append(waiter) }
        guard needsConnect else { return [.armTimer(waiter.id, waiter.deadline)] }
        connecting += 1
        return [.armTimer(waiter.id, waiter.deadline), .connect]
    }

    /// Lends `connection` to the first in line, else keeps it idle.
    private mutating func handOut(_ connection: Connection) -> [Action] {
        guard !waiters.isEmpty else {
            idle.append(connection)
            return []
        }
        let first = waiters.removeFirst()
        leased += 1
        return [.cancelTimer(first.id), .grant(first.id, connection)]
    }

    /// When callers wait beyond what the connections being opened will serve and there is room, opens one more;
    /// when nothing lent or opening could ever serve them and the back-off forbids a connect, fails them all.
    private mutating func connectForWaiters(at now: ContinuousClock.Instant) -> [Action] {
        guard waiters.count > connecting, opened < size else { return [] }
        if backoff.startAttempt(at: now) {
            connecting += 1
            return [.connect]
        }
        guard leased == 0, connecting == 0 else { return [] }
        defer { waiters = [] }
        return waiters.flatMap { [.cancelTimer($0.id), .fail($0.id, StoreError(.backingOff))] }
    }
}

extension PoolMachine.Action: Equatable where Connection: Equatable {}

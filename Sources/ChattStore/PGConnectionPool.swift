import Dispatch
import Locking

/// A fixed number of lazily opened PostgreSQL connections, each lent to one caller at a time.
///
/// The pool is a shell around `PoolMachine`: every event (a lease, a release, a connect's end, a wait's deadline)
/// is fed to the machine on the store's loop, which alone touches it, and the actions it returns are performed
/// there. Callers suspend (`withSession`) or, on the loop, are called back (`lease`); no thread blocks except the
/// connector's, which opens connections one at a time with libpq's blocking connect, bounded by its connect
/// timeout. A connection found broken is dropped and replaced on a later call; failed connects back off (see
/// `ConnectBackoff`) so a dead database is not hammered.
public final class PGConnectionPool: @unchecked Sendable {  // `machine`, `waiting` and `timers` only on the loop
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

    /// A caller waiting for its grant, and until when.
    private struct Lease {
        let deadline: ContinuousClock.Instant
        let grant: Grant
    }

    /// What a caller of `lease` is told: the connection lent, or why none is.
    typealias Grant = @Sendable (Result<PGConnection, StoreError>) -> Void

    /// The most connections the pool will open.
    public let size: Int
    /// The longest a caller waits for a free connection.
    let acquireTimeout: Duration
    /// The longest the server lets a statement run (sent with every connection).
    let statementTimeout: Duration
    /// Whether its connections keep named prepared statements (see `PGConnection+Prepared`).
    let preparesStatements: Bool
    /// Where the pool's state lives and where statements are sent and read.
    let loop = PGEventLoop()
    /// Opens connections, one at a time, so that no other thread blocks on a connect.
    private let connector = DispatchQueue(label: "chatterd.db-connect")
    private let parameters: Result<ConnectionParameters, StoreError>
    private var machine: PoolMachine<PGConnection>
    private var waiting: [PoolMachine<PGConnection>.RequestID: Lease] = [:]
    private var timers: [PoolMachine<PGConnection>.RequestID: LoopTimers.ID] = [:]
    private var lastRequestID = 0
    /// The machine's counts as of its last event, for /metrics on other threads.
    private let published: Locked<Stats>

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
        self.size = size
        self.preparesStatements = preparesStatements
        self.acquireTimeout = acquireTimeout
        self.statementTimeout = statementTimeout
        machine = PoolMachine(size: size)
        published = Locked(Stats(size: size, inUse: 0, idle: 0))
        // An unparsable conninfo surfaces as `.invalidConninfo` on first use (and so at migration, at start-up).
        parameters = Result { () throws(StoreError) in
            try ConnectionParameters(conninfo: conninfo, statementTimeout: statementTimeout)
        }
    }

    /// Current usage, as of the pool's last event.
    public var stats: Stats {
        published.withLock { $0 }
    }

    /// Closes idle connections now and lent ones when they come back; waiting and later callers fail with
    /// `.poolClosed`. Call off the loop (at shutdown).
    public func close() {
        loop.queue.sync { perform(machine.close()) }
    }

    /// Lends a connection until `release`, waiting until `limit` at most, without blocking a thread.
    /// - Throws: `.poolTimeout` when none is free by `limit`, `.poolClosed`, `.backingOff`, `.connectFailed`.
    func checkOut(before limit: ContinuousClock.Instant) async throws(StoreError) -> PGConnection {
        try await withCheckedContinuation { continuation in
            loop.queue.async { self.lease(before: limit) { continuation.resume(returning: $0) } }
        }.get()
    }

    /// On the loop: asks for a connection, waiting until `limit` at most. `grant` is called on the loop, as an event
    /// of its own: never inside this call or another of the pool's, so that neither the pool nor its caller is
    /// re-entered from inside its own handling of an event (a grant could otherwise run the caller's next step,
    /// which may release a connection, inside the pool's grant).
    func lease(before limit: ContinuousClock.Instant, _ grant: @escaping Grant) {
        if case .failure(let error) = parameters { return deliver(.failure(error), to: grant) }
        lastRequestID += 1
        waiting[lastRequestID] = Lease(deadline: limit, grant: grant)
        perform(machine.leaseConnection(lastRequestID, deadline: limit, at: .now))
    }

    /// On the loop: takes back a connection; a broken one, or one left inside a transaction, is dropped.
    func release(_ connection: PGConnection) {
        perform(machine.connectionReleased(connection, reusable: connection.isReusable, at: .now))
    }

    private func perform(_ actions: [PoolMachine<PGConnection>.Action]) {
        // Published before any caller hears of the event, so that what it reads next includes it.
        published.withLock {
            $0 = Stats(size: size, inUse: machine.inUse, idle: machine.idle.count, waiting: machine.waiting)
        }
        for action in actions {
            switch action {
            case .grant(let id, let connection):
                // A server may have closed an idle connection meanwhile (restart, pg_terminate_backend).
                guard connection.isAlive() else {
                    let deadline = waiting[id]?.deadline ?? .now
                    perform(machine.grantedConnectionDead(connection, id, deadline: deadline, at: .now))
                    continue
                }
                if let lease = waiting.removeValue(forKey: id) { deliver(.success(connection), to: lease.grant) }
            case .fail(let id, let error):
                if let lease = waiting.removeValue(forKey: id) { deliver(.failure(error), to: lease.grant) }
            case .connect:
                connect()
            case .armTimer(let id, let deadline):
                timers[id] = loop.timers.schedule(at: deadline) { [self] in
                    timers[id] = nil
                    perform(machine.waitExpired(id))
                }
            case .cancelTimer(let id):
                loop.timers.cancel(timers.removeValue(forKey: id))
            case .close:
                break  // A connection closes when the last reference to it goes (`PGConnection.deinit`).
            }
        }
    }

    private func deliver(_ outcome: Result<PGConnection, StoreError>, to grant: @escaping Grant) {
        loop.queue.async { grant(outcome) }
    }

    /// Opens a connection on the connector and reports the outcome to the machine on the loop.
    private func connect() {
        connector.async { [self] in
            do throws(StoreError) {
                let connection = try PGConnection(parameters: parameters.get(), preparesStatements: preparesStatements)
                // For good: a pooled connection is only ever driven by the loop.
                try connection.makeNonBlocking()
                loop.queue.async { self.perform(self.machine.connected(connection, at: .now)) }
            } catch {
                loop.queue.async { self.perform(self.machine.connectFailed(error, at: .now)) }
            }
        }
    }
}

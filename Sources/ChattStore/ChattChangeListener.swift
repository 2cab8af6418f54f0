import ChattModel
import Dispatch

/// Reports changes to the `chatts` table, whoever made them, from `LISTEN chatts_changed` (migration 0004's
/// trigger notifies after every statement that changes the table but chatterd's inserts, and every tick of the
/// change log is announced, migrations/0006; PostgreSQL delivers only committed notifications). Each is reported as
/// the `ChattChange` its payload names; the ticks of this listener's own process (`origin`) are left out, since its
/// change log read them as it made them.
///
/// It keeps a connection of its own, not a pooled one (a pooled connection is lent for one call at a time, while a
/// listener must stay connected), and lives on the store's loop: its socket is one more descriptor there, its
/// statements are round trips like any other, and its checks and back-off are timers of the loop. Only its connect
/// runs elsewhere, on a queue of its own, since libpq's connect blocks. Callbacks run on the loop.
///
/// `onListening(true)` is called once a LISTEN succeeded and the trigger is found enabled, and `onChange` once per
/// notification. As soon as the connection is lost or the trigger is found disabled, `onListening(false)` is
/// called (changes may now go unseen); a lost connection is reopened with back-off (0.1 s doubling to 5 s, as the
/// pool does), and a disabled trigger is checked again every `healthCheckInterval`. Each check while the trigger
/// is enabled also calls `onCheck`: the change log's fallback for an announcement that never came (a process that
/// died between its commit and its announcement).
public final class ChattChangeListener: @unchecked Sendable {  // every `var` only on `loop.queue`
    static let listenSQL = "LISTEN chatts_changed"
    /// The longest any of the listener's statements may take before its connection is given up as lost.
    static let statementDeadline = Duration.seconds(5)

    private let parameters: Result<ConnectionParameters, StoreError>
    private let origin: String?
    private let healthCheckInterval: Duration
    private let onChange: @Sendable (ChattChange) -> Void
    private let onCheck: @Sendable () -> Void
    private let onListening: @Sendable (Bool) -> Void
    private let loop: PGEventLoop
    private let connector = DispatchQueue(label: "chatterd.listener-connect")

    private var started = false
    private var stopping = false
    private var backoff = ConnectBackoff()
    private var connection: PGConnection?
    /// The socket `connection` was opened on: libpq forgets it (-1) once it has closed it after a failure, and the
    /// loop must still stop watching it.
    private var socket: Int32 = -1
    /// Whether `onListening(true)` was the last call.
    private var announced = false
    /// The next health check, or the next connect attempt while backing off.
    private var timer: LoopTimers.ID?

    /// Creates a listener for the database `conninfo` names (same forms as the pool); nothing runs until start().
    /// Announcements from `origin` (this process's `PostgresChattRepository.origin`) are not reported. With a
    /// `pool`, the listener shares its loop; else it has one of its own.
    public init(
        conninfo: String, origin: String? = nil, sharingLoopOf pool: PGConnectionPool? = nil,
        healthCheckInterval: Duration = defaultHealthCheckInterval,
        onChange: @escaping @Sendable (ChattChange) -> Void,
        onCheck: @escaping @Sendable () -> Void = {},
        onListening: @escaping @Sendable (Bool) -> Void
    ) {
        // An unparsable conninfo is retried with back-off like an unreachable server, and never listens.
        parameters = Result { () throws(StoreError) in
            try ConnectionParameters(conninfo: conninfo, statementTimeout: .seconds(5), liveness: .listening)
        }
        self.origin = origin
        self.healthCheckInterval = healthCheckInterval
        self.onChange = onChange
        self.onCheck = onCheck
        self.onListening = onListening
        loop = pool?.loop ?? PGEventLoop()
    }

    /// A listener that only reports that something changed.
    public convenience init(
        conninfo: String, onChange: @escaping @Sendable () -> Void, onListening: @escaping @Sendable (Bool) -> Void
    ) {
        self.init(conninfo: conninfo, onChange: { _ in onChange() }, onListening: onListening)
    }

    /// Starts listening; later calls, and calls after stop(), do nothing.
    public func start() {
        loop.queue.async { [self] in
            guard !started, !stopping else { return }
            started = true
            connect()
        }
    }

    /// Stops listening; no callback runs after it returns (a last `onListening(false)` does, if it was
    /// listening). Call off the loop.
    public func stop() {
        loop.queue.sync {
            stopping = true
            loop.timers.cancel(timer)
            connectionLost()
        }
    }

    /// How often a quiet listener checks its connection and the trigger (and calls `onCheck`).
    public static let defaultHealthCheckInterval = Duration.seconds(2)

    private func connect() {
        guard !stopping else { return }
        let now = ContinuousClock.now
        guard backoff.startAttempt(at: now) else {
            // startAttempt refuses only while a retry time is set.
            timer = loop.timers.schedule(at: backoff.retryAt ?? now) { [self] in connect() }
            return
        }
        connector.async { [self] in
            let opened = Result { () throws(StoreError) in try PGConnection(parameters: parameters.get()) }
            loop.queue.async { [self] in
                guard !stopping else { return }
                switch opened {
                case .success(let connection):
                    self.connection = connection
                    socket = connection.socket
                    // Driven by the loop like a pooled one: a write that would block must not block the loop.
                    guard (try? connection.makeNonBlocking()) != nil else { return connectionLost() }
                    run([Self.listenSQL], on: connection) { [self] outcome in
                        guard case .success = outcome else {
                            // Connected but refused (a standby in recovery cannot LISTEN): back off as for a
                            // failed connect, rather than reconnecting at once.
                            backoff.recordFailure(at: .now)
                            return connectionLost()
                        }
                        backoff.recordSuccess()
                        check(connection)
                    }
                case .failure:
                    backoff.recordFailure(at: .now)
                    connect()
                }
            }
        }
    }

    /// Every health-check interval the listener asks whether the trigger is enabled: that query proves the
    /// connection alive (tcp_user_timeout ends a half-open one), and an operator's `ALTER TABLE chatts DISABLE
    /// TRIGGER` must not leave caches trusting notifications that no longer come. `onListening` follows the
    /// answer; the session's last statement stays the one naming the trigger, which is how an operator finds the
    /// listener in pg_stat_activity.
    private func check(_ connection: PGConnection) {
        run([Self.triggerStateSQL], on: connection) { [self] outcome in
            guard case .success(let results) = outcome, let result = results.first else { return connectionLost() }
            let armed = result.rowCount == 1 && result.string(row: 0, column: 0) == "t"
            if armed != announced {
                announced = armed
                onListening(armed)
            }
            if armed { onCheck() }
            timer = loop.timers.schedule(at: .now + healthCheckInterval) { [self] in check(connection) }
            watch(connection)
        }
    }

    /// Runs `statements` one after another on `connection`, reporting notifications read along the way, then
    /// calls `done` with their results or the first failure.
    private func run(
        _ statements: [String], on connection: PGConnection, results: [PGResult] = [],
        _ done: @escaping (Result<[PGResult], StoreError>) -> Void
    ) {
        guard let statement = statements.first else { return done(.success(results)) }
        let deadline = ContinuousClock.now + Self.statementDeadline
        PGRoundTrip.start(SingleQuery(statement, []), on: connection, loop: loop, deadline: deadline) { [self] trip in
            guard !stopping, self.connection === connection else { return }
            report(connection.takeNotifications())
            switch trip.flatMap({ $0.outcome ?? .failure(StoreError(.connectionLost)) }) {
            case .success(let result):
                run(Array(statements.dropFirst()), on: connection, results: results + [result], done)
            case .failure(let error):
                done(.failure(error))
            }
        }
    }

    /// Watches the idle connection's socket for notifications until the next statement or a loss.
    private func watch(_ connection: PGConnection) {
        let watched = loop.watch(socket, writable: false) { [self] in
            guard self.connection === connection else { return }
            do throws(StoreError) {
                report(try connection.readNotifications())
            } catch {
                connectionLost()
            }
        }
        if !watched { connectionLost() }
    }

    private func report(_ payloads: [String]) {
        for payload in payloads {
            let change = ChattChange(payload: payload)
            if let origin, change == .ticked(origin: origin) { continue }
            onChange(change)
        }
    }

    /// Drops the connection, says so if it was listening, and tries again (unless stopping).
    private func connectionLost() {
        loop.timers.cancel(timer)
        timer = nil
        if let connection {
            loop.unwatch(socket)
            connection.abandon()
            self.connection = nil
            socket = -1
        }
        if announced {
            announced = false
            onListening(false)
        }
        connect()
    }

    // 'O' fires in normal sessions, 'A' always; 'D' is disabled and 'R' fires only on replicas.
    static let triggerStateSQL = """
        SELECT tgenabled IN ('O', 'A') AS armed FROM pg_trigger
        WHERE tgrelid = 'chatts'::regclass AND tgname = 'chatts_changed'
        """
}

import ChattModel
import Dispatch
import Foundation
import Locking

/// Reports changes to the `chatts` table, whoever made them, from `LISTEN chatts_changed` (migration 0004's
/// trigger notifies after every statement that changes the table but chatterd's inserts, which chatterd announces
/// after they commit; PostgreSQL delivers only committed notifications). Each is reported as the `ChattChange` its
/// payload names; the announcements of this listener's own process (`origin`) are left out, since that process
/// took those rows in when it stored them.
///
/// It runs on a thread of its own with a connection of its own, not a pooled one: a pooled connection is lent
/// for one call at a time, while a listener must stay connected. `onListening(true)` is called once a LISTEN
/// succeeded and the trigger is found enabled, and `onChange` once per notification. As soon as the
/// connection is lost or the trigger is found disabled, `onListening(false)` is called (changes may now go
/// unseen); a lost connection is reopened with back-off (0.1 s doubling to 5 s, as the pool does), and a
/// disabled trigger is checked again every `healthCheckInterval`. At each check while the trigger is enabled,
/// `onStoreVersion` gets the store's version too, for the feed cache's audit of announcements that never came
/// (`ChattFeedCache.audit`).
public final class ChattChangeListener: Sendable {
    /// The longest the thread waits on a quiet connection before checking whether it should stop.
    static let pollIntervalMilliseconds: Int32 = 100
    static let listenSQL = "LISTEN chatts_changed"
    /// The audit's count of the table must not wait behind an operator's `LOCK TABLE`: the listener would stop
    /// hearing notifications meanwhile. A check that meets a lock is skipped (SQLSTATE 55P03, lock_not_available).
    static let lockTimeoutSQL = "SET lock_timeout = '100ms'"
    static let lockNotAvailableState = "55P03"

    private struct State {
        var started = false
        var stopping = false
    }

    private let parameters: Result<ConnectionParameters, StoreError>
    private let origin: String?
    private let healthCheckInterval: Duration
    private let onChange: @Sendable (ChattChange) -> Void
    private let onStoreVersion: @Sendable (ChattsVersion) -> Void
    private let onListening: @Sendable (Bool) -> Void
    private let state = Locked(State())
    /// Signalled by stop(), to cut a back-off wait short.
    private let wakeUp = DispatchSemaphore(value: 0)
    private let running = DispatchGroup()

    /// Creates a listener for the database `conninfo` names (same forms as the pool); nothing runs until start().
    /// Announcements from `origin` (this process's `PostgresChattRepository.origin`) are not reported.
    public init(
        conninfo: String, origin: String? = nil, healthCheckInterval: Duration = defaultHealthCheckInterval,
        onChange: @escaping @Sendable (ChattChange) -> Void,
        onStoreVersion: @escaping @Sendable (ChattsVersion) -> Void = { _ in },
        onListening: @escaping @Sendable (Bool) -> Void
    ) {
        // An unparsable conninfo is retried with back-off like an unreachable server, and never listens.
        parameters = Result { () throws(StoreError) in
            try ConnectionParameters(conninfo: conninfo, statementTimeout: .seconds(5), liveness: .listening)
        }
        self.origin = origin
        self.healthCheckInterval = healthCheckInterval
        self.onChange = onChange
        self.onStoreVersion = onStoreVersion
        self.onListening = onListening
    }

    /// A listener that only reports that something changed.
    public convenience init(
        conninfo: String, onChange: @escaping @Sendable () -> Void, onListening: @escaping @Sendable (Bool) -> Void
    ) {
        self.init(conninfo: conninfo, onChange: { _ in onChange() }, onListening: onListening)
    }

    /// Starts the listening thread; later calls, and calls after stop(), do nothing.
    public func start() {
        let starts = state.withLock { state in
            defer { state.started = true }
            return !state.started && !state.stopping
        }
        guard starts else { return }
        running.enter()
        let thread = Thread { [self] in
            run()
            running.leave()
        }
        thread.name = "chatterd.listener"
        thread.start()
    }

    /// Stops listening and returns once the thread has finished, so no callback runs after it returns
    /// (a last `onListening(false)` does, if it was listening). Takes at most the poll interval, or while a
    /// connect is in progress, at most its connect timeout.
    public func stop() {
        state.withLock { $0.stopping = true }
        wakeUp.signal()
        running.wait()
    }

    private var isStopping: Bool {
        state.withLock { $0.stopping }
    }

    private func run() {
        var backoff = ConnectBackoff()
        while !isStopping {
            let now = ContinuousClock.now
            guard backoff.startAttempt(at: now) else {
                // startAttempt refuses only while a retry time is set.
                let wait = (backoff.retryAt ?? now) - now
                _ = wakeUp.wait(timeout: .now() + .nanoseconds(Int(wait / .nanoseconds(1))))
                continue
            }
            do {
                let connection = try PGConnection(parameters: parameters.get())
                _ = try connection.query(Self.lockTimeoutSQL)
                _ = try connection.query(Self.listenSQL)
                backoff.recordSuccess()
                listen(on: connection)
            } catch {
                backoff.recordFailure(at: .now)
            }
        }
    }

    /// Reports notifications until the connection is lost or stop() is called. Every health-check interval it
    /// also asks whether the trigger is enabled: that query proves the connection alive (tcp_user_timeout
    /// ends a half-open one), and an operator's `ALTER TABLE chatts DISABLE TRIGGER` must not leave caches
    /// trusting notifications that no longer come. `onListening` follows the answer.
    private func listen(on connection: PGConnection) {
        var announced = false
        defer { if announced { onListening(false) } }
        var nextCheck = ContinuousClock.now
        while !isStopping {
            do {
                if ContinuousClock.now >= nextCheck {
                    // The version first: the session's last statement stays the one naming the trigger, which
                    // is how an operator finds the listener in pg_stat_activity.
                    let version = try Self.storeVersion(on: connection)
                    let armed = try Self.triggerIsEnabled(on: connection)
                    nextCheck = .now + healthCheckInterval
                    if armed != announced {
                        announced = armed
                        onListening(armed)
                    }
                    if armed, let version { onStoreVersion(version) }
                }
                for payload in try connection.awaitNotifications(timeoutMilliseconds: Self.pollIntervalMilliseconds) {
                    let change = ChattChange(payload: payload)
                    if let origin, change == .added(origin: origin) { continue }
                    onChange(change)
                }
            } catch {
                return
            }
        }
    }

    /// How often a quiet listener checks its connection, the trigger and the store's version.
    public static let defaultHealthCheckInterval = Duration.seconds(2)

    // 'O' fires in normal sessions, 'A' always; 'D' is disabled and 'R' fires only on replicas.
    static let triggerStateSQL = """
        SELECT tgenabled IN ('O', 'A') AS armed FROM pg_trigger
        WHERE tgrelid = 'chatts'::regclass AND tgname = 'chatts_changed'
        """

    /// Whether migration 0003's trigger exists and fires for ordinary writes.
    static func triggerIsEnabled(on connection: PGConnection) throws(StoreError) -> Bool {
        let result = try connection.query(triggerStateSQL)
        return result.rowCount == 1 && result.string(row: 0, column: 0) == "t"
    }

    /// The store's version, or nil when a lock kept the count waiting past `lock_timeout`.
    static func storeVersion(on connection: PGConnection) throws(StoreError) -> ChattsVersion? {
        do {
            return try connection.query(PostgresChattRepository.versionSQL).chattsVersion()
        } catch where error.sqlState == lockNotAvailableState {
            return nil
        }
    }
}

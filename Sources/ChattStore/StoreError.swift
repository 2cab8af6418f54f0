/// A storage failure: what went wrong (`code`) and, when the server said so, its SQLSTATE.
///
/// `description` is deliberately generic so that it can never leak database detail into a response or a
/// careless log line; `debugDescription` adds the server's message for operators. Neither ever contains
/// query parameters, passwords or the connection string.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The kind of failure.
    public enum Code: Sendable, Equatable {
        /// The connection string could not be parsed.
        case invalidConninfo
        /// Opening a connection failed (refused, timed out, authentication, too many clients, ...).
        case connectFailed
        /// The connection broke during a call; the outcome of that call is unknown.
        case connectionLost
        /// The server did not answer a statement by the caller's deadline; its outcome is unknown.
        case timedOut
        /// A recent connect failed and the pool is waiting before trying again.
        case backingOff
        /// No pooled connection became free within the acquire timeout.
        case poolTimeout
        /// The pool was closed.
        case poolClosed
        /// Too many inserts were already waiting for a batch.
        case queueFull
        /// The server answered a statement with an error.
        case queryFailed
        /// A parameter cannot be sent as text (it contains NUL).
        case invalidParameter
        /// A result column was missing or NULL where a value is required.
        case decodingFailed(column: String)
        /// The migrations directory does not exist or cannot be listed.
        case migrationsDirectoryMissing(path: String)
        /// A migration file is misnamed, unreadable or duplicates another's version.
        case invalidMigration(file: String)
        /// Applying a migration failed; nothing of it was recorded.
        case migrationFailed(file: String)
    }

    /// What went wrong.
    public let code: Code
    /// The five-character SQLSTATE reported by the server, if any.
    public let sqlState: String?
    /// The server's or libpq's message, already stripped of anything that could echo input values.
    let detail: String?

    init(_ code: Code, sqlState: String? = nil, detail: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.detail = detail
    }

    /// The same failure, re-labelled (e.g. a query failure while applying a migration file).
    func relabelled(_ code: Code) -> StoreError {
        StoreError(code, sqlState: sqlState, detail: detail)
    }

    /// A short, generic summary that is safe anywhere.
    public var description: String {
        switch code {
        case .invalidConninfo: "invalid database connection string"
        case .connectFailed: "database connection failed"
        case .connectionLost: "database connection lost"
        case .timedOut: "database did not answer in time"
        case .backingOff: "database unavailable (waiting before reconnecting)"
        case .poolTimeout: "no database connection free"
        case .poolClosed: "database pool closed"
        case .queueFull: "too many inserts waiting"
        case .queryFailed: "database query failed"
        case .invalidParameter: "value cannot be stored"
        case .decodingFailed(let column): "unexpected database value in column \(column)"
        case .migrationsDirectoryMissing(let path): "migrations directory not found: \(path)"
        case .invalidMigration(let file): "invalid migration file \(file)"
        case .migrationFailed(let file): "migration \(file) failed"
        }
    }

    /// The summary plus SQLSTATE and the server's message, for operators' logs.
    public var debugDescription: String {
        var text = "StoreError(\(description)"
        if let sqlState { text += ", SQLSTATE \(sqlState)" }
        if let detail, !detail.isEmpty { text += ": \(detail)" }
        return text + ")"
    }
}

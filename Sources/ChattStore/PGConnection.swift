import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One libpq connection; owns its `PGconn` and closes it only in deinit. A plain one (the migrator's) runs
/// statements with the blocking `query`; a pooled one, and the change listener's, is non-blocking, and its
/// statements are sent and read by the store's loop (`PGConnection+Async`, `PGRoundTrip`).
// @unchecked Sendable: libpq forbids concurrent use of a PGconn, so the pool lends each connection to one
// caller at a time (it may move between threads, which libpq allows).
public final class PGConnection: @unchecked Sendable {
    /// The libpq connection; used only by PGConnection and its extensions, never handed out.
    let handle: OpaquePointer
    /// Names of the statements already prepared in this session (see `CommittingQuery`).
    var preparedNames: Set<String> = []
    /// Whether `PreparedStatement`s are prepared under their names, or sent unnamed every time.
    let preparesStatements: Bool
    /// Set when the server announced, between statements, that it is closing this session.
    private var serverIsClosing = false
    /// Set when the server refused a write because the session is read-only (a standby, or a primary an operator
    /// made read-only): a new connection may reach a writable server where this one never will.
    private var sessionIsReadOnly = false
    /// Set when a caller gave up waiting for the server (`PGRoundTrip`): whatever the connection still brings
    /// belongs to a statement nobody waits for, so it is never lent again.
    var isAbandoned = false
    /// Enough reads of an idle socket to reach end-of-file after a few queued server messages.
    private static let maximumIdleReads = 4

    /// Opens a connection, blocking for at most the `connect_timeout` in `parameters`.
    /// - Throws: `.connectFailed` with libpq's message.
    init(parameters: ConnectionParameters, preparesStatements: Bool = true) throws(StoreError) {
        self.preparesStatements = preparesStatements
        // expand_dbname = 0: PQconninfoParse already expanded the conninfo; expanding a second time
        // would misread a database name that happens to contain '='.
        let connection = parameters.connect()
        guard let connection else { throw StoreError(.connectFailed, detail: "out of memory") }
        handle = connection
        // Every stored property is set, so from here on deinit runs even if init throws: it alone frees.
        guard PQstatus(handle) == CONNECTION_OK else {
            throw StoreError(.connectFailed, detail: errorMessage)
        }
        // Replaces libpq's default receiver, which prints notices to stderr; a library must stay quiet.
        // Unretained is safe: the receiver can only run inside libpq calls on `handle`, which die with self.
        _ = PQsetNoticeReceiver(handle, { context, notice in
            guard let context, let notice else { return }
            Unmanaged<PGConnection>.fromOpaque(context).takeUnretainedValue().received(notice: notice)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        // The receiver holds an unretained pointer to self, which must not be used from here on.
        _ = PQsetNoticeReceiver(handle, { _, _ in }, nil)
        PQfinish(handle)
    }

    /// Runs one statement with `$1…` parameters sent separately from the SQL, all in text format, blocking the
    /// thread until its result is in: for plain connections, not pooled ones.
    /// - Parameter parameters: values for `$1…`; nil is SQL NULL.
    /// - Throws: `.invalidParameter` for a value containing NUL, `.connectionLost` when the connection broke
    ///   (the statement's outcome is unknown), `.queryFailed` with the SQLSTATE otherwise.
    public func query(_ sql: String, _ parameters: [String?] = []) throws(StoreError) -> PGResult {
        try Self.refuseNUL(in: parameters)
        let values = CStringArray(parameters)
        let result = values.withPointers { pointers in
            PQexecParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, 0)
        }
        return try checked(result)
    }

    /// Runs trusted SQL text that may hold several statements. Only for migration files: nothing is parameterized.
    func execute(script sql: String) throws(StoreError) {
        guard !sql.utf8.contains(0) else { throw StoreError(.invalidParameter) }
        _ = try checked(PQexec(handle, sql))
    }

    /// Whether the connection is open and inside a transaction block.
    var isInTransaction: Bool {
        PQtransactionStatus(handle) == PQTRANS_INTRANS
    }

    /// Whether the connection may go back to the pool: open, and not left inside a transaction.
    var isReusable: Bool {
        PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
            && PQpipelineStatus(handle) == PQ_PIPELINE_OFF && !serverIsClosing && !sessionIsReadOnly && !isAbandoned
    }

    /// Whether an idle connection is still usable, noticing a server that closed it in the meantime.
    func isAlive() -> Bool {
        // An idle connection has nothing to read unless the server sent a notice or is hanging up. Reading now
        // lets libpq see a hang-up (pg_terminate_backend, restart) before a caller's statement is lost to it.
        // The backend says FATAL (parsed by PQisBusy, reported to the notice receiver) before end-of-file.
        for _ in 0..<Self.maximumIdleReads {
            guard isReusable else { return false }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else { return true }
            guard PQconsumeInput(handle) == 1 else { return false }
            _ = PQisBusy(handle)
        }
        return isReusable
    }

    /// Throws `.invalidParameter` when a value contains NUL.
    static func refuseNUL(in parameters: [String?]) throws(StoreError) {
        // Text parameters travel as C strings: libpq would silently cut a value at its first NUL.
        for case let value? in parameters where value.utf8.contains(0) {
            throw StoreError(.invalidParameter)
        }
    }

    private func received(notice: OpaquePointer) {
        // Outside a statement, an error from the server arrives as a notice; FATAL or PANIC means it is leaving.
        let severity = PQresultErrorField(notice, Int32(Unicode.Scalar("V").value))  // PG_DIAG_SEVERITY_NONLOCALIZED
            .map { String(cString: $0) }
        if severity == "FATAL" || severity == "PANIC" { serverIsClosing = true }
    }

    private var isConnected: Bool {
        PQstatus(handle) == CONNECTION_OK
    }

    /// libpq's last message for this connection, on one line.
    private var errorMessage: String {
        Self.oneLine(String(cString: PQerrorMessage(handle)))
    }

    /// Takes ownership of `result`, throwing the failure it reports, if any.
    func checked(_ result: OpaquePointer?) throws(StoreError) -> PGResult {
        // libpq returns no result only when out of memory or not connected.
        guard let result else { throw failure(sqlState: nil, message: errorMessage) }
        let owned = PGResult(result)
        switch owned.status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return owned
        default:
            throw failure(sqlState: owned.sqlState, message: owned.primaryMessage ?? errorMessage)
        }
    }

    /// The failure of a libpq call that gave no result: libpq's message, as a lost connection if it is one.
    func failureWithoutResult() -> StoreError {
        do throws(StoreError) {
            _ = try checked(nil)
            return StoreError(.queryFailed)
        } catch {
            return error
        }
    }

    private func failure(sqlState: String?, message: String) -> StoreError {
        // After a broken connection the statement's outcome is unknown, whatever the server managed to say.
        let code: StoreError.Code = isConnected ? .queryFailed : .connectionLost
        if sqlState == StoreError.readOnlySessionState { sessionIsReadOnly = true }
        // Data exceptions (class 22) quote the offending input, which may be a client's value.
        let detail = sqlState?.hasPrefix("22") == true ? nil : Self.oneLine(message)
        return StoreError(code, sqlState: sqlState, detail: detail)
    }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingPrefix(while: \.isWhitespace) }
            .joined(separator: " ")
    }
}
